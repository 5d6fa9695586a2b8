#!/usr/bin/env bash
# test_cli_stages.sh -- `stepformer stages` prints an aligned table and a --tsv form (issue 16).
#
# For the shipped model and for three-layer random models (post-norm, pre-norm, causal): every
# row of the table has its file name, shape and range in the same columns whatever the file
# names' length (l0.concat.npy, l2.ffn_hidden.npy); the numbers run 1, 2, 3 … without a gap
# (a pre-norm LayerNorm is 5½); --tsv gives a header and 12 tab-separated fields per step,
# as many lines as the table has rows.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_cli_stages.sh
set -u
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
failures=0 cases=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

# check_model NAME ARGS...: the table and the tsv of `stepformer stages ARGS`
check_model() {
  local name=$1 out tsv
  shift
  cases=$((cases + 1))
  out=$("$SF" stages "$@") || { fail "$name: exit code $?"; return; }
  tsv=$("$SF" stages --tsv "$@") || { fail "$name: --tsv exit code $?"; return; }
  # table rows: the lines that name a file; the column where the file name starts must be the
  # same on every row (counted in characters: ½ is one)
  local cols
  cols=$(echo "$out" | grep -E '(\.npy|tokens\.txt) ' | sed 's/½/h/' |
    awk '{ match($0, /(tokens\.txt|[A-Za-z0-9_.]+\.npy) /); print RSTART }' | sort -u | wc -l)
  [ "$cols" = 1 ] || fail "$name: the file column starts at $cols different places:
$(echo "$out" | grep -E '\.npy|tokens\.txt')"
  # numbers without a gap: the whole numbers of the first column, in order of first appearance
  local nums expect=1 n
  nums=$(echo "$tsv" | tail -n +2 | cut -f1 | grep -v '½' | awk '!seen[$0]++')
  for n in $nums; do
    [ "$n" = "$expect" ] || { fail "$name: stage number $n where $expect was due: $(echo $nums)"; break; }
    expect=$((expect + 1))
  done
  # the tsv: a header, 12 fields a line, one line per row of the table
  local bad rows_table rows_tsv
  bad=$(echo "$tsv" | awk -F'\t' 'NF != 12' | wc -l)
  [ "$bad" = 0 ] || fail "$name: $bad tsv lines without 12 fields"
  rows_table=$(echo "$out" | grep -cE '\.npy|tokens\.txt')
  rows_tsv=$(($(echo "$tsv" | wc -l) - 1))
  [ "$rows_table" = "$rows_tsv" ] || fail "$name: $rows_table table rows, $rows_tsv tsv lines"
  echo "$tsv" | head -1 | grep -q '^number	layer	stage	name	file' || fail "$name: tsv header: $(echo "$tsv" | head -1)"
  echo "  $name: $rows_table rows aligned, numbered 1..$((expect - 1))"
}

check_model "shipped model" --text "The cat walks by the bank"
check_model "3 layers, post-norm" --random "D=16,H=2,F=8,layers=3,seed=1" --text "the cat walks by the bank"
check_model "3 layers, pre-norm" --random "D=16,H=4,F=8,layers=3,seed=2,norm_first=1" --text "the cat"
check_model "3 layers, causal" --random "D=8,H=2,F=8,layers=3,seed=3,causal=1" --text "the cat eats the mouse"
# the pre-norm LayerNorm is the half stage after Z + P
"$SF" stages --tsv --random "D=16,H=4,F=8,layers=1,seed=2,norm_first=1" --text "a b" | cut -f1,4 |
  grep -qx '5½	prenorm' || fail "pre-norm: no row 5½ prenorm"
cases=$((cases + 1))

if [ "$failures" -ne 0 ]; then
  echo "test_cli_stages: $failures failures in $cases cases" >&2
  exit 1
fi
echo "test_cli_stages: all $cases cases passed"
