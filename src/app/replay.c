// replay.c -- see replay.h.
#include "replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h> // strcasecmp

#include "fileio.h" // defines: file_read_all

typedef struct {
  const char *name;
  AppKey key;
} KeyName;

static const KeyName KEYS[] = {
    {"Right", KEY_RIGHT},
    {"Left", KEY_LEFT},
    {"Up", KEY_UP},
    {"Down", KEY_DOWN},
    {"space", KEY_SPACE},
    {"BackSpace", KEY_BACKSPACE},
    {"Delete", KEY_DELETE},
    {"Prior", KEY_PAGEUP},
    {"Page_Up", KEY_PAGEUP},
    {"Next", KEY_PAGEDOWN},
    {"Page_Down", KEY_PAGEDOWN},
    {"Home", KEY_HOME},
    {"End", KEY_END},
    {"Return", KEY_ENTER},
    {"Enter", KEY_ENTER},
    {"Escape", KEY_ESCAPE},
    {"Tab", KEY_TAB},
    {"F1", KEY_F1},
    {"F11", KEY_F11},
    {"plus", KEY_PLUS},
    {"minus", KEY_MINUS},
};

static bool parse_key(char *spec, AppEvent *e) {
  e->kind = EV_KEY;
  for (;;) {
    char *plus = strchr(spec, '+');
    if (!plus || plus == spec || !plus[1]) break;
    *plus = 0;
    if (!strcasecmp(spec, "shift"))
      e->mods |= MOD_SHIFT;
    else if (!strcasecmp(spec, "ctrl"))
      e->mods |= MOD_CTRL;
    else if (!strcasecmp(spec, "alt"))
      e->mods |= MOD_ALT;
    else
      return false;
    spec = plus + 1;
  }
  for (size_t k = 0; k < sizeof KEYS / sizeof *KEYS; k++)
    if (!strcasecmp(spec, KEYS[k].name)) return e->key = KEYS[k].key, true; // "left" too
  if (strlen(spec) == 1 && (unsigned char)spec[0] > 32 && (unsigned char)spec[0] < 127) {
    e->key = KEY_CHAR;
    e->ch = (uint32_t)(spec[0] >= 'A' && spec[0] <= 'Z' ? spec[0] + 32 : spec[0]);
    return true;
  }
  return false;
}

// The text of a clipboard line with its escapes (\n \t \\ \xHH) replaced; NULL on a bad escape
// (then *bad is its offset) or out of memory.
static char *unescape(const char *s, size_t *bad) {
  char *out = malloc(strlen(s) + 1), *o = out;
  if (!out) return NULL;
  for (const char *p = s; *p; p++) {
    if (*p != '\\') {
      *o++ = *p;
      continue;
    }
    char c = *++p;
    if (c == 'n' || c == 't' || c == '\\') {
      *o++ = c == 'n' ? '\n' : c == 't' ? '\t' : '\\';
    } else if (c == 'x' && p[1] && p[2] && strchr("0123456789abcdefABCDEF", p[1]) &&
               strchr("0123456789abcdefABCDEF", p[2]) && (p[1] != '0' || p[2] != '0')) { // no NUL
      char hex[3] = {p[1], p[2], 0};
      *o++ = (char)strtol(hex, NULL, 16);
      p += 2;
    } else {
      *bad = (size_t)(p - s);
      free(out);
      return NULL;
    }
  }
  *o = 0;
  return out;
}

// A number of a replay line: all of `s`, finite, within [lo, hi]; whole when `whole`. Otherwise
// one line that says which and its range (a coordinate of 1e30 or a size of 8006666666 would
// overflow the int the window keeps it in).
static bool number(const char *s, double lo, double hi, bool whole, double *out, const char *what,
                   const char *path, int lineno, Err *err) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !isfinite(v) || v < lo || v > hi || (whole && v != floor(v)))
    return err_set(err, "%s:%d: %s \"%s\" is not a%s number from %g to %g", path, lineno, what, s,
                   whole ? " whole" : "", lo, hi);
  *out = v;
  return true;
}

static bool parse_line(char *line, ReplayItem *it, const char *path, int lineno, Err *err) {
  char *save = NULL;
  char *ms = strtok_r(line, " \t", &save), *verb = strtok_r(NULL, " \t", &save);
  if (!ms || !verb)
    return err_set(err, "%s:%d: expected \"MS VERB ...\" (e.g. \"100 key Right\")", path, lineno);
  char *end;
  double t = strtod(ms, &end);
  if (*end || !(t >= 0) || !isfinite(t))
    return err_set(err, "%s:%d: \"%s\" is not a time in milliseconds", path, lineno, ms);
  memset(it, 0, sizeof *it);
  it->line = lineno;
  it->ev.time_ms = t;
  it->kind = RP_EVENT;
  char *rest = save; // for "text": everything after the one space that follows the verb
  char *a = NULL, *b = NULL, *c = NULL;
  if (!strcmp(verb, "key")) {
    a = strtok_r(NULL, " \t", &save);
    if (a) snprintf(it->label, sizeof it->label, "key-%s", a); // before parse_key cuts it at '+'
    if (!a || !parse_key(a, &it->ev))
      return err_set(err, "%s:%d: unknown key \"%s\"", path, lineno, a ? a : "");
    for (char *p = it->label; *p; p++)
      if (*p == '+' || *p == '/' || *p == '?') *p = '_';
  } else if (!strcmp(verb, "text") || !strcmp(verb, "compose")) {
    it->ev.kind = verb[0] == 't' ? EV_TEXT : EV_COMPOSE;
    snprintf(it->ev.text, sizeof it->ev.text, "%s", rest ? rest : "");
    snprintf(it->label, sizeof it->label, "%s", verb);
  } else if (!strcmp(verb, "clipboard")) {
    size_t bad = 0;
    it->kind = RP_CLIPBOARD;
    it->clipboard = unescape(rest ? rest : "", &bad);
    if (!it->clipboard)
      return err_set(
          err,
          "%s:%d: clipboard: a backslash starts \\n, \\t, \\\\ or \\xHH other than \\x00 (at character %zu)",
          path, lineno, bad + 1);
    snprintf(it->label, sizeof it->label, "clipboard");
  } else if (!strcmp(verb, "move") || !strcmp(verb, "click") || !strcmp(verb, "dblclick") ||
             !strcmp(verb, "release") || !strcmp(verb, "resize")) {
    a = strtok_r(NULL, " \t", &save), b = strtok_r(NULL, " \t", &save);
    if (!a || !b) return err_set(err, "%s:%d: %s needs two numbers", path, lineno, verb);
    bool resize = !strcmp(verb, "resize");
    double x, y, lo = resize ? 1 : -100000, hi = resize ? 16384 : 100000; // pixels
    if (!number(a, lo, hi, resize, &x, resize ? "width" : "x", path, lineno, err) ||
        !number(b, lo, hi, resize, &y, resize ? "height" : "y", path, lineno, err))
      return false;
    if (resize)
      it->ev.kind = EV_RESIZE, it->ev.w = (int)x, it->ev.h = (int)y;
    else
      it->ev.kind = verb[0] == 'm'   ? EV_MOUSE_MOVE
                    : verb[0] == 'r' ? EV_MOUSE_UP
                                     : EV_MOUSE_DOWN,
      it->ev.x = (float)x, it->ev.y = (float)y, it->ev.clicks = verb[0] == 'd' ? 2 : 1;
    snprintf(it->label, sizeof it->label, "%s", verb);
  } else if (!strcmp(verb, "hover") || !strcmp(verb, "click-cell")) {
    a = strtok_r(NULL, " \t", &save), b = strtok_r(NULL, " \t", &save), c = strtok_r(NULL, " \t", &save);
    if (!a || !b || !c) return err_set(err, "%s:%d: %s needs OP I J", path, lineno, verb);
    it->kind = verb[0] == 'h' ? RP_HOVER : RP_CLICK_CELL;
    double op = -1, i, j; // cells are checked against the view when the event is played
    if ((strcmp(a, "result") && !number(a, 0, 1000000, true, &op, "operand", path, lineno, err)) ||
        !number(b, 0, 1000000, true, &i, "row", path, lineno, err) ||
        !number(c, 0, 1000000, true, &j, "column", path, lineno, err))
      return false;
    it->op = (int)op, it->i = (int)i, it->j = (int)j;
    snprintf(it->label, sizeof it->label, "%s", verb);
  } else if (!strcmp(verb, "wheel")) { // wheel N [ctrl]: N notches, Ctrl held or not
    a = strtok_r(NULL, " \t", &save), b = strtok_r(NULL, " \t", &save);
    if (!a) return err_set(err, "%s:%d: wheel needs a number of notches", path, lineno);
    double n;
    if (!number(a, -1000, 1000, true, &n, "notches", path, lineno, err)) return false;
    it->ev.kind = EV_WHEEL, it->ev.wheel = (int)n, it->ev.mods = b && !strcasecmp(b, "ctrl") ? MOD_CTRL : 0;
    snprintf(it->label, sizeof it->label, "wheel");
  } else if (!strcmp(verb, "leave")) {
    it->ev.kind = EV_MOUSE_LEAVE;
    snprintf(it->label, sizeof it->label, "leave");
  } else if (!strcmp(verb, "wait")) {
    it->kind = RP_WAIT;
    snprintf(it->label, sizeof it->label, "wait");
  } else {
    return err_set(
        err,
        "%s:%d: unknown event \"%s\" (key, text, compose, clipboard, move, click, dblclick, release, "
        "hover, click-cell, wheel, leave, resize, wait)",
        path, lineno, verb);
  }
  return true;
}

bool replay_load(Replay *r, const char *path, Err *err) {
  memset(r, 0, sizeof *r);
  size_t len;
  char *buf = file_read_all(path, &len, 64u << 20, err);
  if (!buf) return false;
  bool ok = replay_parse(r, buf, len, path, err);
  free(buf);
  return ok;
}

bool replay_parse(Replay *r, const char *text, size_t len, const char *what, Err *err) {
  memset(r, 0, sizeof *r);
  char *buf = malloc(len + 1); // parse_line cuts lines in place: a copy, NUL-terminated
  int cap = 64;
  r->items = malloc(sizeof(ReplayItem) * (size_t)cap);
  bool ok = buf && r->items;
  if (!ok) err_set(err, "out of memory");
  if (buf) memcpy(buf, text, len), buf[len] = 0;
  int lineno = 0;
  for (char *line = buf, *next; ok && line && *line; line = next) { // a NUL byte ends the file
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    lineno++;
    char *p = line + strspn(line, " \t\r");
    char *cr = strchr(p, '\r');
    if (cr) *cr = 0;
    if (!*p || *p == '#') continue;
    if (r->n == cap) {
      cap *= 2;
      ReplayItem *ni = realloc(r->items, sizeof(ReplayItem) * (size_t)cap);
      if (!ni) {
        ok = err_set(err, "out of memory");
        break;
      }
      r->items = ni;
    }
    ok = parse_line(p, &r->items[r->n], what, lineno, err);
    if (ok) r->n++;
  }
  free(buf);
  if (!ok) replay_free(r);
  return ok;
}

void replay_free(Replay *r) {
  for (int k = 0; k < r->n; k++) free(r->items[k].clipboard);
  free(r->items);
  memset(r, 0, sizeof *r);
}
