#!/usr/bin/python3
"""gen_ref_ext.py -- PyTorch references for the canonical model extensions (model.h).

    /usr/bin/python3 tests/gen_ref_ext.py        # rewrites tests/ref/ext/ (and its cases.txt)

Three small models with random weights (fixed seeds), written in the canonical safetensors form,
each with one float32 .npy per stage and tokens.txt, for tests/test_golden_ext.c:

  gpt2-like   pre-norm, causal, learned positions, GELU (tanh form), tied head without bias,
              final LayerNorm ln_f; 2 layers, H=4; GPT-2's block x + attn(ln_1(x)),
              x + mlp(ln_2(x)), then ln_f and logits = ln_f(x)·wteᵀ.
  bert-like   post-norm, learned positions, token type 0 added, embedding LayerNorm, GELU (erf),
              eps 1e-12, masked-LM transform (dense + GELU + LayerNorm), tied head with a bias;
              2 layers, H=2; BERT's LN(x + attn(x)), LN(x + ffn(x)).
  course-like pre-norm, learned positions, attention without biases (W_Q, W_K, W_V, W_O), ReLU,
              final LayerNorm, mean over positions and a classifier of 3 classes; 1 layer, H=1;
              the course's x + sublayer(LN(x)).

Every stage is written out explicitly with torch ops from the published architectures (not from
Stepformer), and each model's output is checked against torch.nn modules
(nn.MultiheadAttention, nn.TransformerEncoderLayer) to 1e-5. The tests never need Python: the
files are committed (a few tens of KB).
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_ref import tokenize, write_safetensors  # noqa: E402  (the same tokenizer and writer)

OUT = os.path.join(HERE, "ref", "ext")
VOCAB = ["<unk>", "the", "cat", "walks", "by", "bank", "river", "money", "sleeps", "eats", "mouse"]


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


ACTS = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": gelu_tanh}


def rnd(*shape, scale=0.3):
    return torch.randn(*shape) * scale


def ln(x, w, b, eps):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps)


def make_layer(D, F_, bias):
    p = {"in_w": rnd(3 * D, D), "out_w": rnd(D, D), "l1_w": rnd(F_, D), "l1_b": rnd(F_, scale=0.1),
         "l2_w": rnd(D, F_), "l2_b": rnd(D, scale=0.1),
         "n1_w": 1 + rnd(D, scale=0.1), "n1_b": rnd(D, scale=0.1),
         "n2_w": 1 + rnd(D, scale=0.1), "n2_b": rnd(D, scale=0.1)}
    p["in_b"] = rnd(3 * D, scale=0.1) if bias else None
    p["out_b"] = rnd(D, scale=0.1) if bias else None
    return p


def layer_tensors(i, p):
    pre = "layers.%d." % i
    t = [(pre + "self_attn.in_proj_weight", p["in_w"])]
    if p["in_b"] is not None:
        t.append((pre + "self_attn.in_proj_bias", p["in_b"]))
    t.append((pre + "self_attn.out_proj.weight", p["out_w"]))
    if p["out_b"] is not None:
        t.append((pre + "self_attn.out_proj.bias", p["out_b"]))
    t += [(pre + "linear1.weight", p["l1_w"]), (pre + "linear1.bias", p["l1_b"]),
          (pre + "linear2.weight", p["l2_w"]), (pre + "linear2.bias", p["l2_b"]),
          (pre + "norm1.weight", p["n1_w"]), (pre + "norm1.bias", p["n1_b"]),
          (pre + "norm2.weight", p["n2_w"]), (pre + "norm2.bias", p["n2_b"])]
    return t


def attention(st, l, x, p, H, causal):
    """Stages 6-12 of one layer: Q, K, V per head, scores, mask, softmax, A·V, concat, W^o."""
    L, D = x.shape
    dk = D // H
    qkv = x @ p["in_w"].T + (p["in_b"] if p["in_b"] is not None else 0)
    q, k, v = qkv[:, :D], qkv[:, D:2 * D], qkv[:, 2 * D:]
    heads = lambda m: m.reshape(L, H, dk).permute(1, 0, 2).contiguous()
    Q, K, V = heads(q), heads(k), heads(v)
    S = Q @ K.transpose(1, 2) / math.sqrt(dk)
    pfx = "l%d." % l
    st[pfx + "Q"], st[pfx + "K"], st[pfx + "V"] = Q, K, V
    if causal:
        st[pfx + "S_raw"] = S
        S = S.masked_fill(torch.triu(torch.ones(L, L, dtype=torch.bool), 1), float("-inf"))
    st[pfx + "S"] = S
    A = torch.softmax(S, dim=-1)
    AV = A @ V
    concat = AV.permute(1, 0, 2).reshape(L, D)
    attn = concat @ p["out_w"].T + (p["out_b"] if p["out_b"] is not None else 0)
    st[pfx + "A"], st[pfx + "AV"], st[pfx + "concat"], st[pfx + "attn"] = A, AV, concat, attn
    return attn


def encoder_layer(st, l, x, p, H, causal, pre_norm, act, eps):
    pfx = "l%d." % l
    st[pfx + "in"] = x
    if pre_norm:  # GPT-2 and the course: x + attn(LN1(x)), x + ffn(LN2(x))
        a_in = ln(x, p["n1_w"], p["n1_b"], eps)
        st[pfx + "norm1"] = a_in
        res1 = x + attention(st, l, a_in, p, H, causal)
        f_in = ln(res1, p["n2_w"], p["n2_b"], eps)
        st[pfx + "norm2"] = f_in
    else:  # BERT: LN1(x + attn(x)), LN2(. + ffn(.))
        res1 = x + attention(st, l, x, p, H, causal)
        f_in = ln(res1, p["n1_w"], p["n1_b"], eps)
        st[pfx + "norm1"] = f_in
    st[pfx + "res1"] = res1
    pre = f_in @ p["l1_w"].T + p["l1_b"]
    hidden = ACTS[act](pre)
    ffn = hidden @ p["l2_w"].T + p["l2_b"]
    st[pfx + "ffn_pre"], st[pfx + "ffn_hidden"], st[pfx + "ffn"] = pre, hidden, ffn
    if pre_norm:
        out = res1 + ffn
        st[pfx + "res2"] = out
    else:
        res2 = f_in + ffn
        st[pfx + "res2"] = res2
        out = ln(res2, p["n2_w"], p["n2_b"], eps)
        st[pfx + "norm2"] = out
    st[pfx + "out"] = out
    return out


def nn_layer(p, D, H, F_, pre_norm, act, eps, bias):
    """The same layer as torch.nn modules, to check the explicit stages."""
    if bias:
        lay = nn.TransformerEncoderLayer(D, H, F_, dropout=0.0, activation=ACTS[act] if act == "gelu_tanh"
                                         else act, layer_norm_eps=eps, batch_first=True,
                                         norm_first=pre_norm)
        sa = lay.self_attn
    else:
        lay = nn.TransformerEncoderLayer(D, H, F_, dropout=0.0, activation=ACTS[act] if act == "gelu_tanh"
                                         else act, layer_norm_eps=eps, batch_first=True,
                                         norm_first=pre_norm)
        lay.self_attn = nn.MultiheadAttention(D, H, dropout=0.0, bias=False, batch_first=True)
        sa = lay.self_attn
    with torch.no_grad():
        sa.in_proj_weight.copy_(p["in_w"])
        sa.out_proj.weight.copy_(p["out_w"])
        if bias:
            sa.in_proj_bias.copy_(p["in_b"])
            sa.out_proj.bias.copy_(p["out_b"])
        lay.linear1.weight.copy_(p["l1_w"]), lay.linear1.bias.copy_(p["l1_b"])
        lay.linear2.weight.copy_(p["l2_w"]), lay.linear2.bias.copy_(p["l2_b"])
        lay.norm1.weight.copy_(p["n1_w"]), lay.norm1.bias.copy_(p["n1_b"])
        lay.norm2.weight.copy_(p["n2_w"]), lay.norm2.bias.copy_(p["n2_b"])
    return lay.eval()


def check_nn(layers, z, st, nl, D, H, F_, pre_norm, act, eps, bias, causal):
    x = z.unsqueeze(0)
    L = z.shape[0]
    mask = torch.triu(torch.full((L, L), float("-inf")), 1) if causal else None
    with torch.no_grad():
        for l in range(nl):
            lay = nn_layer(layers[l], D, H, F_, pre_norm, act, eps, bias)
            lay.train()  # the slow path: the fast path refuses callables and bias-free attention
            x = lay(x, src_mask=mask)
            d = (x[0] - st["l%d.out" % l]).abs().max().item()
            assert d < 1e-5, ("layer", l, d)
    return d


def save(name, tensors, meta, st, toks, text):
    out = os.path.join(OUT, name)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    write_safetensors(os.path.join(out, "model.safetensors"), tensors, meta)
    for k, v in st.items():
        np.save(os.path.join(out, k + ".npy"), np.ascontiguousarray(v.detach().numpy().astype(np.float32)))
    with open(os.path.join(out, "tokens.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in toks))
    return "%s\t%s\n" % (name, text)


def base_meta(D, H, F_, nl, act, pre_norm, causal, eps, extra):
    m = {"format": "pt", "d_model": str(D), "n_heads": str(H), "d_ff": str(F_), "n_layers": str(nl),
         "activation": act, "norm_first": str(int(pre_norm)), "causal": str(int(causal)),
         "layer_norm_eps": repr(eps), "vocab": "\n".join(VOCAB), "pos_encoding": "learned",
         "generator": "tests/gen_ref_ext.py"}
    m.update(extra)
    return m


def embed_stages(st, ids, E, Ppos):
    L, V = len(ids), E.shape[0]
    O = torch.zeros(L, V)
    O[torch.arange(L), torch.tensor(ids)] = 1.0
    X = E[torch.tensor(ids)]
    P = Ppos[:L]
    st["O"], st["X"], st["P"] = O, X, P
    return X, P


def gpt2_like():
    torch.manual_seed(11)
    D, H, F_, nl, max_pos, eps, act = 16, 4, 64, 2, 12, 1e-5, "gelu_tanh"
    text = "The cat walks by the river bank"
    toks = tokenize(text)
    ids = [VOCAB.index(t) if t in VOCAB else 0 for t in toks]
    V = len(VOCAB)
    E, Ppos = rnd(V, D), rnd(max_pos, D, scale=0.1)
    layers = [make_layer(D, F_, True) for _ in range(nl)]
    lnf_w, lnf_b = 1 + rnd(D, scale=0.1), rnd(D, scale=0.1)
    st = {}
    X, P = embed_stages(st, ids, E, Ppos)
    z = X + P  # GPT-2: h = wte + wpe, no scaling, no LayerNorm
    st["Z"] = z
    x = z
    for l in range(nl):
        x = encoder_layer(st, l, x, layers[l], H, True, True, act, eps)
    check_nn(layers, z, st, nl, D, H, F_, True, act, eps, True, True)
    y = ln(x, lnf_w, lnf_b, eps)  # ln_f
    logits = y @ E.T  # lm_head tied to wte, no bias
    st["final_norm"], st["logits"], st["pred"] = y, logits, torch.softmax(logits, -1)
    tensors = [("embed.weight", E), ("pos_embed.weight", Ppos)]
    for l in range(nl):
        tensors += layer_tensors(l, layers[l])
    tensors += [("norm.weight", lnf_w), ("norm.bias", lnf_b)]
    meta = base_meta(D, H, F_, nl, act, True, True, eps, {"tie_head": "1"})
    return save("gpt2-like", tensors, meta, st, toks, text)


def bert_like():
    torch.manual_seed(12)
    D, H, F_, nl, max_pos, eps, act = 16, 2, 32, 2, 16, 1e-12, "gelu"
    text = "the mouse eats by the money bank"
    toks = tokenize(text)
    ids = [VOCAB.index(t) if t in VOCAB else 0 for t in toks]
    V = len(VOCAB)
    E, Ppos, TT = rnd(V, D), rnd(max_pos, D, scale=0.1), rnd(2, D, scale=0.1)
    en_w, en_b = 1 + rnd(D, scale=0.1), rnd(D, scale=0.1)
    layers = [make_layer(D, F_, True) for _ in range(nl)]
    ht_w, ht_b = rnd(D, D), rnd(D, scale=0.1)
    hn_w, hn_b = 1 + rnd(D, scale=0.1), rnd(D, scale=0.1)
    head_b = rnd(V, scale=0.1)
    st = {}
    X, P = embed_stages(st, ids, E, Ppos)
    s = X + P + TT[0]  # BERT: words + positions + token type 0, then LayerNorm
    st["embed_sum"] = s
    z = ln(s, en_w, en_b, eps)
    st["Z"] = z
    x = z
    for l in range(nl):
        x = encoder_layer(st, l, x, layers[l], H, False, False, act, eps)
    check_nn(layers, z, st, nl, D, H, F_, False, act, eps, True, False)
    hh = F.gelu(x @ ht_w.T + ht_b)  # BertPredictionHeadTransform: dense, GELU, LayerNorm
    hn = ln(hh, hn_w, hn_b, eps)
    logits = hn @ E.T + head_b  # decoder tied to the word embeddings, with its own bias
    st["head_hidden"], st["head_norm"], st["logits"], st["pred"] = hh, hn, logits, torch.softmax(logits, -1)
    tensors = [("embed.weight", E), ("pos_embed.weight", Ppos), ("token_type.weight", TT),
               ("embed_norm.weight", en_w), ("embed_norm.bias", en_b)]
    for l in range(nl):
        tensors += layer_tensors(l, layers[l])
    tensors += [("head_transform.weight", ht_w), ("head_transform.bias", ht_b),
                ("head_norm.weight", hn_w), ("head_norm.bias", hn_b), ("head.bias", head_b)]
    meta = base_meta(D, H, F_, nl, act, False, False, eps, {"tie_head": "1"})
    return save("bert-like", tensors, meta, st, toks, text)


def course_like():
    torch.manual_seed(13)
    D, H, F_, nl, max_pos, eps, act, C = 16, 1, 32, 1, 10, 1e-5, "relu", 3
    text = "the cat sleeps by the bank"
    toks = tokenize(text)
    ids = [VOCAB.index(t) if t in VOCAB else 0 for t in toks]
    V = len(VOCAB)
    E, Ppos = rnd(V, D), rnd(max_pos, D, scale=0.1)
    layers = [make_layer(D, F_, False) for _ in range(nl)]
    n_w, n_b = 1 + rnd(D, scale=0.1), rnd(D, scale=0.1)
    c_w, c_b = rnd(C, D), rnd(C, scale=0.1)
    st = {}
    X, P = embed_stages(st, ids, E, Ppos)
    z = X + P
    st["Z"] = z
    x = z
    for l in range(nl):
        x = encoder_layer(st, l, x, layers[l], H, False, True, act, eps)
    check_nn(layers, z, st, nl, D, H, F_, True, act, eps, False, False)
    y = ln(x, n_w, n_b, eps)  # the encoder's final LayerNorm
    pool = y.mean(dim=0, keepdim=True)  # mean over positions [1, D]
    cl = pool @ c_w.T + c_b
    st["enc_norm"], st["pool"], st["class_logits"], st["class_pred"] = y, pool, cl, torch.softmax(cl, -1)
    tensors = [("embed.weight", E), ("pos_embed.weight", Ppos)]
    for l in range(nl):
        tensors += layer_tensors(l, layers[l])
    tensors += [("norm.weight", n_w), ("norm.bias", n_b), ("classifier.weight", c_w), ("classifier.bias", c_b)]
    meta = base_meta(D, H, F_, nl, act, True, False, eps, {"classes": "animal\nplace\nthing"})
    return save("course-like", tensors, meta, st, toks, text)


def main():
    os.makedirs(OUT, exist_ok=True)
    lines = [gpt2_like(), bert_like(), course_like()]
    with open(os.path.join(OUT, "cases.txt"), "w", encoding="utf-8") as f:
        f.write("# tests/ref/ext/cases.txt -- written by tests/gen_ref_ext.py, read by test_golden_ext.c:\n"
                "# folder<TAB>sentence. Regenerate with /usr/bin/python3 tests/gen_ref_ext.py\n")
        f.write("".join(lines))
    print("wrote", ", ".join(l.split("\t")[0] for l in lines), "into", OUT)


if __name__ == "__main__":
    main()
