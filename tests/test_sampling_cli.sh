#!/usr/bin/env bash
# test_sampling_cli.sh -- --top-k, --top-p, --seed and --temperature on the command line (sampling.h).
#
# On the Llama-style model (assets/models/modern.safetensors), a GPT-2-style fixture (tests/ref/head)
# and a hub folder (tests/ref/llama/llama-gqa2): the same seed writes the same words twice; the
# sampled line names the settings; export's prediction picture (SVG) shows the cut words ("cut by
# top-k", "cut by top-p") and the drawn one ("◀ drawn"); bad values get one line and exit 2.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_sampling_cli.sh
set -u
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
T=${SF_TEST_DIR:?set SF_TEST_DIR to tests/}
ROOT=$(cd "$T/.." && pwd)
failures=0 cases=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for model in "$ROOT/assets/models/modern.safetensors" "$T/ref/head/model.safetensors" "$T/ref/llama/llama-gqa2"; do
  [ -e "$model" ] || { fail "$model is missing"; continue; }
  cases=$((cases + 1))
  args=(--model "$model" --text "the cat sat" --generate --max-steps 4 --top-k 3 --top-p 0.9 --seed 5)
  a=$("$SF" stages "${args[@]}" 2>&1) || { fail "$model: exit $?: $a"; continue; }
  b=$("$SF" stages "${args[@]}" 2>&1)
  [ "$a" = "$b" ] || fail "$model: the same seed wrote different words"
  grep -q "^sampled generation (T 1, top-k 3, top-p 0.9, seed 5)" <<<"$a" || fail "$model: no sampled line: $a"
done

cases=$((cases + 1))
out="$tmp/x"
"$SF" export --model "$ROOT/assets/models/modern.safetensors" --text "the cat sat" --generate --max-steps 2 \
  --top-k 5 --top-p 0.9 --seed 3 --temperature 1.3 --size 1280x720 --format svg --out "$out" >/dev/null 2>&1 ||
  fail "export: exit $?"
svg=$(ls "$out"/step1/*predict*.svg 2>/dev/null | head -1)
if [ -z "$svg" ]; then
  fail "export: no prediction SVG"
else
  grep -q "cut by top-k" "$svg" || fail "the picture does not show a word cut by top-k"
  grep -q "cut by top-p" "$svg" || fail "the picture does not show a word cut by top-p"
  grep -q "◀ drawn" "$svg" || fail "the picture does not mark the drawn word"
  grep -q "seed 3" "$svg" || fail "the picture does not name the seed"
fi

for bad in "--top-k 0" "--top-k x" "--top-p 0" "--top-p 1.5" "--seed -3" "--temperature 0" "--top-k"; do
  cases=$((cases + 1))
  # shellcheck disable=SC2086
  msg=$("$SF" stages --model "$ROOT/assets/models/modern.safetensors" --generate $bad 2>&1)
  rc=$?
  [ $rc = 2 ] || fail "$bad: exit $rc, expected 2"
  [ "$(wc -l <<<"$msg")" = 1 ] || fail "$bad: more than one line: $msg"
done
cases=$((cases + 1))
msg=$("$SF" stages --model "$ROOT/assets/models/modern.safetensors" --top-k 3 2>&1)
[ $? = 2 ] && grep -q "add --generate" <<<"$msg" || fail "--top-k without --generate: $msg"

[ $failures = 0 ] || { echo "test_sampling_cli: $failures of $cases cases FAILED" >&2; exit 1; }
echo "test_sampling_cli: all $cases cases passed"
