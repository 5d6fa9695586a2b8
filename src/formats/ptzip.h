// ptzip.h -- the zip container of a torch.save file, read in memory (stored entries only).
//
// torch.save (PyTorch >= 1.6) writes a zip whose entries are stored, not compressed, each one's
// data aligned to 64 bytes so that torch can map it. This reader needs nothing more:
//   end of central directory (EOCD, "PK\5\6"), found in the last 64 KiB + 22 bytes; when one of
//   its fields is saturated (0xFFFF / 0xFFFFFFFF), the zip64 EOCD locator ("PK\6\7") just
//   before it and the zip64 EOCD record ("PK\6\6") it points to;
//   central directory entries ("PK\1\2"): method, sizes, name, local header offset (zip64 extra
//   field 0x0001 when a size or offset is saturated);
//   each entry's local header ("PK\3\4"), whose name and extra lengths give where the data is.
// Every offset and size is checked against the buffer. An entry that is compressed (deflate or
// any other method) or encrypted is refused by ptzip_get, by name; torch.save never writes one.
// CRC-32 is not checked: PyTorch 2.x can write 0 there (torch.serialization.set_crc32_options)
// and its own mmap loader skips it; a tensor file is checked by its sizes, as safetensors is.
//
// A PtZip points into the caller's bytes (which must outlive it) and owns one index array.
//
//     PtZip z;
//     if (!ptzip_open(&z, bytes, len, "model.pt", &err)) ...;
//     const uint8_t *pkl; size_t n;
//     if (!ptzip_get(&z, "model/data.pkl", &pkl, &n, &err)) ...;
//     ptzip_free(&z);
#ifndef SF_PTZIP_H
#define SF_PTZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h" // defines: Err

typedef struct {
  const char *name; // into the central directory: not NUL-terminated
  size_t name_len;
  uint64_t local_offset, size, csize;
  uint16_t method, flags;
} PtZipEntry;

typedef struct {
  const uint8_t *bytes;
  size_t len;
  const char *what;    // the file's name, for messages
  PtZipEntry *entries; // sorted by name
  size_t n;
} PtZip;

// Reads the central directory. false (and a one-line error) when the bytes are not a zip or are
// cut short; then nothing needs freeing.
bool ptzip_open(PtZip *z, const uint8_t *bytes, size_t len, const char *what, Err *err);
void ptzip_free(PtZip *z);

// The entry named exactly `name`, or NULL.
const PtZipEntry *ptzip_find(const PtZip *z, const char *name);

// The stored bytes of entry `name`: false with a message when it is missing, compressed,
// encrypted or lies outside the file.
bool ptzip_get(const PtZip *z, const char *name, const uint8_t **data, size_t *len, Err *err);

#endif
