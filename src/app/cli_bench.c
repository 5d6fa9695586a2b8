// cli_bench.c -- `stepformer bench`: times the full traced forward pass of one encoder layer at
// a few sizes and sets it against this machine's sgemm peak, measured by the same command.
//
// For each size a random one-layer model (post-norm, ReLU, seed 42) and a sentence of L distinct
// words are built, trace_new runs once, the forward is warmed up, then model_forward is timed
// (CLOCK_MONOTONIC) `runs` times; median and min are reported. A "run" of a tiny size repeats
// the forward enough times to last about a millisecond and reports the time of one forward.
//
// FLOPs count 2·M·N·K for each product of the layer: QKV [L,3D,D], scores H·[L,L,dk],
// A·V H·[L,dk,L], output projection [L,D,D], FFN1 [L,F,D], FFN2 [L,D,F]; the elementwise work
// (softmax, LayerNorm, ReLU, copies into the trace) is not counted but is timed.
//
// The sgemm peak is the best of a few C[n,n] = A[n,n]·B[n,n] products (n = 2048) through
// cblas_sgemm with OpenBLAS on the same number of threads, measured first.
//
// Threads: --threads n (1 by default: the machines are shared) gives the forward n threads
// (forward_set_threads: products split by columns, attention by heads) and keeps OpenBLAS on one
// thread inside the forward, so the two never compete for the cores. OpenBLAS starts its own
// threads when it loads (OPENBLAS_NUM_THREADS, else one per core); after the peak measurement
// they spin for a moment before they sleep, so the bench pauses 0.3 s before timing.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backward.h" // defines: TraceGrad, backward_new, backward_run (--train)
#include "cli.h"
#include "gemm.h" // defines: SF_HAVE_BLAS, gemm_kernel, gemm_kernel_name
#if SF_HAVE_BLAS
#include <cblas.h>
#else // the web build: no OpenBLAS, so no peak to measure (reported as 0) and one thread
static void openblas_set_num_threads(int n) { (void)n; }
#endif
#include "forward.h"      // defines: model_forward, forward_set_threads, KVCache
#include "generate.h"     // defines: gen_trace_ids, gen_argmax
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize

typedef struct {
  const char *name;
  int D, H, F, L;
} BenchSize;

static const BenchSize SIZES[] = {
    {"tiny", 16, 2, 64, 6},          // the classroom model
    {"seed6", 512, 8, 2048, 6},      // Vaswani et al.'s base model, one short sentence
    {"seed100", 512, 8, 2048, 100},  // ... a paragraph
    {"bert128", 768, 12, 3072, 128}, // BERT-base
    {"bert512", 768, 12, 3072, 512}, // BERT-base at its longest input
};
#define N_SIZES (int)(sizeof SIZES / sizeof *SIZES)

typedef struct {
  int runs, threads, peak_n;
  bool sizes[N_SIZES];
  bool machine, tsv, peak, peak_only;
  const char *model, *text, *target; // --model: time this model's forward instead of the sizes
  bool train;                        // --train (with --model): forward + backward of one training step
} BenchOpts;

typedef struct {
  double median_s, min_s; // one forward
  int reps;               // forwards per timed run
} BenchTime;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Floating-point operations of one layer's six products.
static double layer_flops(const BenchSize *s) {
  double L = s->L, D = s->D, F = s->F;
  double qkv = 2 * L * 3 * D * D, scores = 2 * L * L * D, av = 2 * L * L * D;
  double out = 2 * L * D * D, ffn1 = 2 * L * F * D, ffn2 = 2 * L * D * F;
  return qkv + scores + av + out + ffn1 + ffn2;
}

// A random one-layer model and a trace of L distinct words "w0 w1 ...".
static Trace *bench_trace(const BenchSize *s, Model **model, Err *err) {
  size_t cap = 8 + (size_t)s->L * 8;
  char *lines = malloc(cap), *text = malloc(cap);
  if (!lines || !text) {
    free(lines), free(text);
    return err_set(err, "out of memory"), NULL;
  }
  int nl = snprintf(lines, cap, "<unk>"), nt = 0;
  for (int i = 0; i < s->L; i++) {
    nl += snprintf(lines + nl, cap - (size_t)nl, "\nw%d", i);
    nt += snprintf(text + nt, cap - (size_t)nt, "%sw%d", i ? " " : "", i);
  }
  Vocab v;
  Tokens tok;
  Trace *t = NULL;
  *model = NULL;
  if (vocab_from_lines(&v, lines, err)) {
    ModelConfig c = model_config_default();
    c.D = s->D, c.H = s->H, c.F = s->F, c.n_layers = 1;
    *model = model_random(&c, &v, 42, err);
    vocab_free(&v);
    if (*model && model_tokenize(*model, text, 0, &tok, err)) {
      t = trace_new(*model, &tok, err);
      tokens_free(&tok);
    }
  }
  free(lines), free(text);
  if (!t) model_free(*model), *model = NULL;
  return t;
}

// With --train, the gradients of the trace being timed: each run of it is then forward + backward.
static TraceGrad *train_grad;
static const Trace *train_trace;

// Times fn(ctx): warm up for ~0.1 s (at least 3 calls), learn how many calls make a 1 ms run,
// then `runs` runs; median and min of the time of one call.
static BenchTime time_calls(void (*fn)(void *), void *ctx, int runs) {
  int warm = 0;
  double t0 = now_s(), el;
  do {
    fn(ctx);
    warm++;
    el = now_s() - t0;
  } while (warm < 3 || el < 0.1);
  double one = el / warm;
  int reps = one >= 1e-3 ? 1 : (int)ceil(1e-3 / one);
  double *dt = malloc(sizeof(double) * (size_t)runs);
  EXPECT(dt);
  for (int r = 0; r < runs; r++) {
    double a = now_s();
    for (int k = 0; k < reps; k++) fn(ctx);
    dt[r] = (now_s() - a) / reps;
  }
  BenchTime bt = {median(dt, runs), 0, reps};
  bt.min_s = dt[0]; // sorted by median()
  free(dt);
  return bt;
}

static void forward_call(void *t) {
  model_forward(t);
  if (train_grad && t == train_trace) backward_run(train_grad);
}

static BenchTime time_forward(Trace *t, int runs) { return time_calls(forward_call, t, runs); }

// One generated token through the key/value cache: the cache holds the L tokens of the trace
// (kv_fill, once), each call pushes token `id` at position L (the same work every time).
typedef struct {
  KVCache *c;
  int L, id;
} CacheStep;

static void cache_call(void *ctx) {
  CacheStep *s = ctx;
  s->c->n = s->L;
  kv_push(s->c, s->id);
}

// A causal model with a head: one more token (the most likely) through the cache, and the full
// recompute the cache replaces (a traced forward of the L + 1 tokens). False on memory.
static bool time_next_token(const Trace *t, int runs, BenchTime *cached, BenchTime *full, Err *err) {
  KVCache c;
  if (!kv_init(&c, t->model, t->L + 1, err)) return false;
  kv_fill(&c, t);
  CacheStep st = {&c, t->L, gen_argmax(c.logits, t->cfg.V)};
  *cached = time_calls(cache_call, &st, runs);
  kv_free(&c);
  int *ids = malloc(sizeof(int) * (size_t)(t->L + 1));
  if (!ids) return err_set(err, "out of memory");
  memcpy(ids, t->tokens.ids, sizeof(int) * (size_t)t->L);
  ids[t->L] = st.id;
  Trace *t1 = gen_trace_ids(t->model, ids, t->L + 1, 1.0f, err);
  free(ids);
  if (!t1) return false;
  *full = time_forward(t1, runs);
  trace_free(t1);
  return true;
}

// Best GFLOP/s of C[n,n] = A[n,n]·B[n,n] over a few products.
static double sgemm_peak(int n) {
#if !SF_HAVE_BLAS
  (void)n;
  return 0.0;
#else
  size_t nn = (size_t)n * n;
  float *a = malloc(sizeof(float) * nn), *b = malloc(sizeof(float) * nn), *c = malloc(sizeof(float) * nn);
  EXPECT(a && b && c);
  for (size_t i = 0; i < nn; i++) {
    a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
  }
  double best = INFINITY;
  for (int r = 0; r < 6; r++) { // the first is a warm-up but may still be the best
    double t0 = now_s();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    double dt = now_s() - t0;
    if (r > 0 && dt < best) best = dt;
  }
  free(a), free(b), free(c);
  return 2.0 * n * (double)n * n / best * 1e-9;
#endif
}

static void print_machine(FILE *f, const char *prefix) {
  char model[256] = "unknown";
  FILE *ci = fopen("/proc/cpuinfo", "r");
  if (ci) {
    char line[512];
    while (fgets(line, sizeof line, ci))
      if (!strncmp(line, "model name", 10)) {
        char *p = strchr(line, ':');
        if (p) {
          p += strspn(p + 1, " \t") + 1;
          p[strcspn(p, "\n")] = 0;
          snprintf(model, sizeof model, "%s", p);
        }
        break;
      }
    fclose(ci);
  }
  const char *sep = *prefix ? "\t" : ": ";
  fprintf(f, "%scpu%s%s\n", prefix, sep, model);
  fprintf(f, "%scores%s%ld\n", prefix, sep, sysconf(_SC_NPROCESSORS_ONLN));
#if SF_HAVE_BLAS
  fprintf(f, "%sopenblas%s%s (kernels for %s)\n", prefix, sep, openblas_get_config(),
          openblas_get_corename());
#else
  fprintf(f, "%sopenblas%snone (a build without BLAS)\n", prefix, sep);
#endif
  fprintf(f, "%skernel%s%s (%s)\n", prefix, sep, gemm_kernel_name(gemm_kernel()),
          gemm_kernel_about(gemm_kernel()));
}

static void usage(FILE *f) {
  fprintf(f, "usage: stepformer bench [--runs N] [--threads 1|2] [--sizes NAME,...] [--machine] [--tsv]\n"
             "                        [--model FILE [--text TEXT] [--target TEXT] [--train]]\n"
             "                        [--no-peak | --peak-only] [--peak-n N]\n\n"
             "Times the full traced forward pass (model_forward: every stage kept in the trace) of one\n"
             "random encoder layer (post-norm, ReLU) and reports the median and min of N timed runs,\n"
             "the GFLOP/s achieved by its six products (QKV, scores, A·V, output projection, FFN1,\n"
             "FFN2; 2·M·N·K each) and that as a share of this machine's sgemm peak, measured here with\n"
             "cblas_sgemm on 2048×2048 matrices and the same number of threads.\n\n"
             "  --runs N        timed runs per size (default 25; use at least 20 for a report)\n"
             "  --threads 1|2   threads of the forward (default 1: the machines are shared). With 2\n"
             "                  it splits products by columns and attention by heads; OpenBLAS stays\n"
             "                  on one thread inside the forward and uses 2 for the peak measurement\n"
             "  --sizes LIST    comma-separated, from:");
  for (int i = 0; i < N_SIZES; i++) fprintf(f, " %s", SIZES[i].name);
  fprintf(f, "\n                  (default all). tiny D=16,H=2,F=64,L=6; seed6/seed100 D=512,H=8,\n"
             "                  F=2048 at L=6/100; bert128/bert512 D=768,H=12,F=3072 at L=128/512\n"
             "  --machine       also print the CPU, core count and OpenBLAS build\n"
             "  --tsv           tab-separated output, one header line (for scripts/bench_forward.py)\n"
             "  --no-peak       skip the sgemm peak (reported as 0)\n"
             "  --peak-only     measure the sgemm peak and time no forward\n"
             "  --peak-n N      matrix size of the peak measurement (default 2048)\n"
             "  --model FILE    time this model's traced forward instead (any model file or hub folder)\n"
             "                  on --text TEXT (default: \"" MODEL_SOURCE_DEFAULT_TEXT "\") and, for an\n"
             "                  encoder-decoder, --target TEXT (the decoder's input after <bos>); it\n"
             "                  also times the decoder alone, as a generation step computes it\n"
             "  --train         with --model: time one training step's forward + backward (the loss\n"
             "                  against the next token, every stage's and weight's gradient)\n\n"
             "Run on an idle machine, or alternate and repeat runs and compare medians\n"
             "(scripts/bench_forward.py does that against PyTorch).\n");
}

static bool parse_sizes(BenchOpts *o, const char *list, Err *err) {
  memset(o->sizes, 0, sizeof o->sizes);
  const char *p = list;
  while (*p) {
    size_t n = strcspn(p, ",");
    int found = -1;
    for (int i = 0; i < N_SIZES; i++)
      if (strlen(SIZES[i].name) == n && !strncmp(SIZES[i].name, p, n)) found = i;
    if (found < 0)
      return err_set(err, "--sizes: unknown size \"%.*s\" (see stepformer bench --help)", (int)n, p);
    o->sizes[found] = true;
    p += n + (p[n] == ',');
    if (p[-1] == ',' && !*p) return err_set(err, "--sizes %s: a name is missing after the last comma", list);
  }
  if (!*list) return err_set(err, "--sizes is empty: name at least one size (see stepformer bench --help)");
  return true;
}

static bool parse_int_opt(const char *name, const char *v, int lo, int hi, int *out, Err *err) {
  char *end;
  long n = strtol(v, &end, 10);
  if (*v == 0 || *end || n < lo || n > hi)
    return err_set(err, "%s %s: expected a number in %d..%d", name, v, lo, hi);
  *out = (int)n;
  return true;
}

static bool parse_opts(BenchOpts *o, int argc, char **argv, Err *err) {
  *o = (BenchOpts){.runs = 25, .threads = 1, .peak_n = 2048, .peak = true};
  for (int i = 0; i < N_SIZES; i++) o->sizes[i] = true;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_value = !strcmp(a, "--runs") || !strcmp(a, "--threads") || !strcmp(a, "--sizes") ||
                     !strcmp(a, "--peak-n") || !strcmp(a, "--model") || !strcmp(a, "--text") ||
                     !strcmp(a, "--target");
    if (has_value && i + 1 >= argc) return err_set(err, "%s needs a value", a);
    for (int k = 1; k < i; k++)
      if (!strcmp(argv[k], a)) return err_set(err, "%s is given twice: give it once", a);
    if (!strcmp(a, "--runs")) {
      if (!parse_int_opt(a, argv[++i], 1, 100000, &o->runs, err)) return false;
    } else if (!strcmp(a, "--threads")) {
      if (!parse_int_opt(a, argv[++i], 1, 2, &o->threads, err)) return false;
    } else if (!strcmp(a, "--peak-n")) {
      if (!parse_int_opt(a, argv[++i], 64, 8192, &o->peak_n, err)) return false;
    } else if (!strcmp(a, "--sizes")) {
      if (!parse_sizes(o, argv[++i], err)) return false;
    } else if (!strcmp(a, "--model"))
      o->model = argv[++i];
    else if (!strcmp(a, "--text"))
      o->text = argv[++i];
    else if (!strcmp(a, "--target"))
      o->target = argv[++i];
    else if (!strcmp(a, "--machine"))
      o->machine = true;
    else if (!strcmp(a, "--train"))
      o->train = true;
    else if (!strcmp(a, "--tsv"))
      o->tsv = true;
    else if (!strcmp(a, "--no-peak"))
      o->peak = false;
    else if (!strcmp(a, "--peak-only"))
      o->peak_only = true;
    else
      return err_set(err, "unknown option \"%s\" (see stepformer bench --help)", a);
  }
  if (!o->peak && o->peak_only) return err_set(err, "--no-peak and --peak-only exclude each other: give one");
  if (o->train && !o->model)
    return err_set(err, "--train times a model's training step: give --model FILE too");
  if (!o->model && (o->text || o->target))
    return err_set(err, "--text and --target time a model's forward: give --model FILE too");
  return true;
}

// --model: the traced forward of that model on --text (and, for an encoder-decoder, the decoder's
// input <bos> + --target). For an encoder-decoder also the decoder alone, as every generation step
// after the first computes it: the encoder, memory and the cross-attention's K and V of memory
// kept from a first full forward (trace.h, memory_ready).
static int bench_model(const BenchOpts *o) {
  Err err = {0};
  Model *m = model_load(o->model, &err);
  if (!m) return cli_fail("bench", err.msg);
  Trace *t = cli_build_any_trace(m, o->text ? o->text : MODEL_SOURCE_DEFAULT_TEXT, o->target, &err);
  if (!t) {
    model_free(m);
    return cli_fail("bench", err.msg);
  }
  if (o->train) {
    model_forward(t);
    if (!(train_grad = backward_new(t, NULL, 0, &err))) {
      trace_free(t);
      model_free(m);
      return cli_fail("bench", err.msg);
    }
    train_trace = t;
  }
  BenchTime full = time_forward(t, o->runs), dec = {0}, cached = {0}, next = {0};
  bool causal = t->T == 0 && t->pred >= 0 && t->cfg.causal && !o->train;
  if (causal && !time_next_token(t, o->runs, &cached, &next, &err)) {
    backward_free(train_grad);
    train_grad = NULL;
    trace_free(t);
    model_free(m);
    return cli_fail("bench", err.msg);
  }
  if (t->T > 0) {
    t->memory_ready = true; // what model_forward then skips was filled by the forwards above
    dec = time_forward(t, o->runs);
    t->memory_ready = false;
  }
  if (o->tsv) {
    printf("model\tL\tT\tthreads\truns\tmedian_s\tmin_s\tdecoder_median_s\tdecoder_min_s\tcached_median_s\t"
           "cached_min_s\tnext_full_median_s\tnext_full_min_s\n");
    printf("%s\t%d\t%d\t%d\t%d\t%.9f\t%.9f\t%.9f\t%.9f\t%.9f\t%.9f\t%.9f\t%.9f\n", m->source, t->L, t->T,
           o->threads, o->runs, full.median_s, full.min_s, dec.median_s, dec.min_s, cached.median_s,
           cached.min_s, next.median_s, next.min_s);
  } else {
    char dec_len[24] = ""; // an encoder-decoder's decoder input
    if (t->T > 0) snprintf(dec_len, sizeof dec_len, " T=%d", t->T);
    printf("%s, L=%d%s, %d thread%s, %d runs: traced forward%s median %.4f ms (min %.4f)\n", m->source, t->L,
           dec_len, o->threads, o->threads > 1 ? "s" : "", o->runs, train_grad ? " + backward" : "",
           full.median_s * 1e3, full.min_s * 1e3);
    if (t->T > 0)
      printf("  one generation step (the decoder alone, memory and its K, V kept): median %.4f ms (min "
             "%.4f), %.2f%% of the full forward\n",
             dec.median_s * 1e3, dec.min_s * 1e3, 100.0 * dec.median_s / full.median_s);
    if (causal)
      printf("  one more token through the key/value cache: median %.4f ms (min %.4f); the full recompute of "
             "L=%d it replaces: median %.4f ms (min %.4f), %.1fx\n",
             cached.median_s * 1e3, cached.min_s * 1e3, t->L + 1, next.median_s * 1e3, next.min_s * 1e3,
             next.median_s / cached.median_s);
  }
  backward_free(train_grad);
  train_grad = NULL;
  trace_free(t);
  model_free(m);
  return 0;
}

int cli_bench(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  BenchOpts o;
  Err err = {0};
  if (!parse_opts(&o, argc, argv, &err)) return cli_fail("bench", err.msg);
  double peak = 0.0;
  if (o.peak || o.peak_only) {
    openblas_set_num_threads(o.threads);
    peak = sgemm_peak(o.peak_n);
  }
  openblas_set_num_threads(1);
  forward_set_threads(o.threads);
  if (o.model && !o.peak_only) {
    if (o.machine) print_machine(stdout, o.tsv ? "#" : "");
    return bench_model(&o);
  }
  if (o.tsv) {
    if (o.machine) print_machine(stdout, "#");
    printf("#threads\t%d\n#peak_gflops\t%.3f\n", o.threads, peak);
    if (o.peak_only) return 0;
    printf("size\tD\tH\tF\tL\tthreads\truns\treps\tgflop\tmedian_s\tmin_s\tgflops\tpeak_gflops\n");
  } else {
    if (o.machine) print_machine(stdout, "");
    if (o.peak || o.peak_only)
      printf("sgemm peak (%d×%d, %d thread%s): %.1f GFLOP/s\n", o.peak_n, o.peak_n, o.threads,
             o.threads > 1 ? "s" : "", peak);
    else
      printf("sgemm peak: not measured (--no-peak)\n");
    if (o.peak_only) return 0;
    printf("traced forward of one layer, %d thread%s, %d runs each:\n", o.threads, o.threads > 1 ? "s" : "",
           o.runs);
    printf("%-8s %5s %3s %5s %4s %9s %11s %11s %9s %7s\n", "size", "D", "H", "F", "L", "GFLOP", "median ms",
           "min ms", "GFLOP/s", "% peak");
  }
  if (o.peak || o.peak_only) { // let OpenBLAS's threads go to sleep
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  fflush(stdout);
  for (int i = 0; i < N_SIZES; i++) {
    if (!o.sizes[i]) continue;
    const BenchSize *s = &SIZES[i];
    Model *m;
    Trace *t = bench_trace(s, &m, &err);
    if (!t) return fprintf(stderr, "stepformer bench: %s: %s\n", s->name, err.msg), 1;
    BenchTime bt = time_forward(t, o.runs);
    double fl = layer_flops(s), gf = fl / bt.median_s * 1e-9;
    if (o.tsv)
      printf("%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.6f\t%.9f\t%.9f\t%.3f\t%.3f\n", s->name, s->D, s->H, s->F,
             s->L, o.threads, o.runs, bt.reps, fl * 1e-9, bt.median_s, bt.min_s, gf, peak);
    else
      printf("%-8s %5d %3d %5d %4d %9.4f %11.4f %11.4f %9.2f %6.1f%%\n", s->name, s->D, s->H, s->F, s->L,
             fl * 1e-9, bt.median_s * 1e3, bt.min_s * 1e3, gf, peak > 0 ? 100 * gf / peak : 0.0);
    fflush(stdout);
    trace_free(t);
    model_free(m);
  }
  return 0;
}
