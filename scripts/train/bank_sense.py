#!/usr/bin/python3
"""bank_sense.py -- trains the course notebook's Transformer to say which *bank* a sentence means.

Run from the repository root with Debian's python3-torch (about a minute on one core):

    /usr/bin/python3 scripts/train/bank_sense.py [--out assets/models/bank-sense.pt]

It writes NAME.pt -- torch.save(model.state_dict()), exactly what the notebook tells a student to
do -- and NAME.json beside it ({"n_heads", "vocab", "classes": ["river", "money"], ...}), which
Stepformer opens: stepformer --model assets/models/bank-sense.pt --text "The cat walks by the bank"

The model: the notebook's own classes (tests/course_model.py: Transformer(config, 2) -- token
embedding, learned positions [1, 24, D], 2 pre-norm EncoderBlocks of bias-free W_Q, W_K, W_V, W_O
attention and a ReLU feed-forward, the final LayerNorm, the mean over the positions, a linear layer
to the two classes), D = 32, H = 4, F = 64.

The corpus: the sentences of the shipped bank model's generator (corpus.py), cut after "bank", so
that the only clues to the sense come before it: river, fish (river) and money, coins (money), in
four places ("the cat sleeps by the river bank", "she puts money in the bank", "he walks with the
fish to the bank", "they see the river and walk to the bank"); subjects, verbs and prepositions
are drawn from the same lists for both senses, so they say nothing. One bank sentence in five has
no clue at all ("the cat walks by the bank"): its target is 50/50 (a soft label), so that the
model learns to hesitate there rather than guess. Cross-entropy against those targets, Adam,
batches of one length (the notebook's model has no padding mask), dropout 0.1, one thread,
torch.manual_seed(SEED): the same file on every run.

Checks (the script refuses to write a model that fails any, and exits 1):
  - at least 95 % of 1000 held-out sentences with a clue (a generator seed never trained on) get
    their sense as the larger class score;
  - "The cat walks by the bank" hesitates: neither class above 0.8;
  - "The cat sleeps by the river bank" is river and "She puts money in the bank" is money, each
    above 0.9 (no hesitation);
  - the file is under 2 MB, and torch.load of it gives back the state_dict bit for bit.
Two runs write the same bytes (checked with sha256sum).
"""
import argparse
import json
import os
import random
import shutil
import sys
import tempfile

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: before torch starts threads
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from corpus import bank_sentence, tokenize  # noqa: E402
from course_model import Transformer  # noqa: E402

SEED = 1
CLASSES = ["river", "money"]
CONFIG = {"d_model": 32, "n_heads": 4, "d_ff": 64, "n_layers": 2, "max_seq_len": 24, "bias": False,
          "dropout": 0.1}
STEPS, BATCH, LR = 1500, 64, 3e-3
CHECKS = [("The cat walks by the bank", None), ("The cat sleeps by the river bank", "river"),
          ("She puts money in the bank", "money")]


def head(text):
    """The words of a sentence up to its (first) bank."""
    toks = tokenize(text)
    return toks[: toks.index("bank") + 1]


def corpus(n, seed):
    """n bank sentences cut after bank, as (tokens, sense); sense "none" for one in five."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        u = rng.random()
        sense = "none" if u < 0.2 else ("river" if u < 0.6 else "money")
        out.append((head(bank_sentence(rng, sense)[0]), sense))
    return out


def target(sense):
    return {"river": [1.0, 0.0], "money": [0.0, 1.0], "none": [0.5, 0.5]}[sense]


def batches(examples, vocab, gen):
    """Shuffled batches of sentences of one length: [B, L] ids, [B, 2] targets."""
    by_len = {}
    for toks, sense in examples:
        by_len.setdefault(len(toks), []).append(([vocab.index(w) for w in toks], target(sense)))
    out = []
    for exs in by_len.values():
        perm = torch.randperm(len(exs), generator=gen).tolist()
        for i in range(0, len(exs), BATCH):
            part = [exs[k] for k in perm[i:i + BATCH]]
            out.append((torch.tensor([e[0] for e in part]), torch.tensor([e[1] for e in part])))
    order = torch.randperm(len(out), generator=gen).tolist()
    return [out[i] for i in order]


def probs(model, vocab, text):
    ids = [vocab.index(w) if w in vocab else 0 for w in tokenize(text)]
    with torch.no_grad():
        return torch.softmax(model(torch.tensor([ids])), -1)[0].tolist()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "assets", "models", "bank-sense.pt"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    train = corpus(6000, seed=SEED)
    vocab = ["<unk>"]
    for toks, _ in train:
        for w in toks:
            if w not in vocab:
                vocab.append(w)
    cfg = dict(CONFIG, vocab_size=len(vocab))
    model = Transformer(cfg, len(CLASSES))
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    gen = torch.Generator().manual_seed(SEED)
    step, todo = 0, []
    model.train()
    while step < STEPS:
        if not todo:
            todo = batches(train, vocab, gen)
        x, y = todo.pop()
        loss = -(y * F.log_softmax(model(x), -1)).sum(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 250 == 0:
            print(f"step {step}: loss {loss.item():.4f}", flush=True)
    model.eval()

    failures = []
    held = [(t, s) for t, s in corpus(1400, seed=SEED + 1000) if s != "none"][:1000]
    right = sum(probs(model, vocab, " ".join(t))[CLASSES.index(s)] > 0.5 for t, s in held)
    acc = right / len(held)
    print(f"held-out accuracy: {right}/{len(held)} = {acc:.3f}")
    if acc < 0.95:
        failures.append(f"held-out accuracy {acc:.3f} < 0.95")
    for text, want in CHECKS:
        p = probs(model, vocab, text)
        print(f"{text!r}: river {p[0]:.3f}, money {p[1]:.3f}")
        if want is None and max(p) > 0.8:
            failures.append(f"{text!r} does not hesitate: {p}")
        if want is not None and p[CLASSES.index(want)] < 0.9:
            failures.append(f"{text!r} is not {want} above 0.9: {p}")

    # torch.save names the zip's top folder after the file: save under the final name in a
    # temporary folder beside it (so the folder is "bank-sense" and the bytes the same on every
    # run), then move it into place
    out_dir = os.path.dirname(os.path.abspath(a.out))
    tmp_dir = tempfile.mkdtemp(dir=out_dir)
    tmp = os.path.join(tmp_dir, os.path.basename(a.out))
    sd = model.state_dict()
    torch.save(sd, tmp)
    back = torch.load(tmp)
    if not all(torch.equal(back[k], v) for k, v in sd.items()):
        failures.append("torch.load does not give the state_dict back")
    size = os.path.getsize(tmp)
    if size >= 2 << 20:
        failures.append(f"{size} bytes, not under 2 MB")
    if failures:
        shutil.rmtree(tmp_dir)
        for f in failures:
            print("FAILED:", f, file=sys.stderr)
        sys.exit("bank_sense.py: the model fails its checks; nothing written")
    os.chmod(tmp, 0o644)
    os.replace(tmp, a.out)
    os.rmdir(tmp_dir)
    config = {"n_heads": CONFIG["n_heads"], "vocab": vocab, "classes": CLASSES,
              "max_seq_len": CONFIG["max_seq_len"], "d_model": CONFIG["d_model"],
              "d_ff": CONFIG["d_ff"], "n_layers": CONFIG["n_layers"],
              "trained_by": "scripts/train/bank_sense.py", "seed": SEED,
              "heldout_accuracy": round(acc, 4)}
    stem = os.path.splitext(a.out)[0]
    with open(stem + ".json", "w") as f:
        json.dump(config, f, indent=1)
        f.write("\n")
    print(f"wrote {a.out} ({size} bytes) and {stem}.json")


if __name__ == "__main__":
    main()
