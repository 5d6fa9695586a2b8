#!/usr/bin/env bash
# test_gguf_cli.sh -- GGUF files (tests/ref/gguf/, tests/gen_gguf_fixtures.py) on the command line:
# info names the architecture (GPT-2, Llama), the file's version, size and bits per weight and each tensor's type;
# dump and stages take --model FILE.gguf and tokenize with the file's own tokenizer (tokens.txt
# equals the hub folder's labels); every lying file of tests/ref/gguf/bad/ (cases.txt: the file and
# a piece of its message) and a GGUF of an architecture Stepformer does not open are refused by
# info and dump with exit 2 and one line on stderr.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_gguf_cli.sh
set -u
export LC_ALL=C.UTF-8
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
REF=${SF_TEST_DIR:?set SF_TEST_DIR to the tests folder}/ref
G=$REF/gguf
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-gguf-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 checks=0

fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

# has LABEL FILE TEXT: FILE contains TEXT (fixed string).
has() {
  checks=$((checks + 1))
  grep -qF -- "$3" "$2" || fail "$1: \"$3\" not in: $(head -c 600 "$2")"
}

# ok LABEL CMD...: exit 0.
ok() {
  local label=$1
  shift
  checks=$((checks + 1))
  "$@" >"$T/out" 2>"$T/err" || fail "$label: exit $? ($(head -c 400 "$T/err"))"
}

# refused LABEL FILE KEY: `info --model FILE` and `dump --model FILE` exit 2 with one line holding KEY.
refused() {
  local label=$1 file=$2 key=$3 rc
  for cmd in info dump; do
    checks=$((checks + 1))
    if [ $cmd = info ]; then
      "$SF" info --model "$file" >"$T/out" 2>"$T/err"
    else
      "$SF" dump --model "$file" --out "$T/never" >"$T/out" 2>"$T/err"
    fi
    rc=$?
    [ $rc = 2 ] || fail "$label ($cmd): exit $rc, expected 2"
    [ "$(wc -l <"$T/err")" = 1 ] || fail "$label ($cmd): not one line: $(cat "$T/err")"
    grep -qF -- "$key" "$T/err" || fail "$label ($cmd): \"$key\" not in: $(cat "$T/err")"
  done
}

ok "info f16" "$SF" info --model "$G/gpt2-tiny-f16.gguf"
has "info f16" "$T/out" "kind       GPT-2 (a GGUF file, llama.cpp's names)"
has "info f16" "$T/out" "file       version 3, 40.6 kB,"
has "info f16" "$T/out" "types      F32 ×18, F16 ×11"
has "info f16" "$T/out" "tensor     blk.{i}.attn_qkv.weight F16 [48, 16] ×2"
has "info f16" "$T/out" "tensor     output.weight F16 [293, 16]"
has "info f16" "$T/out" "tokenizer  byte-level BPE (tokenizer.ggml.tokens + merges: 293 tokens, 36 merges)"
has "info f16" "$T/out" "features   learned positions (up to 32), tied head, bpe tokenizer"
ok "info q8" "$SF" info --model "$G/gpt2-tiny-q8.gguf"
has "info q8" "$T/out" "types      Q4_0 ×1 (4.5 bits), Q8_0 ×1 (8.5 bits), F32 ×26"
has "info q8" "$T/out" "tensor     blk.{i}.ffn_down.weight Q4_0 [16, 64]"

ok "info llama" "$SF" info --model "$G/llama-gqa2.gguf"
has "info llama" "$T/out" "kind       Llama (a GGUF file, llama.cpp's names)"
has "info llama" "$T/out" "tokenizer  byte-level BPE (tokenizer.ggml.*: 293 ids, 36 merges, 1 added tokens)"
has "info llama" "$T/out" "tensor     blk.{i}.attn_k.weight F32 [16, 32] ×2"
ok "info llama q8" "$SF" info --model "$G/llama-gqa2-q8_0.gguf"
has "info llama q8" "$T/out" "types      Q8_0 ×16 (8.5 bits), F32 ×5"

for s in 0 1; do
  text=$(sed -n "$((s + 2))p" "$REF/hub/cases.txt" | cut -f2)
  ok "dump s$s" "$SF" dump --model "$G/gpt2-tiny-f32.gguf" --text "$text" --out "$T/d$s"
  checks=$((checks + 1))
  cmp -s "$T/d$s/tokens.txt" "$REF/hub/gpt2-tiny/s$s/tokens.txt" ||
    fail "dump s$s: tokens.txt differs from the hub folder's: $(cat "$T/d$s/tokens.txt")"
done
ok "stages" "$SF" stages --model "$G/gpt2-tiny-f16.gguf" --text "The cat walks by the bank"
has "stages" "$T/out" "model: gpt2-tiny-f16.gguf; D=16 H=2 d_k=8 F=64 layers=2 gelu_tanh pre-norm causal"

refused "architecture" "$G/types.gguf" "architecture \"test\" is not one Stepformer opens from a GGUF file (gpt2, llama, qwen2, qwen3)"
n=0
while IFS=$'\t' read -r file key; do
  case $file in '#'* | '') continue ;; esac
  refused "bad/$file" "$G/bad/$file" "$key"
  n=$((n + 1))
done <"$G/bad/cases.txt"
checks=$((checks + 1))
[ $n -ge 20 ] || fail "only $n bad files"

# a SentencePiece tokenizer (tokenizer.ggml.model = llama), and its lying files (tests/gen_gguf_spm.py)
ok "info spm" "$SF" info --model "$G/tinyllama-spm.gguf"
has "info spm" "$T/out" "tokenizer  SentencePiece-style BPE (tokenizer.ggml.*: 4556 ids, 1475 merges, 5 added tokens)"
ok "dump spm" "$SF" dump --model "$G/tinyllama-spm.gguf" --text "Hello, world! 你好" --out "$T/spm"
checks=$((checks + 1))
[ "$(paste -sd' ' "$T/spm/tokens.txt")" = "<s> ␣H ell o , ␣wor ld ! ␣ 你 好" ] ||
  fail "dump spm: tokens.txt is $(paste -sd' ' "$T/spm/tokens.txt")"
n=0
while IFS=$'\t' read -r file key; do
  case $file in '#'* | '') continue ;; esac
  refused "bad-spm/$file" "$G/bad-spm/$file" "$key"
  n=$((n + 1))
done <"$G/bad-spm/cases.txt"
checks=$((checks + 1))
[ $n -ge 7 ] || fail "only $n bad SentencePiece files"

if [ $failures -gt 0 ]; then
  echo "test_gguf_cli: $failures of $checks checks FAILED" >&2
  exit 1
fi
echo "test_gguf_cli: all $checks checks passed"
