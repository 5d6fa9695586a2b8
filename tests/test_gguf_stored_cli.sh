#!/usr/bin/env bash
# test_gguf_stored_cli.sh -- "weights as stored" and --compare-model on the command line (issue 35),
# on tests/ref/gguf/llama-wide-q4_k_m.gguf (a Q4_K_M-typed random Llama) and llama-wide-f16.gguf (the
# same weights in F16):
# export --inside draws inside-stored, whose SVG text names the tensor, its type and the block, its
# scales and the worked weight; --tensor, --block and --weight choose them; a lesson's stage=stored
# (and its aliases) draws it too; --compare-model puts the F16 file's pass beside every step (both
# files named on the prediction, the error against it in the stored view). Bad input -- a block or
# tensor that is not there, --tensor for a model that is not a quantized GGUF, --compare-model with a
# file of another shape or tokenizer, or with --compare -- is one line and exit 2 (export, and the
# window before it opens).
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_gguf_stored_cli.sh
set -u
export LC_ALL=C.UTF-8
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
G=$(cd "${SF_TEST_DIR:?set SF_TEST_DIR to the tests folder}/ref/gguf" && pwd)
Q=$G/llama-wide-q4_k_m.gguf
F=$G/llama-wide-f16.gguf
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-stored-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 checks=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}
txt() { grep -o '>[^<]*</text>' "$1" | sed 's/^>//; s/<\/text>$//; s/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g'; }
# has LABEL FILE TEXT: the SVG's text holds TEXT (a fixed string)
has() {
  checks=$((checks + 1))
  txt "$2" | grep -qF -- "$3" || fail "$1: \"$3\" not in the picture's text: $(txt "$2" | head -c 600 | tr '\n' '|')"
}

# export --inside: the default block (blk.0.ffn_down, Q4_K, the block of the outlier w[4, 41] = 1.5)
checks=$((checks + 1))
if "$SF" export --model "$Q" --text "the cat sat" --inside --format svg --size 1280x720 --out "$T/a" >/dev/null 2>"$T/err"; then
  S=$T/a/inside-stored.svg
  has default "$S" "Weights as stored: a quantized block"
  has default "$S" "blk.0.ffn_down.weight  ·  Q4_K, 4.5 bits a weight  ·  block 4 of 32 (row 4, columns 1–256)"
  has default "$S" "quantized tensor 8 of 16"
  has default "$S" "its codes q (4 bits: 0 … 15), sub-blocks 1–3 of 8"
  # the codes read at half size (issue 31.8): the most common size of the block's numbers, the
  # codes', is 22 px at 1280x720 or more (their digits 16 px high; it drew 256 codes at 18.9)
  checks=$((checks + 1))
  cs=$(grep -oE 'font-size="[0-9.]+"[^>]*>[0-9]+<' "$S" | grep -oE '[0-9.]+"' | tr -d '"' | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
  awk "BEGIN { exit !(${cs:-0} >= 22) }" || fail "default: the codes drawn at ${cs:-?} px, at least 22"
  has default "$S" "d = 0.0022163,  dmin = 0.0085678  (half precision)"
  has default "$S" "sub-block j = 2: codes → values"
  has default "$S" "weight 41 of the block, w[4, 41]:  w = d · scⱼ · q − dmin · mⱼ"
  has default "$S" "= 0.0022163 · 63 · 14 − 0.0085678 · 54 = 1.492"
  has default "$S" "each block's half step"
  has default "$S" "the file keeps no original: each weight lies within half a step of it"
  # the header names the view, not the last stage of the pass (it is no stage)
  has default "$S" "Weights as stored · blk.0.ffn_down.weight · Q4_K · block 4 of 32"
  checks=$((checks + 1))
  ! txt "$S" | grep -q '^Stage ' || fail "default: the stored view's header names a stage: $(txt "$S" | grep '^Stage ')"
else
  fail "export --inside: $(cat "$T/err")"
fi

# --tensor, --block, --weight
checks=$((checks + 1))
if "$SF" export --model "$Q" --text "the cat" --inside --format svg --size 1280x720 --tensor blk.1.ffn_down.weight \
  --block 2 --weight 5 --out "$T/b" >/dev/null 2>"$T/err"; then
  S=$T/b/inside-stored.svg
  has pick "$S" "blk.1.ffn_down.weight  ·  Q6_K, 6.56 bits a weight  ·  block 2 of 32 (row 2, columns 1–256)"
  has pick "$S" "weight 5 of the block, w[2, 5]:  w = d · scⱼ · (q − 32)"
  has pick "$S" "its codes q (6 bits: 0 … 63), sub-blocks 1–6 of 16"
  has pick "$S" "Weights as stored · blk.1.ffn_down.weight · Q6_K · block 2 of 32"
else
  fail "export --tensor: $(cat "$T/err")"
fi
checks=$((checks + 1))
if "$SF" export --model "$Q" --text "the cat" --inside --format svg --size 1280x720 --tensor token_embd.weight \
  --block 7 --out "$T/c" >/dev/null 2>"$T/err"; then
  S=$T/c/inside-stored.svg
  has q8 "$S" "token_embd.weight  ·  Q8_0, 8.5 bits a weight  ·  block 7 of 293 (row 7, columns 1–32)"
  has q8 "$S" "its 32 codes q (8 bits: 0 … 255)"
else
  fail "export --tensor token_embd.weight: $(cat "$T/err")"
fi

# a lesson's stage=stored and its aliases
printf -- '---\ntitle: Stored\nsentence: the cat\nmodel: %s\n---\n\n# As stored {stage=stored}\n\nThe codes.\n\n# Again {stage=weights-as-stored}\n\nThe same.\n' "$Q" >"$T/l.md"
checks=$((checks + 1))
if "$SF" export --lesson "$T/l.md" --format svg --size 1280x720 --out "$T/l" >/dev/null 2>"$T/err"; then
  n=$(ls "$T/l" | grep -c 'stored.*svg')
  [ "$n" = 2 ] || fail "lesson stage=stored: $n pictures ($(ls "$T/l" | tr '\n' ' '))"
  for f in "$T"/l/*stored*.svg; do has lesson "$f" "blk.0.ffn_down.weight  ·  Q4_K"; done
else
  fail "lesson stage=stored: $(cat "$T/err")"
fi

# --compare-model: the F16 file beside every step; the stored view's error against it
checks=$((checks + 1))
if "$SF" export --model "$Q" --compare-model "$F" --text "the cat sat" --inside --format svg --size 1280x720 \
  --out "$T/m" >/dev/null 2>"$T/err"; then
  P=$(ls "$T"/m/*-predict.svg)
  has compare "$P" "llama-wide-q4_k_m.gguf"
  has compare "$P" "llama-wide-f16.gguf"
  has compare "$P" "difference (left − right)"
  has compare "$P" "left → right, difference (points)"
  checks=$((checks + 1))
  txt "$P" | grep -qE '^[0-9]+\.[0-9] → [0-9]+\.[0-9] %$' || fail "compare: no 'p → q %' row"
  has compare "$T/m/inside-stored.svg" "|w − w_ref|, w_ref: llama-wide-f16.gguf (F16)"
  has compare "$T/m/inside-stored.svg" "each cell: the largest error of its weights against the other file"
  [ ! -e "$T/m/inside-sim.svg" ] && ! ls "$T/m" | grep -q -- '-sim' || fail "--compare-model drew a similarity stage"
else
  fail "export --compare-model: $(cat "$T/err")"
fi

# --compare-model in the window (tests/replay/compare-model.txt): the second file's pass follows every
# token appended (A) or removed (U) and the temperature (H)
checks=$((checks + 1))
if env SDL_VIDEODRIVER=dummy "$SF" --replay "$SF_TEST_DIR/replay/compare-model.txt" --size 1280x720 --model "$Q" \
  --compare-model "$F" --text "the cat sat" >"$T/rp" 2>"$T/err"; then
  line() { grep -a "^replay $1 " "$T/rp"; }
  for want in "1 L=4 .* appended=0 compare_L=4" "2 L=5 .* appended=1 compare_L=5" "3 L=6 .* appended=2 compare_L=6" \
    "4 L=5 .* appended=1 compare_L=5" "5 L=5 temp=1.5 .* compare_L=5"; do
    checks=$((checks + 1))
    line "${want%% *}" | grep -aq -- "${want#* }" || fail "compare replay: \"$want\" not in: $(line "${want%% *}" | sed 's/.* L=/L=/')"
  done
else
  fail "compare replay: $(cat "$T/err")"
fi

# stages names the view (it is no stage of the pass)
checks=$((checks + 1))
"$SF" stages --model "$Q" --text "the cat" >"$T/st" 2>"$T/err" || fail "stages: $(cat "$T/err")"
grep -qF "weights as stored (stage=stored; Shift+O in the window; export --inside [--tensor NAME --block N]):" "$T/st" ||
  fail "stages: no weights-as-stored line"
grep -qF "16 quantized tensors; the first shown: blk.0.ffn_down.weight Q4_K (4.5 bits a weight), block 4 of 32" "$T/st" ||
  fail "stages: $(tail -2 "$T/st")"

# bad input: one line, exit 2
refused() { # LABEL KEY ARGS...: exit 2 with one line holding KEY
  local label=$1 key=$2 rc
  shift 2
  checks=$((checks + 1))
  "$@" >"$T/out" 2>"$T/err"
  rc=$?
  [ $rc = 2 ] || fail "$label: exit $rc, expected 2 ($(head -c 300 "$T/err"))"
  [ "$(wc -l <"$T/err")" = 1 ] || fail "$label: not one line: $(cat "$T/err")"
  grep -qF -- "$key" "$T/err" || fail "$label: \"$key\" not in: $(cat "$T/err")"
}
refused "other shape" "llama-wide-q4_k_m.gguf and llama-gqa2.gguf: their shapes differ (F 256 and 64)" \
  "$SF" export --model "$Q" --compare-model "$G/llama-gqa2.gguf" --out "$T/x"
refused "other shape (window)" "their shapes differ (D 32 and 48)" \
  "$SF" --model "$Q" --compare-model "$G/qwen2-f16.gguf"
refused "other tokenizer" 'their tokenizers differ (token 70 is "g" and "h")' \
  "$SF" export --model "$Q" --compare-model "$G/llama-wide-q4_0-swapped.gguf" --out "$T/x"
refused "--compare too" "--compare-model and --compare both put a second pass beside the first" \
  "$SF" export --model "$Q" --compare-model "$F" --compare "the dog" --out "$T/x"
refused "missing file" "--compare-model: " "$SF" export --model "$Q" --compare-model "$T/none.gguf" --out "$T/x"
refused "missing tensor" "tensor blk.7.ffn_up.weight is not in the file; its quantized tensors: token_embd.weight" \
  "$SF" export --model "$Q" --tensor blk.7.ffn_up.weight --out "$T/x"
refused "F32 tensor" "tensor output_norm.weight is not quantized" \
  "$SF" export --model "$Q" --tensor output_norm.weight --out "$T/x"
refused "block 0" "--block 0: give a number from 1" "$SF" export --model "$Q" --block 0 --out "$T/x"
refused "not GGUF" "is not one: open such a file with --model" \
  "$SF" export --random D=16,H=2 --tensor x --out "$T/x"
refused "F16 file" "llama-wide-f16.gguf is not one" "$SF" export --model "$F" --tensor x --out "$T/x"

if [ "$failures" -gt 0 ]; then
  echo "test_gguf_stored_cli: $failures of $checks checks FAILED" >&2
  exit 1
fi
echo "test_gguf_stored_cli: all $checks checks passed"
