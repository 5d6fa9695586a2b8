# cmake/blas.cmake -- the target sf_blas: OpenBLAS, or nothing.
#   SF_BLAS=ON  (the default): sf_blas links OpenBLAS and defines SF_HAVE_BLAS=1; mat.c sends
#               large products to cblas_sgemm.
#   SF_BLAS=OFF: no BLAS at all (the web build: Debian has no OpenBLAS for wasm). SF_HAVE_BLAS=0,
#               and every product runs the core's own kernels (gemm.h, mat.c's loops).
option(SF_BLAS "Link OpenBLAS for the large matrix products (OFF: the core's own kernels only)" ON)
add_library(sf_blas INTERFACE)
if(SF_BLAS)
  pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
  target_link_libraries(sf_blas INTERFACE PkgConfig::OPENBLAS)
  target_compile_definitions(sf_blas INTERFACE SF_HAVE_BLAS=1)
else()
  target_compile_definitions(sf_blas INTERFACE SF_HAVE_BLAS=0)
endif()
