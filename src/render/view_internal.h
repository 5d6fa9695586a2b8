// view_internal.h -- shared between view_layout.c (the equation engine: operands and operators
// in rows, sized, placed and drawn) and view_stages.c, view_decoder.c, view_classes.c (which
// operands each stage shows).
// Not part of the render layer's public API.
#ifndef SF_VIEW_INTERNAL_H
#define SF_VIEW_INTERNAL_H

#include "view.h"

#define VIEW_MAX_ROWS 4
#define VIEW_MAX_ITEMS 48

typedef enum { IT_OP, IT_TEX, IT_DELIM } ItemKind;

typedef struct {
  ItemKind kind;
  int op;          // IT_OP: index into the layout's operands
  const char *tex; // IT_TEX: TeX source of an operator, "\\times", "=" ...
  char delim;      // IT_DELIM: one of ( ) [ ], drawn as tall as the row's tallest operand
} Item;

typedef struct {
  Item items[VIEW_MAX_ITEMS];
  int n;
} EqRow;

// Per-operand decoration switches, parallel to ViewLayout.ops.
typedef struct {
  bool row_labels;       // token / dimension labels on the left
  bool row_sums;         // Σ of each row on the right (softmax)
  uint32_t symbol_color; // 0: theme text
  const char *caption;   // a line of plain text above the symbol (compare views), or NULL
  bool caption_row;      // the caption starts at the operand and may run along the whole row
  bool own_focus;        // focus_row/col below replace the view's (another sentence's tokens)
  int focus_row, focus_col;
  bool mark_top;   // a vocabulary too long to name names the most likely words of row top_row
  int top_row;     // (instead of the sentence's words)
  bool grid_lower; // a lower row of a grid of heads: its column labels may be left to the top row's
} OpDeco;

typedef struct {
  Scene *s;
  const Trace *t;
  const ViewOptions *o;
  ViewLayout *lay;
  OpDeco deco[VIEW_MAX_OPS];
  EqRow rows[VIEW_MAX_ROWS];
  int n_rows;
  float x, y, w, h;     // the view's rectangle
  float fs;             // label size of the picture (fitted, times the zoom), set by eq_layout_and_draw
  float smax;           // largest cell at zoom 1: grows with the area
  float fs_scale;       // 1, or less when even the smallest labels leave no room (eq_layout_and_draw)
  bool one_tier;        // turned column labels on one tier only (eq_layout_and_draw tries both)
  float bars_h;         // > 0: the side colour bars take this height (a chart sits under the equation)
  float bars_w;         // > 0: a chart this wide sits between the equation and the side colour bars
  int win_first, win_n; // a long sentence's window of tokens (eq_window), win_n 0: all tokens
  const char *win_text; // the line that names the window, when not eq_window_note's own (two sentences)
  float win_y;          // the top of the line under the picture that names the window
  bool measure;         // eq_layout_and_draw only sizes the picture (its token cell into `cell`)
  float cell;           // the token cell at zoom 1 eq_layout_and_draw chose
  int chart_bars;       // the prediction chart's bars, when fewer than it shows (0: all of them)
  float chart_share;    // the prediction chart's share of the height (0: PRED_CHART, view_stages.c)
  bool share_cols;      // a grid of heads labels its columns once, above its top row (grid_lower's
                        // are left out: eq_layout_and_draw tries it when some axis names only some)
} Eq;

// Adds an operand; returns its index in the layout.
int eq_op(Eq *e, Operand op, const char *symbol, LinkKind link);
void eq_tex(Eq *e, int row, const char *tex);
void eq_put(Eq *e, int row, int op);   // places an added operand in a row
void eq_delim(Eq *e, int row, char d); // a bracket or parenthesis that grows with the matrices
// Empties out for a new picture in the area (x, y, w, h): no operands, no chart, no pan. Every
// view calls it first, so that nothing of the last picture's layout is read as this one's.
void lay_begin(ViewLayout *out, const ViewOptions *o, float x, float y, float w, float h);
// The KV cache's view (view_kvcache.c): K and V rows per token and layer, their size in bytes.
void view_kvcache(Scene *s, const Trace *t, const ViewOptions *o, int first, int n, float x, float y, float w,
                  float h);
// The token rows view_kvcache has room for in a view h pixels high, each labelled at 14 px at 720 lines.
int view_kvcache_rows(const ViewOptions *o, float h);
// "Weights as stored" (view_stored.c): o->stored's block, its scales, codes and values, one weight
// worked out, the whole matrix and its error or rounding bound.
void view_stored(Scene *s, const ViewOptions *o, float x, float y, float w, float h);
// A sentence longer than VIEW_TOKENS_READABLE: the window of its tokens every operand added after
// shows (eq_op), a line kept at the bottom of the area to say which, the layout told (tok_*).
void eq_window(Eq *e);
// The smallest token cell of a window: every token of it can be named (FS_LEAST's labels turned).
float eq_window_cell(const Eq *e);
// The least size of a window's token labels (VIEW_WINDOW_LABEL: 18 px at 720 lines), and the
// smallest a laid-out and drawn e gave its windowed token axes' labels (ViewOperand.label_px; a
// large number when it drew none).
float eq_window_label(const Eq *e);
float eq_window_label_px(const Eq *e);
void eq_window_note(Eq *e);      // that line (eq_layout_and_draw draws it; the tokens stage calls it)
void eq_layout_and_draw(Eq *e);  // sizes, scales, positions and draws everything
float eq_bar_width(const Eq *e); // the width the side colour bars take at the right
// Under the equation, the focused row's (else the last row's) most likely next words of the
// prediction operand kp as large bars (bars.h), the heatmap's vocabulary axis named at them;
// the equation keeps the top half of the area. pred_chart_of draws such a chart for row `row`
// of trace tensor `index` in x, y, w, h.
void eq_pred_chart(Eq *e, int kp);
// The tokens stages (view_tokens.c): tok's tokens as boxes at height y of the area, each with its
// symbol sym_{first + i} above and its id below, then the vocabulary v under them ("vocab_title = V
// words"), the tokens' rows marked, as large as the rest of the area allows.
void eq_token_row(Eq *e, const Tokens *tok, const Vocab *v, const char *sym, int first, float y,
                  const char *vocab_title);
// What the model's tokenizer did to the sentence, in a line (words, characters, BPE, WordPiece).
const char *view_tokens_caption(const Model *m);
// A note of the tokens stages, centred on baseline y at 0.8 of the tokens' size: on two lines (cut
// at its "; ") when it is wider than the area, and smaller still if a line does not fit.
void eq_tokens_note(Eq *e, const char *text, float y);
// hidden (a reveal= step, ViewOptions.hide): the caption and a "?" in place of the bars.
void pred_chart_of(Eq *e, const Trace *t, int index, int row, float x, float y, float w, float h,
                   bool hidden);
// Whether row `row` of operand k is hidden (ViewOptions.hide): a result's (or a difference's) whole
// matrix, or its focus row. Every drawing of a value asks it first.
bool eq_row_hidden(const Eq *e, int k, int row);
// The k most likely columns of row `row` of a probability operand, best first, into idx; returns
// how many (fewer when there are fewer columns).
int view_top_words(const Operand *op, int row, int k, int *idx);

// Pieces of the stages' equations (view_stages.c), shared by the files that compose stages.
// Trace tensor `index` as an operand: head h of a per-head tensor, or -1 for the heads side by side.
int eq_tensor(Eq *e, int index, int head, bool transpose, const char *symbol, LinkKind link);
const char *eq_head_symbol(Eq *e, const char *base, int h); // head h of base: "Q_{1}" (1-based)
void eq_head_color(Eq *e, int k, int h);                    // operand k's symbol in head h's colour
void eq_result(Eq *e, int k);                               // operand k is what the stage computes
// Row `row`: [x] × [W] + [b] = [y], or fn([x] × [W] + [b]) = [y] when fn is not NULL (b < 0: no
// bias); x links by rows, W and b by columns. y is the result unless an earlier row gave one.
void eq_linear(Eq *e, int row, const char *fn, int x, const char *xs, int W, const char *ws, int b,
               const char *bs, int y, const char *ys);
// fn([a]) = [r] in row `row`: a function applied to one matrix, row by row (softmax, LayerNorm);
// r is the result.
void eq_apply(Eq *e, int row, const char *fn, int ka, int kr);
// [a] × [b] = [r] in row 0 from operands already made: a and b with their row labels, r the result.
void eq_product(Eq *e, int ka, int kb, int kr);
void eq_single(Eq *e, int index, const char *sym); // one matrix with its token labels (one-hot, P)
// [a] + [b] = [out], or norm([a] + [b]) = [out] when norm is not NULL: a residual.
void eq_add_norm(Eq *e, int a, const char *as, int b, const char *bs, int out, const char *os,
                 const char *norm);
// Every head's matrix of a per-head tensor in a grid of small multiples (the stage's head = -1).
void eq_all_heads(Eq *e, int index, const char *base);

// One attention block's tensors and the TeX names they carry: an encoder layer's or a decoder
// layer's self-attention ("Q", "K", ...), or a decoder layer's cross-attention ("Q^c", ...).
// S_raw is the scores before the mask (S where there is none).
typedef struct {
  int Q, K, V, S_raw, S, A, AV, concat, Wo, bo, attn;
  const char *q, *k, *v, *s, *a, *head, *w_o, *b_o, *out;
  bool braced; // head h's symbols as {Q^c}_{1} (the decoder's, self-attention too), else Q_{1}
} EqAttn;
// The self-attention of y, a TraceLayer or a TraceDecLayer (both name its tensors alike), under
// the course's names; `out` names its result ("\\mathrm{MultiHead}(Z)").
#define EQ_SELF_ATTN(y, out)                                                                                 \
  ((EqAttn){(y)->Q,      (y)->K,  (y)->V,           (y)->S_raw, (y)->S, (y)->A, (y)->AV,                     \
            (y)->concat, (y)->Wo, (y)->bo,          (y)->attn,  "Q",    "K",    "V",                         \
            "S",         "A",     "\\mathrm{head}", "W^o",      "b^o",  (out),  false})
// Its stages for head h (-1: all heads): Q_h K_hᵀ / √d_k = S_h; softmax(S_h) = A_h;
// A_h V_h = head_h; [head_1 ... head_H] = Concat; Concat × W^o + b^o = out.
void eq_attn_scores(Eq *e, const EqAttn *b, int h);
void eq_attn_softmax(Eq *e, const EqAttn *b, int h);
void eq_attn_av(Eq *e, const EqAttn *b, int h);
void eq_attn_concat(Eq *e, const EqAttn *b);
void eq_attn_outproj(Eq *e, const EqAttn *b);

float view_text_size(const ViewOptions *o); // base label size in pixels (17 per 1080 lines, zoomed)
float view_zoom(const ViewOptions *o);      // o->zoom within 0.5 .. 3

// view_classes.c: draws the canonical extensions' stages (embedding LayerNorm, token type, head
// transform, the classifier's tail); false for a stage view_stages.c draws.
bool view_stage_ext(Eq *e, const TraceStep *st);
// view_modern.c: the stages of today's decoders (RMSNorm, RoPE, grouped K/V heads, SwiGLU); false
// for a stage view_stages.c draws.
bool view_stage_modern(Eq *e, const TraceStep *st);
// An encoder-decoder's stages (view_decoder.c): memory, STEP_DEC_* and STEP_CROSS_*. Fills e's
// rows; false for any other kind.
bool view_decoder_compose(Eq *e, const TraceStep *st);

// The model view (view_model.c): every layer's A_h as a thumbnail in a layers × heads grid,
// filling out->grid (no operands: the window hit-tests with view_model_hit).
void view_model_render(Scene *s, const Trace *t, const ViewOptions *o, float x, float y, float w, float h,
                       ViewLayout *out);
// The view inside the pass o->inside (view_inside.c), for step `step`'s layer.
void view_inside_render(Scene *s, const Trace *t, int step, const ViewOptions *o, float x, float y, float w,
                        float h, ViewLayout *out);

#endif
