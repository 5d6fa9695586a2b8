// cli_info.c -- `stepformer info`: what a model file holds.
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *USAGE =
    "usage: stepformer info --model FILE\n"
    "\n"
    "Prints the configuration of a safetensors model (D, H, d_k, F, layers, activation, norm,\n"
    "causal), its vocabulary size and words, its parameter count and whether it has a\n"
    "prediction head.\n";

int cli_info(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) return fputs(USAGE, stdout), 0;
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--model") && i + 1 < argc && !path)
      path = argv[++i];
    else if (!strcmp(argv[i], "--model"))
      return cli_fail("info", path ? "--model is given twice: give it once" : "--model needs a file");
    else {
      char msg[256];
      snprintf(msg, sizeof msg, "unknown option \"%s\" (usage: stepformer info --model FILE)", argv[i]);
      return cli_fail("info", msg);
    }
  }
  if (!path) return cli_fail("info", "--model FILE is required");
  Err err = {0};
  Model *m = model_load(path, &err);
  if (!m) return cli_fail("info", err.msg);
  const ModelConfig *c = &m->cfg;
  printf("model      %s\n", path);
  printf("D          %d   (model width)\n", c->D);
  printf("H          %d   (heads, d_k = D/H = %d)\n", c->H, c->D / c->H);
  printf("F          %d   (feed-forward width)\n", c->F);
  printf("layers     %d\n", c->n_layers);
  printf("activation %s\n", model_activation_name(c->activation));
  printf("norm       %s\n", c->norm_first ? "pre-norm (norm_first=1)" : "post-norm (norm_first=0)");
  printf("causal     %s\n", c->causal ? "yes" : "no");
  printf("V          %d   (vocabulary:", c->V);
  for (int i = 0; i < m->vocab.n && i < 24; i++) printf(" %s", m->vocab.words[i]);
  printf("%s)\n", m->vocab.n > 24 ? " ..." : "");
  printf("head       %s\n",
         m->has_head ? (m->has_final_norm ? "prediction head with final LayerNorm" : "prediction head")
                     : "none");
  printf("parameters %ld\n", m->n_params);
  if (m->has_seed) printf("seed       %llu\n", (unsigned long long)m->seed);
  model_free(m);
  return 0;
}
