#!/usr/bin/env bash
# test_modelstore.sh -- the models a laptop already has (issue 35 item 4): --model ollama:NAME[:TAG]
# finds the blob its manifest names in a store laid out as Ollama's ($OLLAMA_MODELS); info --models
# lists the store and a Hugging Face cache ($HF_HUB_CACHE); a missing model, a bad manifest or a
# missing blob is one line and exit 2.
#
#   STEPFORMER=build/stepformer SF_SOURCE_DIR=. bash tests/test_modelstore.sh
set -u
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
SRC=${SF_SOURCE_DIR:?set SF_SOURCE_DIR to the repository}
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-store.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 cases=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}
# a store with two models: library/tiny:latest and someone/other:q8 (both the shipped bank model as
# the blob: what the manifest resolves to is what is checked here)
export OLLAMA_MODELS="$T/ollama" HF_HUB_CACHE="$T/hf" HOME="$T/home"
mkdir -p "$OLLAMA_MODELS/blobs" "$OLLAMA_MODELS/manifests/registry.ollama.ai/library/tiny" \
  "$OLLAMA_MODELS/manifests/registry.ollama.ai/someone/other"
hex=$(sha256sum "$SRC/assets/models/bank.safetensors" | cut -c1-64)
cp "$SRC/assets/models/bank.safetensors" "$OLLAMA_MODELS/blobs/sha256-$hex"
manifest() {
  printf '{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",'
  printf '"config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:%s","size":1},' "$2"
  printf '"layers":[{"mediaType":"application/vnd.ollama.image.license","digest":"sha256:%s","size":1},' "$2"
  printf '{"mediaType":"%s","digest":"sha256:%s","size":100}]}\n' "$1" "$2"
}
manifest application/vnd.ollama.image.model "$hex" >"$OLLAMA_MODELS/manifests/registry.ollama.ai/library/tiny/latest"
manifest application/vnd.ollama.image.model "$hex" >"$OLLAMA_MODELS/manifests/registry.ollama.ai/someone/other/q8"
mkdir -p "$HF_HUB_CACHE/models--HuggingFaceTB--SmolLM2-135M/snapshots/abc123"
echo '{"architectures": ["LlamaForCausalLM"]}' >"$HF_HUB_CACHE/models--HuggingFaceTB--SmolLM2-135M/snapshots/abc123/config.json"

cases=$((cases + 1))
for spec in ollama:tiny ollama:tiny:latest ollama:someone/other:q8 ollama:registry.ollama.ai/library/tiny; do
  "$SF" info --model "$spec" >"$T/out" 2>"$T/err" || fail "$spec: $(cat "$T/err")"
  grep -q "^D  *64" "$T/out" || fail "$spec: not the bank model: $(head -3 "$T/out")"
done

cases=$((cases + 1))
"$SF" info --models >"$T/list" 2>"$T/err" || fail "info --models: $(cat "$T/err")"
grep -q "^ollama:tiny:latest .*blobs/sha256-$hex" "$T/list" || fail "info --models: no ollama:tiny:latest: $(cat "$T/list")"
grep -q "^ollama:someone/other:q8 " "$T/list" || fail "info --models: no ollama:someone/other:q8"
grep -q "^hf:HuggingFaceTB/SmolLM2-135M .*snapshots/abc123  LlamaForCausalLM" "$T/list" ||
  fail "info --models: no Hugging Face entry: $(cat "$T/list")"

expect_error() { # name, expected text, spec
  cases=$((cases + 1))
  "$SF" info --model "$3" >"$T/o" 2>"$T/e"
  local rc=$?
  [ "$rc" = 2 ] || fail "$1: exit $rc, expected 2"
  [ "$(wc -l <"$T/e")" = 1 ] || fail "$1: $(wc -l <"$T/e") lines: $(cat "$T/e")"
  grep -q -- "$2" "$T/e" || fail "$1: \"$(cat "$T/e")\" does not say \"$2\""
}
expect_error missing "ollama pull nothere" ollama:nothere
expect_error missing-tag "no manifests/registry.ollama.ai/library/tiny/q4" ollama:tiny:q4
expect_error empty "write ollama:NAME" ollama:
expect_error climbing "write ollama:NAME" "ollama:../../etc"
mkdir -p "$OLLAMA_MODELS/manifests/registry.ollama.ai/library/adapter" "$OLLAMA_MODELS/manifests/registry.ollama.ai/library/broken" \
  "$OLLAMA_MODELS/manifests/registry.ollama.ai/library/gone"
manifest application/vnd.ollama.image.adapter "$hex" >"$OLLAMA_MODELS/manifests/registry.ollama.ai/library/adapter/latest"
echo '{"layers": [' >"$OLLAMA_MODELS/manifests/registry.ollama.ai/library/broken/latest"
manifest application/vnd.ollama.image.model "$(printf '0%.0s' {1..64})" >"$OLLAMA_MODELS/manifests/registry.ollama.ai/library/gone/latest"
expect_error no-model-layer "no layer of media type application/vnd.ollama.image.model" ollama:adapter
expect_error not-json "not a JSON manifest" ollama:broken
expect_error blob-missing "which is missing from" ollama:gone

echo "test_modelstore: $cases cases, $failures failures"
[ "$failures" = 0 ]
