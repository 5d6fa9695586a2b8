// numfmt.h -- numbers as the screen shows them: one rounding policy (issue 31, group 2).
//
// The policy, for cells, the inspector, worked equations and the training view alike:
//   - a value is written with `sig` significant digits (3 by default), in fixed notation
//     ("0.750", "3.00", "123", "-0.00812"), or as m \cdot 10^{e} below 0.001 and from 100 000;
//   - in a worked equation the operands and the result carry the same significant digits, and
//     the digits shown reproduce the result: numfmt_reproduces checks a TeX line by computing
//     each side of its '=' from the printed numbers, and the writers of worked equations raise
//     `sig` (3 … 7) until it holds, the result allowed one digit fewer than its operands but never
//     fewer than 3 (numfmt_settle: a quotient loses one); only a cancellation (a difference of
//     close numbers) gives its result fewer digits, those its operands justify (numfmt_try);
//   - a cell too narrow for the full form drops its leading zero (".75", "-.75") before it
//     drops a digit, and never shows fewer than two digits (".08", "-9.8", "15"; "0" under 0.005),
//     each a rounding of the value the inspector's heading prints (test_backrow checks both);
//   - a probability is "100 %" (or 1) only when it is exactly 1 and nothing else is above 0.
// Pure text: no drawing, no allocation.
//
//     char b[40];
//     numfmt_tex(b, sizeof b, -0.008151, 3, true);    // "(-0.00815)"
//     numfmt_reproduces("= 0.990 \\cdot (-0.670 - (-0.662)) = -0.00812");  // false: gives -0.00792
#ifndef SF_NUMFMT_H
#define SF_NUMFMT_H

#include <stdbool.h>

#define NUMFMT_SIG 3     // significant digits of a value shown alone
#define NUMFMT_SIG_MAX 7 // the most a worked equation raises them to (float has about 7)

// v with sig significant digits as TeX: "0.750", "-12.3", "1.20 \cdot 10^{-4}", "-\infty";
// in parentheses when negative and paren is true ("(-0.670)"). Returns buf.
const char *numfmt_tex(char *buf, int cap, double v, int sig, bool paren);

// True when every chain of '='-separated sides of a TeX line that are made only of numbers
// (+ - \cdot \times, juxtaposition, ( ) \left( \right), \frac, \tfrac, \sqrt, ^{}, e^{}, \sin,
// \cos, \max) ends in a number that each of them reproduces to that number's printed precision
// (half a unit of its last digit). Sides with words or symbols are skipped; a label ending in ':'
// before a side ("[3, 5]:\ ") is ignored. The test of every worked equation the program prints.
bool numfmt_reproduces(const char *tex);

// True when line reproduces as it is, or once its result (the last side, a number printed with
// sig digits) is printed with fewer digits, down to min_sig (a quotient: "1.817 / 2.828 = 0.642",
// where 0.6424 is not what its digits give; a difference of close numbers: "0.01491 - 0.01481 =
// 1.0 \cdot 10^{-4}"); else false and line unchanged. Lines up to 1 000 bytes.
bool numfmt_settle(char *line, int cap, int sig, int min_sig);

// The writers' order of tries: operands with sig = NUMFMT_SIG … NUMFMT_SIG_MAX digits, the
// result with sig or sig - 1 (never under NUMFMT_SIG); when none holds (a cancellation), the
// result with as few digits as its operands justify. Try k = 0, 1, … while it returns true.
bool numfmt_try(int k, int *sig, int *min_sig);

// printf's "%.*f" of a float, the same string, without printf (a heatmap writes one per cell):
// decimals 0 … 6. Returns buf.
const char *numfmt_fixed(char *buf, int cap, float v, int decimals);

// A probability for a bar or a strip: "52.3 %" (percent true) or "0.523"; "> 99.9 %" / "> 0.999"
// for a value that rounds up to 1 while others are above 0 (others_above_zero), "100 %" / "1"
// only for a certain one; "< 0.001" (not "0.000") for a small one above 0. Returns buf.
const char *numfmt_prob(char *buf, int cap, double p, bool others_above_zero, bool percent);

#endif
