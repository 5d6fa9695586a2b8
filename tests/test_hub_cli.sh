#!/usr/bin/env bash
# test_hub_cli.sh -- hub checkpoint folders (tests/ref/hub/, tests/gen_hub_fixtures.py) on the
# command line: info names the architecture, tokenizer and unused tensors; dump, stages and
# export take --model DIR and tokenize with the folder's own tokenizer (tokens.txt equals the
# generator's labels); every bad folder (config.json missing or not JSON, an unknown model_type,
# a config that disagrees with a tensor, a missing tokenizer file, a tokenizer of another size, a
# sharded checkpoint) is refused with exit 2 and one line on stderr naming the problem.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_hub_cli.sh
set -u
export LC_ALL=C.UTF-8
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
HUB=${SF_TEST_DIR:?set SF_TEST_DIR to the tests folder}/ref/hub
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-hub-cli.XXXXXX") || exit 1
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

# refused LABEL DIR KEY1 KEY2: `info --model DIR` and `dump --model DIR` exit 2 with one line
# holding both keys.
refused() {
  local label=$1 dir=$2 k1=$3 k2=$4 rc
  for cmd in info dump; do
    checks=$((checks + 1))
    if [ $cmd = info ]; then
      "$SF" info --model "$dir" >"$T/out" 2>"$T/err"
    else
      "$SF" dump --model "$dir" --out "$T/never" >"$T/out" 2>"$T/err"
    fi
    rc=$?
    [ $rc = 2 ] || fail "$label ($cmd): exit $rc, expected 2"
    [ "$(wc -l <"$T/err")" = 1 ] || fail "$label ($cmd): not one line: $(cat "$T/err")"
    grep -qF -- "$k1" "$T/err" && grep -qF -- "$k2" "$T/err" ||
      fail "$label ($cmd): \"$k1\"/\"$k2\" not in: $(cat "$T/err")"
  done
  printf '  %-28s %s\n' "$label" "$(cat "$T/err")"
}

# fresh VARIANT: a copy of a fixture's top-level files in $T/bad.
fresh() {
  rm -rf "$T/bad"
  mkdir "$T/bad"
  find "$HUB/$1" -maxdepth 1 -type f -exec cp {} "$T/bad/" \;
}

# ---- info
ok "info gpt2" "$SF" info --model "$HUB/gpt2-tiny"
has "info gpt2" "$T/out" "kind       GPT-2"
has "info gpt2" "$T/out" "tokenizer  byte-level BPE (vocab.json + merges.txt: 293 tokens"
has "info gpt2" "$T/out" "unused     h.{i}.attn.bias ×2, h.{i}.attn.masked_bias ×2"
has "info gpt2" "$T/out" "activation gelu_tanh"
ok "info gpt2 f16" "$SF" info --model "$HUB/gpt2-tiny-f16/"
has "info gpt2 f16" "$T/out" "unused     none"
ok "info bert" "$SF" info --model "$HUB/bert-tiny"
has "info bert" "$T/out" "kind       BERT"
has "info bert" "$T/out" "tokenizer  WordPiece (vocab.txt: 80 tokens, lowercased)"
has "info bert" "$T/out" "bert.pooler.dense.weight"
has "info bert" "$T/out" "cls.seq_relationship.weight"
has "info bert" "$T/out" "bert.embeddings.position_ids"

# ---- dump, stages, export with the folder's own tokenizer
for v in gpt2-tiny bert-tiny-bf16; do
  text=$(cat "$HUB/$v/s0/text.txt")
  ok "dump $v" "$SF" dump --model "$HUB/$v" --text "$text" --out "$T/dump-$v"
  checks=$((checks + 1))
  cmp -s "$T/dump-$v/tokens.txt" "$HUB/$v/s0/tokens.txt" ||
    fail "dump $v: tokens.txt differs: $(tr '\n' ' ' <"$T/dump-$v/tokens.txt")"
  ok "stages $v" "$SF" stages --model "$HUB/$v" --text "$text"
  has "stages $v" "$T/out" "$(head -2 "$HUB/$v/s0/tokens.txt" | tail -1)"
done
ok "export bert" "$SF" export --model "$HUB/bert-tiny" --text "The cat walks by the [MASK]." --format npy \
  --out "$T/export"
checks=$((checks + 1))
[ "$(ls "$T/export" | grep -c '\.npy$')" -ge 40 ] || fail "export bert: $(ls "$T/export" | wc -l) files"

# a hub model saved into one file (dump's model.safetensors) has no tokenizer files: refused
checks=$((checks + 1))
"$SF" stages --model "$T/dump-gpt2-tiny/model.safetensors" --text "The cat" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 2 ] && grep -qF "vocab.json, merges.txt" "$T/err" || fail "saved hub model: exit $rc, $(cat "$T/err")"

# ---- bad folders
echo "refusals:"
fresh gpt2-tiny
rm "$T/bad/config.json"
refused "no config.json" "$T/bad" "config.json" "huggingface-cli download"
echo '{"model_type": "gpt2",' >"$T/bad/config.json"
refused "config.json not JSON" "$T/bad" "config.json" "not a JSON object"
echo '{"model_type": "mamba"}' >"$T/bad/config.json"
refused "unknown model_type" "$T/bad" '"mamba"' "gpt2, bert, llama"
fresh gpt2-tiny
sed -i 's/"n_embd": 16/"n_embd": 24/' "$T/bad/config.json"
refused "n_embd disagrees" "$T/bad" '"wte.weight"' "n_embd=24"
fresh gpt2-tiny
rm "$T/bad/merges.txt"
refused "no merges.txt" "$T/bad" "merges.txt" "GPT-2 tokenizer"
fresh gpt2-tiny
sed -i 's/, "<|endoftext|>": 292}/}/' "$T/bad/vocab.json"
refused "vocab.json one short" "$T/bad" "292 tokens" "293 rows"
fresh gpt2-tiny
mv "$T/bad/model.safetensors" "$T/bad/model-00001-of-00002.safetensors"
echo '{"weight_map": {}}' >"$T/bad/model.safetensors.index.json"
refused "sharded" "$T/bad" "sharded" "merge the shards"
fresh bert-tiny
rm "$T/bad/vocab.txt"
refused "no vocab.txt" "$T/bad" "vocab.txt" "BERT tokenizer"
fresh bert-tiny
sed -i 's/"num_attention_heads": 2/"num_attention_heads": 3/' "$T/bad/config.json"
refused "heads do not divide D" "$T/bad" "H=3" "divisible"

if [ $failures -gt 0 ]; then
  echo "test_hub_cli: $failures of $checks checks FAILED" >&2
  exit 1
fi
echo "test_hub_cli: all $checks checks passed"
