#!/usr/bin/env bash
# test_cli_check.sh -- `stepformer check`: shipped lessons pass, broken ones fail with FILE:LINE.
#
# The shipped lessons (and the example of lessons/README.md) must check clean: exit 0, no
# "FILE:LINE:" error lines. Each broken lesson, written here into a temporary folder, must give
# exit code 2 and a line "FILE:LINE: ..." on stderr holding the expected key words; a file with
# several problems reports every one of them.
#
#   STEPFORMER=build/stepformer SF_SOURCE_DIR=. bash tests/test_cli_check.sh
set -u
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
SRC=${SF_SOURCE_DIR:?set SF_SOURCE_DIR to the source tree}
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-cli-check.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 cases=0

fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

# The shipped lessons.
cases=$((cases + 1))
lessons=()
for f in "$SRC"/lessons/*.md; do [ "$(basename "$f")" = README.md ] || lessons+=("$f"); done
[ ${#lessons[@]} -ge 4 ] || fail "only ${#lessons[@]} lessons in $SRC/lessons"
"$SF" check "${lessons[@]}" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc != 0 ] || grep -v ': warning: ' "$T/err" | grep -q .; then
  fail "shipped lessons: exit $rc"
  sed 's/^/    /' "$T/err" >&2
fi

# As the README says: check lessons/*.md (the folder's README.md is skipped, not a failure).
cases=$((cases + 1))
"$SF" check "$SRC"/lessons/*.md >"$T/out" 2>"$T/err"
rc=$?
if [ $rc != 0 ] || ! grep -q 'README.md: skipped' "$T/out"; then
  fail "check lessons/*.md: exit $rc"
  sed 's/^/    /' "$T/err" "$T/out" >&2
fi

# The example of lessons/README.md.
cases=$((cases + 1))
awk '/^```markdown$/ { on = 1; next } on && /^```$/ { exit } on' "$SRC/lessons/README.md" \
  >"$T/example.md"
"$SF" check "$T/example.md" >"$T/out" 2>"$T/err" || {
  fail "the README example: exit $?"
  sed 's/^/    /' "$T/err" >&2
}

# expect NAME LINE KEYWORD -- writes stdin to NAME.md, expects exit 2 and NAME.md:LINE: ...KEYWORD
expect() {
  local name=$1 line=$2 key=$3 file="$T/$1.md"
  cases=$((cases + 1))
  cat >"$file"
  "$SF" check "$file" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc = 2 ] || fail "$name: exit code $rc, expected 2"
  if ! grep -F -- "$file:$line: " "$T/err" | grep -q -F -- "$key"; then
    fail "$name: expected \"$file:$line: ...$key...\" on stderr, got:"
    sed 's/^/    /' "$T/err" >&2
  fi
}

FRONT='---
title: Broken
sentence: The cat walks by the bank
model: random D=16,H=2,F=32,layers=1,seed=1
---'

expect unknown-stage 7 'did you mean "softmax"' <<EOF
$FRONT

## Attention {stage=softmx}
EOF

expect misspelt-focus 6 'did you mean bank?' <<EOF
$FRONT
## A {stage=softmax row=bnak}
EOF

expect claim-operator 6 'bad claim in expect="A2[bank, cat] => 0.5": expected a number or a word after =, found ">' <<EOF
$FRONT
## A {stage=softmax expect="A1[bank, cat] < 1; A2[bank, cat] => 0.5"}
EOF

expect claim-token 6 'row token "bnak" is not in the sentence (did you mean bank?)' <<EOF
$FRONT
## A {stage=softmax expect="A2[bnak, cat] > 0.5"}
EOF

expect claim-stage 6 'unknown matrix "sofmax" (did you mean softmax?)' <<EOF
$FRONT
## A {stage=softmax expect="sofmax1[bank, cat] > 0.5"}
EOF

expect claim-fails 7 'claim does not hold: A2[bank, cat] > 0.99 (measured: 0.' <<EOF
$FRONT

## A {stage=softmax expect="sum A2[bank] = 1 ± 0.001; A2[bank, cat] > 0.99"}
EOF

# a step that switches a head off is measured on its edited pass: uniform attention over 6 words
expect claim-edited 6 'claim does not hold: A2[bank, cat] > 0.99 (measured: 0.167)' <<EOF
$FRONT
## A {stage=softmax heads-off=1:2:uniform expect="sum A2[bank] = 1 ± 0.001; A2[bank, cat] > 0.99"}
EOF

expect claim-compare 6 'is measured on a compare= sentence, and this step has none' <<EOF
$FRONT
## A {stage=softmax expect="compare: A2[bank, cat] > 0.5"}
EOF

expect reveal-row 6 'reveal=row hides the focus row: add row=TOKEN' <<EOF
$FRONT
## A {stage=softmax reveal=row}
EOF

expect reveal-value 6 'bad value reveal=later: expected result' <<EOF
$FRONT
## A {stage=softmax reveal=later}
EOF

expect reveal-prediction 6 'reveal=prediction goes with stage=predict' <<EOF
$FRONT
## A {stage=softmax row=cat reveal=prediction}
EOF

# spotlight= (issue 13.4): the three kinds check clean; a typo in the kind or a token gets FILE:LINE
cases=$((cases + 1))
cat >"$T/spotlight.md" <<EOF
$FRONT
## A row {stage=softmax spotlight=row:bank}
## A column {stage=scores spotlight=col:the#2}
## A cell {stage=softmax head=all spotlight=cell:bank,cat}
EOF
"$SF" check "$T/spotlight.md" >"$T/out" 2>"$T/err" || { fail "spotlight: a clean lesson fails:"; sed 's/^/    /' "$T/err" >&2; }

expect spotlight-token 6 'spotlight=bnak is not in the sentence (did you mean bank?)' <<EOF
$FRONT
## A {stage=softmax spotlight=row:bnak}
EOF

expect spotlight-kind 6 'bad value spotlight=cel:bank,cat (did you mean cell:?)' <<EOF
$FRONT
## A {stage=softmax spotlight=cel:bank,cat}
EOF

expect spotlight-cell 6 'expected cell:ROW,COL' <<EOF
$FRONT
## A {stage=softmax spotlight=cell:bank}
EOF

expect spotlight-no-matrix 6 'spotlight= dims all but a part of the stage' <<EOF
$FRONT
## A {spotlight=row:bank}
EOF

expect unknown-option 6 'unknown option "colour"' <<EOF
$FRONT
## Q {stage=qkv colour=red}
EOF

expect unclosed-brace 8 'unclosed brace' <<EOF
$FRONT
Some intro.

## Q {stage=qkv row=cat
EOF

expect missing-front-matter 1 'missing front matter' <<EOF
# A lesson {stage=tokens}
EOF

expect front-matter-key 3 'unknown front matter key "sentense"' <<EOF
---
title: T
sentense: The cat
---
## S {stage=tokens}
EOF

# A model by hand (lessons/README.md): lines 1-9 are the front matter down to embeddings: |,
# the table's rows start on line 10.
HAND='---
title: By hand
sentence: Jane loves art
model: by hand
D: 3
projections: none
positions: none
feed-forward: none
embeddings: |'

expect hand-row-length 11 'expected D = 3' <<EOF
$HAND
  jane  1 0 0
  loves 0 1
  art   1 0 0
---
## S {stage=av row=jane}
EOF

expect hand-word-twice 12 '"art" is in the embeddings table twice' <<EOF
$HAND
  jane  1 0 0
  art   1 0 0
  Art   0 1 0
---
## S {stage=av}
EOF

expect hand-not-a-number 10 '"1,0" in the row of "jane" is not a number' <<EOF
$HAND
  jane  1,0 0 0
---
## S {stage=av}
EOF

expect hand-unknown-switch 6 'did you mean projections:?' <<EOF
---
title: By hand
sentence: Jane loves art
model: by hand
D: 3
projection: none
---
## S {stage=av}
EOF

expect focus-token 6 'row=dog is not in the sentence' <<EOF
$FRONT
## S {stage=softmax row=dog}
EOF

expect layer-range 6 'layer=2 is out of range' <<EOF
$FRONT
## S {stage=softmax layer=2}
EOF

expect head-range 7 'head=5 is out of range' <<EOF
$FRONT

## S {stage=scores head=5}
EOF

expect mask-needs-causal 6 'causal: on' <<EOF
$FRONT
## S {stage=mask}
EOF

expect bad-formula 10 'missing }' <<EOF
$FRONT
## S {stage=softmax}

Fine \$x\$, then
\$\$
A = \frac{1}{2
\$\$
EOF

expect missing-model 4 'model:' <<EOF
---
title: T
sentence: a b
model: nothere.safetensors
---
## S {stage=tokens}
EOF

expect unclosed-dollar 8 'never closed' <<EOF
$FRONT
## S {stage=softmax}

The row \$x_1 of Z.
EOF

expect narration-heading 8 'level-3 heading is narration' <<EOF
$FRONT
## S {stage=softmax}

### T {stage=scores row=cat}
EOF

expect column-not-token 6 'not tokens' <<EOF
$FRONT
## S {stage=addpos cell=the#2,bank}
EOF

expect command-typo 8 'did you mean \mathbf?' <<EOF
$FRONT
## S {stage=softmax}

\$\mathbff{x}\$
EOF

# A binary file: one line, not a flood of garbage.
cases=$((cases + 1))
head -c 4000 /dev/urandom >"$T/binary.md"
"$SF" check "$T/binary.md" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 2 ] || fail "binary: exit $rc"
[ "$(wc -l <"$T/err")" = 1 ] && grep -q -E "binary.md:[0-9]+: not (UTF-8|a text file)" "$T/err" ||
  { fail "binary: expected one line"; head -c 600 "$T/err" >&2; }
if LC_ALL=C grep -q -P '[\x00-\x08\x0B-\x1F\x7F]' "$T/err"; then fail "binary: control characters on stderr"; fi

# export refuses a lesson with a problem of the lesson layer, with the same FILE:LINE.
cases=$((cases + 1))
"$SF" export --lesson "$T/unclosed-dollar.md" --out "$T/x" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 2 ] && grep -q -F "$T/unclosed-dollar.md:8: " "$T/err" || { fail "export of an unclosed \$: exit $rc"; cat "$T/err" >&2; }

# Every problem of a file, each on its own FILE:LINE.
cases=$((cases + 1))
cat >"$T/many.md" <<EOF
---
title: T
sentence: cat eats mouse
colour: red
---
## A {stage=x}
## B {stage=softmax row=dog}
## C {stage=softmax}
Bad \$\frac{1}{\$ formula.
EOF
"$SF" check "$T/many.md" >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 2 ] || fail "many: exit $rc"
for l in 4 6 7 9; do
  grep -q -F "$T/many.md:$l: " "$T/err" || fail "many: no problem reported at line $l"
done

# A missing file, no file, --help.
cases=$((cases + 1))
"$SF" check "$T/nothere.md" >"$T/out" 2>"$T/err"
[ $? = 2 ] && grep -q -F "$T/nothere.md: cannot open" "$T/err" || fail "a missing file"
"$SF" check >"$T/out" 2>"$T/err"
[ $? = 2 ] || fail "check without files should exit 2"
"$SF" check --help >"$T/out" 2>"$T/err" && grep -q 'usage: stepformer check' "$T/out" ||
  fail "check --help"

if [ $failures -gt 0 ]; then
  echo "test_cli_check: $failures of $cases cases FAILED" >&2
  exit 1
fi
echo "test_cli_check: all $cases cases passed"
