#!/usr/bin/python3
"""add.py -- trains the course's addition model Stepformer ships (assets/models/add.safetensors).

The course's worked example of the decoder is a sequence-to-sequence addition: the source
"49+13", the target "62". This script trains a tiny encoder-decoder to do that for every pair of
numbers from 0 to 99. Run from the repository root with Debian's python3-torch (a few minutes on
one core):

    /usr/bin/python3 scripts/train/add.py [--out FILE]

--out defaults to assets/models/add.safetensors in the repository this script belongs to.

Tokens are characters: the metadata key tokenizer=chars tells Stepformer that every non-space
character is a token ("49+13" is 4, 9, +, 1, 3). The source vocabulary is <unk> 0-9 +, the target
vocabulary <unk> <bos> <eos> 0-9 + (both hold the digits and +). The target is the sum written as
usual, most significant digit first, with no leading zero ("62", "5", "198").

The model (scripts/train/seq2seq_common.py): nn.Embedding + sinusoidal positions on both sides
(no sqrt(D) scaling), nn.Transformer(d_model=64, nhead=4, 2 encoder and 2 decoder layers,
dim_feedforward=256, relu, post-norm, batch_first, no dropout) and a head nn.Linear(64, V_t).
The objective: teacher forcing, the decoder reads "<bos>" and the sum's digits (causal mask) and
every row is trained to give the next digit, "<eos>" after the last (cross-entropy on every row).

The data: all 10 000 sums a+b with 0 <= a, b <= 99. A fixed 1 000 of them (chosen with their own
seed, the same whatever the training seed, and always holding the notebook's 49+13) are held out;
the model trains on the other 9 000.

Seeds: the initial weights and the batch order come from one seed; seed 1, then 2, 3, ... (at most
--tries) until a model passes. Every run is deterministic (one thread).

Checks (the script refuses to write a model that fails any, and exits 1):
  - greedy decoding (the loop Stepformer runs: the whole prefix through the decoder, argmax of the
    last row, stop at <eos>) gives the exact sum for at least 95% of the 1 000 held-out sums
    (the rate is printed and recorded in the metadata key heldout_exact), and for every sum in
    CHECKS (49+13 -> 62 among them, all held out);
  - tests/gen_ref_seq2seq.py's explicit float32 forward (the stages Stepformer computes) gives the
    same prediction as torch.nn on those sums (to 1e-4).
"""
import argparse
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import seq2seq_common as s2s  # noqa: E402  (sets one thread before torch loads)
import numpy as np  # noqa: E402
import torch  # noqa: E402

SEED, TRIES = 1, 4
D, H, FF, ENC, DEC = 64, 4, 256, 2, 2
EPOCHS, BATCH, LR = 20, 64, 2e-3
N_HELDOUT, SPLIT_SEED, MIN_EXACT = 1000, 4913, 0.95
CHECKS = ["49+13", "0+0", "99+99", "7+5", "50+50", "38+64"]  # all held out (see heldout_pairs)
SRC_VOCAB = ["<unk>"] + list("0123456789+")
TGT_VOCAB = s2s.SPECIALS + list("0123456789+")


def chars(text):
    """The chars tokenizer: every non-space character is a token."""
    return [c for c in text if not c.isspace()]


def src_ids(text):
    return [SRC_VOCAB.index(c) for c in chars(text)]


def tgt_ids(text):
    return [TGT_VOCAB.index(c) for c in chars(text)]


def heldout_pairs():
    """The held-out sums: CHECKS and random ones up to N_HELDOUT, from SPLIT_SEED."""
    allp = [(a, b) for a in range(100) for b in range(100)]
    out = [tuple(int(x) for x in c.split("+")) for c in CHECKS]
    rng = random.Random(SPLIT_SEED)
    for p in rng.sample(allp, 2 * N_HELDOUT):
        if p not in out and len(out) < N_HELDOUT:
            out.append(p)
    return out


def evaluate(model, test):
    """Exact rate of greedy decoding on the held-out sums, the CHECKS, and the explicit forward."""
    texts = [f"{a}+{b}" for a, b in test]
    outs = s2s.greedy(model, [src_ids(t) for t in texts], max_len=6)
    got = ["".join(TGT_VOCAB[i] for i in o) for o in outs]
    right = [g == str(a + b) for g, (a, b) in zip(got, test)]
    exact = sum(right) / len(test)
    ok = exact >= MIN_EXACT
    rep = [f"  {'ok  ' if ok else 'FAIL'} exact greedy sums on {len(test)} held-out pairs: "
           f"{exact:.1%} (want {MIN_EXACT:.0%})" +
           "".join([f"\n         missed: {t} -> {g}" for t, g, r in zip(texts, got, right)
                    if not r][:5])]
    worst = 0.0
    for c in CHECKS:
        g = got[texts.index(c)]
        want = str(sum(int(x) for x in c.split("+")))
        good = g == want
        ok &= good
        _, diff = s2s.stages(model, src_ids(c), [1] + tgt_ids(want))
        worst = max(worst, diff)
        rep.append(f"  {'ok  ' if good else 'FAIL'} {c} -> {g}" + ("" if good else f" (want {want})"))
    rep.append(f"  explicit float32 stages vs torch.nn: max |diff| {worst:.1e}")
    return ok, exact, rep


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(s2s.ROOT, "assets", "models", "add.safetensors"))
    ap.add_argument("--seed", type=int, default=SEED, help=f"first seed to try (default {SEED})")
    ap.add_argument("--tries", type=int, default=TRIES, help="seeds to try, one after the other")
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    a = ap.parse_args()

    t0 = time.time()
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    test = heldout_pairs()
    held = set(test)
    train_pairs = [(x, y) for x in range(100) for y in range(100) if (x, y) not in held]
    examples = [(src_ids(f"{x}+{y}"), tgt_ids(str(x + y))) for x, y in train_pairs]
    ok = False
    for seed in range(a.seed, a.seed + a.tries):
        t1 = time.time()
        torch.manual_seed(seed)
        print(f"seed {seed}: {len(examples)} training sums, {len(test)} held out", flush=True)
        model = s2s.Seq2Seq(len(SRC_VOCAB), len(TGT_VOCAB), D, H, FF, ENC, DEC)
        s2s.train(model, examples, seed, a.epochs, BATCH, LR, log=lambda s: print(s, flush=True))
        train_s = time.time() - t1
        ok, exact, rep = evaluate(model, test)
        print("\n".join(rep), flush=True)
        if ok:
            break
        print(f"seed {seed} fails the checks" +
              (", trying the next seed" if seed + 1 < a.seed + a.tries else ""))
    if not ok:
        print(f"REFUSED: no model passed the checks; {a.out} is left as it was", file=sys.stderr)
        return 1
    meta = s2s.base_metadata(model, SRC_VOCAB, TGT_VOCAB, seed)
    meta.update({"tokenizer": "chars",
                 "objective": "the sum of two numbers of 0..99, character tokens, most significant "
                              "digit first: the decoder reads <bos> and the sum's digits (causal "
                              "mask), every row trained to give the next digit, <eos> after the last",
                 "expect": "; ".join(f"{c} -> {sum(int(x) for x in c.split('+'))}" for c in CHECKS),
                 "heldout_exact": f"{exact:.4f} of {len(test)}",
                 "heldout": "1000 sums held out, chosen with random.Random(4913) in add.py; "
                            "the CHECKS (49+13 among them) are held out",
                 "generator": "scripts/train/add.py"})
    n = s2s.write_model(a.out, model, meta)
    print(f"wrote {a.out} ({os.path.getsize(a.out)} bytes, {n} parameters, seed {seed}); "
          f"training took {train_s:.1f} s, everything {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
