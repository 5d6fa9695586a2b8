#!/usr/bin/env bash
# test_inside_cli.sh -- looking inside on the command line (issue 36): dump writes the logit lens,
# rollout and saliency files beside the stages (the shipped bank model: "The cat walks by the bank",
# whose next word is "to" or "where"); --position and --target-token choose the saliency's word;
# a bad one is one line and exit 2; an encoder-decoder gets none of these files.
#
#   STEPFORMER=build/stepformer bash tests/test_inside_cli.sh
set -u
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-inside-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 cases=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

cases=$((cases + 1))
if "$SF" dump --out "$T/d" >"$T/out" 2>"$T/err"; then
  for f in lens.l0.npy rollout.l0.npy rollout.npy saliency.npy saliency.txt; do
    [ -s "$T/d/$f" ] || fail "dump wrote no $f"
  done
  grep -q "^position 6 bank, token \(to\|where\) (id [0-9]*)" "$T/d/saliency.txt" ||
    fail "saliency.txt: $(cat "$T/d/saliency.txt")"
else
  fail "dump: $(cat "$T/err")"
fi

cases=$((cases + 1))
if "$SF" dump --position 2 --target-token walks --out "$T/p" >/dev/null 2>"$T/err"; then
  grep -q "^position 2 cat, token walks " "$T/p/saliency.txt" || fail "--position 2 --target-token walks: $(cat "$T/p/saliency.txt")"
else
  fail "dump --position 2 --target-token walks: $(cat "$T/err")"
fi

# export --inside: the five views as pictures; their SVG text says what each shows
cases=$((cases + 1))
if "$SF" export --inside --format svg --size 1280x720 --out "$T/x" >/dev/null 2>"$T/err"; then
  for v in lens rollout headview saliency neurons; do
    [ -s "$T/x/inside-$v.svg" ] || fail "export --inside wrote no inside-$v.svg"
  done
  txt() { grep -o '>[^<]*</text>' "$1" | sed 's/^>//; s/<\/text>$//'; }
  txt "$T/x/inside-lens.svg" | grep -qx "layer 1" || fail "lens: no layer label"
  txt "$T/x/inside-lens.svg" | grep -q "the model says “\(to\|where\)”; its rank after each layer: 1" ||
    fail "lens: no rank line: $(txt "$T/x/inside-lens.svg" | grep rank)"
  txt "$T/x/inside-saliency.svg" | grep -q "after “bank” the model says “\(to\|where\)”" || fail "saliency: no caption"
  [ "$(grep -c "<line" "$T/x/inside-headview.svg")" -ge 6 ] || fail "headview: fewer than 6 lines"
  txt "$T/x/inside-rollout.svg" | grep -q "R after layer 1" || fail "rollout: no R title"
  txt "$T/x/inside-neurons.svg" | grep -q "promotes:" || fail "neurons: no promoted tokens"
else
  fail "export --inside: $(cat "$T/err")"
fi

expect_error() { # name, expected text, then the dump's arguments
  local name=$1 want=$2
  shift 2
  cases=$((cases + 1))
  "$SF" dump "$@" --out "$T/bad" >"$T/o" 2>"$T/e"
  local rc=$?
  [ "$rc" = 2 ] || fail "$name: exit $rc, expected 2"
  [ "$(wc -l <"$T/e")" = 1 ] || fail "$name: $(wc -l <"$T/e") lines: $(cat "$T/e")"
  grep -q -- "$want" "$T/e" || fail "$name: \"$(cat "$T/e")\" does not say \"$want\""
}
expect_error position-past "the sentence has 6 tokens" --position 9
expect_error position-zero "1 for the first" --position 0
expect_error token-unknown "not a word of the model's vocabulary" --target-token zebu
expect_error position-missing "give a token.s position" --position

echo "test_inside_cli: $cases cases, $failures failures"
[ "$failures" = 0 ]
