#!/usr/bin/python3
"""gen_course_modules_ref.py -- reference stages of the course notebooks' own modules (issue 12).

Writes, from the modules of tests/course_modules.py (the per-head MultiHeadAttention of
AttentionHeads with PositionWiseFeedForward, and the einsum SelfAttention / TransformerBlock) with
fixed seeds, the cases below into tests/ref/course-modules/<case>/ and the manifest
tests/ref/course-modules/cases.txt, which tests/test_course_modules.c reads. Run once, by hand,
with Debian's python3-torch and python3-numpy:

    /usr/bin/python3 tests/gen_course_modules_ref.py

Each case folder holds the model as a notebook user saves it -- model.pt
(torch.save(model.state_dict())) with model.json beside it, or model.safetensors with the config
as strings in __metadata__ -- tokens.txt, and one float32 .npy per stage with the dump's names:
O X P Z (and embed_sum = X + P before the embedding LayerNorm), then per layer in Q K V S A AV
concat attn res1 norm1 ffn_pre ffn_hidden ffn res2 norm2 out, in the pre-norm or post-norm
convention of tests/gen_ref.py. Per-head tensors are [H, L, d_k] or [H, L, L].
The course notebook's einsum SelfAttention divides its energy by √head_dim and has GELU in its
block (cases einsum-nb-*); the tutorial's divides by √D (embed_size) with ReLU: Stepformer carries
the √D on the queries map, so the reference Q of those cases is the module's queries / √H, and
S = QKᵀ/√d_k, asserted equal to the module's energy / √D. A mixture (einsum-mix-*, the notebook's
weights with √D and ReLU; einsum-shared-json-*, the other way) says so in its model.json. Every stage computed explicitly is asserted equal to
the modules' forward (each layer, the whole encoder, the einsum attention weights) to 1e-5 before
anything is written. LayerNorm weights and every bias are perturbed with 0.1*N(0,1), so a bug
there shows. Each case also writes a seed of tests/fuzz/fuzz_course.c (corpus/course/modules-*).
"""
import json
import math
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import course_modules as cm  # noqa: E402
from gen_course_ref import (VOCAB, perturb_vectors, save_pt, vocab_tokens,  # noqa: E402
                            write_seed, write_stages)
from gen_ref import tokenize, write_safetensors  # noqa: E402

OUT = os.path.join(HERE, "ref", "course-modules")

# name, family, seed, layers, D, H, F, M (learned positions; 0: sinusoidal), options, form,
# sentence. Options: bias (per-head q|k|v biases), embed_norm, embed_eps, norm_first (None: the
# module's own), prefix (saved as a wrapper's .encoder); einsum: tutorial (the tutorial's classes,
# not the notebook's), shared (one d_k x d_k map), energy_scale, activation, fc_bias (the tutorial
# classes' knobs), json (keys written into model.json / __metadata__).
CASES = [
    ("heads-l2-h2", "heads", 20, 2, 8, 2, 16, 12, dict(bias=True, embed_norm=True), "pt",
     "The cat walks by the bank"),
    ("heads-l3-h4-nobias-sin", "heads", 21, 3, 16, 4, 32, 0,
     dict(bias=False, embed_norm=False, prefix=True), "pt", "the mouse sleeps by the river bank"),
    ("heads-l1-h1-post-st", "heads", 22, 1, 8, 1, 8, 10,
     dict(bias=True, embed_norm=True, embed_eps=1e-5, norm_first=False), "safetensors",
     "The cat eats the zebra"),
    # the course notebook's own SelfAttention / TransformerBlock, saved as the README says
    ("einsum-nb-l2-h4", "einsum", 26, 2, 16, 4, 64, 16, dict(), "pt", "The cat walks by the bank"),
    ("einsum-nb-l1-h2-sin-enc-st", "einsum", 27, 1, 8, 2, 16, 0, dict(prefix=True), "safetensors",
     "the mouse sleeps by the river bank"),
    # a student's mixture: the notebook's weights (D x D, fc_out without bias) with √D and ReLU,
    # which only model.json can tell
    ("einsum-mix-l2-h2-json", "einsum", 28, 2, 8, 2, 16, 12,
     dict(tutorial=True, shared=False, fc_bias=False, energy_scale="embed_size", activation="relu",
          json=dict(energy_scale="embed_size", activation="relu")), "pt", "The cat walks by the money bank"),
    # the tutorial's forms: a shared d_k x d_k map, or fc_out with a bias (√D and ReLU assumed) ...
    ("einsum-l2-h3-shared", "einsum", 23, 2, 12, 3, 24, 10, dict(tutorial=True, shared=True), "pt",
     "The cat walks by the bank"),
    ("einsum-l2-h4-full-enc", "einsum", 24, 2, 16, 4, 64, 16, dict(tutorial=True, shared=False, prefix=True),
     "pt", "the cat walks by the money bank"),
    ("einsum-l1-h2-sin-st", "einsum", 25, 1, 8, 2, 16, 0, dict(tutorial=True, shared=True), "safetensors",
     "bank"),
    # ... or told otherwise by the config
    ("einsum-shared-json-st", "einsum", 29, 1, 8, 2, 16, 8,
     dict(tutorial=True, shared=True, energy_scale="head_dim", activation="gelu",
          json=dict(energy_scale="head_dim", activation="gelu")), "safetensors", "the cat sleeps"),
]


class Wrapper(nn.Module):
    """A whole model's state_dict: the encoder's names with the prefix "encoder."."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder


def lin(x, m):
    return x @ m.weight.T + (m.bias if m.bias is not None else 0)


def ln(x, m):
    return F.layer_norm(x, (x.shape[-1],), m.weight, m.bias, m.eps)


def sqrt_D(sa):
    """True when the einsum module divides its energy by √embed_size (the tutorial's), not √head_dim
    (the notebook's SelfAttention)."""
    return isinstance(sa, cm.TutorialSelfAttention) and sa.energy_scale == "embed_size"


def explicit(fam, enc, ids, V, D, H, M):
    """Every stage, explicitly, in float32: an ordered dict name -> tensor."""
    st, L, dk = {}, len(ids), D // H
    O = F.one_hot(torch.tensor(ids), V).to(torch.float32)
    if fam == "heads":
        emb = enc.embeddings
        X = O @ emb.token_embeddings.weight
        P = emb.position_embeddings.weight[:L] if M else cm.sinusoid(L, D)
        st.update(O=O, X=X, P=P)
        if emb.embed_norm:
            st["embed_sum"] = X + P
            h = ln(X + P, emb.layer_norm)
        else:
            h = X + P
    else:
        X = O @ enc.word_embedding.weight
        P = enc.position_embedding.weight[:L] if M else cm.sinusoid(L, D)
        st.update(O=O, X=X, P=P)
        h = X + P
    st["Z"] = h
    for i, layer in enumerate(enc.layers):
        x_in = h
        if fam == "heads":
            nf, n1, n2 = layer.norm_first, layer.layer_norm_1, layer.layer_norm_2
            ff1, ff2, act = layer.feed_forward.linear_1, layer.feed_forward.linear_2, F.gelu
        else:
            nf, n1, n2 = False, layer.norm1, layer.norm2
            act = F.relu if isinstance(layer.feed_forward[1], nn.ReLU) else F.gelu
            ff1, ff2 = layer.feed_forward[0], layer.feed_forward[2]
        norm1 = ln(x_in, n1) if nf else None
        a_in = norm1 if nf else x_in
        if fam == "heads":
            hs = layer.attention.heads
            Q = torch.stack([lin(a_in, hd.q) for hd in hs])  # [H, L, d_k]
            K = torch.stack([lin(a_in, hd.k) for hd in hs])
            Vv = torch.stack([lin(a_in, hd.v) for hd in hs])
            out_lin = layer.attention.output_linear
        else:
            sa = layer.attention

            def proj(m):
                if getattr(sa, "shared", False):  # each head's slice through the one map
                    return (a_in.reshape(L, H, dk) @ m.weight.T).transpose(0, 1)
                return (a_in @ m.weight.T).reshape(L, H, dk).transpose(0, 1)

            Q = proj(sa.queries)
            if sqrt_D(sa):  # energy/√D = (Q/√H)Kᵀ/√d_k: Stepformer shows Q/√H
                Q = Q / math.sqrt(H)
            K, Vv = proj(sa.keys), proj(sa.values)
            out_lin = sa.fc_out
        S = Q @ K.transpose(1, 2) / math.sqrt(dk)
        A = torch.softmax(S, dim=-1)
        AV = A @ Vv
        concat = AV.transpose(0, 1).reshape(L, D)
        attn = lin(concat, out_lin)
        res1 = x_in + attn
        if nf:
            norm2 = ln(res1, n2)
            f_in = norm2
        else:
            norm1 = ln(res1, n1)
            f_in = norm1
        ffn_pre = lin(f_in, ff1)
        ffn_hidden = act(ffn_pre)
        ffn = lin(ffn_hidden, ff2)
        if nf:
            res2 = res1 + ffn
            out = res2
        else:
            res2 = norm1 + ffn
            norm2 = ln(res2, n2)
            out = norm2
        for k, v in [("in", x_in), ("Q", Q), ("K", K), ("V", Vv), ("S", S), ("A", A), ("AV", AV),
                     ("concat", concat), ("attn", attn), ("res1", res1), ("norm1", norm1),
                     ("ffn_pre", ffn_pre), ("ffn_hidden", ffn_hidden), ("ffn", ffn),
                     ("res2", res2), ("norm2", norm2), ("out", out)]:
            st[f"l{i}.{k}"] = v
        h = out
    return st


def check(fam, enc, st, ids, D):
    """The explicit stages against the modules: each layer, the whole encoder, and the einsum
    attention's weights and energy / √D."""
    diffs = {}
    with torch.no_grad():
        x = torch.tensor([ids])
        whole = enc(x)[0]
        diffs["encoder"] = float((st[f"l{len(enc.layers) - 1}.out"] - whole).abs().max())
        for i, layer in enumerate(enc.layers):
            xin = st[f"l{i}.in"][None]
            out = layer(xin)[0] if fam == "heads" else layer(xin, xin, xin, None)[0]
            diffs[f"l{i}.out"] = float((st[f"l{i}.out"] - out).abs().max())
            if fam == "einsum":
                sa = layer.attention
                diffs[f"l{i}.A"] = float((st[f"l{i}.A"] - sa.attn[0]).abs().max())
                q = xin.reshape(1, -1, sa.heads, sa.head_dim)
                k = q
                if getattr(sa, "shared", False):
                    q, k = sa.queries(q), sa.keys(k)
                else:
                    q = sa.queries(xin).reshape(q.shape)
                    k = sa.keys(xin).reshape(k.shape)
                # the module's own scaled energy, whichever scale it divides by
                energy = torch.einsum("nqhd,nkhd->nhqk", [q, k])[0] / (D if sqrt_D(sa) else sa.head_dim) ** 0.5
                diffs[f"l{i}.S"] = float((st[f"l{i}.S"] - energy).abs().max())
    bad = {k: v for k, v in diffs.items() if not v <= 1e-5}
    assert not bad, f"explicit stages differ from the modules: {bad}"
    return max(diffs.values())


def build(fam, V, D, H, Fw, layers, M, o):
    if fam == "heads":
        return cm.TransformerEncoder(V, D, H, Fw, layers, max(M, 1), bias=o.get("bias", True),
                                     norm_first=o.get("norm_first", True) is not False,
                                     positions="learned" if M else "sinusoidal",
                                     embed_norm=o.get("embed_norm", True),
                                     embed_eps=o.get("embed_eps", 1e-12))
    assert Fw % D == 0
    tut = o.get("tutorial", False)
    return cm.Encoder(V, D, layers, H, Fw // D, 0.1, max(M, 1), form="tutorial" if tut else "notebook",
                      shared=o.get("shared", True), positions="learned" if M else "sinusoidal",
                      energy_scale=o.get("energy_scale", "embed_size"), activation=o.get("activation", "relu"),
                      fc_bias=o.get("fc_bias", True))


def generate(case):
    name, fam, seed, layers, D, H, Fw, M, o, form, text = case
    V = len(VOCAB)
    torch.manual_seed(seed)
    enc = build(fam, V, D, H, Fw, layers, M, o)
    perturb_vectors(enc)
    enc.eval()
    toks, ids = vocab_tokens(text)
    assert not M or len(ids) <= M
    with torch.no_grad():
        st = explicit(fam, enc, ids, V, D, H, M)
    diff = check(fam, enc, st, ids, D)

    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    sd = (Wrapper(enc) if o.get("prefix") else enc).state_dict()
    config = {"n_heads": H, "vocab": VOCAB}
    if o.get("norm_first") is not None:
        config["norm_first"] = int(o["norm_first"])
    if o.get("embed_eps"):
        config["embed_eps"] = o["embed_eps"]
    config.update(o.get("json", {}))
    meta = None
    if form == "pt":
        mfile = save_pt(d, sd, config)
    else:  # the config in __metadata__: strings, the vocabulary joined by newlines
        meta = {k: (str(v) if not isinstance(v, list) else "\n".join(v)) for k, v in config.items()}
        write_safetensors(os.path.join(d, "model.safetensors"), list(sd.items()), meta)
        mfile = "model.safetensors"
    write_seed("modules-" + name, sd, config if form == "pt" else None, meta)
    write_stages(d, st, toks)
    print(json.dumps({"case": name, "tokens": toks, "tensors": len(sd), "max_abs_diff_vs_modules": diff}))
    return f"{name}\t{mfile}\t{text}\n"


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    lines = [generate(case) for case in CASES]
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("# tests/ref/course-modules/cases.txt -- written by tests/gen_course_modules_ref.py; read by "
                "test_course_modules.c.\n# folder<TAB>model file<TAB>sentence\n")
        f.write("".join(lines))


if __name__ == "__main__":
    main()
