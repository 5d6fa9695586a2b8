# cmake/web.cmake -- what differs when the same targets are built for the web (scripts/web runs
# cmake through emcmake: EMSCRIPTEN is set by emscripten's toolchain file). Nothing here applies
# to the native build.
#   - the compute: no OpenBLAS (scripts/web passes -DSF_BLAS=OFF); the products on packed weights
#     run src/kernels/gemm_wasm.c's SIMD128 kernel (gemm_kernel() "wasm-simd128"), the rest the
#     kernels' own loops (-msimd128: the 8-float vectors of simd.h become pairs of v128);
#   - no fontconfig: fonts are files in the page's data, found by path (text.c);
#   - Debian's emcc: -sUSE_SDL=0 keeps emscripten's own SDL headers and ports out (the SDL2 in
#     use is Debian's, built by scripts/web), memory grows as models need it;
#   - tests (tests/CMakeLists.txt) run under Node with the real file system (NODERAWFS), so they
#     read tests/ref/ and the shipped models as they do natively.
if(NOT EMSCRIPTEN)
  return()
endif()
if(SF_BLAS)
  message(FATAL_ERROR "The web build has no OpenBLAS: configure with -DSF_BLAS=OFF (scripts/web does)")
endif()
add_compile_options(-msimd128)
add_link_options(-msimd128 -sUSE_SDL=0 -sALLOW_MEMORY_GROWTH=1)
# fontconfig is not for the web: an empty stand-in, so that sf_text links the same list
add_library(PkgConfig::FONTCONFIG INTERFACE IMPORTED)
add_compile_definitions(SF_WEB=1)
set(SF_WEB_TEST_LINK_OPTIONS -sNODERAWFS=1 -sENVIRONMENT=node -sEXIT_RUNTIME=1
    "SHELL:--pre-js ${CMAKE_SOURCE_DIR}/web/node_env.js")

# The page: stepformer links to stepformer.html (+ .js, .wasm) around web/shell.html, with the
# folder SF_WEB_DATA (staged by scripts/web: fonts/, lessons/, assets/models/) packed as
# stepformer.data and mounted at / (the program's current folder). Called once the targets exist.
set(SF_WEB_DATA "" CACHE PATH "the page's data folder (scripts/web stages it)")
function(sf_web_page)
  set_target_properties(stepformer PROPERTIES SUFFIX ".html")
  target_link_options(stepformer PRIVATE
    "SHELL:--shell-file ${CMAKE_SOURCE_DIR}/web/shell.html" -sMINIFY_HTML=0
    -sEXPORTED_RUNTIME_METHODS=ccall,FS -sEXPORTED_FUNCTIONS=_main,_sf_web_paste,_sf_web_describe,_sf_web_open)
  if(SF_WEB_DATA)
    target_link_options(stepformer PRIVATE "SHELL:--preload-file ${SF_WEB_DATA}@/")
  endif()
  set_property(TARGET stepformer APPEND PROPERTY LINK_DEPENDS ${CMAKE_SOURCE_DIR}/web/shell.html)
endfunction()
cmake_language(DEFER CALL sf_web_page)

# stepformer-cli: the same program as a command for Node (NODERAWFS: the real file system), for
# `node --no-experimental-fetch build-web/cmake/stepformer-cli.js bench ...` (BENCHMARKS.md) and
# any sub-command that opens no window.
add_executable(stepformer-cli ${CMAKE_SOURCE_DIR}/src/app/main.c)
target_link_libraries(stepformer-cli PRIVATE sf_app)
target_link_options(stepformer-cli PRIVATE ${SF_WEB_TEST_LINK_OPTIONS})
