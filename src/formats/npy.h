// npy.h -- NumPy .npy files (format version 1.0), little-endian float32, C order.
//
// Layout: "\x93NUMPY", version 1.0, a u16 little-endian header length, then an ASCII Python
// dict {'descr': '<f4', 'fortran_order': False, 'shape': (d0, d1, ), } padded with spaces and
// a newline so that the data starts at a multiple of 64 bytes, then the data.
// npy_write writes atomically (fileio.h). npy_read (used by the tests to load reference
// files) accepts '<f4' C-order arrays only and returns a malloc'd array the caller frees.
//
//     int shape[2] = {L, D};
//     npy_write("out/X.npy", x, 2, shape, &err);
//     float *ref = npy_read("tests/ref/cat-bank/X.npy", &ndim, shape3, &err); free(ref);
#ifndef SF_NPY_H
#define SF_NPY_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h" // defines: Err

#define NPY_MAX_DIMS 4

// Builds the complete file in memory: *len bytes, malloc'd. NULL when out of memory.
unsigned char *npy_encode(const float *data, int ndim, const int *shape, size_t *len);
bool npy_write(const char *path, const float *data, int ndim, const int *shape, Err *err);
float *npy_read(const char *path, int *ndim, int shape[NPY_MAX_DIMS], Err *err);

#endif
