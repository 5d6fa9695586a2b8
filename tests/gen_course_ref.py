#!/usr/bin/python3
"""gen_course_ref.py -- reference stages of the course notebook's Transformer (issue 20).

Writes, from the notebook's own classes (tests/course_model.py) with fixed seeds, the cases below
into tests/ref/course/<case>/ and the manifest tests/ref/course/cases.txt, which
tests/test_course.c reads. Run once, by hand, with Debian's python3-torch and python3-numpy:

    /usr/bin/python3 tests/gen_course_ref.py

Each case folder holds the model as a notebook user saves it -- model.pt
(torch.save(model.state_dict())) and model.json beside it ({"n_heads", "vocab", "classes",
"eps"}), or model.safetensors with those keys as strings in __metadata__ -- tokens.txt, and one
float32 .npy per stage, with the dump's names and the pre-norm convention of tests/gen_ref.py:
O X P Z (P = pos_embed[0, :L], learned), l{i}.in norm1 Q K V S A AV concat attn res1 norm2
ffn_pre ffn_hidden ffn res2 out (norm1 = LN1(in), res1 = in + attn, norm2 = LN2(res1),
res2 = out = res1 + ffn), then enc_norm [L, D] (the encoder's final LayerNorm), pool [1, D] (the
mean over positions), class_logits [1, C] and class_pred [1, C] (softmax). Per-head tensors are
[H, L, d_k] or [H, L, L]. Every stage computed explicitly is asserted equal to the modules'
forward (the whole model, and each block's attention weights) to 1e-5 before anything is written.
LayerNorm weights and every bias are perturbed with 0.1*N(0,1), so a bug there shows. In
l2-h4-bias, two weights are saved as transposed views (strides not contiguous), which the reader
gathers (ptfile.h). canonical/ holds tests/ref/cat-bank's model (Stepformer's own names) as a .pt
with model.json, which test_course_golden.c compares with cat-bank's stages.
"""
import json
import math
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import course_modules as cm  # noqa: E402
from course_model import Transformer  # noqa: E402
from gen_ref import read_safetensors, tokenize, write_safetensors  # noqa: E402

OUT = os.path.join(HERE, "ref", "course")
CORPUS = os.path.join(HERE, "fuzz", "corpus", "course")
VOCAB = ["<unk>", "the", "cat", "walks", "by", "bank", "river", "money", "sleeps", "eats", "mouse"]

# name, seed, layers, D, H, F, max_seq_len, bias, sanity, classes (None: not in the config),
# eps (None: not in the config), form, sentence
CASES = [
    ("l1-h2-nobias", 10, 1, 8, 2, 16, 12, False, False, ["river", "money"], None, "pt",
     "The cat walks by the bank"),
    ("l2-h4-bias", 11, 2, 16, 4, 32, 16, True, False, ["river", "money", "neither"], None, "pt",
     "the mouse sleeps by the river bank"),
    ("l3-h1-eps", 12, 3, 8, 1, 8, 10, False, False, None, 1e-6, "pt",
     "The cat eats the zebra"),
    ("l2-h2-safetensors", 13, 2, 12, 2, 24, 12, False, False, ["river", "money"], None,
     "safetensors", "the cat walks by the money bank"),
    ("l1-h3-sanity", 14, 1, 12, 3, 16, 8, True, True, ["a", "b"], None, "pt", "bank"),
]


def explicit(model, c, ids):
    """Every stage of the forward, explicitly, in float32: an ordered dict name -> tensor."""
    enc, st = model.encoder, {}
    L, V, D, H = len(ids), c["vocab_size"], c["d_model"], c["n_heads"]
    dk = D // H
    O = F.one_hot(torch.tensor(ids), V).to(torch.float32)
    X = O @ enc.tok_embed.weight
    P = enc.pos_embed[0, :L]
    h = X + P
    st.update(O=O, X=X, P=P, Z=h)

    def lin(x, m):
        return x @ m.weight.T + (m.bias if m.bias is not None else 0)

    def heads(t):
        return t.reshape(L, H, dk).transpose(0, 1).contiguous()

    for i, b in enumerate(enc.encoder_blocks):
        a = b.mha
        wq, wk, wv, wo = (a.WQ, a.WK, a.WV, a.linear) if c["sanity"] else (a.W_Q, a.W_K, a.W_V, a.W_O)
        n1 = b.residual1.norm
        norm1 = F.layer_norm(h, (D,), n1.weight, n1.bias, n1.eps)
        Q, K, Vv = heads(lin(norm1, wq)), heads(lin(norm1, wk)), heads(lin(norm1, wv))
        S = Q @ K.transpose(1, 2) / math.sqrt(dk)
        A = torch.softmax(S, dim=-1)
        AV = A @ Vv
        concat = AV.transpose(0, 1).reshape(L, D)
        attn = lin(concat, wo)
        res1 = h + attn
        n2 = b.residual2.norm
        norm2 = F.layer_norm(res1, (D,), n2.weight, n2.bias, n2.eps)
        ffn_pre = lin(norm2, b.feed_forward[0])
        ffn_hidden = F.relu(ffn_pre)
        ffn = lin(ffn_hidden, b.feed_forward[3])
        res2 = res1 + ffn
        for k, v in [("in", h), ("norm1", norm1), ("Q", Q), ("K", K), ("V", Vv), ("S", S),
                     ("A", A), ("AV", AV), ("concat", concat), ("attn", attn), ("res1", res1),
                     ("norm2", norm2), ("ffn_pre", ffn_pre), ("ffn_hidden", ffn_hidden),
                     ("ffn", ffn), ("res2", res2), ("out", res2)]:
            st[f"l{i}.{k}"] = v
        h = res2
    st["enc_norm"] = F.layer_norm(h, (D,), enc.norm.weight, enc.norm.bias, enc.norm.eps)
    st["pool"] = st["enc_norm"].mean(dim=0, keepdim=True)
    st["class_logits"] = lin(st["pool"], model.linear)
    st["class_pred"] = torch.softmax(st["class_logits"], dim=-1)
    return st


def check(model, st, ids, c):
    """The explicit stages against the modules: the whole model and each block's attention."""
    with torch.no_grad():
        x = torch.tensor([ids])
        logits = model(x)[0]
        enc = model.encoder
        diffs = {"class_logits": float((st["class_logits"][0] - logits).abs().max()),
                 "enc_norm": float((st["enc_norm"] - enc(x)[0]).abs().max())}
        for i, b in enumerate(enc.encoder_blocks):
            out = b(st[f"l{i}.in"][None])[0]
            diffs[f"l{i}.out"] = float((st[f"l{i}.out"] - out).abs().max())
            diffs[f"l{i}.A"] = float((st[f"l{i}.A"] - b.mha.attn[0]).abs().max())
        # the notation notebook's own classes, as written (tests/course_modules.py), on the same
        # state_dict loaded strictly: the same names, the same class scores
        if not c.get("sanity") and c.get("eps", 1e-5) == 1e-5:  # the notebook's: no Sanity, LayerNorm's ε
            nb = cm.Transformer(cm.ModelConfig(cm.ScaledDotProductAttention(), c["n_layers"], c["vocab_size"],
                                               c["n_heads"], c["d_model"], c["d_ff"], 0.1, c["max_seq_len"],
                                               c.get("bias", False)), model.linear.out_features)
            nb.load_state_dict(model.state_dict(), strict=True)
            nb.eval()
            diffs["notebook_classes"] = float((st["class_logits"][0] - nb(x)[0]).abs().max())
    bad = {k: v for k, v in diffs.items() if not v <= 1e-5}
    assert not bad, f"explicit stages differ from the modules: {bad}"
    return max(diffs.values())


def generate(case):
    name, seed, layers, D, H, Fw, M, bias, sanity, classes, eps, form, text = case
    C = len(classes) if classes else 2
    c = {"vocab_size": len(VOCAB), "d_model": D, "n_heads": H, "d_ff": Fw, "n_layers": layers,
         "max_seq_len": M, "bias": bias, "sanity": sanity, "dropout": 0.1,
         "eps": eps if eps else 1e-5}
    torch.manual_seed(seed)
    model = Transformer(c, C)
    perturb_vectors(model)
    model.eval()
    toks, ids = vocab_tokens(text)
    assert len(ids) <= M
    with torch.no_grad():
        st = explicit(model, c, ids)
    diff = check(model, st, ids, c)

    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    config = {"n_heads": H, "vocab": VOCAB}
    if classes:
        config["classes"] = classes
    if eps:
        config["eps"] = eps
    sd = model.state_dict()
    if name == "l2-h4-bias":  # two weights saved as transposed views (strides not contiguous)
        for k in ("encoder.encoder_blocks.1.feed_forward.3.weight", "linear.weight"):
            sd[k] = sd[k].t().contiguous().t()
            assert not sd[k].is_contiguous()
    if form == "pt":
        mfile = save_pt(d, sd, config)
    else:  # the config in __metadata__: strings (vocab joined by newlines, classes as JSON)
        meta = {"n_heads": str(H), "vocab": "\n".join(VOCAB)}
        if classes:
            meta["classes"] = json.dumps(classes)
        write_safetensors(os.path.join(d, "model.safetensors"), list(sd.items()), meta)
        mfile = "model.safetensors"
    write_seed(name, sd, config if form == "pt" else None, None if form == "pt" else meta)
    write_stages(d, st, toks)
    print(json.dumps({"case": name, "tokens": toks, "max_abs_diff_vs_modules": diff,
                      "pred": [round(float(p), 4) for p in st["class_pred"][0]]}))
    return f"{name}\t{mfile}\t{text}\n"


def perturb_vectors(model):
    """Every 1-D parameter (biases, LayerNorm weights) += 0.1·N(0,1): away from 0 and 1, so bugs
    show."""
    with torch.no_grad():
        for n, p in model.named_parameters():
            if p.dim() == 1:
                p.add_(0.1 * torch.randn(p.shape))


def vocab_tokens(text):
    """The sentence's words ("<unk>" for a word outside VOCAB) and their ids."""
    toks = [t if t in VOCAB else "<unk>" for t in tokenize(text)]
    return toks, [VOCAB.index(t) for t in toks]


def save_pt(d, sd, config):
    """d/model.pt (torch.save of the state dict, read back to check) with the config in
    d/model.json beside it, as a notebook user saves a model; returns "model.pt"."""
    torch.save(sd, os.path.join(d, "model.pt"))
    with open(os.path.join(d, "model.json"), "w") as f:
        json.dump(config, f, indent=1)
        f.write("\n")
    back = torch.load(os.path.join(d, "model.pt"))
    assert all(torch.equal(back[k], v) for k, v in sd.items())
    return "model.pt"


def write_stages(d, st, toks):
    """One float32 .npy per stage of st (name -> tensor) and tokens.txt into folder d."""
    for k, v in st.items():
        np.save(os.path.join(d, k + ".npy"), np.ascontiguousarray(v.detach().numpy().astype(np.float32)))
    with open(os.path.join(d, "tokens.txt"), "w") as f:
        f.write("".join(t + "\n" for t in toks))


def write_seed(name, sd, config, meta):
    """A seed of tests/fuzz/fuzz_course.c: "NAME D0 D1 ..." lines, "@KEY=VALUE" metadata lines
    ('|' for a newline), then "---" and the JSON config when there is one."""
    lines = [" ".join([k] + [str(d) for d in v.shape]) for k, v in sd.items()]
    if meta:
        lines += ["@%s=%s" % (k, v.replace("\n", "|")) for k, v in meta.items()]
    text = "\n".join(lines) + "\n"
    if config is not None:
        text += "---\n" + json.dumps(config) + "\n"
    os.makedirs(CORPUS, exist_ok=True)
    with open(os.path.join(CORPUS, name + ".txt"), "w") as f:
        f.write(text)


def canonical_pt():
    """canonical/: the cat-bank reference model (tests/ref/cat-bank, Stepformer's own names) saved
    as a .pt with its config in model.json; test_course_golden.c compares it with cat-bank's
    stages. d_model, d_ff and n_layers are left for the loader to read from the shapes."""
    tensors, meta = read_safetensors(os.path.join(HERE, "ref", "cat-bank", "model.safetensors"))
    d = os.path.join(OUT, "canonical")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    torch.save({k: torch.from_numpy(v.copy()) for k, v in tensors.items()}, os.path.join(d, "model.pt"))
    config = {"n_heads": int(meta["n_heads"]), "vocab": meta["vocab"].split("\n"),
              "activation": meta["activation"], "norm_first": int(meta["norm_first"]),
              "causal": int(meta["causal"]), "eps": float(meta["layer_norm_eps"])}
    with open(os.path.join(d, "model.json"), "w") as f:
        json.dump(config, f, indent=1)
        f.write("\n")


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    lines = [generate(case) for case in CASES]
    canonical_pt()
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("# tests/ref/course/cases.txt -- written by tests/gen_course_ref.py; read by "
                "test_course.c.\n# folder<TAB>model file<TAB>sentence\n")
        f.write("".join(lines))


if __name__ == "__main__":
    main()
