# cmake/lib.cmake -- libstepformer (issue 37): the C API of src/lib/stepformer.h over the same room
# libraries the program uses, as a shared library (build/libstepformer.so, what the Python package
# loads through ctypes) and a static one (build/libstepformer.a, holding every room's objects, so
# that a C program links it with the system libraries alone: pkg-config's list in the .pc below).
# No SDL window: text.c reaches SDL2_ttf for the glyphs, nothing else of SDL.
# The rooms' objects are position-independent so that the shared library can hold them; only
# the sf_* names of stepformer.h are exported (hidden visibility, the rooms' archives excluded).
set(SF_LIB_ROOMS sf_base sf_kernels sf_core sf_tokenizers sf_formats sf_doc sf_text sf_render)
set_target_properties(${SF_LIB_ROOMS} PROPERTIES POSITION_INDEPENDENT_CODE ON)
file(GLOB SF_LIB_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/lib/*.c)

add_library(stepformer_shared SHARED ${SF_LIB_SOURCES})
set_target_properties(stepformer_shared PROPERTIES
  OUTPUT_NAME stepformer LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
  C_VISIBILITY_PRESET hidden VERSION ${PROJECT_VERSION} SOVERSION 0)
target_include_directories(stepformer_shared PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/src/lib)
target_link_libraries(stepformer_shared PRIVATE sf_render sf_formats)
target_link_options(stepformer_shared PRIVATE -Wl,--exclude-libs,ALL)
if(NOT SF_SANITIZE AND NOT SF_FUZZ) # (clang links the sanitizers' runtime into executables only)
  target_link_options(stepformer_shared PRIVATE -Wl,--no-undefined)
endif()

set(SF_LIB_OBJECTS "")
foreach(room ${SF_LIB_ROOMS})
  list(APPEND SF_LIB_OBJECTS $<TARGET_OBJECTS:${room}>)
endforeach()
add_library(stepformer_static STATIC ${SF_LIB_SOURCES} ${SF_LIB_OBJECTS})
set_target_properties(stepformer_static PROPERTIES OUTPUT_NAME stepformer ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
target_include_directories(stepformer_static PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/src/lib)
# the rooms' include folders, for compiling src/lib; their archives are not linked again
foreach(room ${SF_LIB_ROOMS})
  target_include_directories(stepformer_static PRIVATE $<TARGET_PROPERTY:${room},INTERFACE_INCLUDE_DIRECTORIES>)
endforeach()
target_link_libraries(stepformer_static PUBLIC sf_blas PkgConfig::CJSON PkgConfig::UTF8PROC PkgConfig::PNG
                      PkgConfig::ZLIB PkgConfig::SDL2TTF PkgConfig::SDL2 PkgConfig::FONTCONFIG Threads::Threads m)
add_dependencies(stepformer_static sf_version_header)
# Installed only on demand (scripts/package: cmake --install --component pylib), which also drops
# the build tree's RUNPATH: the Debian package puts the library beside the Python package.
install(TARGETS stepformer_shared LIBRARY DESTINATION lib COMPONENT pylib EXCLUDE_FROM_ALL)
