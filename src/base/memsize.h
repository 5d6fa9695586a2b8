// memsize.h -- how much memory the machine can give, and sizes said in words.
//
// A model of a billion weights takes gigabytes once read into floats (issues 34-35): every loader
// compares what it is about to take with mem_available() before it takes it, and refuses in one
// line when it cannot fit, instead of being stopped by the kernel's out-of-memory killer halfway.
//
//     if (need > mem_available()) ... "needs 4.6 GiB but 3.1 GiB are available" ...
//     char s[32]; mem_human(s, sizeof s, 4939212800);   // "4.6 GiB"
#ifndef SF_MEMSIZE_H
#define SF_MEMSIZE_H

#include <stddef.h>
#include <stdint.h>

// The memory a new allocation can take without pushing out other programs: /proc/meminfo's
// MemAvailable (free memory plus the page cache the kernel can drop), else the physical memory,
// else UINT64_MAX (no way to tell); at most the environment's SF_MEMORY_LIMIT when that is set (bytes,
// or a number followed by K, M or G: "SF_MEMORY_LIMIT=2G stepformer ..." keeps Stepformer within 2 GiB
// on a shared machine, and lets a test see the refusals). mem_available_override, when not 0, is
// returned instead (the unit tests' fixed machine).
uint64_t mem_available(void);
extern uint64_t mem_available_override;
// The system's own answer, without SF_MEMORY_LIMIT or the override.
uint64_t mem_system(void);

// The largest number of floats one model or one trace may hold at all, whatever the machine: 2^34
// (64 GiB) where size_t has 64 bits, 2^28 (1 GiB) on a 32-bit target (the web build), so that no
// byte count derived from it can overflow size_t. Past it, the loaders refuse before asking the
// machine; below it, mem_available() decides.
int64_t mem_max_floats(void);

// bytes as "812 MB"-style words in binary units: "512 B", "3.4 KiB", "538.1 MiB", "4.60 GiB".
void mem_human(char *out, size_t cap, uint64_t bytes);

#endif
