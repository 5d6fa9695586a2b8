#!/usr/bin/env bash
# test_llama_cli.sh -- today's decoders (tests/ref/llama/, tests/gen_llama_ref.py) on the command
# line: info names the architecture and its features; dump writes issue 34's stage names and a
# model.safetensors that opens again with the same features; stages --generate writes through the
# key/value cache; export draws every step; dump --train writes the training step's files and dump
# the saliency; a folder whose config contradicts itself gets exit 2 and one line.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_llama_cli.sh
set -u
export LC_ALL=C.UTF-8
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
REF=${SF_TEST_DIR:?set SF_TEST_DIR to the tests folder}/ref/llama
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-llama-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 checks=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}
has() {
  checks=$((checks + 1))
  grep -qF -- "$3" "$2" || fail "$1: \"$3\" not in: $(head -c 600 "$2")"
}
ok() {
  local label=$1
  shift
  checks=$((checks + 1))
  "$@" >"$T/out" 2>"$T/err" || fail "$label: exit $? ($(head -c 400 "$T/err"))"
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

ok "info qwen3" "$SF" info --model "$REF/qwen3-sharded"
has "info qwen3" "$T/out" "Qwen 3"
has "info qwen3" "$T/out" "grouped-query attention (4 query heads on 1 K/V heads)"
has "info qwen3" "$T/out" "QK-norm"
ok "info llama3" "$SF" info --model "$REF/llama3-bf16"
has "info llama3" "$T/out" "Llama 3 rope scaling"

ok "dump qwen3" "$SF" dump --model "$REF/qwen3-sharded" --text "The cat walks by the bank" --out "$T/d"
for f in rope_angle l0.rms1 l0.Q_norope l0.K_norope l0.Q l0.K l0.V l0.S l0.A l0.AV l0.attn l0.rms2 l0.gate \
  l0.up l0.ffn_hidden l0.out l1.out final_norm logits pred; do
  checks=$((checks + 1))
  [ -s "$T/d/$f.npy" ] || fail "dump: no $f.npy"
done
cmp -s "$T/d/tokens.txt" "$REF/qwen3-sharded/s0/tokens.txt" || fail "dump: tokens.txt is not the generator's"
ok "info of the dumped model" "$SF" info --model "$T/d/model.safetensors"
has "info of the dumped model" "$T/out" "RMSNorm, RoPE (halves), grouped-query attention"

ok "generate" "$SF" stages --model "$REF/llama-gqa2" --text "The cat walks" --generate --max-steps 4
has "generate" "$T/out" "step 4  input (6)"
ok "export" "$SF" export --model "$REF/canon-pairs.safetensors" --text "w1 w2 w3 w4" --out "$T/e" --format png
for f in 04-rmsnorm 06-rope 14-gate 16-ffn_hidden; do
  checks=$((checks + 1))
  [ -s "$T/e/$f.png" ] || fail "export: no $f.png"
done

ok "train" "$SF" dump --model "$REF/llama-gqa2" --text "The cat walks by the bank" --train --out "$T/t"
has "train" "$T/out" "loss 5.96802 over 5 targets, after one step with η = 0.1: 3.64495"
for f in loss loss_after grad.l0.Q_norope grad.l0.rms1 grad.l1.gate grad.layers.0.gate.weight grad.norm.weight; do
  checks=$((checks + 1))
  [ -s "$T/t/$f.npy" ] || fail "dump --train: no $f.npy"
done
checks=$((checks + 1))
[ -s "$T/d/saliency.npy" ] || fail "dump: no saliency.npy on a modern model"
# B in the window (SDL's dummy driver): every page of the backward walk, then a step
ok "B" env SDL_VIDEODRIVER=dummy "$SF" --replay "$SF_TEST_DIR/replay/train_llama.txt" --size 1280x720 \
  --model "$REF/qwen3-sharded" --text "The cat walks by the bank"
has "B" "$T/out" "status=backward 17/44: Keys, rotated by position (RoPE), layer 2, beside its gradient"
has "B" "$T/out" "status=backward 44/44: One-hot tokens beside its gradient"
has "B" "$T/out" "status=after 1 training step, η = 0.1: loss 13.6277 (was 16.3642)"
mkdir -p "$T/bad"
cp "$REF/llama-gqa2/model.safetensors" "$REF/llama-gqa2/tokenizer.json" "$T/bad/"
sed 's/"model_type": "llama"/"model_type": "qwen2"/' "$REF/llama-gqa2/config.json" >"$T/bad/config.json"
refused "contradicting config" "contradicts itself" "$SF" info --model "$T/bad"
# config values the model could not take, refused by the config reader in config.json's words (the
# first found by fuzz_llama_config: the model loader refused it later as "layer_norm_eps must be in
# (0, 1)"; the second was cast to int, undefined behaviour)
sed 's/"rms_norm_eps": 1e-05/"rms_norm_eps": 2e-86/' "$REF/llama-gqa2/config.json" >"$T/bad/config.json"
refused "eps 0 as a float" '"rms_norm_eps" is not a small positive number' "$SF" info --model "$T/bad"
sed 's/"rope_theta": 10000.0,/"rope_theta": 10000.0, "rope_scaling": {"rope_type": "llama3", "factor": 8, "original_max_position_embeddings": 3e9},/' \
  "$REF/llama-gqa2/config.json" >"$T/bad/config.json"
refused "rope_scaling's context over 2^24" "original_max_position_embeddings is not a whole number in 1..16777216" \
  "$SF" info --model "$T/bad"
sed -e 's/"head_dim": 8,//' -e 's/"num_attention_heads": 4/"num_attention_heads": 64/' \
  -e 's/"num_key_value_heads": 2/"num_key_value_heads": 64/' "$REF/llama-gqa2/config.json" >"$T/bad/config.json"
refused "more heads than width" "num_attention_heads=64 is more than hidden_size=32 and there is no head_dim" \
  "$SF" info --model "$T/bad"
mkdir -p "$T/notok"
cp "$REF/llama-gqa2/model.safetensors" "$REF/llama-gqa2/config.json" "$T/notok/"
refused "no tokenizer.json" "tokenizer.json is missing" "$SF" info --model "$T/notok"

# lessons/modern.md's RoPE step beside its narration at 1280x720 (issue 31.4): the distance line on a
# row of its own, K naming its rows as Q does (beside K -> K~, the line set the picture's width: 48 px
# matrices, and K had no words)
ok "export modern.md" "$SF" export --lesson "$SF_SOURCE_DIR/lessons/modern.md" --format svg --size 1280x720 \
  --out "$T/modern"
rope=$(ls "$T/modern/"*-rope.svg 2>/dev/null | head -1)
checks=$((checks + 1))
n=$(grep -c ">river<" "$rope" 2>/dev/null)
[ "${n:-0}" -ge 4 ] || fail "RoPE: the rows of phi, Q, Q~ and K are named (river named ${n:-0} times in $rope)"
has "RoPE's distance line" "$rope" "distance only"

echo "test_llama_cli: $checks checks, $failures failed"
[ "$failures" = 0 ]
