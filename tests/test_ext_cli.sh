#!/usr/bin/env bash
# test_ext_cli.sh -- the canonical model extensions (model.h) through the command line.
#
# For the three models of tests/ref/ext (GPT-2-like, BERT-like, the course's classifier):
# `info` names their features in a line (and the classifier's classes), `stages` lists their new
# stages (embedding LayerNorm, head transform, final LayerNorm, mean over positions, class scores,
# class prediction), `dump` writes every reference file's name (the values are test_golden_ext's),
# and a sentence longer than the learned position table gets one line and exit code 2.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_ext_cli.sh
set -u
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
EXT=${SF_TEST_DIR:?set SF_TEST_DIR to the tests folder}/ref/ext
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-ext.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}
has() { # has NAME TEXT PATTERN
  grep -qF -- "$3" <<<"$2" || fail "$1: no \"$3\" in: $2"
}

text_of() { awk -F'\t' -v c="$1" '$1 == c { print $2 }' "$EXT/cases.txt"; }

out=$("$SF" info --model "$EXT/gpt2-like/model.safetensors") || fail "info gpt2-like: exit $?"
has "info gpt2-like" "$out" "features   learned positions (up to 12), tied head"
has "info gpt2-like" "$out" "activation gelu_tanh"
out=$("$SF" info --model "$EXT/bert-like/model.safetensors") || fail "info bert-like: exit $?"
has "info bert-like" "$out" "token type 0 added, embedding LayerNorm, tied head with bias, head transform"
out=$("$SF" info --model "$EXT/course-like/model.safetensors") || fail "info course-like: exit $?"
has "info course-like" "$out" "classifier of 3 classes after a final LayerNorm, on the mean over positions: animal, place, thing"
has "info course-like" "$out" "attention without bias"

out=$("$SF" stages --model "$EXT/bert-like/model.safetensors" --text "$(text_of bert-like)") ||
  fail "stages bert-like: exit $?"
has "stages bert-like" "$out" "embedding LayerNorm"
has "stages bert-like" "$out" "head transform"
has "stages bert-like" "$out" "embed_sum.npy"
out=$("$SF" stages --model "$EXT/course-like/model.safetensors" --text "$(text_of course-like)") ||
  fail "stages course-like: exit $?"
for s in "final LayerNorm" "mean over positions" "class scores" "class prediction" pool.npy class_pred.npy; do
  has "stages course-like" "$out" "$s"
done

for c in gpt2-like bert-like course-like; do
  "$SF" dump --model "$EXT/$c/model.safetensors" --text "$(text_of "$c")" --out "$T/$c" >/dev/null ||
    { fail "dump $c: exit $?"; continue; }
  for ref in "$EXT/$c"/*.npy; do
    [ -f "$T/$c/$(basename "$ref")" ] || fail "dump $c: $(basename "$ref") was not written"
  done
done

# 13 words through a table of 12 positions: one line, exit code 2
err=$("$SF" dump --model "$EXT/gpt2-like/model.safetensors" --text "the cat the cat the cat the cat the cat the cat the" \
  --out "$T/long" 2>&1 >/dev/null)
code=$?
[ "$code" = 2 ] || fail "a sentence too long: exit code $code, not 2"
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "a sentence too long: not one line: $err"
has "a sentence too long" "$err" "has 13 tokens; this model knows positions up to 12: shorten the sentence"

if [ "$failures" -gt 0 ]; then
  echo "test_ext_cli: $failures failure(s)" >&2
  exit 1
fi
echo "test_ext_cli: ok"
