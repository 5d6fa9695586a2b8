#!/usr/bin/env bash
# test_seq2seq_cli.sh -- an encoder-decoder on the command line (issue 11): `stepformer info`
# prints both sides, `stepformer stages --target` lists every decoder stage in order, numbered
# without a gap, each with the file `stepformer dump --target` writes; --generate writes, lists
# and dumps every generation step (the words of tests/ref/seq2seq-short-target/generated.txt,
# torch's greedy loop), and every wrong combination gets one line and exit 2.
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

# --generate: the words torch's greedy loop writes (generated.txt: "rive", then <eos>)
G=$REFS/seq2seq-short-target
gtext="the cat sleeps by the river bank"
if "$SF" dump --model "$G/model.safetensors" --text "$gtext" --generate --out "$T/gen" >/dev/null 2>"$T/stderr"; then
  [ "$(cat "$T/gen/generated.txt")" = "rive" ] || fail "dump --generate wrote \"$(cat "$T/gen/generated.txt")\""
  [ -d "$T/gen/step1" ] && [ -d "$T/gen/step2" ] && [ ! -e "$T/gen/step3" ] || fail "dump --generate: $(ls "$T/gen")"
  [ "$(tr '\n' ' ' <"$T/gen/step2/dec_tokens.txt")" = "<bos> rive " ] ||
    fail "step2/dec_tokens.txt: $(cat "$T/gen/step2/dec_tokens.txt")"
  for f in tokens.txt model.safetensors step1/pred.npy step2/d1.cA.npy step2/memory.npy; do
    [ -f "$T/gen/$f" ] || fail "dump --generate has no $f"
  done
  # step 1's stages are the teacher-forced stages of <bos> alone, byte for byte
  "$SF" dump --model "$G/model.safetensors" --text "$gtext" --out "$T/bos" >/dev/null 2>&1
  for f in memory.npy d0.cK.npy d1.cA.npy pred.npy; do
    cmp -s "$T/gen/step1/$f" "$T/bos/$f" || fail "dump --generate: step1/$f differs from dump with <bos> alone"
  done
else
  fail "dump --generate: $(cat "$T/stderr")"
fi
if "$SF" stages --model "$G/model.safetensors" --text "$gtext" --generate >"$T/gtable" 2>"$T/stderr"; then
  for want in "greedy generation: 2 steps, ended by its end word" 'wrote "rive" (p=0.1787)' \
    "step 2  input (2): <bos> rive" "generated: rive"; do
    grep -qF -- "$want" "$T/gtable" || fail "stages --generate lacks \"$want\": $(head -8 "$T/gtable")"
  done
else
  fail "stages --generate: $(cat "$T/stderr")"
fi
"$SF" stages --model "$G/model.safetensors" --text "$gtext" --generate --max-steps 1 --tsv >"$T/gtsv" 2>&1 &&
  [ "$(cut -f1 "$T/gtsv" | sort -u | tr '\n' ' ')" = "1 step " ] || fail "stages --generate --max-steps 1 --tsv"

# export: every decoder stage as a picture (--target), and one folder per generation step
if "$SF" export --model "$G/model.safetensors" --text "$gtext" --target "rive" --size 640x360 --format png,npy \
  --out "$T/ex" >/dev/null 2>"$T/stderr"; then
  for f in 16-memory.png 17-dec_tokens.png 23-dec_mask-h1.png 30-cross_qkv.png 31-cross_scores-h1.png \
    40-dec_predict.png; do
    ls "$T/ex"/*"${f#*-}" >/dev/null 2>&1 || fail "export --target has no *${f#*-}: $(ls "$T/ex" | tr '\n' ' ' | cut -c1-300)"
  done
else
  fail "export --target: $(cat "$T/stderr")"
fi
if "$SF" export --model "$G/model.safetensors" --text "$gtext" --generate --size 640x360 --format png \
  --out "$T/exg" >/dev/null 2>"$T/stderr"; then
  [ "$(ls "$T/exg")" = "$(printf 'step1\nstep2')" ] || fail "export --generate: $(ls "$T/exg")"
  n1=$(ls "$T/exg/step1" | grep -c png) n2=$(ls "$T/exg/step2" | grep -c png)
  [ "$n1" -gt 30 ] && [ "$n1" = "$n2" ] || fail "export --generate: $n1 and $n2 pictures"
else
  fail "export --generate: $(cat "$T/stderr")"
fi

# the strip's next words are never cut into another word (issue 31.3: "apporten", then "apporte…" in
# a column where the whole "apportent" fits, smaller): the shipped translation model at 1280x720
if "$SF" export --model "$SF_SOURCE_DIR/assets/models/translate.safetensors" --text "They bring money to the bank" \
  --generate --max-steps 2 --size 1280x720 --format svg --out "$T/strip" >/dev/null 2>"$T/stderr"; then
  grep -q ">apportent<" "$T/strip/step2/"*-dec_predict.svg || fail "the strip of step 2 does not name apportent"
  cut=$(grep -l "apporte…" -r "$T/strip" | wc -l)
  [ "$cut" = 0 ] || fail "the strip cuts apportent to apporte… in $cut pictures"
else
  fail "export --generate on translate.safetensors: $(cat "$T/stderr")"
fi

# a lesson on an encoder-decoder: generate: on, gen=N, focus words of the decoder and the source
mkdir -p "$T/les"
cp "$G/model.safetensors" "$T/les/m.safetensors"
printf -- '---\ntitle: t\nsentence: %s\nmodel: m.safetensors\ngenerate: on\n---\n%s\nx\n%s\ny\n' "$gtext" \
  '## A {stage=dec_softmax gen=2 cell=rive,<bos>}' '## B {stage=cross_softmax layer=2 gen=2 cell=rive,river}' \
  >"$T/les/ok.md"
"$SF" check "$T/les/ok.md" >"$T/out" 2>&1 || fail "check of a decoder lesson: $(cat "$T/out")"
if "$SF" export --lesson "$T/les/ok.md" --size 640x360 --out "$T/lesx" >/dev/null 2>"$T/stderr"; then
  [ "$(ls "$T/lesx" | tr '\n' ' ')" = "01-l1-dec_softmax-h1.png 02-l2-cross_softmax-h1.png " ] ||
    fail "export of a decoder lesson: $(ls "$T/lesx")"
else
  fail "export of a decoder lesson: $(cat "$T/stderr")"
fi
printf -- '---\ntitle: t\nsentence: the cat\nmodel: m.safetensors\ngenerate: maybe\n---\n## A {stage=memory}\nx\n' \
  >"$T/les/bad.md"
"$SF" check "$T/les/bad.md" >"$T/out" 2>&1
grep -qF 'bad.md:5: bad value for generate: "maybe" (expected on or off)' "$T/out" || fail "generate: maybe: $(cat "$T/out")"
printf -- '---\ntitle: t\nsentence: the cat\nmodel: m.safetensors\n---\n## A {stage=dec_predict gen=0}\nx\n' \
  >"$T/les/g0.md"
"$SF" check "$T/les/g0.md" >"$T/out" 2>&1
grep -qF 'bad value gen=0: expected a generation step from 1 to 64' "$T/out" || fail "gen=0: $(cat "$T/out")"
cp "$REFS/cat-bank/model.safetensors" "$T/les/enc.safetensors"
printf -- '---\ntitle: t\nsentence: the cat\nmodel: enc.safetensors\ntarget: le chat\n---\n## A {stage=softmax}\nx\n' \
  >"$T/les/enc.md"
"$SF" check "$T/les/enc.md" >"$T/out" 2>&1
grep -qF 'target: the model is an encoder only' "$T/out" || fail "target: on an encoder: $(cat "$T/out")"

# wrong combinations: one line on stderr, exit 2
bad() { # bad WANT ARGS...: exit 2 and one line holding WANT
  local want=$1
  shift
  "$SF" "$@" >/dev/null 2>"$T/err"
  local rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -qF -- "$want" "$T/err" ||
    fail "$* -> exit $rc: $(cat "$T/err")"
}
bad "--generate writes the target itself" stages --model "$G/model.safetensors" --generate --target rive
bad "--max-steps limits --generate" dump --model "$G/model.safetensors" --max-steps 3 --out "$T/x"
bad "--max-steps needs a whole number from 1 to 64" stages --model "$G/model.safetensors" --generate --max-steps 65
bad "--max-steps needs a whole number" stages --model "$G/model.safetensors" --generate --max-steps 2x
bad "--generate is given twice" stages --model "$G/model.safetensors" --generate --generate
bad "without a causal prediction head" stages --model "$REFS/head-nonorm/model.safetensors" --generate
bad "without a causal prediction head" dump --model "$REFS/cat-bank/model.safetensors" --generate --out "$T/x"
bad "is an encoder only" stages --model "$REFS/cat-bank/model.safetensors" --target "le chat"
bad "--generate writes the target itself" export --model "$G/model.safetensors" --generate --target rive --out "$T/x"
bad "is an encoder only" export --model "$REFS/cat-bank/model.safetensors" --target "le chat" --out "$T/x"
[ ! -e "$T/x" ] || fail "a refused dump left $T/x"

# The shipped decoder lesson (trained translate model, --generate): one picture per step, and the
# translation the lesson narrates (scripts/train/translate.py checks it too).
SRC=${SF_SOURCE_DIR:-$(dirname "$REFS")/..}
if "$SF" export --lesson "$SRC/lessons/decoder.md" --out "$T/lesson" >"$T/out" 2>"$T/stderr"; then
  steps=$(grep -c '^#\{1,2\} ' "$SRC/lessons/decoder.md")
  # (a narration longer than its page adds a picture per page: NN-...-textN.png)
  pngs=$(ls "$T/lesson"/*.png 2>/dev/null | grep -v -- '-text[0-9]*\.png$' | wc -l)
  [ "$pngs" -eq $((steps + 1)) ] || fail "export --lesson decoder.md wrote $pngs pictures for $steps steps and the title page"
else
  fail "export --lesson decoder.md: $(cat "$T/stderr")"
fi
"$SF" stages --model "$SRC/assets/models/translate.safetensors" --text "She puts money in the bank" --generate \
  >"$T/translate" 2>"$T/stderr" || fail "stages --generate on translate: $(cat "$T/stderr")"
grep -qF "generated: elle met de l argent dans la banque" "$T/translate" ||
  fail "translate: not the lesson's sentence: $(grep generated "$T/translate")"

if [ "$failures" -ne 0 ]; then
  echo "test_seq2seq_cli: $failures failures" >&2
  exit 1
fi
echo "test_seq2seq_cli: info, stages and dump agree on the encoder-decoder"
