#!/usr/bin/env bash
# test_kvcache_view.sh -- the KV cache's view (view_kvcache.c: export --inside's inside-kvcache).
#
# On the Llama-style model (assets/models/modern.safetensors: 2 layers, H_kv 2 K/V heads of d_k 16)
# and "the cat sat on the mat" (6 tokens): the picture's text says what is kept per token and layer
# (H_kv × d_k = 32 numbers), its size 2 · 2 · 6 · 32 · 4 = 3072 bytes = 3.0 KiB, and frames the row
# of the last token (what a generation step adds). An encoder (no causal head) has no such view.
# RoPE's view (view_modern.c: rope_distance) writes R_5 q · R_0 k = 0.3323 = R_105 q · R_100 k,
# "distance only", when the two agree (0.3323 is the dump's l0.Q[0,5] · l0.K[0,0]).
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_kvcache_view.sh
set -u
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
T=${SF_TEST_DIR:?set SF_TEST_DIR to tests/}
ROOT=$(cd "$T/.." && pwd)
failures=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$SF" export --model "$ROOT/assets/models/modern.safetensors" --text "the cat sat on the mat" --inside \
  --format svg --size 1280x720 --out "$tmp/m" >/dev/null 2>&1 || fail "export --inside: exit $?"
svg="$tmp/m/inside-kvcache.svg"
if [ ! -f "$svg" ]; then
  fail "no inside-kvcache.svg"
else
  grep -q "H_kv = 2 heads × dₖ = 16 = 32 numbers" "$svg" || fail "the per-token row is not named"
  grep -q "2 (K, V) × 2 layers × 6 tokens × 32 × 4 bytes = 3.0 KiB" "$svg" || fail "the size is not 3.0 KiB"
  grep -q "framed: the row of “&lt;unk&gt;”\|framed: the row of “<unk>”\|framed: the row of “mat”" "$svg" ||
    fail "the last row is not named as the one a step adds"
fi
"$SF" export --model "$ROOT/assets/models/modern.safetensors" --text "the cat sat on the mat" --format svg --size 1280x720 \
  --out "$tmp/r" >/dev/null 2>&1 || fail "export: exit $?"
rope=$(ls "$tmp"/r/*l1-rope*.svg 2>/dev/null | head -1)
if [ -z "$rope" ]; then
  fail "no RoPE picture"
else
  # the two products agree (else both numbers are written, without "distance only")
  grep -q ">distance only<" "$rope" || fail "the RoPE view does not say the score depends on the distance only"
  grep -q ">0.3323<" "$rope" || fail "the RoPE view's dot product is not 0.3323 (the dump's l0.Q[0,5]·l0.K[0,0])"
fi
"$SF" export --text "the cat sat" --inside --format svg --out "$tmp/e" >/dev/null 2>&1 || fail "encoder export: exit $?"
[ ! -f "$tmp/e/inside-kvcache.svg" ] || fail "an encoder got a KV cache view"
[ $failures = 0 ] || { echo "test_kvcache_view: $failures FAILED" >&2; exit 1; }
echo "test_kvcache_view: all passed"
