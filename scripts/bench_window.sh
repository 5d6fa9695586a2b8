#!/usr/bin/env bash
# bench_window.sh -- frame times of the window at 1920x1080 (BENCHMARKS.md, "Window").
#   scripts/bench_window.sh [build/stepformer]
# Makes the replay files (hovering 40 cells of every step, stepping, typing), then plays each
# under SDL's dummy video driver with --frame-stats, for the cat/bank lesson and a model of
# BERT-base size (D=768, H=12, F=3072, L=128).
set -eu
sf=${1:-build/stepformer}
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
words=(the cat walks by the river bank and the mouse sleeps near the money)
bert=""; for i in $(seq 0 127); do bert="$bert ${words[$(( (i * 7 + i / 3) % ${#words[@]} ))]}"; done
t=0
for s in $(seq 1 30); do
  for k in $(seq 1 40); do echo "$t hover result $(( (s * 7 + k * 3) % 128 )) $(( (s * 11 + k * 13) % 701 ))"; t=$((t + 1)); done
  echo "$t key Right"; t=$((t + 1))
done >"$w/hover.txt"
sed 's/hover result \([0-9]*\) \([0-9]*\)/hover result \1 \2/' "$w/hover.txt" |
  awk '$2 == "hover" { $4 = $4 % 6; $5 = $5 % 6 } { print }' >"$w/hover-small.txt" # cells of a 6-word sentence
{ for loop in 1 2 3 4 5 6; do for k in $(seq 1 16); do echo "0 key Right"; done; echo "0 key Home"; done; } >"$w/steps.txt"
{ echo "0 key e"; for i in $(seq 1 60); do echo "$i text ${words[$((i % ${#words[@]}))]:0:1}"; echo "$i key BackSpace"; done; echo "99 key Return"; } >"$w/typing.txt"
run() { echo "== $1"; shift; SDL_VIDEODRIVER=dummy OPENBLAS_NUM_THREADS=1 "$sf" "$@" --size 1920x1080 --frame-stats | grep -E "^(frames|events)"; }
big=(--random D=768,H=12,F=3072,layers=1,seed=1 --text "$bert")
run "cat/bank lesson, hovering" --replay "$w/hover-small.txt"
run "cat/bank lesson, stepping" --replay "$w/steps.txt"
run "cat/bank model, typing" --text "The cat walks by the bank" --replay "$w/typing.txt"
run "BERT-base size, hovering" "${big[@]}" --replay "$w/hover.txt"
run "BERT-base size, stepping" "${big[@]}" --replay "$w/steps.txt"
run "BERT-base size, typing" "${big[@]}" --replay "$w/typing.txt"
