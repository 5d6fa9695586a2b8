// strtab.h -- a hash table from byte strings to ints, for vocabularies (token -> id).
//
// Keys are (pointer, length) pairs: the table does not copy them, so the caller keeps the key
// bytes alive (a vocabulary's own block of token strings) until strtab_free. Keys may hold any
// byte, NUL included. Putting a key that is already there replaces its value (later wins, as a
// Python dict built line by line). Open addressing, FNV-1a, at most half full.
//
//     StrTab t;
//     if (!strtab_init(&t, 50000)) return false;     // out of memory
//     strtab_put(&t, "the", 3, 1996);
//     int id = strtab_get(&t, "the", 3);             // 1996; -1 when absent
//     strtab_free(&t);
#ifndef SF_STRTAB_H
#define SF_STRTAB_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  const char **keys; // [cap] NULL for an empty slot
  int *lens;         // [cap]
  int *vals;         // [cap]
  size_t cap;        // a power of two
  size_t n;          // keys held
} StrTab;

bool strtab_init(StrTab *t, size_t expected); // false when out of memory (t is then empty)
// Adds key -> val or replaces the value of key; returns the previous value, or -1 when key is new.
// Returns -2 when out of memory (the table is unchanged).
int strtab_put(StrTab *t, const char *key, int len, int val);
int strtab_get(const StrTab *t, const char *key, int len); // the value, or -1
void strtab_free(StrTab *t);

#endif
