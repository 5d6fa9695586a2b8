// numfmt.c -- see numfmt.h: the digits of a number, and a check that a worked equation's printed
// numbers reproduce its printed result.
#include "numfmt.h"

#define EXPLAIN_SAFE 1024 // the longest line numfmt_settle restores

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// a rounded to sig significant digits (a > 0)
static double round_sig(double a, int sig) {
  int e = (int)floor(log10(a));
  double q = pow(10, sig - 1 - e);
  return round(a * q) / q;
}

// The float times 10^decimals is exact in a double (24 + 20 bits of 53), so rint, which rounds
// to the nearest and ties to even as printf does with the exact binary value, gives printf's
// digits; values past 10^15 of them, and infinities and NaN, go to snprintf.
const char *numfmt_fixed(char *buf, int cap, float v, int decimals) {
  static const double P10[7] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
  if (cap <= 0) return buf;
  double x = decimals >= 0 && decimals <= 6 ? fabs((double)v) * P10[decimals] : 0;
  if (!isfinite(v) || decimals < 0 || decimals > 6 || x >= 1e15) {
    snprintf(buf, (size_t)cap, "%.*f", decimals, (double)v);
    return buf;
  }
  uint64_t q = (uint64_t)rint(x);
  char rev[24]; // the string backwards: decimals, point, integer digits, sign
  int n = 0;
  for (int k = 0; k < decimals; k++) rev[n++] = (char)('0' + q % 10), q /= 10;
  if (decimals > 0) rev[n++] = '.';
  do rev[n++] = (char)('0' + q % 10), q /= 10;
  while (q);
  if (signbit(v)) rev[n++] = '-';  // printf's "-0.00" for -0.001 and for -0
  int len = n < cap ? n : cap - 1; // snprintf's cut
  for (int k = 0; k < len; k++) buf[k] = rev[n - 1 - k];
  buf[len] = 0;
  return buf;
}

const char *numfmt_tex(char *buf, int cap, double v, int sig, bool paren) {
  bool par = paren && v < 0;
  if (isnan(v)) {
    snprintf(buf, (size_t)cap, "\\mathrm{NaN}");
    return buf;
  }
  if (isinf(v)) {
    snprintf(buf, (size_t)cap, v < 0 ? (paren ? "(-\\infty)" : "-\\infty") : "\\infty");
    return buf;
  }
  if (v == 0) {
    snprintf(buf, (size_t)cap, "0");
    return buf;
  }
  if (sig < 1) sig = 1;
  double a = round_sig(fabs(v), sig);
  int e = (int)floor(log10(a)); // after rounding: 9.996 at 3 digits is 10.0, exponent 1
  char body[48];
  if (e < -3 || e >= 5) // 1.20 \cdot 10^{-4}: fixed notation would need too many zeros
    snprintf(body, sizeof body, "%s%.*f \\cdot 10^{%d}", v < 0 ? "-" : "", sig - 1, a / pow(10, e), e);
  else
    snprintf(body, sizeof body, "%s%.*f", v < 0 ? "-" : "", sig - 1 - e > 0 ? sig - 1 - e : 0, a);
  snprintf(buf, (size_t)cap, par ? "(%s)" : "%s", body);
  return buf;
}

const char *numfmt_prob(char *buf, int cap, double p, bool others_above_zero, bool percent) {
  double x = percent ? 100.0 * p : p;
  if (p >= 1 && !others_above_zero) {
    snprintf(buf, (size_t)cap, percent ? "100 %%" : "1");
  } else if (percent ? x >= 99.95 : x >= 0.9995) { // rounds up to 1, but something else is possible
    snprintf(buf, (size_t)cap, percent ? "> 99.9 %%" : "> 0.999");
  } else if (!percent && x > 0 && x < 0.0005) { // not "0.000" for a candidate above 0
    snprintf(buf, (size_t)cap, "< 0.001");
  } else if (!percent) {
    snprintf(buf, (size_t)cap, "%.3f", x);
  } else if (x >= 0.0995 || x <= 0) {
    snprintf(buf, (size_t)cap, "%.1f %%", x);
  } else if (x < 0.001) {
    snprintf(buf, (size_t)cap, "< 0.001 %%");
  } else { // two significant digits down to 0.001 % (a flat prediction over 50 257 tokens)
    int decimals = 1 - (int)floor(log10(x));
    snprintf(buf, (size_t)cap, "%.*f %%", decimals, x);
  }
  return buf;
}

// ---------------------------------------------------------------- the checker

typedef struct {
  const char *p, *end;
  bool bad;
} P;

static bool at_end(P *q) { return q->p >= q->end; }
static bool starts(P *q, const char *w) {
  size_t n = strlen(w);
  return (size_t)(q->end - q->p) >= n && !strncmp(q->p, w, n);
}
static void skip(P *q) {
  for (;;) {
    if (!at_end(q) && (*q->p == ' ' || *q->p == '\t'))
      q->p++;
    else if (starts(q, "\\,") || starts(q, "\\ ") || starts(q, "\\;") || starts(q, "\\!") || starts(q, "\\:"))
      q->p += 2;
    else
      return;
  }
}
static bool eat(P *q, const char *w) {
  skip(q);
  if (!starts(q, w)) return false;
  q->p += strlen(w);
  return true;
}
static void need(P *q, const char *w) {
  if (!eat(q, w)) q->bad = true;
}

static double expr(P *q);
static double primary(P *q) {
  skip(q);
  if (at_end(q) || q->bad) return q->bad = true, 0;
  char c = *q->p;
  if ((c >= '0' && c <= '9') || c == '.') {
    char tmp[64];
    size_t n = 0;
    while (q->p + n < q->end && n < sizeof tmp - 1 && ((q->p[n] >= '0' && q->p[n] <= '9') || q->p[n] == '.'))
      tmp[n] = q->p[n], n++;
    tmp[n] = 0;
    q->p += n;
    return strtod(tmp, NULL);
  }
  if (eat(q, "\\left(")) {
    double v = expr(q);
    need(q, "\\right)");
    return v;
  }
  if (eat(q, "(")) {
    double v = expr(q);
    need(q, ")");
    return v;
  }
  if (eat(q, "{")) {
    double v = expr(q);
    need(q, "}");
    return v;
  }
  if (eat(q, "\\frac{") || eat(q, "\\tfrac{") || eat(q, "\\dfrac{")) {
    double a = expr(q);
    need(q, "}");
    need(q, "{");
    double b = expr(q);
    need(q, "}");
    return a / b;
  }
  if (eat(q, "\\sqrt{")) {
    double v = expr(q);
    need(q, "}");
    return sqrt(v);
  }
  if (eat(q, "e^{")) {
    double v = expr(q);
    need(q, "}");
    return exp(v);
  }
  int f = eat(q, "\\sin") ? 1 : eat(q, "\\cos") ? 2 : eat(q, "\\tanh") ? 3 : 0;
  if (f) {
    double v = primary(q);
    return f == 1 ? sin(v) : f == 2 ? cos(v) : tanh(v);
  }
  if (eat(q, "\\max(")) {
    double a = expr(q);
    need(q, ",");
    double b = expr(q);
    need(q, ")");
    return fmax(a, b);
  }
  q->bad = true; // a word, a symbol, \cdots: not a side made of numbers
  return 0;
}
static double power(P *q) {
  double v = primary(q);
  skip(q);
  if (!q->bad && eat(q, "^")) v = pow(v, primary(q));
  return v;
}
static double unary(P *q) {
  if (eat(q, "-")) return -unary(q);
  if (eat(q, "+")) return unary(q);
  return power(q);
}
static bool factor_follows(P *q) {
  skip(q);
  if (at_end(q)) return false;
  char c = *q->p;
  return (c >= '0' && c <= '9') || c == '(' || c == '{' || starts(q, "\\left(") || starts(q, "\\frac") ||
         starts(q, "\\tfrac") || starts(q, "\\sqrt") || starts(q, "e^{");
}
static double term(P *q) {
  double v = unary(q);
  for (;;) {
    if (q->bad) return 0;
    if (eat(q, "\\cdot") || eat(q, "\\times"))
      v *= unary(q);
    else if (factor_follows(q))
      v *= power(q);
    else
      return v;
  }
}
static double expr(P *q) {
  double v = term(q);
  for (;;) {
    if (q->bad) return 0;
    if (eat(q, "+"))
      v += term(q);
    else if (eat(q, "-"))
      v -= term(q);
    else
      return v;
  }
}

// The side [a, b) as a number: its value, or false when it holds anything but numbers.
static bool side_value(const char *a, const char *b, double *v) {
  // a label such as "[3, 5]:\ " before the side: keep what follows the last ':' outside braces
  int depth = 0;
  for (const char *s = a; s < b; s++) {
    if (*s == '{') depth++;
    if (*s == '}') depth--;
    if (*s == ':' && depth == 0) a = s + 1;
  }
  P q = {a, b, false};
  skip(&q);
  if (at_end(&q)) return false;
  *v = expr(&q);
  skip(&q);
  return !q.bad && at_end(&q) && isfinite(*v);
}

// The side as a single printed number ("-0.00812", "(1.20 \cdot 10^{-4})"): its value and half a
// unit of its last digit.
static bool side_literal(const char *a, const char *b, double *v, double *half_ulp) {
  while (a < b && *a == ' ') a++;
  while (b > a && b[-1] == ' ') b--;
  if (a < b && *a == '(' && b[-1] == ')') a++, b--;
  char tmp[80];
  if (b - a <= 0 || b - a >= (long)sizeof tmp) return false;
  memcpy(tmp, a, (size_t)(b - a));
  tmp[b - a] = 0;
  const char *s = tmp;
  if (*s == '-') s++;
  int decimals = 0, e = 0, used = 0;
  const char *dot = NULL, *d = s;
  while ((*d >= '0' && *d <= '9') || *d == '.') {
    if (*d == '.') dot = d;
    d++;
  }
  if (d == s) return false;
  if (dot) decimals = (int)(d - dot - 1);
  if (*d) {
    if (sscanf(d, " \\cdot 10^{%d}%n", &e, &used) != 1 || d[used]) return false;
  }
  double m = strtod(tmp, NULL);
  *v = m * pow(10, e);
  *half_ulp = 0.5 * pow(10, e - decimals);
  return true;
}

bool numfmt_reproduces(const char *tex) {
  // the sides: split at '=' outside braces
  const char *cut[64];
  int n = 0, depth = 0;
  cut[n++] = tex - 1;
  for (const char *s = tex; *s && n < 63; s++) {
    if (*s == '{') depth++;
    if (*s == '}') depth--;
    if (*s == '=' && depth == 0) cut[n++] = s;
  }
  cut[n] = tex + strlen(tex);
  // chains of numeric sides: each must give the chain's last side, a printed number
  int k = 0;
  while (k < n) {
    int m = k;
    double v;
    while (m < n && side_value(cut[m] + 1, cut[m + 1], &v)) m++;
    if (m - k >= 2) { // sides k .. m-1 are numbers
      double want, half;
      if (side_literal(cut[m - 1] + 1, cut[m], &want, &half)) {
        for (int j = k; j < m - 1; j++) {
          side_value(cut[j] + 1, cut[j + 1], &v);
          if (fabs(v - want) > half * (1 + 1e-9) + 1e-12 * fabs(want)) return false;
        }
      }
    }
    k = m > k ? m : k + 1;
  }
  return true;
}

bool numfmt_settle(char *line, int cap, int sig, int min_sig) {
  if (numfmt_reproduces(line)) return true;
  if (sig - 1 < min_sig || min_sig < 1) return false;
  // the last side, when it is a printed number: the result, one digit fewer
  int depth = 0;
  char *last = NULL;
  for (char *s = line; *s; s++) {
    if (*s == '{') depth++;
    if (*s == '}') depth--;
    if (*s == '=' && depth == 0) last = s;
  }
  double v, half;
  if (!last || !side_literal(last + 1, line + strlen(line), &v, &half)) return false;
  char *a = last + 1;
  while (*a == ' ') a++;
  bool paren = *a == '(';
  char b[48], keep[EXPLAIN_SAFE];
  snprintf(keep, sizeof keep, "%s", line);
  if ((long)(a - line) + 48 >= cap) return false;
  for (int r = sig - 1; r >= min_sig; r--) {
    numfmt_tex(b, sizeof b, v, r, paren);
    snprintf(a, (size_t)(cap - (a - line)), "%s", b);
    if (numfmt_reproduces(line)) return true;
  }
  snprintf(line, (size_t)cap, "%s", keep); // as it was
  return false;
}

bool numfmt_try(int k, int *sig, int *min_sig) {
  int n = NUMFMT_SIG_MAX - NUMFMT_SIG + 1;
  if (k < n) return *sig = NUMFMT_SIG + k, *min_sig = NUMFMT_SIG, true;
  if (k == n) return *sig = NUMFMT_SIG + 1, *min_sig = 1, true; // a cancellation: 4 digits in, fewer out
  if (k == n + 1) return *sig = NUMFMT_SIG_MAX, *min_sig = 1, true;
  return false;
}
