// check.h -- the assertions of the test programs.
//
// CHECK records a failure (file:line, the expression and a formatted note) and carries on, so a
// test reports every broken case at once; check_exit() ends main with 1 when anything failed,
// 0 otherwise. A test that checks nothing fails too (check_exit demands at least one CHECK).
//
//     int main(void) {
//       CHECK(1 + 1 == 2, "arithmetic");
//       CHECK_NEAR(x, 0.5, 1e-6, "softmax of two equal scores");
//       return check_exit("test_example");
//     }
#ifndef SF_TEST_CHECK_H
#define SF_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int check_failures, check_count;

#define CHECK(cond, ...)                                                                                     \
  do {                                                                                                       \
    check_count++;                                                                                           \
    if (!(cond)) {                                                                                           \
      check_failures++;                                                                                      \
      fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond);                                      \
      fprintf(stderr, __VA_ARGS__);                                                                          \
      fputc('\n', stderr);                                                                                   \
    }                                                                                                        \
  } while (0)

#define CHECK_NEAR(a, b, tol, ...)                                                                           \
  do {                                                                                                       \
    double check_a_ = (a), check_b_ = (b);                                                                   \
    check_count++;                                                                                           \
    if (!(fabs(check_a_ - check_b_) <= (tol))) {                                                             \
      check_failures++;                                                                                      \
      fprintf(stderr, "%s:%d: FAILED %s = %.9g, expected %.9g (tol %g): ", __FILE__, __LINE__, #a, check_a_, \
              check_b_, (double)(tol));                                                                      \
      fprintf(stderr, __VA_ARGS__);                                                                          \
      fputc('\n', stderr);                                                                                   \
    }                                                                                                        \
  } while (0)

static inline int check_exit(const char *name) {
  if (check_count == 0) {
    fprintf(stderr, "%s: no checks ran\n", name);
    return 1;
  }
  if (check_failures) {
    fprintf(stderr, "%s: %d of %d checks FAILED\n", name, check_failures, check_count);
    return 1;
  }
  printf("%s: all %d checks passed\n", name, check_count);
  return 0;
}

// The folder of the tests (reference files under ref/), from the environment ctest sets.
static inline const char *check_test_dir(void) {
  const char *d = getenv("SF_TEST_DIR");
  return d ? d : "tests";
}

#endif
