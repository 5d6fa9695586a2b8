#!/usr/bin/env bash
# test_edits_cli.sh -- what-if edits on the command line and in lessons (issue 13 items 1-2):
# --edit and --head-off on stages, dump and export name the edits (stages' line, dump's edits.txt,
# every exported picture's footer in its PNG Description); a bad spec is one line and exit 2; a
# lesson with edit= and heads-off= checks clean, and a typo in each gets FILE:LINE.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_edits_cli.sh
set -u
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-edits-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 cases=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}
TEXT="The cat sleeps by the river bank"

# stages: the edited pass, named above the table
cases=$((cases + 1))
out=$("$SF" stages --text "$TEXT" --edit "S2[bank, river]=6" --head-off 1:3:uniform 2>&1)
grep -q "^edited: S₂\[bank, river\] = 6.0; heads off: layer 1 head 3 (uniform)" <<<"$out" ||
  fail "stages does not name the edits: $(head -4 <<<"$out")"

# dump: edits.txt, and the edited A row
cases=$((cases + 1))
if "$SF" dump --text "$TEXT" --head-off 1:2 --out "$T/dump" >/dev/null 2>"$T/err"; then
  [ "$(cat "$T/dump/edits.txt")" = "heads off: layer 1 head 2 (zeroed)" ] ||
    fail "dump's edits.txt: $(cat "$T/dump/edits.txt")"
else
  fail "dump --head-off failed: $(cat "$T/err")"
fi
cases=$((cases + 1))
"$SF" dump --text "$TEXT" --out "$T/plain" >/dev/null 2>&1 && [ ! -e "$T/plain/edits.txt" ] ||
  fail "an unedited dump has an edits.txt"

# export: the footer of every picture (the PNG's Description) names the edits
cases=$((cases + 1))
if "$SF" export --text "$TEXT" --edit "E[cat, d4]=2.5" --out "$T/ex" --format png --size 640x360 >/dev/null 2>"$T/err"; then
  n=$(ls "$T/ex"/*.png | wc -l) named=$(grep -l "edited: E\[cat, d4\] = 2.5" "$T/ex"/*.png | wc -l)
  [ "$n" -gt 10 ] && [ "$n" = "$named" ] || fail "export: $named of $n pictures name the edit in their footer"
else
  fail "export --edit failed: $(cat "$T/err")"
fi

# bad specs: one line on stderr, exit 2, nothing written
expect_error() {
  local name=$1 key=$2
  shift 2
  cases=$((cases + 1))
  "$@" >"$T/stdout" 2>"$T/stderr"
  local rc=$? lines
  lines=$(awk 'END { print NR }' "$T/stderr")
  [ "$rc" = 2 ] || fail "$name: exit code $rc, expected 2"
  [ "$lines" = 1 ] || fail "$name: $lines lines on stderr, expected 1: $(cat "$T/stderr")"
  grep -qF -- "$key" "$T/stderr" || fail "$name: stderr does not say \"$key\": $(cat "$T/stderr")"
}
expect_error "head out of range" "S9: the model has 4 heads" "$SF" stages --edit "S9[bank, river]=6"
expect_error "unknown word" "lake is not a token" "$SF" stages --text "$TEXT" --edit "S1[bank, lake]=6"
expect_error "not a number" "not a number" "$SF" dump --text "$TEXT" --edit "S1[bank, river]=six" --out "$T/no"
[ -e "$T/no" ] && fail "a refused dump made its folder"
expect_error "head-off syntax" "--head-off 1" "$SF" stages --head-off 1
expect_error "head-off mode" "zero or uniform" "$SF" export --head-off 1:2:off --out "$T/no2"
expect_error "no value" "--edit needs a value" "$SF" stages --edit
expect_error "with --generate" "do not go with --generate" "$SF" stages --random D=8,H=2,F=8,layers=1,causal=1 --text "a b" --generate --edit "S1[b, a]=1"

# lessons: edit= and heads-off= check clean; a typo in each gets FILE:LINE
cat >"$T/good.md" <<'EOF'
---
title: Edits
sentence: The cat sleeps by the river bank
---

# A score changed {stage=softmax head=2 row=bank edit="S2[bank, river]=6; E[cat, d4]=0"}

Text.

# A head off {stage=predict row=bank heads-off=1:2,1:3:uniform}

Text.
EOF
cases=$((cases + 1))
"$SF" check "$T/good.md" >/dev/null 2>"$T/err" || fail "a lesson with edit= and heads-off= does not check clean: $(cat "$T/err")"
sed -e 's/S2\[bank, river\]/S2[bank, rivr]/' -e 's/heads-off=1:2,/heads-off=1:9,/' "$T/good.md" >"$T/bad.md"
cases=$((cases + 1))
"$SF" check "$T/bad.md" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" = 2 ] || fail "check of typos: exit code $rc"
grep -q "bad.md:6: edit=\"S2\[bank, rivr\]=6\": column rivr is not a token" "$T/err" || fail "edit= typo: $(cat "$T/err")"
grep -q "bad.md:10: heads-off=1:9: .*head 9 is not one of 1..4" "$T/err" || fail "heads-off= typo: $(cat "$T/err")"
# issue 31.6: the old 0-based form of a dimension is refused, and the message gives the new one
sed -e 's/E\[cat, d4\]/E[cat, 3]/' -e 's/row=bank edit/row=bank expect="AV2[bank, 1] > 0" edit/' "$T/good.md" >"$T/old.md"
cases=$((cases + 1))
"$SF" check "$T/old.md" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" = 2 ] || fail "check of the old dimension form: exit code $rc"
grep -q "old.md:6: .*column 3: a dimension is written d1 … d64 now.*the old 0-based 3 is d4" "$T/err" ||
  fail "edit= in the old form: $(cat "$T/err")"
grep -q "old.md:6: .*AV2\[bank, 1\].*written d1 … d16 now (d1 here)" "$T/err" || fail "expect= in the old form: $(cat "$T/err")"
sed -e 's/edit=/edits=/' "$T/good.md" >"$T/bad2.md"
cases=$((cases + 1))
"$SF" check "$T/bad2.md" >/dev/null 2>"$T/err"
grep -q "bad2.md:6: unknown option \"edits\" in the heading (did you mean edit=?)" "$T/err" || fail "edits= typo: $(cat "$T/err")"

# a lesson step with heads-off= exports its edited pass, named in its footer
cases=$((cases + 1))
if "$SF" export --lesson "$T/good.md" --out "$T/lex" --format png --size 640x360 >/dev/null 2>"$T/err"; then
  grep -lq "heads off: layer 1 head 2 (zeroed), layer 1 head 3 (uniform)" "$T/lex"/*predict*.png ||
    fail "the heads-off step's picture does not name the heads off: $(ls "$T/lex")"
else
  fail "export of the lesson failed: $(cat "$T/err")"
fi

if [ "$failures" -gt 0 ]; then
  echo "test_edits_cli: $failures of $cases cases FAILED" >&2
  exit 1
fi
echo "test_edits_cli: all $cases cases passed"
