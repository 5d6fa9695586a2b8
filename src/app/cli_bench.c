// cli_bench.c -- `stepformer bench` (filled in with the benchmark work).
#include <stdio.h>

#include "cli.h"

int cli_bench(int argc, char **argv) {
  (void)argc, (void)argv;
  return cli_fail("bench", "not built yet");
}
