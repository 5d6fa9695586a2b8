#!/usr/bin/env bash
# test_tokjson_cli.sh -- a hub folder's tokenizer.json on the command line (tokenizers/tokjson.h):
# info names it; `stages --text` tokenizes with it (the text's ids are the BPE's, not words); a
# tokenizer.json this reader does not know (a regular expression it has no matcher for, a Unigram
# model, a file that is not JSON) gets exit 2 and one line that names the file and what is wrong.
# The folders are tests/ref/llama/llama-gqa2 (tests/gen_llama_ref.py) with their tokenizer.json
# replaced.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_tokjson_cli.sh
set -u
export LC_ALL=C.UTF-8
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
REF=${SF_TEST_DIR:?set SF_TEST_DIR to the tests folder}/ref/llama/llama-gqa2
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-tokjson-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 checks=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}
# refused LABEL KEY CMD...: exit 2, one line on stderr holding KEY
refused() {
  local label=$1 key=$2 rc
  shift 2
  checks=$((checks + 1))
  "$@" >"$T/out" 2>"$T/err"
  rc=$?
  [ "$rc" = 2 ] || fail "$label: exit $rc, expected 2"
  [ "$(wc -l <"$T/err")" = 1 ] || fail "$label: $(wc -l <"$T/err") lines on stderr"
  grep -qF -- "$key" "$T/err" || fail "$label: \"$key\" not in: $(cat "$T/err")"
}
# folder NAME: a copy of the fixture whose tokenizer.json is stdin
folder() {
  mkdir -p "$T/$1"
  cp "$REF/config.json" "$REF/model.safetensors" "$T/$1/"
  cat >"$T/$1/tokenizer.json"
  echo "$T/$1"
}

checks=$((checks + 1))
"$SF" info --model "$REF" >"$T/out" 2>"$T/err" || fail "info: exit $? ($(cat "$T/err"))"
grep -qF "tokenizer.json" "$T/out" || fail "info does not name the tokenizer: $(cat "$T/out")"

checks=$((checks + 1))
"$SF" stages --model "$REF" --text "The cat walks" >"$T/out" 2>"$T/err" || fail "stages: exit $? ($(cat "$T/err"))"
grep -qF "tokens (L=3): The ␣cat ␣walks" "$T/out" || fail "stages: not the BPE's tokens: $(head -c 300 "$T/out")"

d=$(sed 's/"use_regex": true/"use_regex": false/; s/"type": "ByteLevel", "add_prefix_space": false/"type": "Split", "pattern": {"Regex": "\\\\w+"}, "behavior": "Isolated", "x": false/' \
  "$REF/tokenizer.json" | folder regex)
refused "unknown pattern" "is not one this reader knows" "$SF" info --model "$d"
refused "unknown pattern names the file" "$d/tokenizer.json" "$SF" info --model "$d"
d=$(sed 's/"type": "BPE"/"type": "Unigram"/' "$REF/tokenizer.json" | folder unigram)
refused "Unigram" "the model is Unigram" "$SF" info --model "$d"
d=$(head -c 100 "$REF/tokenizer.json" | folder cut)
refused "not JSON" "not valid JSON" "$SF" info --model "$d"

echo "test_tokjson_cli: $checks checks, $failures failed"
[ "$failures" = 0 ]
