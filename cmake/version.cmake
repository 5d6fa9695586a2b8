# cmake/version.cmake -- writes OUT (a header) with the version and the commit the program is built
# from: run by the sf_version target at every build, so a new commit is named without configuring
# again. The commit is `git describe --always --dirty` of SRC; outside a git checkout (a source
# tarball) it is COMMIT when given (-DCOMMIT=...), else "unknown". OUT is rewritten only when its
# text changes, so an unchanged commit rebuilds nothing.
#   cmake -DSRC=... -DOUT=... -DVERSION=0.1 [-DCOMMIT=...] -P cmake/version.cmake
set(commit "")
if(EXISTS "${SRC}/.git")
  execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=10
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
if(commit STREQUAL "")
  if(COMMIT)
    set(commit "${COMMIT}")
  else()
    set(commit "unknown")
  endif()
endif()
set(text "// written by cmake/version.cmake at build time: do not edit\n#define SF_VERSION \"${VERSION}\"\n#define SF_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
