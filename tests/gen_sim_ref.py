#!/usr/bin/python3
"""gen_sim_ref.py -- reference cosine similarities of two sentences (issue 20 item 6).

For each case below, runs two sentences through a committed reference model -- a course model
(tests/ref/course/<model>/model.pt, the notebook's Transformer, pre-norm with learned positions;
tests/gen_course_ref.py made it) or a golden one (tests/ref/<model>/model.safetensors,
nn.TransformerEncoder with sinusoidal positions; tests/gen_ref.py made it, rebuilt here from its
seed and asserted equal to the committed file) -- with that generator's explicit, checked stages,
and writes with numpy, into
tests/ref/sim/<case>/, what `stepformer dump --compare` writes (src/app/simfiles.h):
sim.X.npy, sim.Z.npy, sim.l0.npy ... sim.l{N-1}.npy, sim.final.npy, each [L1, L2] float32,
    C[i, j] = (z_i . z'_j) / (|z_i| |z'_j|)   (float64 sums; 0 when a norm is 0),
for z the rows of X (token embeddings), Z (+ positions), l{i}.out (after layer i+1) and
enc_norm or final_norm (the final LayerNorm, when the model has one); sim.line.npy [levels], the cell (row, col) of each level for the
last word of sentence 1 that sentence 2 has too (at its last place there); and the manifest
tests/ref/sim/cases.txt that tests/test_similarity.c reads. Run once, by hand:

    /usr/bin/python3 tests/gen_sim_ref.py
"""
import os
import shlex
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from course_model import Transformer  # noqa: E402
from gen_course_ref import CASES as COURSE, VOCAB, explicit  # noqa: E402
import gen_ref  # noqa: E402
from gen_ref import tokenize  # noqa: E402

OUT = os.path.join(HERE, "ref", "sim")

# case, model (a folder of tests/ref/course/ or of tests/ref/), sentence 1, sentence 2
CASES = [
    ("river-money", "course/l2-h4-bias", "the cat walks by the river bank", "the mouse eats money by the bank"),
    ("same-place", "course/l1-h2-nobias", "The cat walks by the bank", "the mouse sleeps by the bank"),
    ("unknown-words", "course/l2-h4-bias", "the zebra walks by the bank", "bank bank the zebra"),
    ("post-norm", "cat-bank", "The cat walks by the bank", "the mouse eats by the river bank"),
    ("final-norm", "head", "the cat walks by the river bank", "money money the bank"),
]


def course_stages(mname, sentences):
    """The course model's stages for each sentence, its levels and their stage names."""
    spec = next(c for c in COURSE if c[0] == mname)
    _, seed, layers, D, H, Fw, M, bias, sanity, classes, eps, form, _ = spec
    c = {"vocab_size": len(VOCAB), "d_model": D, "n_heads": H, "d_ff": Fw, "n_layers": layers,
         "max_seq_len": M, "bias": bias, "sanity": sanity, "dropout": 0.1, "eps": eps if eps else 1e-5}
    model = Transformer(c, len(classes) if classes else 2)
    model.load_state_dict(torch.load(os.path.join(HERE, "ref", "course", mname, "model.pt")))
    model.eval()
    toks = [[t if t in VOCAB else "<unk>" for t in tokenize(s)] for s in sentences]
    with torch.no_grad():
        st = [explicit(model, c, [VOCAB.index(t) for t in tk]) for tk in toks]
    names = ["X", "Z"] + [f"l{i}.out" for i in range(layers)] + ["enc_norm"]
    levels = ["X", "Z"] + [f"l{i}" for i in range(layers)] + ["final"]
    return toks, st, names, levels, f"ref/course/{mname}/model.pt"


def golden_stages(name, sentences):
    """The same for a case of tests/gen_ref.py, rebuilt from its arguments."""
    args = next(c[1] for c in gen_ref.CASES if c[0] == name)
    a = gen_ref.parser().parse_args(shlex.split(args))
    vocab = a.vocab.split(",")
    embed, enc, head = gen_ref.build_model(a, len(vocab))
    path = os.path.join(HERE, "ref", name, "model.safetensors")
    back, _ = gen_ref.read_safetensors(path)
    assert np.array_equal(back["embed.weight"], embed.weight.detach().numpy()), "not the committed model"
    for k, v in enc.state_dict().items():
        assert np.array_equal(back[k], v.detach().numpy()), f"{k}: not the committed model"
    toks = [[t if t in vocab else "<unk>" for t in tokenize(s)] for s in sentences]
    with torch.no_grad():
        st = [gen_ref.explicit_forward(a, embed, enc, head, [vocab.index(t) for t in tk], len(vocab))
              for tk in toks]
    names = ["X", "Z"] + [f"l{i}.out" for i in range(a.layers)]
    levels = ["X", "Z"] + [f"l{i}" for i in range(a.layers)]
    if "final_norm" in st[0]:
        names.append("final_norm")
        levels.append("final")
    return toks, st, names, levels, f"ref/{name}/model.safetensors"


def cosines(za, zb):
    a, b = za.astype(np.float64), zb.astype(np.float64)
    dot = a @ b.T
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    den = np.outer(na, nb)
    return np.where(den > 0, dot / np.where(den > 0, den, 1), 0.0).astype(np.float32)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    torch.set_num_threads(1)
    lines = ["# tests/ref/sim/cases.txt -- written by tests/gen_sim_ref.py; read by test_similarity.c.\n",
             "# folder<TAB>model (under tests/)<TAB>sentence 1<TAB>sentence 2<TAB>row<TAB>col<TAB>levels\n"]
    for name, mname, s1, s2 in CASES:
        if mname.startswith("course/"):
            toks, st, names, levels, mpath = course_stages(mname[len("course/"):], (s1, s2))
        else:
            toks, st, names, levels, mpath = golden_stages(mname, (s1, s2))
        row = col = -1
        for i in range(len(toks[0]) - 1, -1, -1):
            if toks[0][i] == "<unk>":
                continue
            js = [j for j in range(len(toks[1])) if toks[1][j] == toks[0][i]]
            if js:
                row, col = i, js[-1]
                break
        d = os.path.join(OUT, name)
        os.makedirs(d)
        line = []
        for n, lv in zip(names, levels):
            m = cosines(st[0][n].numpy(), st[1][n].numpy())
            np.save(os.path.join(d, f"sim.{lv}.npy"), m)
            line.append(m[row, col] if row >= 0 else 0.0)
        np.save(os.path.join(d, "sim.line.npy"), np.array(line, dtype=np.float32))
        lines.append(f"{name}\t{mpath}\t{s1}\t{s2}\t{row}\t{col}\t{' '.join(levels)}\n")
        print(name, toks, row, col, [round(float(v), 4) for v in line])
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    main()
