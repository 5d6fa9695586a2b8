#!/usr/bin/env bash
# test_train_cli.sh -- `stepformer dump --train` (issue 21): the files it writes (loss, a gradient
# per stage and per weight under its file name, the loss after the step), the same gradients as
# torch.autograd's reference for one case (byte for byte is not asked: test_grad_golden.c compares
# values; here the file set and the shapes' sizes), and the refusals: one line, exit 2.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_train_cli.sh
set -u
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
REF=${SF_TEST_DIR:?}/ref/grad
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-train-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 cases=0
fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

# the shipped bank model: every stage has its grad file, the weights theirs, the loss falls
cases=$((cases + 1))
if out=$("$SF" dump --train --out "$T/bank" 2>&1); then
  grep -q "^training step: loss .* after one step with η = 0.1: " <<<"$out" || fail "no training line: $out"
  for f in loss loss_after grad.Z grad.l0.S grad.l0.A grad.l0.Q grad.logits grad.embed.weight \
    grad.layers.0.self_attn.in_proj_weight grad.head.weight; do
    [ -s "$T/bank/$f.npy" ] || fail "dump --train wrote no $f.npy"
  done
  [ "$(head -c 4 "$T/bank/backward-softmax.png" | tail -c 3)" = PNG ] || fail "no backward-softmax.png"
  grep -aq "after one training step with η = 0.1" "$T/bank/backward-softmax.png" ||
    fail "backward-softmax.png's description does not name the step"
  for s in "$T"/bank/*.npy; do # every stage file has its gradient (pred: the loss is taken from the logits)
    b=$(basename "$s" .npy)
    case $b in grad.* | loss | loss_after | pred) continue ;; esac
    [ -e "$T/bank/grad.$b.npy" ] || fail "no grad.$b.npy beside $b.npy"
    [ "$(stat -c %s "$s")" = "$(stat -c %s "$T/bank/grad.$b.npy")" ] || fail "grad.$b.npy is not $b's size"
  done
else
  fail "dump --train failed: $out"
fi

# a reference case: the same file names as torch's
cases=$((cases + 1))
text=$(grep "^pre-gelu-causal-2	" "$REF/cases.txt" | cut -f2)
if "$SF" dump --model "$REF/pre-gelu-causal-2/model.safetensors" --text "$text" --train --out "$T/ref" >/dev/null 2>"$T/err"; then
  for f in "$REF"/pre-gelu-causal-2/grad.*.npy; do
    [ -e "$T/ref/$(basename "$f")" ] || fail "dump --train has no $(basename "$f")"
  done
else
  fail "dump --train on the reference model: $(cat "$T/err")"
fi

# --labels and --lr
cases=$((cases + 1))
"$SF" dump --train --lr 0.5 --labels "cat,walks,by,the,bank,-" --out "$T/lab" >"$T/out" 2>&1 &&
  grep -q "over 5 targets, after one step with η = 0.5" "$T/out" || fail "--labels/--lr: $(cat "$T/out")"

# --no-scale: the √d_k experiment's table, and the stages without the scale
cases=$((cases + 1))
if "$SF" dump --train --no-scale --out "$T/ns" >"$T/out" 2>&1; then
  grep -q "scores without 1/sqrt(d_k)" "$T/out" || fail "--no-scale: $(cat "$T/out")"
  [ -s "$T/ns/sqrt_dk.npy" ] && [ "$(grep -c '^[0-9]' "$T/ns/sqrt_dk.txt")" = 6 ] || fail "--no-scale: no sqrt_dk table"
  cmp -s "$T/ns/l0.S.npy" "$T/bank/l0.S.npy" && fail "--no-scale: the scores are the scaled ones"
else
  fail "dump --train --no-scale: $(cat "$T/out")"
fi

# refusals: one line, exit 2
refuse() { # expected-substring, args...
  local want=$1
  shift
  cases=$((cases + 1))
  "$SF" dump "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc = 2 ] || fail "dump $* exited $rc, not 2"
  [ "$(wc -l <"$T/err")" = 1 ] || fail "dump $*: not one line: $(cat "$T/err")"
  grep -q -- "$want" "$T/err" || fail "dump $*: \"$want\" not in: $(cat "$T/err")"
}
refuse "no prediction head" --random D=8,H=2,F=16,layers=1,seed=1 --text "a b" --train --out "$T/x"
refuse "one token" --text "bank" --train --out "$T/x"
refuse "--lr needs a learning rate" --train --lr -1 --out "$T/x"
refuse "go with --train" --lr 0.1 --out "$T/x"
refuse "not in the model's vocabulary" --train --labels "zebra,-,-,-,-,-" --out "$T/x"
refuse "give one per token" --train --labels "cat" --out "$T/x"
refuse "leave out --generate" --train --generate --out "$T/x"

echo "test_train_cli: $cases cases, $failures failed"
[ $failures = 0 ]
