// hub_fixture.h -- a hub fixture (tests/ref/hub/VARIANT) copied into a fresh temporary folder, for
// tests that damage or rewrite its files (test_hub's bad folders, test_sigbus's file rewritten in
// place), and removed again.
#ifndef SF_TEST_HUB_FIXTURE_H
#define SF_TEST_HUB_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"  // defines: CHECK, check_test_dir
#include "fileio.h" // defines: file_read_all, file_write_atomic

static const char *HUB_FIXTURE_FILES[] = {"config.json", "model.safetensors", "vocab.json",
                                          "merges.txt",  "vocab.txt",         "tokenizer_config.json"};
#define HUB_FIXTURE_N (sizeof HUB_FIXTURE_FILES / sizeof *HUB_FIXTURE_FILES)

// Copies the variant's files that exist into a new folder, written into dir (at least 32 bytes);
// a failed copy is a failed CHECK.
static inline void hub_fixture_copy(const char *variant, char *dir) {
  snprintf(dir, 32, "/tmp/sf-hub-XXXXXX");
  CHECK(mkdtemp(dir), "hub fixture: mkdtemp");
  for (size_t i = 0; i < HUB_FIXTURE_N; i++) {
    char src[4300], dst[4300];
    snprintf(src, sizeof src, "%s/ref/hub/%s/%s", check_test_dir(), variant, HUB_FIXTURE_FILES[i]);
    snprintf(dst, sizeof dst, "%s/%s", dir, HUB_FIXTURE_FILES[i]);
    size_t len;
    Err err = {0};
    char *d = file_read_all(src, &len, 1 << 24, &err); // a BERT fixture has no merges.txt: skipped
    if (d) CHECK(file_write_atomic(dst, d, len, &err), "hub fixture: %s", err.msg);
    free(d);
  }
}

// Removes the fixture's files, the extra ones named (NULL-terminated list), and the folder.
static inline void hub_fixture_remove(const char *dir, const char *const *extra) {
  char p[4300];
  for (size_t i = 0; i < HUB_FIXTURE_N; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, HUB_FIXTURE_FILES[i]);
    unlink(p);
  }
  for (; extra && *extra; extra++) {
    snprintf(p, sizeof p, "%s/%s", dir, *extra);
    unlink(p);
  }
  rmdir(dir);
}

#endif
