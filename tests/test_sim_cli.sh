#!/usr/bin/env bash
# test_sim_cli.sh -- the similarity stage on the command line (issue 20 item 6).
#
# `dump --compare` writes sim.X, sim.Z, sim.l0 ... sim.final as [L1, L2] .npy (the shapes read
# from the files' headers), sim.line [levels], compare_tokens.txt and sim.txt (the levels and
# the word); `export --compare` draws the sim stage and writes the same .npy; a lesson step
# with stage=sim and no compare= fails `check` with FILE:LINE; --compare with --target or
# --generate is refused in one line; a model without positions titles Z "embeddings (no
# positions)".
#
#   STEPFORMER=build/stepformer SF_SOURCE_DIR=. bash tests/test_sim_cli.sh
set -u
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
SRC=${SF_SOURCE_DIR:?set SF_SOURCE_DIR to the source tree}
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-sim-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 cases=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}
# The shape in an .npy header: "(7, 6)" -> "7,6".
shape() { head -c 128 "$1" | tr -cd '[:print:]' | sed -n "s/.*'shape': (\([^)]*\)).*/\1/p" | tr -d ' ' | sed 's/,$//'; }

M="$SRC/assets/models/bank-sense.pt"
A="The cat sleeps by the river bank" B="She puts money in the bank"

# dump --compare: names, shapes, metadata
cases=$((cases + 1))
if "$SF" dump --model "$M" --text "$A" --compare "$B" --out "$T/d" >"$T/out" 2>"$T/err"; then
  for n in X Z l0 l1 final; do
    [ -f "$T/d/sim.$n.npy" ] || fail "dump: no sim.$n.npy"
    [ "$(shape "$T/d/sim.$n.npy")" = "7,6" ] || fail "dump: sim.$n.npy has shape $(shape "$T/d/sim.$n.npy")"
  done
  [ "$(shape "$T/d/sim.line.npy")" = "5" ] || fail "dump: sim.line.npy has shape $(shape "$T/d/sim.line.npy")"
  [ "$(ls "$T/d" | grep -c '^sim\..*\.npy$')" = 6 ] || fail "dump: $(ls "$T/d" | grep -c '^sim\.') sim files"
  [ "$(wc -l <"$T/d/compare_tokens.txt")" = 6 ] || fail "dump: compare_tokens.txt"
  [ "$(tail -1 "$T/d/compare_tokens.txt")" = bank ] || fail "dump: compare_tokens.txt ends $(tail -1 "$T/d/compare_tokens.txt")"
  grep -qx 'levels X Z l0 l1 final' "$T/d/sim.txt" || fail "dump: sim.txt levels: $(cat "$T/d/sim.txt")"
  grep -qx 'word bank 6 5' "$T/d/sim.txt" || fail "dump: sim.txt word: $(cat "$T/d/sim.txt")"
  grep -q 'similarity files' "$T/out" || fail "dump: says nothing of the similarity: $(cat "$T/out")"
else
  fail "dump --compare: exit $?: $(cat "$T/err")"
fi

# export --compare: the sim stage drawn for each layer, and its data
cases=$((cases + 1))
if "$SF" export --model "$M" --text "$A" --compare "$B" --out "$T/e" --format png,npy --size 640x360 >"$T/out" 2>"$T/err"; then
  [ "$(ls "$T/e" | grep -c -- '-sim\.png$')" = 2 ] || fail "export: $(ls "$T/e" | grep -c -- '-sim\.png$') sim pictures"
  [ -f "$T/e/sim.l1.npy" ] && [ -f "$T/e/sim.line.npy" ] || fail "export: no sim .npy"
  cmp -s "$T/e/sim.l1.npy" "$T/d/sim.l1.npy" || fail "export and dump differ in sim.l1.npy"
else
  fail "export --compare: exit $?: $(cat "$T/err")"
fi
# without --compare, no sim stage
"$SF" export --model "$M" --text "$A" --out "$T/e2" --format png --size 640x360 >/dev/null 2>&1 || fail "export without --compare"
ls "$T/e2" | grep -q -- '-sim\.png$' && fail "export without --compare drew a sim stage"

# check: stage=sim without compare= is an error at its line
cases=$((cases + 1))
printf -- '---\ntitle: t\nsentence: The cat walks by the bank\nmodel: default\n---\n\n# Two banks {stage=sim row=bank}\n\nText.\n' >"$T/nosim.md"
"$SF" check "$T/nosim.md" >/dev/null 2>"$T/err"
rc=$?
[ $rc = 2 ] || fail "check without compare=: exit $rc"
grep -q "nosim.md:7: .*stage=sim.*compare=" "$T/err" || fail "check without compare=: $(cat "$T/err")"
printf -- '---\ntitle: t\nsentence: The cat walks by the bank\nmodel: default\n---\n\n# Two banks {stage=sim row=bank compare="She puts money in the bank"}\n\nText.\n' >"$T/sim.md"
"$SF" check "$T/sim.md" >/dev/null 2>"$T/err" || fail "check with compare=: $(cat "$T/err")"

# the shipped lesson's two sim steps export
cases=$((cases + 1))
"$SF" export --lesson "$SRC/lessons/cat-bank.md" --out "$T/l" --size 640x360 >"$T/out" 2>"$T/err" || fail "export cat-bank.md: $(cat "$T/err")"
[ "$(ls "$T/l" | grep -c -- '-sim\.png$')" = 2 ] || fail "cat-bank.md: $(ls "$T/l" | grep -c -- '-sim\.png$') sim pictures"

# --compare with a decoder's options: one line, exit 2
cases=$((cases + 1))
"$SF" dump --text "$A" --compare "$B" --target "x" --out "$T/x" >/dev/null 2>"$T/err"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q -- '--compare' "$T/err" || fail "--compare --target: exit $rc: $(cat "$T/err")"
[ -e "$T/x" ] && fail "--compare --target left $T/x"

# a model without positions: Z's title says so (the pictures' PNG Title holds the stage's title)
cases=$((cases + 1))
"$SF" export --lesson "$SRC/lessons/intuition.md" --out "$T/i" --size 640x360 >"$T/out" 2>"$T/err" || fail "export intuition.md: $(cat "$T/err")"
grep -a -l 'embeddings (no positions)' "$T"/i/*.png >/dev/null 2>&1 || fail "intuition.md: no picture titled embeddings (no positions)"
grep -a -l 'embeddings + positions' "$T"/i/*.png >/dev/null 2>&1 && fail "intuition.md still says embeddings + positions"

echo "test_sim_cli: $cases cases, $failures failures"
[ $failures = 0 ]
