#!/usr/bin/env bash
# test_seq2seq_cli.sh -- an encoder-decoder on the command line (issue 11): `stepformer info`
# prints both sides, `stepformer stages --target` lists every decoder stage in order, numbered
# without a gap, each with the file `stepformer dump --target` writes.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_seq2seq_cli.sh
set -u
export LC_ALL=C.UTF-8
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
REFS=${SF_TEST_DIR:?set SF_TEST_DIR to the tests folder}/ref
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-seq2seq.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0

fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

M=$REFS/seq2seq-pre-gelu/model.safetensors
if "$SF" info --model "$M" >"$T/info" 2>"$T/stderr"; then
  for want in "2 encoder, 3 decoder" "V          12   (source vocabulary: <unk> the cat" \
    "V_t        16   (target vocabulary: <unk> <bos> <eos> le la" "encoder-decoder"; do
    grep -qF -- "$want" "$T/info" || fail "info lacks \"$want\": $(cat "$T/info")"
  done
else
  fail "info: $(cat "$T/stderr")"
fi

# stages --tsv: the decoder's rows, in the stage table's order, on the teacher-forced input
text="She puts money in the bank." target="elle met argent dans la banque"
if "$SF" stages --model "$M" --text "$text" --target "$target" --tsv >"$T/tsv" 2>"$T/stderr"; then
  # one row per step: 5 before the layers, 2 layers x 11 (pre-norm), memory, 5 decoder inputs,
  # 3 decoder layers x 19 (pre-norm), the prediction
  rows=$(($(wc -l <"$T/tsv") - 1))
  [ "$rows" = $((5 + 2 * 11 + 1 + 5 + 3 * 19 + 1)) ] || fail "stages --tsv: $rows rows"
  # a stage has the same number in every layer; the numbers are 1 .. the last without a gap, and
  # rise through a layer (a half stage takes the number of the one before it, with "½")
  awk -F'\t' 'NR > 1 {
      n = $1; half = sub(/½$/, "", n); seen[n] = 1; if (n > max) max = n
      if ($2 == prev_layer && (half ? n != last : n != last + 1)) { print "bad number " $1 " after " last; bad = 1 }
      last = n; prev_layer = $2
    } END {
      for (i = 1; i <= max; i++) if (!seen[i]) { print "no stage " i; bad = 1 }
      if (max != 40) { print "the last stage is " max ", expected 40"; bad = 1 }
      exit bad
    }' "$T/tsv" || fail "stages --tsv: the numbers are wrong"
  for want in $'\td1\tmasked self-attention: mask\tdec_mask\td0.S.npy\t4x7x7\t' \
    $'\td3\tcross-attention: softmax\tcross_softmax\td2.cA.npy\t4x7x6\t' \
    $'\tmemory\tmemory\tmemory.npy\t6x16\t' $'\ttarget prediction\tdec_predict\tpred.npy\t7x16\t' \
    $'\ttarget tokens\tdec_tokens\tdec_tokens.txt\tT=7\t'; do
    grep -qF -- "$want" "$T/tsv" || fail "stages --tsv lacks a row with \"$want\""
  done
  # the mask: 4 heads x 21 entries above the diagonal of 7x7, in every decoder layer
  awk -F'\t' '$4 == "dec_mask" && $9 != 84 { print; bad = 1 } END { exit bad }' "$T/tsv" ||
    fail "stages --tsv: the decoder mask's -inf count is not 84"
  # every file the table names is one `dump --target` writes
  if "$SF" dump --model "$M" --text "$text" --target "$target" --out "$T/dump" >/dev/null 2>"$T/stderr"; then
    cut -f5 "$T/tsv" | tail -n +2 | while read -r f; do
      [ -f "$T/dump/$f" ] || echo "$f"
    done >"$T/missing"
    [ -s "$T/missing" ] && fail "stages names files dump does not write: $(tr '\n' ' ' <"$T/missing")"
  else
    fail "dump --target: $(cat "$T/stderr")"
  fi
else
  fail "stages --target: $(cat "$T/stderr")"
fi

# the readable table says what the decoder reads
if "$SF" stages --model "$M" --text "$text" >"$T/table" 2>"$T/stderr"; then
  grep -qF "its input (T=1): <bos>   (no --target: <bos> alone)" "$T/table" ||
    fail "stages without --target: $(head -5 "$T/table")"
else
  fail "stages without --target: $(cat "$T/stderr")"
fi

if [ "$failures" -ne 0 ]; then
  echo "test_seq2seq_cli: $failures failures" >&2
  exit 1
fi
echo "test_seq2seq_cli: info, stages and dump agree on the encoder-decoder"
