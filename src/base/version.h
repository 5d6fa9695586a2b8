// version.h -- which Stepformer this is: the version of the project (CMakeLists.txt) and the commit
// it was built from (`git describe` at build time, cmake/version.cmake; "unknown" when built
// outside a git checkout). `stepformer --version` prints both; the footer of every picture and the
// metadata of every file Stepformer writes carry the version.
//
//     printf("stepformer %s (commit %s)\n", version_string(), version_commit());
#ifndef SF_VERSION_H
#define SF_VERSION_H

const char *version_string(void); // "0.1"
const char *version_commit(void); // "6d5091e2f1", "6d5091e2f1-dirty" or "unknown"

#endif
