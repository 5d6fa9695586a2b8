#!/usr/bin/env bash
# test_export.sh -- `stepformer export` writes every stage's file in every format, replaces only
# its own files, and fails cleanly. Needs $STEPFORMER; xmllint (libxml2-utils) checks the SVGs.
set -u
fail=0
check() { if eval "$1"; then :; else echo "FAILED: $2"; fail=1; fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sf=$STEPFORMER

# 1. the cat/bank sentence, every format
out=$tmp/all
echo "my notes" > "$tmp/keep.txt"; mkdir -p "$out"; cp "$tmp/keep.txt" "$out/notes.txt"
log=$("$sf" export --random D=16,H=2,F=32,layers=2,seed=7 --text "The cat walks by the bank" --format all --out "$out" 2>&1)
check '[ $? = 0 ]' "export --format all exits 0: $log"
pictures=$(echo "$log" | sed -n 's/.*(\([0-9]*\) pictures).*/\1/p')
check '[ -n "$pictures" ] && [ "$pictures" -gt 20 ]' "export reports its pictures: $log"
check '[ "$(ls "$out"/*.png | wc -l)" = "$pictures" ]' "one PNG per picture"
check '[ "$(ls "$out"/*.svg | wc -l)" = "$pictures" ]' "one SVG per picture"
for f in "$out"/*.png; do
  check '[ "$(head -c 8 "$f" | od -An -tx1 | tr -d " \n")" = "89504e470d0a1a0a" ]' "$f is a PNG"
done
check 'xmllint --noout "$out"/*.svg' "every SVG parses as XML"
# every stage of a 2-layer post-norm model, as .npy and CSV (per head for per-head stages)
for s in O X P Z; do
  check '[ -s "$out/$s.npy" ] && [ -s "$out/$s.csv" ]' "$s.npy and $s.csv"
done
for l in 0 1; do
  for s in in concat attn res1 norm1 ffn_pre ffn_hidden ffn res2 norm2 out; do
    check '[ -s "$out/l$l.$s.npy" ] && [ -s "$out/l$l.$s.csv" ]' "l$l.$s.npy and .csv"
  done
  for s in Q K V S A AV; do
    check '[ -s "$out/l$l.$s.npy" ] && [ -s "$out/l$l.$s-h1.csv" ] && [ -s "$out/l$l.$s-h2.csv" ]' "l$l.$s per head"
  done
done
check '[ "$(cat "$out/tokens.txt" | tr "\n" " ")" = "the cat walks by the bank " ]' "tokens.txt"
# CSV: the token labels and exact values (the header names the keys, first column the queries)
check 'head -1 "$out/l0.A-h1.csv" | grep -q "^token \\\\ token,the,cat,walks,by,the,bank$"' "A's CSV header has the tokens"
check '[ "$(sed -n 2p "$out/l0.A-h1.csv" | cut -d, -f1)" = "the" ]' "A's CSV rows start with the token"
# file names: NN-stage[-hH]
check '[ -s "$out/08-l1-softmax-h1.png" ] && [ -s "$out/08-l1-softmax-h2.png" ] && [ -s "$out/02-onehot.svg" ]' "picture names"
check 'cmp -s "$out/notes.txt" "$tmp/keep.txt"' "a file the user made in --out is untouched"
check '[ -z "$(ls -A "$out" | grep tmp)" ]' "no temporary files left"

# 2. exporting again replaces the export's own files, and only those
before=$(ls "$out" | wc -l)
"$sf" export --random D=16,H=2,F=32,layers=2,seed=8 --format png --out "$out" >/dev/null 2>&1
check '[ $? = 0 ] && [ "$(ls "$out" | wc -l)" = "$before" ]' "re-export writes the same names"
check 'cmp -s "$out/notes.txt" "$tmp/keep.txt"' "the user's file survives a re-export"

# 3. the lesson: one picture per lesson step, narration included
out=$tmp/lesson
log=$("$sf" export --lesson "$SF_SOURCE_DIR/lessons/cat-bank.md" --format png --out "$out" 2>&1)
check '[ $? = 0 ]' "export --lesson: $log"
steps=$(grep -c '^#\{1,2\} ' "$SF_SOURCE_DIR/lessons/cat-bank.md")
check '[ "$(ls "$out"/*.png | wc -l)" -ge "$steps" ]' "one picture per lesson step ($steps headings)"
# a narration-only step is named after its title, without the names of its TeX commands
printf -- '---\ntitle: t\nsentence: a b\nmodel: random D=16,H=2,F=8,layers=1,seed=1\n---\n## Rows in $\\mathbb{R}^D$\n\nText.\n' \
  >"$tmp/math-title.md"
"$sf" export --lesson "$tmp/math-title.md" --out "$tmp/math-title" >/dev/null 2>&1
check '[ -f "$tmp/math-title/01-rows-in-r-d.png" ]' "a math title's file name: $(ls "$tmp/math-title" 2>&1)"

# 4. failures: one line, exit 2, nothing left behind
touch "$tmp/file"
err=$("$sf" export --out "$tmp/file/sub" 2>&1 >/dev/null); rc=$?
check '[ $rc = 2 ] && [ "$(echo "$err" | wc -l)" = 1 ] && echo "$err" | grep -q "file/sub"' "--out under a regular file: $err"
err=$("$sf" export --out "$tmp/x" --format gif 2>&1); rc=$?
check '[ $rc = 2 ] && [ ! -e "$tmp/x" ] && echo "$err" | grep -q "format"' "unknown format: $err"
err=$("$sf" export --out "$tmp/x" --head 9 --random D=16,H=2,F=32,layers=1,seed=1 2>&1); rc=$?
check '[ $rc = 2 ] && [ ! -e "$tmp/x" ] && echo "$err" | grep -q "heads"' "--head beyond the model: $err"
err=$("$sf" export --out "$tmp/x" --text "  ...  " 2>&1); rc=$?
check '[ $rc = 2 ] && [ ! -e "$tmp/x" ] && echo "$err" | grep -qi "no words"' "empty sentence: $err"
err=$("$sf" export --out "$tmp/x" --size 10x10 2>&1); rc=$?
check '[ $rc = 2 ] && echo "$err" | grep -q "size"' "bad --size: $err"
err=$("$sf" export --bogus 2>&1); rc=$?
check '[ $rc = 2 ] && echo "$err" | grep -q "bogus"' "unknown option: $err"

# 5. a model file named in another encoding (Latin-1 "café"): its name is in every caption; the
# SVGs must still be UTF-8 XML
cp "$SF_SOURCE_DIR/assets/models/bank.safetensors" "$tmp/$(printf 'caf\351').safetensors"
out=$tmp/latin1
log=$("$sf" export --model "$tmp/$(printf 'caf\351').safetensors" --format svg --head 1 --out "$out" 2>&1)
check '[ $? = 0 ]' "export of a Latin-1-named model: $log"
check 'xmllint --noout "$out"/*.svg' "the SVGs of a Latin-1-named model parse as XML"

# 6. more than 99 steps (10 layers): numbered with 3 digits, so that the names sort in step order
out=$tmp/deep
"$sf" export --random D=8,H=2,F=8,layers=10,seed=1 --head all --out "$out" >/dev/null 2>&1
check '[ -s "$out/001-tokens.png" ] && [ -s "$out/105-l10-addnorm2.png" ] && [ -s "$out/097-l10-scores-all.png" ]' "3-digit picture numbers"
check '[ -z "$(ls "$out" | grep -v "^[0-9][0-9][0-9]-")" ]' "every name has 3 digits: $(ls "$out" | grep -v "^[0-9][0-9][0-9]-" | head -3)"

# 6b. ten heads or more: -h01 … -h10, so that a file list sorts the heads in order (one layer, D=20)
out=$tmp/tenheads
"$sf" export --random D=20,H=10,F=8,layers=1,seed=1 --out "$out" >/dev/null 2>&1
check '[ -s "$out/08-softmax-h01.png" ] && [ -s "$out/08-softmax-h10.png" ] && [ ! -e "$out/08-softmax-h1.png" ]' \
  "ten heads: two-digit head numbers: $(ls "$out" | grep softmax | head -3 | tr '\n' ' ')"
check '[ "$(ls "$out" | grep -- "-softmax-h" | head -2 | tr "\n" " ")" = "08-softmax-h01.png 08-softmax-h02.png " ]' \
  "ten heads: the names sort in head order"

# 7. values that overflow (a LayerNorm gain of 3e38, finite, so the model loads): NaN in a CSV is
# "nan", never printf's "-nan"; stages counts the NaN and inf values instead of hiding them
model=$tmp/overflow.safetensors
cp "$SF_TEST_DIR/ref/cat-bank/model.safetensors" "$model"
hlen=$(od -An -tu4 -N4 "$model" | tr -d ' ')
at=$(head -c $((8 + hlen)) "$model" | grep -ao '"layers.0.norm1.weight":{[^}]*}' | sed 's/.*data_offsets":\[\([0-9]*\),.*/\1/')
printf '\346\261\141\177\346\261\141\377' | dd of="$model" bs=1 seek=$((8 + hlen + at)) conv=notrunc 2>/dev/null
out=$tmp/overflow
log=$("$sf" export --model "$model" --text "the cat walks by the bank" --format csv --out "$out" 2>&1)
check '[ $? = 0 ]' "export of overflowing values: $log"
check 'grep -q ",nan" "$out/l0.out.csv" && ! grep -q -- "-nan" "$out"/*.csv' "NaN is written nan in CSV"
log=$("$sf" stages --model "$model" --text "the cat walks by the bank")
check 'echo "$log" | grep "l0.out.npy" | grep -q "x NaN"' "stages counts NaN: $(echo "$log" | grep l0.out.npy)"

# 8. exporting again replaces the earlier export: a 2-head model's pictures over a 4-head one's
# leave no stale -h3/-h4 pictures; files of another kind (CSV), a picture the user changed, and
# the user's own files stay
out=$tmp/again
mkdir -p "$out"
echo "mine" >"$out/notes.txt"
echo "my picture" >"$out/07-scores-h9.png"
"$sf" export --format png,csv --out "$out" >/dev/null 2>&1
check '[ -s "$out/07-scores-h3.png" ] && [ -s "$out/07-scores-h4.png" ] && [ -s "$out/X.csv" ]' "the 4-head export"
echo "annotated by hand" >"$out/08-softmax-h4.png"
"$sf" export --random D=16,H=2,F=32,layers=1,seed=3 --format png --out "$out" >/dev/null 2>&1
check '[ ! -e "$out/07-scores-h3.png" ] && [ ! -e "$out/07-scores-h4.png" ]' "stale pictures of the earlier export removed"
check '[ -s "$out/07-scores-h2.png" ] && [ -s "$out/X.csv" ] && [ -s "$out/l0.A-h4.csv" ]' "CSV files (not exported this time) stay"
check '[ "$(cat "$out/08-softmax-h4.png")" = "annotated by hand" ]' "a picture the user changed stays"
check '[ "$(cat "$out/notes.txt")" = mine ] && [ "$(cat "$out/07-scores-h9.png")" = "my picture" ]' "the user's files stay"
"$sf" export --random D=16,H=2,F=32,layers=1,seed=3 --format csv --out "$out" >/dev/null 2>&1
check '[ ! -e "$out/l0.A-h4.csv" ] && [ -s "$out/l0.A-h2.csv" ] && [ -s "$out/07-scores-h2.png" ]' "a CSV export replaces the CSV files"

# 9. interrupted (Ctrl+C, kill): no partial output, the folder it made is gone; a killed run's
# staging folder is removed by the next run into that folder
out=$tmp/interrupted
"$sf" export --random D=64,H=8,F=64,layers=8 --format png,svg --size 4000x3000 --out "$out" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do [ -n "$(ls -A "$out" 2>/dev/null)" ] && break; sleep 0.05; done
kill -TERM $pid
wait $pid
rc=$?
check '[ $rc = 143 ] && [ ! -e "$out" ]' "an export stopped by SIGTERM leaves nothing (exit $rc, $(ls -A "$out" 2>/dev/null | head -3))"
mkdir -p "$out"
"$sf" export --random D=64,H=8,F=64,layers=8 --format png --size 4000x3000 --out "$out" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do [ -n "$(ls -A "$out" 2>/dev/null)" ] && break; sleep 0.05; done
kill -KILL $pid
wait $pid 2>/dev/null
"$sf" export --format csv --out "$out" >/dev/null 2>&1
check '[ -z "$(ls -A "$out" | grep stepformer-tmp)" ] && [ -s "$out/X.csv" ]' "a killed run's staging folder is removed by the next one"

# 10. --model-view: the pictures of every layer × head of the softmax stage (12 layers, 12 heads),
#     at the size asked for: at 1280x720 two pages of six layers (thumbnails too small otherwise,
#     issue 31), each saying which; each of the 144 thumbnails is in an SVG with its title
out=$tmp/model
log=$("$sf" export --random D=48,H=12,F=64,layers=12,seed=1 --text "The cat walks by the bank" --model-view \
  --size 1280x720 --format png,svg --out "$out" 2>&1)
check '[ $? = 0 ] && echo "$log" | grep -q "(2 pictures)"' "export --model-view writes its two pages, and says so: $log"
check '[ "$(ls "$out" | tr "\n" " ")" = "model-view-page2.png model-view-page2.svg model-view.png model-view.svg " ]' "model-view.png and -page2 (.png, .svg) only: $(ls "$out" | tr "\n" " ")"
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}'; }
check '[ "$(png_size "$out/model-view.png")" = "1280x720" ]' "the model view PNG is 1280x720: $(png_size "$out/model-view.png")"
check 'xmllint --noout "$out/model-view.svg" && xmllint --noout "$out/model-view-page2.svg"' "the model view SVGs parse as XML"
check '[ "$(cat "$out"/model-view*.svg | grep -o "layer [0-9]*, head [0-9]*: A (6×6)" | sort -u | wc -l)" = 144 ]' "144 thumbnails, each titled"
check 'grep -q ">page 1 of 2: layers 1–6 of 12" "$out/model-view.svg" && grep -q ">page 2 of 2: layers 7–12 of 12" "$out/model-view-page2.svg"' "each page says which layers it shows"
check 'grep -q ">layer 12<" "$out/model-view-page2.svg" && grep -q ">12<" "$out/model-view-page2.svg"' "the last page names layer 12 and head 12"
err=$("$sf" export --random D=16,H=2,F=32,layers=2,seed=5 --model-view --head 1 --out "$tmp/mv2" 2>&1)
check '[ $? = 2 ] && [ "$(echo "$err" | wc -l)" = 1 ] && [ ! -e "$tmp/mv2" ]' "--model-view with --head: one line, exit 2: $err"
err=$("$sf" export --random D=16,H=2,F=32,layers=2,seed=5 --model-view --format npy --out "$tmp/mv2" 2>&1)
check '[ $? = 2 ] && echo "$err" | grep -q "one picture"' "--model-view with --format npy: exit 2: $err"

# a lesson step's spotlight= (issue 13.4): the export dims every row but bank's towards the white
# background (more near-white pixels than the same step without it); --invariants adds the panel
probe=${PNG_PROBE:?set PNG_PROBE to tests/png_probe (tests/CMakeLists.txt)}
for v in "" " spotlight=row:bank"; do
  n=${v:+spot}; n=${n:-plain}
  printf -- '---\ntitle: Spot\nsentence: The cat walks by the bank\nmodel: random D=16,H=2,F=32,layers=1,seed=3\n---\n\n# A {stage=softmax head=1 row=bank%s}\n' "$v" >"$tmp/$n.md"
  "$sf" export --lesson "$tmp/$n.md" --no-text --size 1280x720 --out "$tmp/$n" >/dev/null 2>"$tmp/$n.err"
  check '[ $? = 0 ]' "export of the $n lesson: $(cat "$tmp/$n.err")"
done
white() { "$probe" "$1" 255 255 255; }
w0=$(white "$tmp"/plain/*.png) w1=$(white "$tmp"/spot/*.png)
check '[ -n "$w0" ] && [ -n "$w1" ] && [ "$w1" -gt $((w0 + 3000)) ]' "the spotlight dims the other rows: $w0 → $w1 near-white pixels"
"$sf" export --lesson "$tmp/spot.md" --invariants --format svg --out "$tmp/inv" >/dev/null 2>&1
check 'grep -q "Invariants of this stage" "$tmp"/inv/*.svg && grep -q "each row sums to 1" "$tmp"/inv/*.svg' "--invariants draws the panel (its lines are in the SVG)"

[ $fail = 0 ] && echo "test_export: all checks passed"
exit $fail
