// version.c -- see version.h. version_gen.h is written into the build folder at build time.
#include "version.h"

#include "version_gen.h" // SF_VERSION, SF_COMMIT (build folder, cmake/version.cmake)

const char *version_string(void) { return SF_VERSION; }
const char *version_commit(void) { return SF_COMMIT; }
