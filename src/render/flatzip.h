// flatzip.h -- a fast zlib-stream encoder for pictures made of flat colour (PNG's IDAT data).
//
// Exported heatmaps are large areas of one colour, cells whose rows repeat the row above, and
// a little anti-aliased text. General compressors spend their time hashing every byte to find
// matches anywhere in the window: zlib level 1 takes 10-11 ms for a 1920x1080 picture, and
// that was the floor of `stepformer export` (BENCHMARKS.md). This encoder looks for the only
// two matches that matter in such a picture, greedily, both at once, 16 bytes per compare:
//   - the byte 3 back (the pixel to the left, RGB): runs of one colour;
//   - the byte one row back (the pixel above): rows that repeat.
// A row equal to the row above is found by memcmp, and when the row above was one too, its
// symbols are copied. The matches and literals found are kept (4 bytes each; a heatmap has a
// few per row) and coded at the end as deflate blocks of 16384 symbols, each with Huffman
// codes made for its symbols (RFC 1951 3.2.7),
// inside a zlib wrapper (RFC 1950: header, adler32). The output is a valid zlib stream that
// any inflater decodes (the tests decode it with zlib and libpng). On the exported cat/bank
// pictures it is about 4x faster than zlib's level 1 and 6 % larger (BENCHMARKS.md); on
// photographs, which
// Stepformer never draws, it would be much larger.
//
// Rows are searched one at a time from a two-row buffer, so a 6 MB picture is never held
// uncompressed: fill z.cur with the next row (filter byte first), then call flatzip_row.
//
//     FlatZip z;
//     if (!flatzip_begin(&z, 1 + 3 * w)) ...out of memory...
//     for (int y = 0; y < h; y++) { fill z.cur; if (!flatzip_row(&z)) ... }
//     uint8_t *data; size_t len;
//     if (!flatzip_end(&z, &data, &len)) ...;  // data: the zlib stream, malloc'd; z is freed
#ifndef SF_FLATZIP_H
#define SF_FLATZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint8_t *cur;   // the row to fill next: row bytes
  size_t row;     // bytes per row; also the distance of the "pixel above" match
  uint8_t *rows;  // two rows: the current one and the one above
  bool have_prev; // false for the first row
  uint32_t *syms; // the literals and matches found so far (coded by flatzip_end)
  size_t n_syms, cap_syms;
  uint32_t adler;                // adler32 of the rows so far
  size_t prev_start, prev_count; // the symbols of the row above: syms[prev_start], prev_count of them
  bool prev_repeat;              // the row above repeated its own row above

} FlatZip;

// row: bytes per row (a PNG row: 1 + 3 * width for RGB); rows longer than 32 KiB get no
// "pixel above" matches (deflate's window), only runs.
bool flatzip_begin(FlatZip *z, size_t row);
bool flatzip_row(FlatZip *z);                                 // encodes z->cur; false: out of memory
bool flatzip_end(FlatZip *z, uint8_t **out, size_t *out_len); // always frees z's buffers
void flatzip_free(FlatZip *z);                                // to give up midway

#endif
