// memsize.c -- see memsize.h.
#include "memsize.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

uint64_t mem_available_override = 0;

uint64_t mem_system(void);

// SF_MEMORY_LIMIT: bytes, or a number with K, M or G (binary units); 0 when unset or unreadable.
static uint64_t env_limit(void) {
  const char *e = getenv("SF_MEMORY_LIMIT");
  if (!e || !*e) return 0;
  char *end;
  unsigned long long v = strtoull(e, &end, 10);
  int shift = *end == 'K' || *end == 'k'   ? 10
              : *end == 'M' || *end == 'm' ? 20
              : *end == 'G' || *end == 'g' ? 30
                                           : 0;
  if (end == e || (shift && end[1]) || (!shift && *end) || v > (UINT64_MAX >> shift)) return 0;
  return (uint64_t)v << shift;
}

uint64_t mem_available(void) {
  if (mem_available_override) return mem_available_override;
  uint64_t limit = env_limit(), have = mem_system();
  return limit && limit < have ? limit : have;
}

uint64_t mem_system(void) {
  FILE *fp = fopen("/proc/meminfo", "r");
  char line[256];
  unsigned long long kb = 0;
  while (fp && fgets(line, sizeof line, fp))
    if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
  if (fp) fclose(fp);
  if (kb) return (uint64_t)kb * 1024;
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : UINT64_MAX;
}

int64_t mem_max_floats(void) { return sizeof(size_t) >= 8 ? (int64_t)1 << 34 : (int64_t)1 << 28; }

void mem_human(char *out, size_t cap, uint64_t bytes) {
  static const char *const UNIT[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, u++;
  if (u == 0)
    snprintf(out, cap, "%llu B", (unsigned long long)bytes);
  else
    snprintf(out, cap, v < 10 ? "%.2f %s" : "%.1f %s", v, UNIT[u]);
}
