// nocov.h -- SF_NO_COVERAGE: a function left out of the fuzz build's coverage instrumentation.
//
// The fuzz build (-DSF_FUZZ=ON, clang) compiles every library with -fsanitize=fuzzer-no-link:
// each branch bumps a counter and each comparison calls into libFuzzer, which costs ten times
// the comparison. That is how the fuzzers find their way into a parser; in a loop over pixels,
// floats or cache slots it tells them nothing and was a tenth to a third of a target's time.
// Mark such a function SF_NO_COVERAGE: AddressSanitizer and UBSan still check it, the fuzzers
// still run it. Never on code that decides what outside bytes mean. Nothing in other builds.
//
//     SF_NO_COVERAGE static void blend_row(uint32_t *dst, const uint8_t *mask, int n);
#ifndef SF_NOCOV_H
#define SF_NOCOV_H

#if defined(__clang__)
#define SF_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define SF_NO_COVERAGE
#endif

#endif
