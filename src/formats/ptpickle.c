// ptpickle.c -- see ptpickle.h. Opcode values and meanings: CPython's Lib/pickletools.py.
#include "ptpickle.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

// ---- values, carved from an arena freed at once (the memo shares them freely)

typedef enum { V_NONE, V_BOOL, V_INT, V_STR, V_TUPLE, V_LIST, V_DICT, V_GLOBAL, V_STORAGE, V_TENSOR } Kind;
typedef enum { G_ORDERED_DICT, G_REBUILD_TENSOR, G_REBUILD_PARAMETER, G_STORAGE_TYPE } Global;

typedef struct Val Val;
struct Val {
  Kind kind;
  Global g;         // V_GLOBAL
  int64_t i;        // V_INT, V_BOOL; V_STORAGE: numel
  const char *s;    // V_STR (NUL-terminated copy); V_GLOBAL storage type name; V_STORAGE: key
  size_t slen;      // V_STR
  const char *type; // V_STORAGE: storage type name
  Val **items;      // V_TUPLE, V_LIST: n items; V_DICT: n items, keys and values alternating
  size_t n, cap;
  PtTensorRef *t; // V_TENSOR
};

typedef struct Block {
  struct Block *next;
  size_t used, cap;
  _Alignas(max_align_t) unsigned char data[];
} Block;

typedef struct {
  Block *head;
  size_t total, limit;
} Arena;

static void *arena_alloc(Arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n > a->limit - a->total) return NULL;
  if (!a->head || a->head->cap - a->head->used < n) {
    size_t cap = n > 65536 ? n : 65536;
    Block *b = malloc(sizeof(Block) + cap);
    if (!b) return NULL;
    b->next = a->head, b->used = 0, b->cap = cap;
    a->head = b;
  }
  void *p = a->head->data + a->head->used;
  a->head->used += n, a->total += n;
  return p;
}

static void arena_free(Block *b) {
  while (b) {
    Block *next = b->next;
    free(b);
    b = next;
  }
}

// ---- the machine

typedef struct {
  const uint8_t *b;
  size_t len, pos, at; // at: where the current opcode starts
  const char *what;
  Err *err;
  Arena arena;
  Val **stack;
  size_t sp, scap;
  size_t *marks;
  size_t nm, mcap;
  Val **memo;
  size_t memo_cap, memo_count;
} Machine;

static bool fail(Machine *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(Machine *m, const char *fmt, ...) {
  char buf[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return err_set(m->err, "%s: data.pkl byte %zu: %s", m->what, m->at, buf);
}

static bool refuse_opcode(Machine *m, const char *name) {
  return err_set(
      m->err,
      "%s: data.pkl uses the pickle opcode %s (byte %zu), which a state_dict never needs: Stepformer "
      "refuses it (nothing was run)",
      m->what, name, m->at);
}

static const char *kind_name(Kind k) {
  static const char *names[] = {"None",   "a boolean", "an integer", "a string",  "a tuple",
                                "a list", "a dict",    "a global",   "a storage", "a tensor"};
  return names[k];
}

static Val *new_val(Machine *m, Kind k) {
  Val *v = arena_alloc(&m->arena, sizeof(Val));
  if (!v) {
    fail(m, "the pickle needs more memory than a state_dict of its size could");
    return NULL;
  }
  memset(v, 0, sizeof *v);
  v->kind = k;
  return v;
}

static bool grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *p = realloc(*arr, c * elem);
  if (!p) return false;
  *arr = p, *cap = c;
  return true;
}

static bool push(Machine *m, Val *v) {
  if (!v) return false;
  if (!grow((void **)&m->stack, &m->scap, m->sp + 1, sizeof(Val *))) return fail(m, "out of memory");
  m->stack[m->sp++] = v;
  return true;
}

// The item k below the top (0 = top), or NULL with a message when the stack holds fewer
// items above the last mark.
static Val *peek(Machine *m, size_t k) {
  size_t floor = m->nm ? m->marks[m->nm - 1] : 0;
  if (m->sp - floor <= k) {
    fail(m, "the pickle takes from an empty stack (damaged)");
    return NULL;
  }
  return m->stack[m->sp - 1 - k];
}

static Val *pop(Machine *m) {
  Val *v = peek(m, 0);
  if (v) m->sp--;
  return v;
}

static bool pop_mark(Machine *m, size_t *mark) {
  if (!m->nm) return fail(m, "the pickle closes a MARK it never opened (damaged)");
  *mark = m->marks[--m->nm];
  return true;
}

static bool need(Machine *m, size_t k) {
  if (m->len - m->pos < k) return fail(m, "the pickle ends inside an opcode (truncated)");
  return true;
}

static uint64_t le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

// Appends `k` items to a tuple, list or dict's item array (arena: the old array is left behind,
// at most doubling the memory).
static bool add_items(Machine *m, Val *c, Val **items, size_t k) {
  if (!k) return true;
  if (c->n + k > c->cap) {
    size_t cap = c->cap ? c->cap : 4;
    while (cap < c->n + k) cap *= 2;
    Val **a = arena_alloc(&m->arena, cap * sizeof(Val *));
    if (!a) return fail(m, "the pickle needs more memory than a state_dict of its size could");
    if (c->n) memcpy(a, c->items, c->n * sizeof(Val *));
    c->items = a, c->cap = cap;
  }
  memcpy(c->items + c->n, items, k * sizeof(Val *));
  c->n += k;
  return true;
}

static Val *make_tuple(Machine *m, Val **items, size_t k) {
  Val *t = new_val(m, V_TUPLE);
  if (t && k && !add_items(m, t, items, k)) return NULL;
  return t;
}

static Val *make_str(Machine *m, size_t n) {
  if (!need(m, n)) return NULL;
  Val *v = new_val(m, V_STR);
  char *s = v ? arena_alloc(&m->arena, n + 1) : NULL;
  if (!s) {
    if (v) fail(m, "the pickle needs more memory than a state_dict of its size could");
    return NULL;
  }
  memcpy(s, m->b + m->pos, n);
  s[n] = 0;
  m->pos += n;
  v->s = s, v->slen = n;
  return v;
}

static bool memo_put(Machine *m, uint64_t idx) {
  Val *top = peek(m, 0);
  if (!top) return false;
  if (idx > m->len)
    return fail(m, "memo index %llu is larger than the pickle (damaged)", (unsigned long long)idx);
  size_t old = m->memo_cap;
  if (!grow((void **)&m->memo, &m->memo_cap, (size_t)idx + 1, sizeof(Val *))) return fail(m, "out of memory");
  if (m->memo_cap > old) memset(m->memo + old, 0, (m->memo_cap - old) * sizeof(Val *));
  if (!m->memo[idx]) m->memo_count++;
  m->memo[idx] = top;
  return true;
}

static bool memo_get(Machine *m, uint64_t idx) {
  if (idx >= m->memo_cap || !m->memo[idx])
    return fail(m, "the pickle reads memo entry %llu, which it never wrote (damaged)",
                (unsigned long long)idx);
  return push(m, m->memo[idx]);
}

// GLOBAL and STACK_GLOBAL: the few names a state_dict uses, everything else refused by name.
static bool push_global(Machine *m, const char *mod, size_t mlen, const char *name, size_t nlen) {
  Val *v = new_val(m, V_GLOBAL);
  if (!v) return false;
#define IS(s, n, lit) ((n) == sizeof(lit) - 1 && !memcmp((s), (lit), (n)))
  if (IS(mod, mlen, "collections") && IS(name, nlen, "OrderedDict"))
    v->g = G_ORDERED_DICT;
  else if (IS(mod, mlen, "torch._utils") && IS(name, nlen, "_rebuild_tensor_v2"))
    v->g = G_REBUILD_TENSOR;
  else if (IS(mod, mlen, "torch._utils") && IS(name, nlen, "_rebuild_parameter"))
    v->g = G_REBUILD_PARAMETER;
  else if (IS(mod, mlen, "torch") && nlen > 7 && nlen <= 40 && !memcmp(name + nlen - 7, "Storage", 7)) {
    char *s = arena_alloc(&m->arena, nlen + 1);
    if (!s) return fail(m, "the pickle needs more memory than a state_dict of its size could");
    for (size_t i = 0; i < nlen; i++)
      if (!((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= 'a' && name[i] <= 'z') ||
            (name[i] >= '0' && name[i] <= '9')))
        return fail(m, "the pickle names a storage type with odd characters (damaged)");
    memcpy(s, name, nlen);
    s[nlen] = 0;
    v->g = G_STORAGE_TYPE, v->s = s;
  } else {
    int ml = (int)(mlen < 80 ? mlen : 80), nl = (int)(nlen < 80 ? nlen : 80);
    if (IS(mod, mlen, "__main__") || (mlen >= 8 && !memcmp(mod, "torch.nn", 8)))
      return err_set(m->err,
                     "%s: data.pkl holds a whole module (%.*s.%.*s), not a state_dict: Stepformer refuses to "
                     "build it (nothing was run); save it with torch.save(model.state_dict(), PATH)",
                     m->what, ml, mod, nl, name);
    return err_set(
        m->err,
        "%s: data.pkl uses %.*s.%.*s, which a state_dict never needs: Stepformer refuses it (nothing "
        "was run)",
        m->what, ml, mod, nl, name);
  }
#undef IS
  return push(m, v);
}

static bool read_line(Machine *m, const char **s, size_t *n) {
  const uint8_t *start = m->b + m->pos, *nl = memchr(start, '\n', m->len - m->pos);
  if (!nl) return fail(m, "GLOBAL's name has no end of line (truncated)");
  *s = (const char *)start, *n = (size_t)(nl - start);
  m->pos += *n + 1;
  return true;
}

// A tuple of non-negative integers, at most PT_MAX_DIMS long.
static bool int_tuple(Machine *m, const Val *t, int64_t *out, int *n, const char *what) {
  if (t->kind != V_TUPLE) return fail(m, "a tensor's %s is %s, not a tuple", what, kind_name(t->kind));
  if (t->n > PT_MAX_DIMS) return fail(m, "a tensor has %zu dimensions, more than %d", t->n, PT_MAX_DIMS);
  for (size_t i = 0; i < t->n; i++) {
    if (t->items[i]->kind != V_INT)
      return fail(m, "a tensor's %s holds %s", what, kind_name(t->items[i]->kind));
    if (t->items[i]->i < 0) return fail(m, "a tensor's %s holds a negative number", what);
    out[i] = t->items[i]->i;
  }
  *n = (int)t->n;
  return true;
}

// _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
static Val *rebuild_tensor(Machine *m, const Val *a) {
  if (a->n != 6 && a->n != 7) {
    fail(m, "_rebuild_tensor_v2 gets %zu arguments, not 6 or 7", a->n);
    return NULL;
  }
  Val *const *x = a->items;
  if (x[0]->kind != V_STORAGE || x[1]->kind != V_INT || x[1]->i < 0 || x[4]->kind != V_BOOL ||
      (x[5]->kind != V_DICT && x[5]->kind != V_NONE) ||
      (a->n == 7 && x[6]->kind != V_DICT && x[6]->kind != V_NONE)) {
    fail(m, "_rebuild_tensor_v2 gets arguments of the wrong kinds (%s, %s, ..., %s)", kind_name(x[0]->kind),
         kind_name(x[1]->kind), kind_name(x[4]->kind));
    return NULL;
  }
  PtTensorRef *t = arena_alloc(&m->arena, sizeof *t);
  Val *v = t ? new_val(m, V_TENSOR) : NULL;
  if (!v) {
    if (!t) fail(m, "the pickle needs more memory than a state_dict of its size could");
    return NULL;
  }
  memset(t, 0, sizeof *t);
  int nstride = 0;
  if (!int_tuple(m, x[2], t->size, &t->ndim, "size") || !int_tuple(m, x[3], t->stride, &nstride, "stride"))
    return NULL;
  if (nstride != t->ndim) {
    fail(m, "a tensor has %d sizes but %d strides", t->ndim, nstride);
    return NULL;
  }
  t->storage_key = x[0]->s, t->storage_type = x[0]->type, t->storage_numel = x[0]->i;
  t->offset = x[1]->i;
  v->t = t;
  return v;
}

static bool reduce(Machine *m) {
  Val *args = pop(m), *f = args ? pop(m) : NULL;
  if (!f) return false;
  if (f->kind != V_GLOBAL || f->g == G_STORAGE_TYPE)
    return fail(m, "REDUCE calls %s, which a state_dict never calls",
                f->kind == V_GLOBAL ? f->s : kind_name(f->kind));
  if (args->kind != V_TUPLE)
    return fail(m, "REDUCE gets %s for its arguments, not a tuple", kind_name(args->kind));
  switch (f->g) {
  case G_ORDERED_DICT:
    if (args->n) return fail(m, "OrderedDict gets arguments; torch.save never gives it any");
    return push(m, new_val(m, V_DICT));
  case G_REBUILD_TENSOR: return push(m, rebuild_tensor(m, args));
  case G_REBUILD_PARAMETER:
    if (args->n < 2 || args->n > 3 || args->items[0]->kind != V_TENSOR)
      return fail(m, "_rebuild_parameter gets arguments of the wrong kinds");
    return push(m, args->items[0]);
  default: return fail(m, "REDUCE calls a storage type");
  }
}

// BINPERSID: ('storage', torch.<X>Storage, key, location, numel)
static bool persistent_load(Machine *m) {
  Val *pid = pop(m);
  if (!pid) return false;
  Val *const *x = pid->items;
  if (pid->kind != V_TUPLE || pid->n != 5 || x[0]->kind != V_STR || strcmp(x[0]->s, "storage"))
    return fail(m, "a persistent id is not ('storage', type, key, location, numel)");
  if (x[1]->kind != V_GLOBAL || x[1]->g != G_STORAGE_TYPE || x[2]->kind != V_STR || x[3]->kind != V_STR ||
      x[4]->kind != V_INT || x[4]->i < 0)
    return fail(
        m,
        "a storage's persistent id holds %s, %s, %s, %s where a storage type, key, location and count "
        "belong",
        kind_name(x[1]->kind), kind_name(x[2]->kind), kind_name(x[3]->kind), kind_name(x[4]->kind));
  if (!x[2]->slen || strlen(x[2]->s) != x[2]->slen || strchr(x[2]->s, '/'))
    return fail(m, "a storage key is empty or holds '/' or a NUL byte");
  Val *v = new_val(m, V_STORAGE);
  if (!v) return false;
  v->type = x[1]->s, v->s = x[2]->s, v->i = x[4]->i;
  return push(m, v);
}

static const char *opcode_name(uint8_t op) {
  static const struct {
    uint8_t op;
    const char *name;
  } names[] = {
      {'(', "MARK"},
      {'.', "STOP"},
      {'0', "POP"},
      {'1', "POP_MARK"},
      {'2', "DUP"},
      {'F', "FLOAT"},
      {'I', "INT"},
      {'J', "BININT"},
      {'K', "BININT1"},
      {'L', "LONG"},
      {'M', "BININT2"},
      {'N', "NONE"},
      {'P', "PERSID"},
      {'Q', "BINPERSID"},
      {'R', "REDUCE"},
      {'S', "STRING"},
      {'T', "BINSTRING"},
      {'U', "SHORT_BINSTRING"},
      {'V', "UNICODE"},
      {'X', "BINUNICODE"},
      {'a', "APPEND"},
      {'b', "BUILD"},
      {'c', "GLOBAL"},
      {'d', "DICT"},
      {'}', "EMPTY_DICT"},
      {'e', "APPENDS"},
      {'g', "GET"},
      {'h', "BINGET"},
      {'i', "INST"},
      {'j', "LONG_BINGET"},
      {'l', "LIST"},
      {']', "EMPTY_LIST"},
      {'o', "OBJ"},
      {'p', "PUT"},
      {'q', "BINPUT"},
      {'r', "LONG_BINPUT"},
      {'s', "SETITEM"},
      {'t', "TUPLE"},
      {')', "EMPTY_TUPLE"},
      {'u', "SETITEMS"},
      {'G', "BINFLOAT"},
      {'B', "BINBYTES"},
      {'C', "SHORT_BINBYTES"},
      {0x80, "PROTO"},
      {0x81, "NEWOBJ"},
      {0x82, "EXT1"},
      {0x83, "EXT2"},
      {0x84, "EXT4"},
      {0x85, "TUPLE1"},
      {0x86, "TUPLE2"},
      {0x87, "TUPLE3"},
      {0x88, "NEWTRUE"},
      {0x89, "NEWFALSE"},
      {0x8a, "LONG1"},
      {0x8b, "LONG4"},
      {0x8c, "SHORT_BINUNICODE"},
      {0x8d, "BINUNICODE8"},
      {0x8e, "BINBYTES8"},
      {0x8f, "EMPTY_SET"},
      {0x90, "ADDITEMS"},
      {0x91, "FROZENSET"},
      {0x92, "NEWOBJ_EX"},
      {0x93, "STACK_GLOBAL"},
      {0x94, "MEMOIZE"},
      {0x95, "FRAME"},
      {0x96, "BYTEARRAY8"},
      {0x97, "NEXT_BUFFER"},
      {0x98, "READONLY_BUFFER"},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].op == op) return names[i].name;
  return NULL;
}

// Runs one opcode; *done is set by STOP.
static bool step(Machine *m, bool *done) {
  m->at = m->pos;
  uint8_t op = m->b[m->pos++];
  switch (op) {
  case 0x80: // PROTO
    if (!need(m, 1)) return false;
    if (m->b[m->pos] > 5) return fail(m, "pickle protocol %d is newer than any Python writes", m->b[m->pos]);
    m->pos++;
    return true;
  case 0x95: // FRAME: a length we do not need
    if (!need(m, 8)) return false;
    m->pos += 8;
    return true;
  case '.': // STOP
    *done = true;
    return peek(m, 0) != NULL;
  case '(': // MARK
    if (!grow((void **)&m->marks, &m->mcap, m->nm + 1, sizeof(size_t))) return fail(m, "out of memory");
    m->marks[m->nm++] = m->sp;
    return true;
  case '}': return push(m, new_val(m, V_DICT));
  case ']': return push(m, new_val(m, V_LIST));
  case ')': return push(m, new_val(m, V_TUPLE));
  case 'N': return push(m, new_val(m, V_NONE));
  case 0x88:
  case 0x89: {
    Val *v = new_val(m, V_BOOL);
    if (v) v->i = op == 0x88;
    return push(m, v);
  }
  case 't': { // TUPLE
    size_t mark = 0;
    if (!pop_mark(m, &mark)) return false;
    Val *t = make_tuple(m, m->stack + mark, m->sp - mark);
    m->sp = mark;
    return push(m, t);
  }
  case 0x85:
  case 0x86:
  case 0x87: { // TUPLE1..3
    size_t k = (size_t)(op - 0x84);
    if (!peek(m, k - 1)) return false;
    Val *t = make_tuple(m, m->stack + m->sp - k, k);
    m->sp -= k;
    return push(m, t);
  }
  case 's': { // SETITEM
    Val *d = peek(m, 2);
    if (!d) return false;
    if (d->kind != V_DICT) return fail(m, "SETITEM on %s, not a dict", kind_name(d->kind));
    if (!add_items(m, d, m->stack + m->sp - 2, 2)) return false;
    m->sp -= 2;
    return true;
  }
  case 'u':   // SETITEMS
  case 'e': { // APPENDS
    size_t mark = 0;
    if (!pop_mark(m, &mark)) return false;
    Val *c = peek(m, m->sp - mark);
    if (!c) return false;
    Kind want = op == 'u' ? V_DICT : V_LIST;
    if (c->kind != want) return fail(m, "%s on %s", op == 'u' ? "SETITEMS" : "APPENDS", kind_name(c->kind));
    if (op == 'u' && (m->sp - mark) % 2) return fail(m, "SETITEMS with a key and no value");
    if (!add_items(m, c, m->stack + mark, m->sp - mark)) return false;
    m->sp = mark;
    return true;
  }
  case 'a': { // APPEND
    Val *l = peek(m, 1);
    if (!l) return false;
    if (l->kind != V_LIST) return fail(m, "APPEND on %s", kind_name(l->kind));
    if (!add_items(m, l, m->stack + m->sp - 1, 1)) return false;
    m->sp--;
    return true;
  }
  case 'X':    // BINUNICODE
  case 0x8c:   // SHORT_BINUNICODE
  case 0x8d: { // BINUNICODE8
    int w = op == 'X' ? 4 : op == 0x8c ? 1 : 8;
    if (!need(m, (size_t)w)) return false;
    uint64_t n = le(m->b + m->pos, w);
    m->pos += (size_t)w;
    if (n > m->len - m->pos) return fail(m, "a string runs past the end of the pickle (truncated)");
    return push(m, make_str(m, (size_t)n));
  }
  case 'J':   // BININT
  case 'K':   // BININT1
  case 'M': { // BININT2
    int w = op == 'J' ? 4 : op == 'K' ? 1 : 2;
    if (!need(m, (size_t)w)) return false;
    Val *v = new_val(m, V_INT);
    if (v) v->i = w == 4 ? (int64_t)(int32_t)(uint32_t)le(m->b + m->pos, 4) : (int64_t)le(m->b + m->pos, w);
    m->pos += (size_t)w;
    return push(m, v);
  }
  case 0x8a: { // LONG1: n bytes, two's complement, little-endian
    if (!need(m, 1)) return false;
    int n = m->b[m->pos++];
    if (n > 8) return fail(m, "an integer of %d bytes, larger than any size or offset", n);
    if (!need(m, (size_t)n)) return false;
    uint64_t u = le(m->b + m->pos, n);
    m->pos += (size_t)n;
    if (n > 0 && n < 8 && (u >> (8 * n - 1)) & 1) u |= ~(uint64_t)0 << (8 * n); // sign-extend
    Val *v = new_val(m, V_INT);
    if (v) v->i = (int64_t)u;
    return push(m, v);
  }
  case 'q': // BINPUT
    if (!need(m, 1)) return false;
    return memo_put(m, m->b[m->pos++]);
  case 'r': // LONG_BINPUT
    if (!need(m, 4)) return false;
    m->pos += 4;
    return memo_put(m, le(m->b + m->pos - 4, 4));
  case 0x94: return memo_put(m, m->memo_count); // MEMOIZE
  case 'h':                                     // BINGET
    if (!need(m, 1)) return false;
    return memo_get(m, m->b[m->pos++]);
  case 'j': // LONG_BINGET
    if (!need(m, 4)) return false;
    m->pos += 4;
    return memo_get(m, le(m->b + m->pos - 4, 4));
  case 'c': { // GLOBAL "module\nname\n"
    const char *mod, *name;
    size_t ml, nl;
    if (!read_line(m, &mod, &ml) || !read_line(m, &name, &nl)) return false;
    return push_global(m, mod, ml, name, nl);
  }
  case 0x93: { // STACK_GLOBAL
    Val *name = pop(m), *mod = name ? pop(m) : NULL;
    if (!mod) return false;
    if (mod->kind != V_STR || name->kind != V_STR) return fail(m, "STACK_GLOBAL without two strings");
    return push_global(m, mod->s, mod->slen, name->s, name->slen);
  }
  case 'R': return reduce(m);
  case 'Q': return persistent_load(m);
  case 'b': { // BUILD: only an OrderedDict's _metadata
    Val *state = pop(m), *obj = state ? peek(m, 0) : NULL;
    if (!obj) return false;
    if (obj->kind != V_DICT || (state->kind != V_DICT && state->kind != V_NONE))
      return fail(m, "BUILD sets %s on %s; a state_dict only sets a dict on its OrderedDict",
                  kind_name(state->kind), kind_name(obj->kind));
    return true;
  }
  default: {
    const char *name = opcode_name(op);
    if (name) return refuse_opcode(m, name);
    return fail(m, "0x%02x is not a pickle opcode (damaged, or not a pickle)", op);
  }
  }
}

void ptpickle_free(PtPickle *p) {
  arena_free(p->arena);
  memset(p, 0, sizeof *p);
}

// The result: a dict whose keys are strings and whose values are tensors.
static bool collect(Machine *m, const Val *top, PtPickle *p) {
  if (top->kind != V_DICT)
    return err_set(m->err, "%s: data.pkl holds %s, not a state_dict (a dict of tensors)", m->what,
                   kind_name(top->kind));
  size_t n = top->n / 2;
  if (n > 0x7fffffff) return err_set(m->err, "%s: data.pkl holds too many tensors", m->what);
  p->tensors = arena_alloc(&m->arena, (n + 1) * sizeof(PtTensorRef));
  if (!p->tensors) return err_set(m->err, "%s: out of memory", m->what);
  for (size_t i = 0; i < n; i++) {
    const Val *k = top->items[2 * i], *v = top->items[2 * i + 1];
    if (k->kind != V_STR || strlen(k->s) != k->slen)
      return err_set(m->err, "%s: data.pkl has a key that is %s, not a tensor name", m->what,
                     k->kind == V_STR ? "a string with a NUL byte" : kind_name(k->kind));
    if (v->kind != V_TENSOR)
      return err_set(m->err,
                     "%s: data.pkl holds \"%.80s\" = %s, not a tensor: Stepformer reads a state_dict, as "
                     "torch.save(model.state_dict(), PATH) writes it",
                     m->what, k->s, kind_name(v->kind));
    p->tensors[i] = *v->t;
    p->tensors[i].name = k->s;
  }
  p->n = (int)n;
  return true;
}

bool ptpickle_load(PtPickle *p, const uint8_t *bytes, size_t len, const char *what, Err *err) {
  memset(p, 0, sizeof *p);
  Machine m = {.b = bytes, .len = len, .what = what, .err = err};
  m.arena.limit = 128 * (len + 64) + (1u << 20);
  bool done = false,
       ok = grow((void **)&m.stack, &m.scap, 16, sizeof(Val *)); // never NULL: stack + k is defined
  if (!ok) err_set(err, "%s: out of memory", what);
  while (ok && !done) {
    if (m.pos >= len) {
      m.at = len;
      ok = fail(&m, "the pickle ends without STOP (truncated)");
      break;
    }
    ok = step(&m, &done);
  }
  if (ok) ok = collect(&m, m.stack[m.sp - 1], p);
  free(m.stack);
  free(m.marks);
  free(m.memo);
  if (!ok) {
    arena_free(m.arena.head);
    memset(p, 0, sizeof *p);
    return false;
  }
  p->arena = m.arena.head;
  return true;
}
