#!/usr/bin/env bash
# test_dump_golden.sh -- `stepformer dump` against the PyTorch reference files, through the CLI.
#
# For every case of tests/ref/cases.txt: dump the case's model and sentence (with --causal where
# the case says so), and for every encoder-decoder case of tests/ref/seq2seq_cases.txt its source
# and --target (tokens.txt and dec_tokens.txt byte for byte; every reference file must be dumped),
# and compare each reference .npy with the dumped file of the same name: the
# .npy header byte for byte (dtype, order, shape), the values to |c - r| <= 1e-5·max(1, |r|),
# -inf exactly; tokens.txt byte for byte. Then: the dumped model.safetensors dumps the same bytes
# again; random models are the same for a seed and differ for another; a dump into an existing
# folder replaces its files and keeps the rest. Values are read with od and compared with awk:
# no python.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_dump_golden.sh
set -u
export LC_ALL=C
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
REFS=${SF_TEST_DIR:?set SF_TEST_DIR to the tests folder}/ref
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-dump.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 compared=0

fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

# same_npys LABEL REF... -- CAND...: each pair of float32 .npy files has the same header bytes
# (dtype, order, shape), values within |c - r| <= 1e-5·max(1, |r|) and non-finite values
# exactly. One od per side prints every 4-byte word twice, as bytes and as a float; awk walks
# both streams file by file (few processes: spawning one per file made this test slow).
same_npys() {
  local label=$1 refs=() cands=() rs cs
  shift
  while [ "$1" != "--" ]; do refs+=("$1"); shift; done
  shift
  cands=("$@")
  compared=$((compared + ${#refs[@]}))
  for c in "${cands[@]}"; do [ -f "$c" ] || { fail "$label: $c was not dumped"; return; }; done
  rs=$(wc -c "${refs[@]}" | awk '$2 != "total" { printf "%s ", $1 }')
  cs=$(wc -c "${cands[@]}" | awk '$2 != "total" { printf "%s ", $1 }')
  [ "$rs" = "$cs" ] || { fail "$label: file sizes differ: $rs vs $cs"; return; }
  od -An -v -w4 -tu1 -tf4 "${refs[@]}" >"$T/r.txt"
  od -An -v -w4 -tu1 -tf4 "${cands[@]}" >"$T/c.txt"
  paste "$T/r.txt" "$T/c.txt" | awk -v sizes="$rs" -v names="${refs[*]##*/}" -v label="$label" '
    function abs(x) { return x < 0 ? -x : x }
    function report(msg) {
      if (bad++ < 8) printf "  %s/%s %s\n", label, name[k], msg > "/dev/stderr"
    }
    BEGIN { nf = split(sizes, size, " "); split(names, name, " "); k = 1; w = 0; hdr = 3 }
    NF == 8 {                                   # the bytes of word w of file k
      if (w == 2) hdr = (10 + $1 + 256 * $2) / 4
      if (w < hdr && ($1 != $5 || $2 != $6 || $3 != $7 || $4 != $8)) report("header differs")
      next
    }
    NF == 2 {                                   # the same word as a float
      if (w >= hdr) {
        if ($1 ~ /inf|nan/ || $2 ~ /inf|nan/) ok = ($1 == $2)
        else ok = abs($2 - $1) <= 1e-5 * (abs($1) > 1 ? abs($1) : 1)
        if (!ok) report(sprintf("[%d]: dumped %s, PyTorch %s", w - hdr, $2, $1))
      }
      if (++w == size[k] / 4) { k++; w = 0; hdr = 3 }
      next
    }
    { report("unexpected od output: " $0) }
    END {
      if (k != nf + 1) report("od streams end early")
      exit bad != 0
    }
  ' || fail "$label: stage files differ from PyTorch"
}

# ---------------------------------------------------------------- every reference case

n_cases=0
while IFS=$'\t' read -r name causal text; do
  case $name in '#'* | '') continue ;; esac
  n_cases=$((n_cases + 1))
  ref=$REFS/$name out=$T/$name
  flags=()
  [ "$causal" = 1 ] && flags+=(--causal)
  if ! "$SF" dump --model "$ref/model.safetensors" --text "$text" "${flags[@]}" --out "$out" \
    >"$T/stdout" 2>"$T/stderr"; then
    fail "$name: dump failed: $(cat "$T/stderr")"
    continue
  fi
  [ -s "$T/stderr" ] && fail "$name: dump wrote to stderr: $(cat "$T/stderr")"
  cmp -s "$ref/tokens.txt" "$out/tokens.txt" || fail "$name: tokens.txt differs"
  refs=("$ref"/*.npy)
  same_npys "$name" "${refs[@]}" -- "${refs[@]/#"$ref"/"$out"}"
  [ -f "$out/model.safetensors" ] || fail "$name: model.safetensors not dumped"
  for s in "$out"/.stepformer-tmp*; do [ -e "$s" ] && fail "$name: $s was left behind"; done
  echo "  $name: ${#refs[@]} stages compared"
done <"$REFS/cases.txt"
[ "$n_cases" -ge 7 ] || fail "cases.txt lists $n_cases cases"

n_s2s=0
while IFS=$'\t' read -r name text target; do
  case $name in '#'* | '') continue ;; esac
  n_s2s=$((n_s2s + 1))
  ref=$REFS/$name out=$T/$name
  if ! "$SF" dump --model "$ref/model.safetensors" --text "$text" --target "$target" --out "$out" \
    >"$T/stdout" 2>"$T/stderr"; then
    fail "$name: dump failed: $(cat "$T/stderr")"
    continue
  fi
  [ -s "$T/stderr" ] && fail "$name: dump wrote to stderr: $(cat "$T/stderr")"
  for f in tokens.txt dec_tokens.txt; do cmp -s "$ref/$f" "$out/$f" || fail "$name: $f differs"; done
  refs=("$ref"/*.npy)
  [ "${#refs[@]}" -ge 50 ] || fail "$name: only ${#refs[@]} reference files"
  same_npys "$name" "${refs[@]}" -- "${refs[@]/#"$ref"/"$out"}"
  # the dump holds no stage the reference lacks
  for f in "$out"/*.npy; do [ -f "$ref/$(basename "$f")" ] || fail "$name: $(basename "$f") has no reference"; done
  echo "  $name: ${#refs[@]} stages compared"
done <"$REFS/seq2seq_cases.txt"
[ "$n_s2s" -ge 3 ] || fail "seq2seq_cases.txt lists $n_s2s cases"

# the dumped encoder-decoder is the model: dumping from it gives the same bytes (model_save writes
# n_decoder_layers, tgt_vocab and nn.Transformer's names)
s2s=$T/seq2seq-post
if "$SF" dump --model "$s2s/model.safetensors" --text "The cat walks by the bank" \
  --target "le chat marche près de la banque" --out "$T/s2s-again" >/dev/null 2>"$T/stderr"; then
  for f in "$s2s"/*; do
    cmp -s "$f" "$T/s2s-again/$(basename "$f")" || fail "reopened seq2seq dump: $(basename "$f") differs"
  done
else
  fail "dump of the dumped encoder-decoder: $(cat "$T/stderr")"
fi

# an encoder-decoder without --target: the decoder's input is <bos> alone (said on stdout)
if "$SF" dump --model "$REFS/seq2seq-post/model.safetensors" --out "$T/bos-only" >"$T/stdout" 2>"$T/stderr"; then
  [ "$(cat "$T/bos-only/dec_tokens.txt")" = "<bos>" ] || fail "no --target: dec_tokens.txt is not <bos>"
  grep -q "no --target" "$T/stdout" || fail "no --target: not said: $(cat "$T/stdout")"
  same_npys bos-only "$REFS/seq2seq-post/memory.npy" -- "$T/bos-only/memory.npy"
else
  fail "dump without --target: $(cat "$T/stderr")"
fi

# ---------------------------------------------------------------- the dumped model reopens

# the dumped model.safetensors is the model: dumping from it gives the same bytes
first=$T/cat-bank
if "$SF" dump --model "$first/model.safetensors" --text "The cat walks by the bank" \
  --out "$T/again" >/dev/null 2>"$T/stderr"; then
  for f in "$first"/*.npy "$first/tokens.txt" "$first/model.safetensors"; do
    cmp -s "$f" "$T/again/$(basename "$f")" || fail "reopened dump: $(basename "$f") differs"
  done
else
  fail "dump of the dumped model: $(cat "$T/stderr")"
fi

# random models: the same seed, the same bytes; another seed, other values
spec=D=16,H=4,F=32,layers=2,activation=gelu,norm_first=1
for run in a b; do
  "$SF" dump --random "$spec,seed=7" --text "The river bank, the money bank." --out "$T/seed7$run" \
    >/dev/null 2>"$T/stderr" || fail "random dump: $(cat "$T/stderr")"
done
"$SF" dump --random "$spec,seed=8" --text "The river bank, the money bank." --out "$T/seed8" \
  >/dev/null 2>"$T/stderr" || fail "random dump: $(cat "$T/stderr")"
for f in "$T/seed7a"/*; do
  cmp -s "$f" "$T/seed7b/$(basename "$f")" || fail "seed 7 twice: $(basename "$f") differs"
done
cmp -s "$T/seed7a/l0.Q.npy" "$T/seed8/l0.Q.npy" && fail "seeds 7 and 8 give the same l0.Q"
cmp -s "$T/seed7a/P.npy" "$T/seed8/P.npy" || fail "the positional encoding depends on the seed"
"$SF" dump --model "$T/seed7a/model.safetensors" --text "The river bank, the money bank." \
  --out "$T/seed7c" >/dev/null 2>"$T/stderr" || fail "reopen a random model: $(cat "$T/stderr")"
for f in "$T/seed7a"/*.npy; do
  cmp -s "$f" "$T/seed7c/$(basename "$f")" || fail "reopened random model: $(basename "$f") differs"
done

# a dump into an existing folder replaces its own files and keeps the others
mkdir -p "$T/existing"
printf 'keep\n' >"$T/existing/notes.txt"
printf 'stale\n' >"$T/existing/X.npy"
if "$SF" dump --model "$REFS/cat-bank/model.safetensors" --out "$T/existing" >/dev/null 2>&1; then
  [ "$(cat "$T/existing/notes.txt")" = keep ] || fail "dump changed an unrelated file"
  same_npys existing "$REFS/cat-bank/X.npy" -- "$T/existing/X.npy"
else
  fail "dump into an existing folder failed"
fi

if [ "$failures" -ne 0 ]; then
  echo "test_dump_golden: $failures failures ($compared files compared)" >&2
  exit 1
fi
echo "test_dump_golden: all $compared files of $n_cases cases match"
