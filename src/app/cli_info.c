// cli_info.c -- `stepformer info`: what a model file holds.
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "gemm.h"         // defines: gemm_kernel, gemm_kernel_name, gemm_kernel_about
#include "memsize.h"      // defines: mem_human
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: ModelTokenizer
#include "modelstore.h"   // defines: modelstore_list

static const char *USAGE =
    "usage: stepformer info --model FILE|DIR\n"
    "       stepformer info --paths\n"
    "       stepformer info --models\n"
    "\n"
    "Prints the configuration of a model -- a safetensors file, a torch.save .pt (with its .json),\n"
    "a GGUF file or a hub folder: D, H, d_k, F, layers, activation, norm, causal --, its vocabulary\n"
    "size and words, its parameter count and whether it has a prediction head or a classifier. For\n"
    "an encoder-decoder, both sides: the encoder's layers and source vocabulary, the decoder's\n"
    "layers and target vocabulary. For a Hugging Face hub folder (GPT-2, BERT: config.json,\n"
    "model.safetensors, tokenizer files), also the architecture, the tokenizer and the tensors of\n"
    "the file the model does not use. For a GGUF file (llama.cpp, Ollama), its architecture,\n"
    "version, size and bits per weight, its tensor types and each tensor's type and shape (layers\n"
    "folded: blk.{i}.ffn_up.weight ×12). For the course notebooks' own modules (per-head\n"
    "AttentionHeads, einsum SelfAttention), their kind, and for the einsum one a note: it divides\n"
    "its scores by sqrt(D), carried by its queries map (see README).\n"
    "\n"
    "  --model FILE|DIR  the model to describe\n"
    "  --paths           where the shipped lessons and models are looked for, in order\n"
    "  --models          the models Ollama's store and the Hugging Face cache hold: open one with\n"
    "                    --model ollama:NAME[:TAG] or --model FOLDER\n"
    "                    (STEPFORMER_DATA, ../share/stepformer beside the program, the source\n"
    "                    tree of a developer's build, XDG_DATA_DIRS), your own lessons\n"
    "                    (XDG_DATA_HOME/stepformer/lessons), and every lesson and model found\n";

// Prints each line of a metadata value (lines joined by '\n') after the label.
static void meta_lines(const char *label, const char *v) {
  while (v && *v) {
    size_t n = strcspn(v, "\n");
    printf("%-10s %.*s\n", label, (int)n, v);
    v += n + (v[n] == '\n');
  }
}

// A GGUF file's lines (gguf_model.h): its kind, its size and bits per weight, each tensor's type.
static void gguf_lines(const Model *m) {
  const char *arch = model_meta(m, "gguf_architecture");
  if (!arch) return;
  printf("kind       %s (a GGUF file, llama.cpp's names)\n", arch);
  printf("file       %s\n", model_meta(m, "gguf_file"));
  printf("types      %s\n", model_meta(m, "gguf_types"));
  meta_lines("tensor", model_meta(m, "gguf_tensors"));
  const char *unused = model_meta(m, "gguf_unused");
  if (unused) meta_lines("unused", unused);
}

// A hub folder's lines: the architecture, its tokenizer, the tensors left unused.
static void hub_lines(const Model *m) {
  const char *arch = model_meta(m, "hub_architecture"), *unused = model_meta(m, "hub_unused");
  if (arch) printf("kind       %s (a Hugging Face hub folder)\n", arch);
  gguf_lines(m);
  const ModelTokenizer *tk = m->tokenizer;
  if (tk && tk->kind == TOK_BPE)
    printf("tokenizer  byte-level BPE (%s: %d tokens, %d merges)\n",
           model_meta(m, "gguf_architecture") ? "tokenizer.ggml.tokens + merges" : "vocab.json + merges.txt",
           tk->bpe.n_vocab, tk->bpe.n_merges);
  else if (tk && tk->kind == TOK_TOKJSON)
    printf("tokenizer  %s BPE (%s: %d ids, %d merges, %d added tokens)\n",
           tk->tj.byte_level ? "byte-level" : "SentencePiece-style",
           model_meta(m, "gguf_architecture") ? "tokenizer.ggml.*" : "tokenizer.json", tk->tj.n_vocab,
           tk->tj.n_merges, tk->tj.n_added);
  else if (tk && tk->kind == TOK_WORDPIECE)
    printf("tokenizer  WordPiece (vocab.txt: %d tokens, %s)\n", tk->wp.n,
           tk->wp.lower ? "lowercased" : "cased");
  if (arch) printf("unused     %s\n", unused ? unused : "none (every tensor of the file is used)");
}

int cli_info(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) return fputs(USAGE, stdout), 0;
  if (argc == 2 && !strcmp(argv[1], "--paths")) return cli_info_paths();
  if (argc == 2 &&
      !strcmp(argv[1], "--models")) { // what Ollama and the Hugging Face cache hold (modelstore.h)
    if (modelstore_list(stdout) == 0)
      printf("no model found in Ollama's store ($OLLAMA_MODELS, ~/.ollama/models) or the Hugging Face cache "
             "($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub)\n");
    return 0;
  }
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--model") && i + 1 < argc && !path)
      path = argv[++i];
    else if (!strcmp(argv[i], "--model"))
      return cli_fail("info", path ? "--model is given twice: give it once" : "--model needs a file");
    else {
      char msg[256];
      snprintf(
          msg, sizeof msg,
          "unknown option \"%s\" (usage: stepformer info --model FILE, or info --paths or --models alone)",
          argv[i]);
      return cli_fail("info", msg);
    }
  }
  if (!path) return cli_fail("info", "--model FILE is required");
  Err err = {0};
  Model *m = model_load(path, &err);
  if (!m) return cli_fail("info", err.msg);
  const ModelConfig *c = &m->cfg;
  printf("model      %s\n", path);
  hub_lines(m);
  const char *cm = model_meta(m, "course_module"), *cn = model_meta(m, "course_note");
  if (cm) printf("kind       %s\n", cm); // the course's modules (course.h)
  if (cn) printf("note       %s\n", cn);
  const char *ca = model_meta(m, "course_assumed"); // what the file could not tell (course_modules.c)
  if (ca) printf("note       %s\n", ca);
  printf("D          %d   (model width)\n", c->D);
  if (model_hkv(c) != c->H || model_dk(c) * c->H != c->D) // today's decoders: grouped K/V heads, head_dim
    printf("H          %d   (query heads of d_k = %d; %d K/V heads)\n", c->H, model_dk(c), model_hkv(c));
  else
    printf("H          %d   (heads, d_k = D/H = %d)\n", c->H, c->D / c->H);
  printf("F          %d   (feed-forward width)\n", c->F);
  bool s2s = model_is_seq2seq(m);
  if (s2s) {
    printf("kind       encoder-decoder (nn.Transformer): the decoder reads the encoder's memory\n");
    printf("layers     %d encoder, %d decoder\n", c->n_layers, c->n_dec_layers);
  } else {
    printf("layers     %d\n", c->n_layers);
  }
  printf("activation %s\n", model_activation_name(c->activation));
  printf("norm       %s\n", c->norm_first ? "pre-norm (norm_first=1)" : "post-norm (norm_first=0)");
  printf("causal     %s\n", s2s         ? "no (the encoder); the decoder's self-attention is always masked"
                            : c->causal ? "yes"
                                        : "no");
  printf("V          %d   (%svocabulary:", c->V, s2s ? "source " : "");
  for (int i = 0; i < m->vocab.n && i < 24; i++) printf(" %s", m->vocab.words[i]);
  printf("%s)\n", m->vocab.n > 24 ? " ..." : "");
  if (s2s) {
    printf("V_t        %d   (target vocabulary:", c->V_t);
    for (int i = 0; i < m->tgt_vocab.n && i < 24; i++) printf(" %s", m->tgt_vocab.words[i]);
    printf("%s)\n", m->tgt_vocab.n > 24 ? " ..." : "");
    printf(
        "head       prediction over the target vocabulary, after encoder.norm (memory) and decoder.norm\n");
  } else {
    if (m->has_classifier) {
      printf("head       classifier of %d classes%s, on the mean over positions:", m->n_classes,
             m->has_final_norm ? " after a final LayerNorm" : "");
      for (int i = 0; i < m->n_classes && i < 12; i++) printf("%s %s", i ? "," : "", m->class_names[i]);
      printf("%s\n", m->n_classes > 12 ? ", ..." : "");
    } else {
      printf("head       %s\n",
             m->has_head ? (m->has_final_norm ? (c->rms_norm ? "prediction head with final RMSNorm"
                                                             : "prediction head with final LayerNorm")
                                              : "prediction head")
                         : "none");
    }
  }
  char features[256];
  if (*model_features(m, features, sizeof features)) printf("features   %s\n", features);
  printf("parameters %ld\n", m->n_params);
  uint64_t mapped, own, packed; // what the open model holds (model_memory)
  model_memory(m, &mapped, &own, &packed);
  char tot[32], a[32], b[32], p[32];
  mem_human(tot, sizeof tot, mapped + own), mem_human(a, sizeof a, mapped), mem_human(b, sizeof b, own);
  mem_human(p, sizeof p, packed);
  printf("memory     %s of float32 weights (%s in the file's mapping, read when needed; %s of its own), %s "
         "packed "
         "copies%s\n",
         tot, a, b, p, packed || !model_layer_matrix_floats(c) ? "" : " (the forward packs block by block)");
  printf("kernel     %s (%s)\n", gemm_kernel_name(gemm_kernel()), gemm_kernel_about(gemm_kernel()));
  if (m->has_seed) printf("seed       %llu\n", (unsigned long long)m->seed);
  model_free(m);
  return 0;
}
