#!/usr/bin/env bash
# test_course_cli.sh -- a bad .pt or NAME.json through the command line: one line, exit 2.
#
# `stepformer info --model X` on each broken input must exit with 2, print nothing on stdout and
# exactly one line on stderr holding the given key words: the restricted pickle reader's refusals
# (tests/ref/pt: a forbidden global, nothing run; a truncated zip; a storage shorter than its
# tensor; an unknown storage type; the legacy format), then the course notebook's model
# (tests/ref/course/l1-h2-nobias) without its model.json, with a JSON that contradicts the
# tensors, with n_heads that does not divide D, and with JSON that is not JSON; a state_dict of
# another model (the line names its tensor and what Stepformer opens); the notebooks' own modules
# (tests/ref/course-modules) with a config missing or wrong and with a map missing. The broken configs
# are written here with printf into a temporary folder: no python. Last, the shipped
# assets/models/bank-sense.pt steps to its class prediction, and refuses a sentence longer than
# its positions in one line.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_course_cli.sh
set -u
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
PT=${SF_TEST_DIR:?set SF_TEST_DIR to the tests folder}/ref/pt
COURSE=$SF_TEST_DIR/ref/course/l1-h2-nobias
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-course-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 cases=0

fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

# expect_error NAME KEY... -- MODEL: `stepformer info --model MODEL` fails as the header says.
expect_error() {
  local name=$1 keys=() k
  shift
  while [ "$1" != "--" ]; do keys+=("$1"); shift; done
  shift
  cases=$((cases + 1))
  "$SF" info --model "$1" >"$T/stdout" 2>"$T/stderr"
  local rc=$? lines
  lines=$(awk 'END { print NR }' "$T/stderr")
  [ "$rc" = 2 ] || fail "$name: exit code $rc, expected 2 ($(head -c 300 "$T/stderr"))"
  [ "$lines" = 1 ] || fail "$name: $lines lines on stderr, expected 1: $(head -c 600 "$T/stderr")"
  [ -s "$T/stdout" ] && fail "$name: wrote to stdout: $(head -c 300 "$T/stdout")"
  for k in "${keys[@]}"; do
    grep -qF -- "$k" "$T/stderr" || fail "$name: \"$k\" not in: $(cat "$T/stderr")"
  done
  echo "  $name: $(cat "$T/stderr")"
}

expect_error forbidden-global forbidden.pt os.system "nothing was run" -- "$PT/forbidden.pt"
expect_error truncated-zip truncated.pt "cut short" -- "$PT/truncated.pt"
expect_error short-storage short_storage.pt "fewer than its" -- "$PT/short_storage.pt"
expect_error beyond-storage beyond_storage.pt "shorter than the tensor" -- "$PT/beyond_storage.pt"
expect_error unknown-storage unknown_storage.pt QuantumStorage ".float()" -- "$PT/unknown_storage.pt"
expect_error legacy legacy.pt "legacy format" "torch.save" -- "$PT/legacy.pt"

# the notebook's model, its config missing or wrong
cp "$COURSE/model.pt" "$T/model.pt"
expect_error missing-json model.pt "model.json is missing" n_heads vocab -- "$T/model.pt"
V='"vocab": ["<unk>","the","cat","walks","by","bank","river","money","sleeps","eats","mouse"]'
printf '{"n_heads": 2, "d_model": 16, %s}\n' "$V" >"$T/model.json"
expect_error contradicting-json model.pt model.json "d_model = 16" "encoder.tok_embed.weight [11,8] gives 8" -- "$T/model.pt"
printf '{"n_heads": 2, "vocab": ["<unk>", "the", "cat"]}\n' >"$T/model.json"
expect_error short-vocab model.json "lists 3 words" "11 rows" -- "$T/model.pt"
printf '{"n_heads": 3, %s}\n' "$V" >"$T/model.json"
expect_error heads-not-dividing model.json "n_heads = 3" "d_model = 8" -- "$T/model.pt"
printf '{"n_heads": 2, %s\n' "$V" >"$T/model.json"
expect_error not-json model.json "not valid JSON" -- "$T/model.pt"
# the same weights under another name, whatever its extension: found by content, config beside it
cp "$COURSE/model.pt" "$T/weights.bin"
expect_error other-extension weights.bin "weights.json is missing" -- "$T/weights.bin"

# a state_dict of another model (nn.Sequential: 0.weight, ...): names a tensor and what opens
cp "$PT/module.pt" "$T/seq.pt"
printf '{"n_heads": 1, "vocab": ["<unk>"]}\n' >"$T/seq.json"
expect_error other-model seq.pt "\"0.weight\" is neither" "encoder.tok_embed.weight" "embed.weight" -- "$T/seq.pt"

# the notebooks' own modules (tests/ref/course-modules): the per-head family without its JSON or
# with n_heads that contradicts its heads, the einsum family's D x D maps with n_heads that does not
# divide D, and a .safetensors whose keys map was renamed (same length: the header stays valid)
MOD=$SF_TEST_DIR/ref/course-modules
cp "$MOD/heads-l2-h2/model.pt" "$T/heads.pt"
expect_error modules-missing-json heads.pt "heads.json is missing" n_heads -- "$T/heads.pt"
printf '{"n_heads": 3, %s}\n' "$V" >"$T/heads.json"
expect_error modules-heads-contradict heads.json "n_heads = 3" "layer 0 has 2 heads" -- "$T/heads.pt"
cp "$MOD/einsum-l2-h4-full-enc/model.pt" "$T/einsum.pt"
printf '{"n_heads": 3, %s}\n' "$V" >"$T/einsum.json"
expect_error modules-heads-not-dividing einsum.json "n_heads = 3" "does not divide d_model = 16" -- "$T/einsum.pt"
LC_ALL=C sed 's/layers\.0\.attention\.keys\.weight/layers.0.attention.kexs.weight/' \
  "$MOD/einsum-l1-h2-sin-st/model.safetensors" >"$T/renamed.safetensors"
expect_error modules-map-missing renamed.safetensors "\"layers.0.attention.keys.weight\" [4,4] is missing" -- \
  "$T/renamed.safetensors"
# and one that opens: its stages, and info's note on the einsum module's √D
cases=$((cases + 1))
if "$SF" stages --model "$MOD/einsum-l2-h3-shared/model.pt" --text "The cat walks by the bank" >"$T/stages" 2>"$T/stderr" &&
  "$SF" info --model "$MOD/einsum-l2-h3-shared/model.pt" >"$T/info" 2>>"$T/stderr"; then
  grep -q "scaled scores .*l1.S.npy *3x6x6" "$T/stages" || fail "einsum: no l1.S stage"
  grep -q "^note .*energy by sqrt(D)" "$T/info" || fail "einsum: info has no note on sqrt(D)"
  grep -q "^kind .*einsum SelfAttention" "$T/info" || fail "einsum: info has no kind"
else
  fail "einsum stages/info: $(cat "$T/stderr")"
fi
# the course notebook's own einsum module: read as it computes (√d_k, GELU), the assumption said in
# info's note and in the export's footer (the SVG's description)
cases=$((cases + 1))
NB="$MOD/einsum-nb-l2-h4/model.pt"
if "$SF" info --model "$NB" >"$T/info" 2>"$T/stderr" &&
  "$SF" export --model "$NB" --text "The cat walks by the bank" --format svg --head 1 --out "$T/nb" >/dev/null 2>>"$T/stderr"; then
  grep -q "^note .*assumed energy/sqrt(d_k), GELU" "$T/info" || fail "einsum notebook: info does not say what it assumed"
  grep -q "^activation *gelu" "$T/info" || fail "einsum notebook: activation is not GELU: $(grep activation "$T/info")"
  ! grep -q "energy by sqrt(D)" "$T/info" || fail "einsum notebook: info still says sqrt(D)"
  grep -lq "assumed energy/sqrt(d_k), GELU" "$T"/nb/*.svg || fail "einsum notebook: the export's footer does not say what was assumed"
else
  fail "einsum notebook info/export: $(cat "$T/stderr")"
fi

# the shipped classifier: opens and steps to the class bars; a sentence beyond its 24 positions
# is refused in one line at trace creation
BANK=${SF_SOURCE_DIR:?set SF_SOURCE_DIR to the repository}/assets/models/bank-sense.pt
cases=$((cases + 1))
if "$SF" stages --model "$BANK" --text "The cat walks by the bank" >"$T/stages" 2>"$T/stderr"; then
  grep -q "class prediction .*class_pred.npy *1x2" "$T/stages" || fail "bank-sense: no class prediction stage"
  grep -q "mean over positions .*pool.npy *1x32" "$T/stages" || fail "bank-sense: no pool stage"
else
  fail "bank-sense stages: $(cat "$T/stderr")"
fi
cases=$((cases + 1))
long=$(printf 'the cat %.0s' 1 2 3 4 5 6 7 8 9 10 11 12 13)
"$SF" stages --model "$BANK" --text "$long" >"$T/stdout" 2>"$T/stderr"
rc=$?
[ "$rc" = 2 ] && [ ! -s "$T/stdout" ] && [ "$(awk 'END { print NR }' "$T/stderr")" = 1 ] &&
  grep -q "26 tokens; this model knows positions up to 24" "$T/stderr" ||
  fail "too long a sentence: rc $rc, $(cat "$T/stderr")"
echo "  too-long: $(cat "$T/stderr")"

echo "test_course_cli: $cases cases, $failures failures"
[ "$failures" = 0 ]
