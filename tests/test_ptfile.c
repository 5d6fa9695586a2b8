// test_ptfile.c -- the .pt reader against files torch.save wrote (tests/ref/pt/, made by
// tests/gen_pt_fixtures.py; no torch needed here): every tensor's name, order, shape and value
// as torch.load reads them (float32, float16, bfloat16, float64; views with strides and
// offsets; tied names; Parameters; protocol 4), each bad file refused with one line naming its
// problem (bad.txt), every prefix of a good file refused cleanly, and the pickle machine on
// hand-written pickles: forbidden globals and opcodes by name, damaged ones without a crash.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fileio.h"   // defines: file_read_all
#include "ptfile.h"   // defines: pt_read, pt_parse, pt_sniff
#include "ptpickle.h" // defines: ptpickle_load

static char *ref_path(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/ref/pt/%s", check_test_dir(), name);
  return buf;
}

static char *read_text(const char *name, size_t *len) {
  char p[4096];
  Err err = {0};
  char *s = file_read_all(ref_path(p, sizeof p, name), len, 1 << 20, &err);
  CHECK(s != NULL, "%s", err.msg);
  return s;
}

static bool same_float(float a, float b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

// NAME.pt against NAME.txt: "tensor NAME NDIM D0 ..." then a line of values.
static void check_good(const char *name) {
  char pt[4096], txt[256];
  snprintf(txt, sizeof txt, "%s.txt", name);
  size_t len;
  char *manifest = read_text(txt, &len);
  if (!manifest) return;
  StFile f;
  Err err = {0};
  snprintf(txt, sizeof txt, "%s.pt", name);
  bool ok = pt_read(&f, ref_path(pt, sizeof pt, txt), &err);
  CHECK(ok, "%s: %s", name, err.msg);
  if (!ok) {
    free(manifest);
    return;
  }
  int i = 0;
  char *save = NULL;
  for (char *line = strtok_r(manifest, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
    char tname[256];
    int ndim, used;
    CHECK(sscanf(line, "tensor %255s %d%n", tname, &ndim, &used) == 2, "%s: manifest line %s", name, line);
    CHECK(i < f.n, "%s: the reader found %d tensors, the manifest has more", name, f.n);
    if (i >= f.n) break;
    const StTensor *t = &f.tensors[i];
    CHECK(!strcmp(t->name, tname), "%s: tensor %d is \"%s\", torch has \"%s\"", name, i, t->name, tname);
    CHECK(st_find(&f, tname) == t, "%s: st_find(\"%s\")", name, tname);
    CHECK(t->ndim == ndim, "%s: %s has %d dims, torch %d", name, tname, t->ndim, ndim);
    int64_t count = 1;
    char *p = line + used;
    for (int d = 0; d < ndim && d < ST_MAX_DIMS; d++) {
      long long dim = strtoll(p, &p, 10);
      CHECK(t->shape[d] == dim, "%s: %s dim %d is %lld, torch %lld", name, tname, d, (long long)t->shape[d],
            dim);
      count *= dim;
    }
    CHECK(t->count == count, "%s: %s holds %lld values, torch %lld", name, tname, (long long)t->count,
          (long long)count);
    char *values = count ? strtok_r(NULL, "\n", &save) : NULL; // an empty tensor's line is empty
    int64_t bad = 0, k = 0;
    for (char *v = values; v && k < count; k++) {
      float want = strtof(v, &v);
      if (k < t->count && !same_float(t->data[k], want) && bad++ < 3)
        CHECK(0, "%s: %s[%lld] = %.9g, torch %.9g", name, tname, (long long)k, t->data[k], want);
    }
    CHECK(k == count && bad == 0, "%s: %s: %lld of %lld values differ", name, tname, (long long)bad,
          (long long)count);
  }
  CHECK(i == f.n, "%s: the reader found %d tensors, torch %d", name, f.n, i);
  st_free(&f);
  free(manifest);
}

// A refusal: false, an empty StFile, one line that starts with the file's name.
static void check_refused(bool ok, const StFile *f, const Err *err, const char *what, const char *label) {
  CHECK(!ok, "%s: accepted", label);
  CHECK(f->n == 0 && f->tensors == NULL && f->by_name == NULL, "%s: a refused file left tensors", label);
  CHECK(err->msg[0] && !strchr(err->msg, '\n'), "%s: message \"%s\" is not one line", label, err->msg);
  CHECK(!strncmp(err->msg, what, strlen(what)), "%s: message \"%s\" does not start with the file", label,
        err->msg);
}

static void check_bad_files(void) {
  size_t len;
  char *list = read_text("bad.txt", &len);
  if (!list) return;
  int n = 0;
  char *save = NULL;
  for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#') continue;
    char *tab = strchr(line, '\t');
    CHECK(tab != NULL, "bad.txt: no tab in %s", line);
    if (!tab) continue;
    *tab = 0;
    char p[4096];
    StFile f;
    Err err = {0};
    bool ok = pt_read(&f, ref_path(p, sizeof p, line), &err);
    check_refused(ok, &f, &err, p, line);
    if (ok) st_free(&f);
    char *psave = NULL;
    for (char *part = strtok_r(tab + 1, "|", &psave); part; part = strtok_r(NULL, "|", &psave))
      CHECK(strstr(err.msg, part) != NULL, "%s: message \"%s\" does not say \"%s\"", line, err.msg, part);
    n++;
  }
  CHECK(n >= 13, "bad.txt lists %d files", n);
  free(list);
}

// Every prefix of a good file, and the file with each byte of its directory changed, are read
// from memory without a crash: refused with one line, or (a change the reader cannot see) read.
static void check_damaged(void) {
  size_t len;
  char *bytes = read_text("module.pt", &len);
  if (!bytes) return;
  StFile f;
  Err err = {0};
  CHECK(pt_parse(&f, (const uint8_t *)bytes, len, "module.pt", &err), "from memory: %s", err.msg);
  CHECK(f.n == 4 && st_find(&f, "1.bias") && st_find(&f, "0.weight")->shape[1] == 4, "module.pt from memory");
  st_free(&f);
  int refused = 0;
  for (size_t cut = 0; cut < len; cut++) {
    uint8_t *copy = malloc(cut ? cut : 1);
    memcpy(copy, bytes, cut);
    err.msg[0] = 0;
    bool ok = pt_parse(&f, copy, cut, "cut.pt", &err);
    if (!ok)
      check_refused(ok, &f, &err, "cut.pt", "a prefix"), refused++;
    else
      st_free(&f);
    free(copy);
  }
  CHECK(refused == (int)len, "%d of %zu prefixes refused", refused, len);
  for (size_t at = 0; at < len; at++) {
    uint8_t *copy = malloc(len);
    memcpy(copy, bytes, len);
    copy[at] ^= 0xa5;
    err.msg[0] = 0;
    if (pt_parse(&f, copy, len, "flip.pt", &err))
      st_free(&f);
    else
      check_refused(false, &f, &err, "flip.pt", "a changed byte");
    free(copy);
  }
  // torch writes a zip64 end record too; with the plain record's counts saturated, as a file
  // over 4 GiB has them, the reader must find the directory through it
  uint8_t *z64 = malloc(len);
  memcpy(z64, bytes, len);
  uint8_t *eocd = z64 + len - 22;
  CHECK(eocd[0] == 'P' && eocd[1] == 'K' && eocd[2] == 5 && eocd[3] == 6,
        "module.pt ends with its end record");
  memset(eocd + 8, 0xff, 12); // entries on this disk, entries, directory size and offset
  CHECK(pt_parse(&f, z64, len, "zip64.pt", &err) && f.n == 4, "through the zip64 record: %s", err.msg);
  st_free(&f);
  memset(eocd - 20, 0, 4); // no zip64 locator where one is needed
  CHECK(!pt_parse(&f, z64, len, "zip64.pt", &err) && strstr(err.msg, "zip64"), "no zip64 locator: %s",
        err.msg);
  free(z64);
  free(bytes);
  CHECK(pt_sniff((const uint8_t *)"PK\3\4", 4) && pt_sniff((const uint8_t *)"\x80\x02}q", 4), "pt_sniff");
  CHECK(!pt_sniff((const uint8_t *)"\x10\0\0\0\0\0\0\0{}", 10) && !pt_sniff(NULL, 0),
        "pt_sniff on safetensors");
}

// The pickle machine alone, on bytes written here.
static void pickle_refuses(const char *pkl, size_t len, const char *words, const char *label) {
  PtPickle p;
  Err err = {0};
  bool ok = ptpickle_load(&p, (const uint8_t *)pkl, len, "x.pt", &err);
  CHECK(!ok, "%s: accepted", label);
  CHECK(p.n == 0 && p.tensors == NULL && p.arena == NULL, "%s: refused but kept something", label);
  CHECK(err.msg[0] && !strchr(err.msg, '\n'), "%s: \"%s\" is not one line", label, err.msg);
  CHECK(strstr(err.msg, words) != NULL, "%s: \"%s\" does not say \"%s\"", label, err.msg, words);
  if (ok) ptpickle_free(&p);
}
#define REFUSES(lit, words, label) pickle_refuses(lit, sizeof(lit) - 1, words, label)

static void check_pickles(void) {
  REFUSES("\x80\x02"
          "cos\nsystem\n"
          "X\x02\0\0\0ls"
          "\x85R.",
          "os.system, which a state_dict never needs", "GLOBAL");
  REFUSES("\x80\x02"
          "cbuiltins\nexec\n.",
          "builtins.exec", "exec");
  REFUSES("\x80\x02"
          "csubprocess\nPopen\n.",
          "subprocess.Popen", "Popen");
  REFUSES("\x80\x02"
          "c__builtin__\neval\n.",
          "__builtin__.eval", "Python 2 eval");
  REFUSES("\x80\x02"
          "ctorch\nload\n.",
          "torch.load", "a torch function");
  REFUSES("\x80\x02"
          "c__main__\nNet\n.",
          "save it with torch.save(model.state_dict(), PATH)", "a whole module");
  REFUSES("\x80\x02(X\x02\0\0\0osX\x06\0\0\0systemi\n.", "opcode INST", "INST");
  REFUSES("\x80\x02)\x81.", "opcode NEWOBJ", "NEWOBJ");
  REFUSES("\x80\x02\x82\x01.", "opcode EXT1", "EXT1");
  REFUSES("\x80\x02G\0\0\0\0\0\0\0\0.", "opcode BINFLOAT", "a float");
  REFUSES("\x80\x02"
          "ccollections\nOrderedDict\n"
          "X\x01\0\0\0a"
          "\x85R.",
          "OrderedDict gets arguments", "OrderedDict(x)");
  REFUSES("\x80\x02"
          "ctorch\nFloatStorage\n)R.",
          "REDUCE calls FloatStorage", "calling a storage type");
  REFUSES("\x80\x02\xff.", "0xff is not a pickle opcode", "not an opcode");
  REFUSES("\x80\x09.", "protocol 9", "protocol");
  REFUSES("", "ends without STOP", "empty");
  REFUSES("\x80\x02}", "ends without STOP", "no STOP");
  REFUSES("\x80\x02s.", "empty stack", "SETITEM on nothing");
  REFUSES("\x80\x02u.", "MARK it never opened", "SETITEMS without MARK");
  REFUSES("\x80\x02h\x05.", "never wrote", "BINGET before BINPUT");
  REFUSES("\x80\x02Nr\xff\xff\xff\x7f.", "memo index", "a huge memo index");
  REFUSES("\x80\x02\x8a\x09\1\1\1\1\1\1\1\1\1.", "9 bytes", "LONG1 too long");
  REFUSES("\x80\x02X\xff\xff\xff\x7f"
          "ab.",
          "past the end", "a string longer than the pickle");
  REFUSES("\x80\x02"
          "cos\nsys",
          "no end of line", "a GLOBAL cut short");
  REFUSES("\x80\x02).", "holds a tuple, not a state_dict", "a tuple");
  // a dict that holds itself: no recursion, no hang
  REFUSES("\x80\x02}q\0X\1\0\0\0ah\0s.", "\"a\" = a dict, not a tensor", "a dict in itself");
  // a tensor whose strides do not match its sizes
  REFUSES("\x80\x02}(X\1\0\0\0wctorch._utils\n_rebuild_tensor_v2\n((X\7\0\0\0storagectorch\nFloatStorage\n"
          "X\1\0\0\0"
          "0X\3\0\0\0cpuK\2tQK\0K\2\x85)\x89}tRu.",
          "1 sizes but 0 strides", "sizes and strides");
  REFUSES("\x80\x02}(X\1\0\0\0wctorch._utils\n_rebuild_tensor_v2\n((X\7\0\0\0storagectorch\nFloatStorage\n"
          "X\1\0\0\0"
          "0X\3\0\0\0cpuK\2tQK\0J\xff\xff\xff\xff\x85K\1\x85\x89}tRu.",
          "negative", "a negative size");
  // the same, well formed, is read
  static const char good[] =
      "\x80\x02}(X\1\0\0\0wctorch._utils\n_rebuild_tensor_v2\n((X\7\0\0\0storagectorch\n"
      "FloatStorage\nX\1\0\0\0"
      "0X\3\0\0\0cpuK\2tQK\0K\2\x85K\1\x85\x89}tRu.";
  PtPickle p;
  Err err = {0};
  bool ok = ptpickle_load(&p, (const uint8_t *)good, sizeof good - 1, "x.pt", &err);
  CHECK(ok, "a hand-written tensor: %s", err.msg);
  if (ok) {
    CHECK(p.n == 1 && !strcmp(p.tensors[0].name, "w") && !strcmp(p.tensors[0].storage_key, "0") &&
              !strcmp(p.tensors[0].storage_type, "FloatStorage") && p.tensors[0].storage_numel == 2 &&
              p.tensors[0].ndim == 1 && p.tensors[0].size[0] == 2 && p.tensors[0].stride[0] == 1,
          "a hand-written tensor's fields");
    ptpickle_free(&p);
  }
}

int main(void) {
  const char *good[] = {"floats", "halfs", "doubles", "module", "params", "proto4"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) check_good(good[i]);
  check_bad_files();
  check_damaged();
  check_pickles();
  return check_exit("test_ptfile");
}
