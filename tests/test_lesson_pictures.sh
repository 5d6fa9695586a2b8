#!/usr/bin/env bash
# test_lesson_pictures.sh -- what a lesson puts into its exported pictures: a TeX title typeset in
# the header of every picture (never shown raw), the plain-text form of a step title in the PNG
# metadata, and a step's claims under the narration with their measured values (✓ / ✗).
# Needs $STEPFORMER; reads the SVGs, whose texts are <text> elements.
set -u
fail=0
check() { if eval "$1"; then :; else echo "FAILED: $2"; fail=1; fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sf=$STEPFORMER

cat >"$tmp/tex.md" <<'EOF'
---
title: Why $\sqrt{d_k}$ scales $S = QK^\top$
sentence: The cat walks by the bank
model: random D=16,H=2,F=32,layers=1,seed=1
---

Intro.

# Scores $S = QK^\top / \sqrt{d_k}$ {stage=scores row=cat}

Text.

# Weights {stage=softmax row=bank expect="sum A2[bank] = 1 ± 0.001; A2[bank, cat] > 0.99"}

Read the row of bank.
EOF
out=$tmp/svg
log=$("$sf" export --lesson "$tmp/tex.md" --out "$out" --format svg,png --size 1280x720 --claims 2>&1)
check '[ $? = 0 ]' "export of the TeX-titled lesson exits 0: $log"
n=$(ls "$out"/*.svg 2>/dev/null | wc -l)
check '[ "$n" = 3 ]' "three pictures ($n)"
# the title is typeset everywhere: no TeX source, no dollar, in any text of any picture
check '! grep -h -o "<text[^>]*>[^<]*</text>" "$out"/*.svg | grep -q -e "sqrt" -e "\\\\top" -e "\\$"' \
  "no raw TeX in the pictures: $(grep -h -o '<text[^>]*>[^<]*\(sqrt\|\$\)[^<]*</text>' "$out"/*.svg | head -2)"
# ... and its radical sits in the header of each picture (the header is 52 px at 1080, 35 at 720)
for f in "$out"/*.svg; do
  ys=$(grep -o '<text x="[0-9.]*" y="[0-9.]*"[^>]*>√</text>' "$f" | sed 's/.* y="\([0-9.]*\)".*/\1/')
  check 'echo "$ys" | awk "\$1 < 35 { found = 1 } END { exit !found }"' "a √ in the header of $(basename "$f") (y: $(echo $ys))"
done
# the file names are slugs, without TeX
check '[ -s "$out/01-why-d-k-scales-s-qk.svg" ]' "the title slide's file name is a slug: $(ls "$out" | head -3 | tr '\n' ' ')"
# the PNG of the title slide names it in plain text in its metadata (tEXt Title)
check 'grep -a -q "Why √dₖ scales S = QKᵀ" "$out/01-why-d-k-scales-s-qk.png"' "the PNG's Title is the plain-text title"
# the claims of the third step, measured: one holds, one does not (a random model's weight)
check 'grep -q ">sum A2\[bank\] = 1 ± 0.001 (measured: 1.000)<" "$out/03-softmax-h1.svg"' "the claim that holds, with its value"
check 'grep -q ">A2\[bank, cat\] &gt; 0.99 (measured: 0\.[0-9]*)<" "$out/03-softmax-h1.svg"' "the claim that fails, with its value"
check 'grep -q ">✓<" "$out/03-softmax-h1.svg" && grep -q ">✗<" "$out/03-softmax-h1.svg"' "✓ and ✗ beside the claims"
# without the narration column (--no-text), the footer tallies them
"$sf" export --lesson "$tmp/tex.md" --out "$tmp/nt" --format svg --no-text --size 1280x720 --claims >/dev/null 2>&1
check 'grep -q "claims: 1 of 2 hold" "$tmp/nt/03-softmax-h1.svg"' "the footer's tally of the claims with --no-text"
# the claims are the teacher's copy (--claims): the students' slides answer no question for them
"$sf" export --lesson "$tmp/tex.md" --out "$tmp/students" --format svg --size 1280x720 >/dev/null 2>&1
check '! grep -q -e "measured" -e ">✓<" "$tmp/students/03-softmax-h1.svg"' "no claims without --claims"

# predict, then reveal: a reveal= step is exported twice, hidden then revealed
cat >"$tmp/reveal.md" <<'EOF'
---
title: Guess first
sentence: The cat walks by the bank
model: random D=16,H=2,F=32,layers=1,seed=1
---

# Where does bank look? {stage=softmax head=2 row=bank reveal=row expect="sum A2[bank] = 1 ± 0.001"}

Guess, then press →.
EOF
out=$tmp/reveal
log=$("$sf" export --lesson "$tmp/reveal.md" --out "$out" --format svg --size 1280x720 --claims 2>&1)
check '[ $? = 0 ]' "export of a reveal step exits 0: $log"
check '[ -s "$out/01-softmax-h2-hidden.svg" ] && [ -s "$out/01-softmax-h2-revealed.svg" ]' "the hidden and the revealed picture: $(ls "$out" | tr '\n' ' ')"
check 'grep -q ">?</text>" "$out/01-softmax-h2-hidden.svg" && ! grep -q ">?</text>" "$out/01-softmax-h2-revealed.svg"' "the row covered with a ? only in the hidden one"
check '! grep -q "measured" "$out/01-softmax-h2-hidden.svg" && grep -q "measured: 1.000" "$out/01-softmax-h2-revealed.svg"' "the claims only once revealed"

# nothing gives a hidden answer away (issue 31.1): the shipped cat/bank lesson's step 23 hides the
# row of "bank" of the prediction (reveal=row). Its hidden picture holds no percentage of the
# chart, no number of the hidden row, no likely word on the vocabulary axis; the weights' colour bar
# keeps both its ends; the revealed picture has them all.
out=$tmp/cb
"$sf" export --lesson "$SF_SOURCE_DIR/lessons/cat-bank.md" --out "$out" --format svg --size 1280x720 >"$tmp/cb.log" 2>&1
check '[ $? = 0 ]' "export of cat-bank: $(cat "$tmp/cb.log")"
texts() { grep -o '<text[^>]*>[^<]*</text>' "$1" | sed 's/<[^>]*>//g'; }
hid=$out/23-predict-hidden.svg rev=$out/23-predict-revealed.svg
check '! texts "$hid" | grep -q "%"' "no percentage in the hidden picture: $(texts "$hid" | grep "%" | head -3 | tr '\n' ' ')"
check 'texts "$rev" | grep -q "52.3 %"' "the revealed picture's chart: $(texts "$rev" | grep "%" | head -2 | tr '\n' ' ')"
"$sf" export --lesson "$SF_SOURCE_DIR/lessons/cat-bank.md" --out "$tmp/cbn" --format svg --size 1280x720 --no-text >/dev/null 2>&1
check '! texts "$tmp/cbn/23-predict-hidden.svg" | grep -q -x -e "to" -e "where"' "the likely words are not named on the hidden picture's axis (--no-text)"
check 'texts "$tmp/cbn/23-predict-revealed.svg" | grep -q -x "where"' "the revealed picture names them"
check 'texts "$hid" | grep -q -x "0.51" && texts "$hid" | grep -q -x -- "-0.51"' "the weights colour bar keeps its maximum: $(texts "$hid" | grep 0.51 | tr '\n' ' ')"
# the decoder lesson's title slide and the steps before "The first French word" do not show it
out=$tmp/dec
"$sf" export --lesson "$SF_SOURCE_DIR/lessons/decoder.md" --out "$out" --format svg --size 1280x720 >/dev/null 2>&1
for f in "$out"/0[1-4]-*.svg; do
  check '! texts "$f" | grep -q -x -e "elle" -e "0.997" -e "99.7 %"' "$(basename "$f") does not show the first French word: $(texts "$f" | grep -x -e elle -e 0.997 -e "99.7 %" | tr '\n' ' ')"
done
check 'texts "$out"/05-dec_predict.svg | grep -q -x "elle"' "the step that asks for it shows it"

# intuition.md's title step has a Markdown table: it is drawn as a table (bold header, cells in
# columns, at the narration's size), never as its raw source "| kind | noun |..."
out=$tmp/intuition
"$sf" export --lesson "$SF_SOURCE_DIR/lessons/intuition.md" --out "$out" --format svg --size 1280x720 >/dev/null 2>&1
check '[ $? = 0 ]' "export of intuition.md exits 0"
all=$(cat "$out"/01-*.svg | grep -o "<text[^>]*>[^<]*</text>")
check '! echo "$all" | grep -q -e "| kind" -e "|---" -e "| noun"' "no raw table source on the title step: $(echo "$all" | grep -e '|' | head -1)"
for w in kind noun verb adjective; do
  check 'echo "$all" | grep -q "font-weight:bold[^>]*>$w</text>"' "the header cell $w, in bold"
done
# the column "verb": its header and its three cells 0, 1, 0 share one left edge
vx=$(echo "$all" | grep "font-weight:bold[^>]*>verb</text>" | sed 's/.*x="\([0-9.]*\)".*/\1/')
n=$(echo "$all" | grep -c "x=\"$vx\"[^>]*>[01]</text>")
check '[ -n "$vx" ] && [ "$n" = 3 ]' "three cells under the header verb at x=$vx ($n)"
size=$(echo "$all" | grep ">adjective</text>" | grep -v bold | sed 's/.*font-size="\([0-9.]*\)".*/\1/' | head -1)
para=$(echo "$all" | grep ">Before</text>" | sed 's/.*font-size="\([0-9.]*\)".*/\1/' | head -1)
check '[ -n "$size" ] && [ "$size" = "$para" ]' "the table is at the narration's size ($size, narration $para)"

[ $fail = 0 ] && echo "test_lesson_pictures: ok"
exit $fail
