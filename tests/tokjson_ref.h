// tokjson_ref.h -- reads the gzipped tokenizer.json files the tokjson tests compare against
// (tests/ref/tokjson/NAME.json.gz; kept gzipped, read with zlib: link the test with ZLIB).
//
//     size_t len; char *json = tokjson_ref_read("llama2", &len); ... free(json);
#ifndef SF_TEST_TOKJSON_REF_H
#define SF_TEST_TOKJSON_REF_H

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "check.h" // defines: check_test_dir

// Reads tests/ref/tokjson/NAME.json.gz whole (malloc'd, *len bytes, not NUL-terminated); a file that
// cannot be read ends the test with a message and exit code 1.
static inline char *tokjson_ref_read(const char *name, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/ref/tokjson/%s.json.gz", check_test_dir(), name);
  gzFile f = gzopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  size_t cap = 1 << 24, n = 0;
  char *buf = malloc(cap);
  int k;
  while (buf && (k = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
    n += (size_t)k;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  gzclose(f);
  if (!buf || n == 0) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  *len = n;
  return buf;
}

#endif
