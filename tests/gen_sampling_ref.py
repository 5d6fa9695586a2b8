#!/usr/bin/env python3
"""Reference for src/core/sampling.c: temperature, top-k and top-p as Hugging Face transformers'
TemperatureLogitsWarper, TopKLogitsWarper and TopPLogitsWarper do them
(transformers/generation/logits_process.py), written out in plain torch, in that order:

    scores = logits / T
    top-k: scores[scores < torch.topk(scores, k)[0][..., -1, None]] = -inf
    top-p: sorted, idx = torch.sort(scores, descending=False)
           cum = softmax(sorted).cumsum(-1); remove = cum <= 1 - p; remove[..., -1:] = False
           scores[idx[remove]] = -inf
    q = softmax(scores)

Writes tests/ref/sampling/cases.txt: one case per block,
    case NAME V T K P        (K 0: top-k off; P 1: top-p off)
    z  <V logits>
    p  <V probabilities softmax(z / T)>
    q  <V renormalized probabilities, 0 where cut>
Logits are random (torch.manual_seed(0)) with a few ties and a flat row. Run once by hand:
    python3 tests/gen_sampling_ref.py
"""
import os
import torch

torch.manual_seed(0)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ref", "sampling", "cases.txt")


def warp(z, T, k, p):
    s = z / T
    if k > 0:
        k = min(k, s.numel())
        s = s.masked_fill(s < torch.topk(s, k)[0][..., -1, None], float("-inf"))
    if p < 1:
        srt, idx = torch.sort(s, descending=False)
        cum = srt.softmax(-1).cumsum(-1)
        remove = cum <= (1 - p)
        remove[..., -1:] = False
        s = s.masked_fill(remove.scatter(0, idx, remove), float("-inf"))
    return torch.softmax(z / T, -1), torch.softmax(s, -1)


cases = []
z12 = torch.randn(12, dtype=torch.float64) * 2
z50 = torch.randn(50, dtype=torch.float64) * 3
ties = torch.tensor([1.0, 2.0, 2.0, 0.5, 2.0, -1.0, 0.0, 1.0], dtype=torch.float64)
for name, z, T, k, p in [
    ("temperature-only", z12, 0.7, 0, 1.0),
    ("top-k-3", z12, 1.0, 3, 1.0),
    ("top-p-0.9", z12, 1.0, 0, 0.9),
    ("top-p-0.5-hot", z12, 0.5, 0, 0.5),
    ("top-k-then-top-p", z50, 1.3, 10, 0.8),
    ("top-k-ties", ties, 1.0, 2, 1.0),
    ("top-p-tiny", z50, 1.0, 0, 0.01),
    ("top-k-1", z50, 2.0, 1, 1.0),
    ("top-k-above-V", z12, 1.0, 100, 0.95),
]:
    pr, q = warp(z, T, k, p)
    cases.append((name, z, T, k, p, pr, q))

os.makedirs(os.path.dirname(OUT), exist_ok=True)
with open(OUT, "w") as f:
    f.write("# made by tests/gen_sampling_ref.py (torch %s): case NAME V T K P, then z, p, q\n" % torch.__version__)
    for name, z, T, k, p, pr, q in cases:
        f.write("case %s %d %.9g %d %.9g\n" % (name, z.numel(), T, k, p))
        for tag, v in (("z", z), ("p", pr), ("q", q)):
            f.write(tag + " " + " ".join("%.9g" % x for x in v.tolist()) + "\n")
print("wrote", OUT)
