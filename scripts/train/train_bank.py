#!/usr/bin/python3
"""train_bank.py -- trains the tiny "bank" model Stepformer ships (assets/models/bank.safetensors).

Run from the repository root with Debian's python3-torch (under a minute on one core):

    /usr/bin/python3 scripts/train/train_bank.py [--out FILE]

--out defaults to assets/models/bank.safetensors in the repository this script belongs to.

The model: nn.Embedding(V, 64) + sinusoidal positions (no sqrt(D) scaling) + one post-norm
nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, relu, batch_first, no
dropout) + a prediction head nn.Linear(64, V), no mask (an encoder). The corpus is corpus.py.

The objective: next word at the last token. The encoder reads a prefix of a corpus sentence
(all of it, no causal mask) and the prediction head at the LAST token is trained to give the word
that follows the prefix (cross-entropy on that row only). Every prefix of every sentence is one
example. After "bank", the next word is "where" for a river bank (... where the fish swim) and
"to" for a money bank (... to get a loan), and the only reliable clues to which one come before
"bank": "river", "money" (also fish, coins). So the "bank" row of the attention has to
look back at the clue, which is what a teacher wants to show. The rows before the last one are
not trained to predict anything (they see the words after them): read the last row.

Why not a causal next-word model: it would train every row, but the app's lesson is an encoder
(no mask), and the prefix objective gives the encoder the same sense signal.

Seeds: the corpus, the initial weights and the batch order all come from one seed. Which head
ends up carrying the sense is up to training: with some seeds one head looks at "money" and
another at "river", and no single head passes the checks. So the script trains with seed 1 and,
if that model fails, with seeds 2, 3, ... (at most --tries of them) and keeps the first that
passes; every run is deterministic (one thread), so the same seed gives the same file. With the
shipped settings seed 1 passes at the first try; roughly half of all seeds do.

Checks (the script refuses to write a model that fails any, and exits 1):
  - one head (layer, head) is chosen on 600 fresh sentences from the generator (its own seed,
    cut after "bank") as the "sense head": the one whose "bank" row most often puts its largest
    weight on "river" or "money"; it must do so in at least 90% of them;
  - in that head, the "bank" row of "the cat sleeps by the river bank" (and of other river
    sentences) has its largest weight on "river", and that of "she puts money in the bank" (and
    of other money sentences) on "money", among all keys;
  - the prediction at the last token ("bank") is "where" for the river sentences and "to" for the
    money sentences; for "the cat walks by the bank" (no clue) its two best words are those two,
    each with a probability of at least 0.25;
  - a numpy re-implementation of the forward pass (the C core's arithmetic) gives the same
    prediction as the torch module to 1e-5.
The head is recorded in the metadata keys sense_layer and sense_head (0-based), the objective in
"objective". The file is written atomically (temporary file + rename).
"""
import argparse
import json
import math
import os
import random
import struct
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: before numpy and torch start threads
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from corpus import bank_sentence, corpus_words, make_corpus, tokenize  # noqa: E402

SEED, TRIES = 1, 6  # seeds SEED, SEED+1, ... are tried in turn; the first that passes is kept
D, H, FF, LAYERS = 64, 4, 128, 1
N_SENTENCES, EPOCHS, BATCH, LR = 3000, 14, 128, 3e-3
MIN_HELDOUT = 0.9  # the sense head must peak on river/money in this share of held-out sentences
P_UNK = 0.02  # input words replaced by <unk> in training, so unknown words behave

# (sentence, the clue the "bank" row must attend to most, the expected next word at "bank")
CHECKS = [
    ("The cat sleeps by the river bank", "river", "where"),
    ("She puts money in the bank", "money", "to"),
    ("the mice sleep near the river bank", "river", "where"),
    ("she sees the river and walks to the bank", "river", "where"),
    ("he keeps money in the bank", "money", "to"),
    ("the cat walks with money to the bank", "money", "to"),
]
NEUTRAL = "The cat walks by the bank"  # no clue: the model should hesitate between the senses
OBJECTIVE = ("next word at the last token: the encoder reads a sentence prefix (no mask) and the "
             "prediction head at the LAST token is trained to give the word that follows; after "
             "'bank' that is 'where' (river sense: ... where the fish swim) or 'to' (money sense: "
             "... to get a loan). Only the last row's prediction is trained.")


def sinusoidal_pe(L, D):
    """P[i,2k] = sin(i/10000^(2k/D)), P[i,2k+1] = cos(...), in float64, then float32."""
    pos = np.arange(L, dtype=np.float64)[:, None]
    ang = pos / np.power(10000.0, np.arange(0, D, 2, dtype=np.float64)[None, :] / D)
    P = np.zeros((L, D), dtype=np.float64)
    P[:, 0::2], P[:, 1::2] = np.sin(ang), np.cos(ang)
    return P.astype(np.float32)


class BankModel(nn.Module):
    def __init__(self, V):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, activation="relu",
                                           batch_first=True, norm_first=False)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        for lay in self.encoder.layers:  # each layer its own init, as gen.py does
            lay.load_state_dict(nn.TransformerEncoderLayer(
                D, H, FF, dropout=0.0, activation="relu", batch_first=True).state_dict())
        self.head = nn.Linear(D, V)
        self.register_buffer("pe", torch.from_numpy(sinusoidal_pe(64, D)), persistent=False)

    def forward(self, ids):  # ids [B, L] -> logits [B, L, V]
        x = self.embed(ids) + self.pe[: ids.shape[1]]
        return self.head(self.encoder(x))

    def tensors(self):  # state_dict under Stepformer's names, in file order
        out = [("embed.weight", self.embed.weight)]
        out += list(self.encoder.state_dict().items())  # layers.{i}.self_attn.in_proj_weight ...
        out += [("head.weight", self.head.weight), ("head.bias", self.head.bias)]
        return [(n, t.detach().float().contiguous()) for n, t in out]


# ---------------------------------------------------------------- the C core's arithmetic
def np_forward(w, ids):
    """The forward pass as Stepformer computes it (post-norm, relu, no mask), float32 numpy.
    Returns (A per layer [H, L, L], pred [L, V])."""
    L, dk = len(ids), D // H
    x = w["embed.weight"][ids] + sinusoidal_pe(L, D)

    def ln(v, g, b):
        mu = v.mean(-1, keepdims=True)
        var = ((v - mu) ** 2).mean(-1, keepdims=True)
        return ((v - mu) / np.sqrt(var + np.float32(1e-5))) * g + b

    As = []
    for l in range(LAYERS):
        p = f"layers.{l}."
        qkv = x @ w[p + "self_attn.in_proj_weight"].T + w[p + "self_attn.in_proj_bias"]
        Q, K, Vv = (qkv[:, i * D:(i + 1) * D].reshape(L, H, dk).transpose(1, 0, 2)
                    for i in range(3))
        S = Q @ K.transpose(0, 2, 1) / np.float32(math.sqrt(dk))
        A = np.exp(S - S.max(-1, keepdims=True))
        A /= A.sum(-1, keepdims=True)
        As.append(A)
        concat = (A @ Vv).transpose(1, 0, 2).reshape(L, D)
        res1 = x + concat @ w[p + "self_attn.out_proj.weight"].T + w[p + "self_attn.out_proj.bias"]
        n1 = ln(res1, w[p + "norm1.weight"], w[p + "norm1.bias"])
        hid = np.maximum(n1 @ w[p + "linear1.weight"].T + w[p + "linear1.bias"], 0)
        x = ln(n1 + hid @ w[p + "linear2.weight"].T + w[p + "linear2.bias"], w[p + "norm2.weight"],
               w[p + "norm2.bias"])
    logits = x @ w["head.weight"].T + w["head.bias"]
    pred = np.exp(logits - logits.max(-1, keepdims=True))
    return As, pred / pred.sum(-1, keepdims=True)


# ---------------------------------------------------------------- safetensors
def write_safetensors(path, tensors, metadata):
    """u64 little-endian header length, JSON header (padded to 8), raw little-endian F32 data.
    Written to a temporary file in the same folder, then renamed over path."""
    header, blobs, off = {"__metadata__": metadata}, [], 0
    for name, t in tensors:
        b = np.ascontiguousarray(t.numpy().astype("<f4")).tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * (-len(hj) % 8)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".bank-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


# ---------------------------------------------------------------- data
def make_examples(sentences, vocab_ids):
    """Every prefix of every sentence: (ids of the prefix, id of the next word), by length."""
    buckets = {}
    for text, _ in sentences:
        ids = [vocab_ids[w] for w in tokenize(text)]
        for k in range(1, len(ids)):
            buckets.setdefault(k, []).append((ids[:k], ids[k]))
    return {k: (torch.tensor([e[0] for e in v]), torch.tensor([e[1] for e in v]))
            for k, v in sorted(buckets.items())}


def batches(buckets, gen):
    out = []
    for k, (x, y) in buckets.items():
        perm = torch.randperm(len(y), generator=gen)
        for i in range(0, len(y), BATCH):
            out.append((x[perm[i:i + BATCH]], y[perm[i:i + BATCH]]))
    order = torch.randperm(len(out), generator=gen).tolist()
    return [out[i] for i in order]


CLUES = ["river", "money", "fish", "coins"]


def heldout_bank_prefixes(vocab_ids, n=600, seed=12345):
    """Sentences with a clue, cut after "bank": (ids, clue word, positions of the clue word)."""
    rng, out = random.Random(seed), []
    while len(out) < n:
        toks = tokenize(bank_sentence(rng, rng.choice(["river", "money"]))[0])
        toks = toks[: toks.index("bank") + 1]
        clue = next(c for c in CLUES if c in toks)
        pos = [i for i, w in enumerate(toks) if w == clue]
        out.append(([vocab_ids[w] for w in toks], clue, pos))
    return out


# ---------------------------------------------------------------- checks
def choose_sense_head(w, heldout):
    """The head whose "bank" row most often peaks on "river" or "money" in held-out sentences.
    Returns (layer, head, per-head accuracy [LAYERS, H], accuracy of that head per clue word)."""
    hits = {c: np.zeros((LAYERS, H)) for c in CLUES}
    count = {c: 0 for c in CLUES}
    mass = np.zeros((LAYERS, H))
    for ids, clue, pos in heldout:
        As, _ = np_forward(w, ids)
        count[clue] += 1
        for l in range(LAYERS):
            row = As[l][:, -1, :]  # [H, L], query = bank
            hits[clue][l] += np.isin(row.argmax(-1), pos)
            if clue in ("river", "money"):
                mass[l] += row[:, pos].sum(-1)
    n_rm = count["river"] + count["money"]
    acc = (hits["river"] + hits["money"]) / n_rm
    l, h = np.unravel_index(np.argmax(acc * 1e6 + mass), (LAYERS, H))
    per_clue = {c: hits[c][l, h] / max(count[c], 1) for c in CLUES}
    return int(l), int(h), acc, per_clue


def run_checks(w, vocab, layer, head):
    ok, report = True, []
    for text, clue, nxt in CHECKS:
        toks = tokenize(text)
        ids = [vocab.index(t) if t in vocab else 0 for t in toks]
        As, pred = np_forward(w, ids)
        row = As[layer][head, toks.index("bank")]
        got_key, got_word = toks[int(row.argmax())], vocab[int(pred[-1].argmax())]
        good = 0 not in ids and got_key == clue and got_word == nxt
        ok &= good
        weights = " ".join(f"{t}={a:.3f}" for t, a in zip(toks, row))
        report.append(f"  {'ok  ' if good else 'FAIL'} {text!r}: bank row of l{layer} h{head}: "
                      f"{weights}; argmax {got_key!r} (want {clue!r}); prediction at 'bank': "
                      f"{got_word!r} p={pred[-1].max():.3f} (want {nxt!r})")
    toks = tokenize(NEUTRAL)
    ids = [vocab.index(t) if t in vocab else 0 for t in toks]
    _, pred = np_forward(w, ids)
    top = [vocab[i] for i in np.argsort(-pred[-1])[:3]]
    pw, pt = pred[-1][vocab.index("where")], pred[-1][vocab.index("to")]
    good = 0 not in ids and set(top[:2]) == {"where", "to"} and min(pw, pt) >= 0.25
    ok &= good
    report.append(f"  {'ok  ' if good else 'FAIL'} {NEUTRAL!r} (no clue): prediction at 'bank': " +
                  ", ".join(f"{t}={pred[-1][vocab.index(t)]:.3f}" for t in top) +
                  " (want 'where' and 'to' first, each at least 0.25)")
    return ok, report


def train(seed, epochs, vocab):
    """Trains a model from seed on a corpus made from seed. Returns the model (in eval mode)."""
    t0 = time.time()
    torch.manual_seed(seed)
    random.seed(seed)
    gen = torch.Generator().manual_seed(seed)
    vocab_ids = {w: i for i, w in enumerate(vocab)}
    sentences = make_corpus(N_SENTENCES, seed=seed)
    seen = {w for s, _ in sentences for w in tokenize(s)}
    assert seen == set(vocab[1:]), f"words never in the corpus: {set(vocab[1:]) - seen}"
    buckets = make_examples(sentences, vocab_ids)
    n_ex = sum(len(y) for _, y in buckets.values())
    print(f"seed {seed}: {len(sentences)} sentences, {n_ex} prefix examples, "
          f"vocabulary {len(vocab)}", flush=True)
    model = BankModel(len(vocab))
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    steps = epochs * sum(math.ceil(len(y) / BATCH) for _, y in buckets.values())

    def warmup_then_linear(step):  # the learning-rate factor: 100 steps up, then down to 0
        return min(1.0, (step + 1) / 100) * (1 - step / steps)

    sched = torch.optim.lr_scheduler.LambdaLR(opt, warmup_then_linear)
    model.train()
    for ep in range(epochs):
        tot, cnt = 0.0, 0
        for x, y in batches(buckets, gen):
            x = x.masked_fill(torch.rand(x.shape, generator=gen) < P_UNK, 0)
            loss = F.cross_entropy(model(x)[:, -1], y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tot, cnt = tot + float(loss) * len(y), cnt + len(y)
        print(f"  epoch {ep + 1:2d}/{epochs}  loss {tot / cnt:.4f}  ({time.time() - t0:.1f} s)",
              flush=True)
    return model.eval()


def evaluate(model, vocab):
    """Runs every check. Returns (ok, sense layer, sense head)."""
    vocab_ids = {w: i for i, w in enumerate(vocab)}
    w = {n: t.numpy() for n, t in model.tensors()}
    # the numpy forward (the C core's arithmetic) must agree with the torch module
    worst = 0.0
    for text in [c[0] for c in CHECKS] + [NEUTRAL]:
        ids = [vocab_ids.get(t, 0) for t in tokenize(text)]
        with torch.no_grad():
            ref = torch.softmax(model(torch.tensor([ids])), -1)[0].numpy()
        worst = max(worst, float(np.abs(np_forward(w, ids)[1] - ref).max()))
    layer, head, acc, per_clue = choose_sense_head(w, heldout_bank_prefixes(vocab_ids))
    print(f"sense head: layer {layer}, head {head}. Held-out sentences where the bank row peaks on "
          f"river/money, per head: {np.round(acc, 2).tolist()}; this head, per clue word: " +
          ", ".join(f"{c} {v:.0%}" for c, v in per_clue.items()))
    ok, report = run_checks(w, vocab, layer, head)
    if acc[layer, head] < MIN_HELDOUT:
        ok = False
        report.append(f"  FAIL the sense head peaks on river/money in {acc[layer, head]:.0%} of "
                      f"held-out sentences (want {MIN_HELDOUT:.0%})")
    print("\n".join(report))
    print(f"numpy forward vs torch: max |diff| of the prediction {worst:.2e}")
    if worst > 1e-5:
        ok = False
        print("FAIL: the numpy forward differs from torch by more than 1e-5")
    return ok, layer, head


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "assets", "models", "bank.safetensors"))
    ap.add_argument("--seed", type=int, default=SEED, help=f"first seed to try (default {SEED})")
    ap.add_argument("--tries", type=int, default=TRIES, help="seeds to try, one after the other")
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    a = ap.parse_args()

    t0 = time.time()
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    vocab = ["<unk>"] + corpus_words()
    for text, _, _ in CHECKS:
        assert all(t in vocab for t in tokenize(text)), text
    for seed in range(a.seed, a.seed + a.tries):
        t1 = time.time()
        model = train(seed, a.epochs, vocab)
        train_s = time.time() - t1
        ok, layer, head = evaluate(model, vocab)
        if ok:
            break
        more = seed + 1 < a.seed + a.tries
        print(f"seed {seed} fails the checks" + (", trying the next seed" if more else ""))
    if not ok:
        print(f"REFUSED: no model passed the checks; {a.out} is left as it was", file=sys.stderr)
        return 1

    tensors = model.tensors()
    meta = {"format": "pt", "d_model": str(D), "n_heads": str(H), "d_ff": str(FF),
            "n_layers": str(LAYERS), "activation": "relu", "norm_first": "0", "causal": "0",
            "layer_norm_eps": "1e-05", "pos_encoding": "sinusoidal", "vocab": "\n".join(vocab),
            "seed": str(seed), "objective": OBJECTIVE, "sense_layer": str(layer),
            "sense_head": str(head), "sense_query": "bank", "predict_position": "last",
            "expect": "the cat sleeps by the river bank -> where; she puts money in the bank -> to",
            "generator": "scripts/train/train_bank.py", "torch_version": torch.__version__}
    write_safetensors(a.out, tensors, meta)
    print(f"wrote {a.out} ({os.path.getsize(a.out)} bytes, {sum(t.numel() for _, t in tensors)} "
          f"parameters, seed {seed}); training took {train_s:.1f} s, "
          f"everything {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
