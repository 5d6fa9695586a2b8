// tex_parse.h -- the parser's state and the helpers tex_parse.c and tex_parse_cmd.c share.
// Private to tex_*.c. Positions are byte offsets into the source; lists end where their
// context allows (the T_* flags) and leave the terminator for that context to consume.
#ifndef SF_TEX_PARSE_H
#define SF_TEX_PARSE_H

#include "tex_internal.h"

enum { T_BRACE = 1, T_ENV = 2, T_RIGHT = 4, T_BRACKET = 8 }; // what may end a list

typedef struct {
  const char *s;
  size_t n, i; // source length, next byte
  TexArena *A;
  TexDiag *diag;
  int depth;
  bool deep_reported;
  uint32_t color;    // current \color, 0 inherit
  uint8_t alpha;     // current alphabet
  TexNode *cur_left; // innermost \left of this group, for \middle
} P;

typedef struct {
  TexNode *head, *tail;
} List;

#define ERR(p, pos, ...) tex_diag_add((p)->diag, (p)->s, (int)(pos), __VA_ARGS__)

static inline bool at_end(const P *p) { return p->i >= p->n; }
static inline char peek(const P *p) { return p->i < p->n ? p->s[p->i] : 0; }
static inline bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The code point at s[i], never reading past n; *len gets its length. Invalid: U+FFFD, *bad.
uint32_t tex_p_utf8_at(const char *s, size_t i, size_t n, size_t *len, bool *bad);
char *tex_p_clean_dup(TexArena *a, const char *s, size_t n); // invalid UTF-8 → U+FFFD
void tex_p_skip_ws(P *p);                                    // spaces and % comments
bool tex_p_enter(P *p, size_t pos); // one level deeper; false (reported) past TEX_MAX_DEPTH
void tex_p_leave(P *p);
TexNode *tex_p_node(P *p, TexNodeKind k, size_t pos);
void tex_p_append(List *l, TexNode *n); // n may be a chain
TexNode *tex_p_group_of(P *p, TexNode *body, size_t pos);
TexNode *tex_p_error_node(P *p, size_t pos, const char *text, size_t n);
size_t tex_p_name_len(const P *p, size_t i); // command name at s[i], after the backslash
bool tex_p_at_cmd(const P *p, const char *name);
void tex_p_skip_token(P *p);
TexNode *tex_p_group_body(P *p, size_t open); // after '{', through the matching '}'
TexNode *tex_p_parse_arg(P *p);               // NULL when missing
TexNode *tex_p_need_arg(P *p, size_t pos, const char *cmd, const char *what);
size_t tex_p_word_arg(P *p, const char **start); // {word}
bool tex_p_color_arg(P *p, size_t pos, uint32_t *c);
uint32_t tex_p_parse_delim(P *p, const char *cmd, size_t pos); // 0 for '.', ~0u missing
TexNode *tex_p_parse_list(P *p, int term);
void tex_p_parse_atom(P *p, List *l, int term, bool single);
void tex_p_parse_command(P *p, List *l, int term); // tex_parse_cmd.c

#endif
