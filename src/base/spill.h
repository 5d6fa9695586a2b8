// spill.h -- numbers made at run time kept in a file's pages rather than in the process's own memory.
//
// A quantized GGUF model is dequantized to float32 when it opens (formats/gguf_model.c), and the
// forward then multiplies from packed copies of its layer matrices (gemm.h): the float32 matrices
// are read again only by the pictures of the weights. Written into an unlinked temporary file and
// mapped back read-only, they live in the page cache as a float32 checkpoint's mapped weights do:
// their pages go back once read (st_release_pages), the kernel may drop them when memory is short
// (after writing them out) and reads them again when a view needs them, and the file is gone when
// the mapping is. The process so holds the packed copies, not the weights twice (BENCHMARKS.md,
// "Opening a GGUF file").
//
// The file goes on a disk, never in memory: the first of $TMPDIR, /var/tmp and /tmp that is not a
// tmpfs or ramfs (whose pages would be memory again) and has the room (reserved at once, so that a
// full disk is found before anything is written, never as SIGBUS on a page later). Where there is
// none (every candidate in memory or full, a system without O_TMPFILE, the web build) spill_open
// says so and the caller keeps the numbers in memory of its own, as before. SF_SPILL=0 in the
// environment keeps them in memory too (for comparisons).
//
//     Spill s;
//     if (spill_open(&s, bytes)) {
//       spill_write(&s, off, y, n, &err) ...        // each tensor at its offset
//       const uint8_t *map = spill_map(&s, &err);   // read-only; munmap(map, bytes) frees all
//     }
#ifndef SF_SPILL_H
#define SF_SPILL_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h" // defines: Err

typedef struct {
  int fd;     // the unlinked file, -1 when closed
  size_t len; // its size in bytes
} Spill;

// Makes the file, `bytes` long with its room reserved; false (s closed) when no disk place has it.
bool spill_open(Spill *s, size_t bytes);
// Writes n bytes of p at offset off (off + n <= s->len); false with one line on a write error.
bool spill_write(Spill *s, size_t off, const void *p, size_t n, Err *err);
// Maps the whole file read-only (private) and closes the descriptor: the mapping keeps the file
// until munmap(map, s->len). NULL with one line when it cannot be mapped (s is closed either way).
void *spill_map(Spill *s, Err *err);
// Closes the file without mapping it (it disappears); closing a closed one does nothing.
void spill_close(Spill *s);

#endif
