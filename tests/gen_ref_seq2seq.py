#!/usr/bin/python3
"""gen_ref_seq2seq.py -- PyTorch references for the encoder-decoder of issue 11 (nn.Transformer).

Regenerate every case into tests/ref/<case>/ and tests/ref/seq2seq_cases.txt (the manifest the
C tests read) with Debian's python3-torch and python3-numpy:

    /usr/bin/python3 tests/gen_ref_seq2seq.py --all

The tests never need Python: the files are committed. It shares gen_ref.py's tokenizer,
sinusoidal encoding and safetensors writer, so both sides of a model read text as Stepformer does.

The model: nn.Embedding(V_s, D) `src_embed`, nn.Embedding(V_t, D) `tgt_embed`, an
nn.Transformer(batch_first=True, dropout=0, norm_first, activation) with `n_layers` encoder and
`n_decoder_layers` decoder layers (each layer seeded separately, 1-D parameters perturbed with
0.1*N(0,1) so that a bias or a LayerNorm gain in the wrong place shows), and the prediction head
nn.Linear(D, V_t) `head`. Positions are the sinusoidal P added to the embeddings on both sides,
no sqrt(D) scaling. The source is tokenized against the source vocabulary; the decoder's input
is "<bos>" followed by the target's tokens (teacher forcing), so T = 1 + the target's words.

Every stage is computed explicitly in float32 and asserted equal to the torch.nn modules
(nn.Transformer's output, each decoder layer's output, the self- and cross-attention weights of
nn.MultiheadAttention, the head) to --assert-atol. Stage files (DESIGN.md, issue 11):
  encoder    O X P Z, l{i}.in Q K V S A AV concat attn res1 norm1 ffn_pre ffn_hidden ffn res2
             norm2 out (as gen_ref.py), then memory = encoder.norm(l{last}.out)
  decoder    dec.O dec.X dec.P dec.Z; per layer j: d{j}.in, self-attention d{j}.Q K V S_raw S A
             AV concat attn res1 (S is the causally masked scores, -inf above the diagonal),
             cross-attention d{j}.cQ [H,T,d_k] cK cV [H,S,d_k] cS cA [H,T,S] cAV cconcat cattn,
             then res2, ffn_pre ffn_hidden ffn res3, the norms norm1 norm2 norm3 and out;
             dec.norm [T,D], logits and pred [T,V_t]
  norms      post-norm: normK is the LayerNorm after the K-th residual (norm3 == out);
             pre-norm:  normK is the LayerNorm before the K-th sub-layer (norm3 is the FFN's
             input, out == res3)
Also tokens.txt (the source tokens) and dec_tokens.txt (the decoder's input tokens).
"""
import argparse
import json
import math
import os
import shlex
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_ref import REF_DIR, sinusoidal_pe, tokenize, write_safetensors, read_safetensors  # noqa: E402

SRC_VOCAB = "<unk>,the,cat,walks,by,bank,river,money,sleeps,she,puts,in"
TGT_VOCAB = "<unk>,<bos>,<eos>,le,la,chat,marche,près,de,banque,rive,dort,elle,met,argent,dans"

CASES = [
    ("seq2seq-post", "--seed 20 --src-vocab " + shlex.quote(SRC_VOCAB) + " --tgt-vocab " +
     shlex.quote(TGT_VOCAB) + " --text 'The cat walks by the bank' --target 'le chat marche près de la"
     " banque' --D 16 --H 2 --F 32 --layers 1 --dec-layers 1 --activation relu --norm-first 0"),
    ("seq2seq-pre-gelu", "--seed 21 --src-vocab " + shlex.quote(SRC_VOCAB) + " --tgt-vocab " +
     shlex.quote(TGT_VOCAB) + " --text 'She puts money in the bank.' --target 'elle met argent dans"
     " la banque' --D 16 --H 4 --F 32 --layers 2 --dec-layers 3 --activation gelu --norm-first 1"),
    ("seq2seq-short-target", "--seed 22 --src-vocab " + shlex.quote(SRC_VOCAB) + " --tgt-vocab " +
     shlex.quote(TGT_VOCAB) + " --text 'the cat sleeps by the river bank' --target 'rive'"
     " --D 8 --H 1 --F 16 --layers 3 --dec-layers 2 --activation relu --norm-first 0"),
]


def build(a, Vs, Vt):
    torch.manual_seed(a.seed)
    src_embed, tgt_embed = nn.Embedding(Vs, a.D), nn.Embedding(Vt, a.D)
    tr = nn.Transformer(d_model=a.D, nhead=a.H, num_encoder_layers=a.layers,
                        num_decoder_layers=a.dec_layers, dim_feedforward=a.F, dropout=0.0,
                        activation=a.activation, batch_first=True, norm_first=bool(a.norm_first))
    head = nn.Linear(a.D, Vt)
    with torch.no_grad():
        for name, p in tr.named_parameters():
            if p.dim() == 1:  # biases 0 and gains 1 by default: perturb so misplaced ones show
                p.add_(0.1 * torch.randn(p.shape))
    for m in (src_embed, tgt_embed, tr, head):
        m.eval()
    return src_embed, tgt_embed, tr, head


def heads(x, H):
    L, D = x.shape
    return x.reshape(L, H, D // H).transpose(0, 1).contiguous()


def attention(q_in, kv_in, mha, H, causal):
    """One nn.MultiheadAttention block, stage by stage. Returns a dict of its stages."""
    D = q_in.shape[1]
    dk = D // H
    W, b = mha.in_proj_weight, mha.in_proj_bias
    Q = heads(q_in @ W[0:D].T + b[0:D], H)
    K = heads(kv_in @ W[D:2 * D].T + b[D:2 * D], H)
    V = heads(kv_in @ W[2 * D:].T + b[2 * D:], H)
    S_raw = (Q @ K.transpose(1, 2)) / math.sqrt(dk)
    S = S_raw
    if causal:
        T = S.shape[1]
        S = S_raw.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
    A = torch.softmax(S, dim=-1)
    AV = A @ V
    concat = AV.transpose(0, 1).reshape(-1, D)
    attn = concat @ mha.out_proj.weight.T + mha.out_proj.bias
    return dict(Q=Q, K=K, V=V, S_raw=S_raw, S=S, A=A, AV=AV, concat=concat, attn=attn)


def explicit_forward(a, src_embed, tgt_embed, tr, head, src_ids, tgt_ids, Vs, Vt):
    st = {}
    D, H = a.D, a.H
    act = F.relu if a.activation == "relu" else F.gelu
    ln = lambda x, n: F.layer_norm(x, (D,), n.weight, n.bias, n.eps)  # noqa: E731
    # encoder, as gen_ref.py names it
    S_len, T_len = len(src_ids), len(tgt_ids)
    O = F.one_hot(torch.tensor(src_ids), Vs).to(torch.float32)
    X = O @ src_embed.weight
    P = sinusoidal_pe(S_len, D)
    st.update(O=O, X=X, P=P, Z=X + P)
    h = st["Z"]
    for i, layer in enumerate(tr.encoder.layers):
        p = f"l{i}."
        st[p + "in"] = h
        if a.norm_first:
            norm1 = ln(h, layer.norm1)
            sa = attention(norm1, norm1, layer.self_attn, H, False)
            res1 = h + sa["attn"]
            norm2 = ln(res1, layer.norm2)
            ffn_pre = norm2 @ layer.linear1.weight.T + layer.linear1.bias
            ffn_hidden = act(ffn_pre)
            ffn = ffn_hidden @ layer.linear2.weight.T + layer.linear2.bias
            res2 = res1 + ffn
            out = res2
        else:
            sa = attention(h, h, layer.self_attn, H, False)
            res1 = h + sa["attn"]
            norm1 = ln(res1, layer.norm1)
            ffn_pre = norm1 @ layer.linear1.weight.T + layer.linear1.bias
            ffn_hidden = act(ffn_pre)
            ffn = ffn_hidden @ layer.linear2.weight.T + layer.linear2.bias
            res2 = norm1 + ffn
            norm2 = ln(res2, layer.norm2)
            out = norm2
        for k in ("Q", "K", "V", "S", "A", "AV", "concat", "attn"):
            st[p + k] = sa[k]
        st.update({p + "res1": res1, p + "norm1": norm1, p + "ffn_pre": ffn_pre,
                   p + "ffn_hidden": ffn_hidden, p + "ffn": ffn, p + "res2": res2,
                   p + "norm2": norm2, p + "out": out})
        h = out
    memory = ln(h, tr.encoder.norm)
    st["memory"] = memory
    # decoder
    Od = F.one_hot(torch.tensor(tgt_ids), Vt).to(torch.float32)
    Xd = Od @ tgt_embed.weight
    Pd = sinusoidal_pe(T_len, D)
    st.update({"dec.O": Od, "dec.X": Xd, "dec.P": Pd, "dec.Z": Xd + Pd})
    h = st["dec.Z"]
    for j, layer in enumerate(tr.decoder.layers):
        p = f"d{j}."
        st[p + "in"] = h
        if a.norm_first:
            norm1 = ln(h, layer.norm1)
            sa = attention(norm1, norm1, layer.self_attn, H, True)
            res1 = h + sa["attn"]
            norm2 = ln(res1, layer.norm2)
            ca = attention(norm2, memory, layer.multihead_attn, H, False)
            res2 = res1 + ca["attn"]
            norm3 = ln(res2, layer.norm3)
            f_in = norm3
        else:
            sa = attention(h, h, layer.self_attn, H, True)
            res1 = h + sa["attn"]
            norm1 = ln(res1, layer.norm1)
            ca = attention(norm1, memory, layer.multihead_attn, H, False)
            res2 = norm1 + ca["attn"]
            norm2 = ln(res2, layer.norm2)
            f_in = norm2
        ffn_pre = f_in @ layer.linear1.weight.T + layer.linear1.bias
        ffn_hidden = act(ffn_pre)
        ffn = ffn_hidden @ layer.linear2.weight.T + layer.linear2.bias
        res3 = f_in + ffn if not a.norm_first else res2 + ffn
        if a.norm_first:
            out = res3
        else:
            norm3 = ln(res3, layer.norm3)
            out = norm3
        for k in ("Q", "K", "V", "S_raw", "S", "A", "AV", "concat", "attn"):
            st[p + k] = sa[k]
        for k in ("Q", "K", "V", "S", "A", "AV", "concat", "attn"):
            st[p + "c" + k] = ca[k]
        st.update({p + "res1": res1, p + "norm1": norm1, p + "res2": res2, p + "norm2": norm2,
                   p + "ffn_pre": ffn_pre, p + "ffn_hidden": ffn_hidden, p + "ffn": ffn,
                   p + "res3": res3, p + "norm3": norm3, p + "out": out})
        h = out
    y = ln(h, tr.decoder.norm)
    st["dec.norm"] = y
    logits = y @ head.weight.T + head.bias
    st["logits"] = logits
    st["pred"] = torch.softmax(logits, dim=-1)
    return st


def check_against_nn(a, tr, head, st):
    T = st["dec.Z"].shape[0]
    mask = nn.Transformer.generate_square_subsequent_mask(T)
    diffs = {}
    with torch.no_grad():
        out = tr(st["Z"][None], st["dec.Z"][None], tgt_mask=mask)[0]
        diffs["decoder_output_vs_transformer"] = float((st["dec.norm"] - out).abs().max())
        mem = tr.encoder(st["Z"][None])[0]
        diffs["memory_vs_encoder"] = float((st["memory"] - mem).abs().max())
        for j, layer in enumerate(tr.decoder.layers):
            p = f"d{j}."
            ref = layer(st[p + "in"][None], st["memory"][None], tgt_mask=mask)[0]
            diffs[p + "out_vs_layer"] = float((st[p + "out"] - ref).abs().max())
            q = st[p + "norm1"] if a.norm_first else st[p + "in"]
            _, w = layer.self_attn(q[None], q[None], q[None], attn_mask=mask, need_weights=True,
                                   average_attn_weights=False)
            diffs[p + "A_vs_mha"] = float((st[p + "A"] - w[0]).abs().max())
            qc = st[p + "norm2"] if a.norm_first else st[p + "norm1"]
            m = st["memory"][None]
            _, wc = layer.multihead_attn(qc[None], m, m, need_weights=True, average_attn_weights=False)
            diffs[p + "cA_vs_mha"] = float((st[p + "cA"] - wc[0]).abs().max())
        logits = head(out)
        diffs["logits_vs_head"] = float((st["logits"] - logits).abs().max())
    bad = {k: v for k, v in diffs.items() if not (v <= a.assert_atol)}
    assert not bad, f"explicit stages differ from torch.nn by more than {a.assert_atol}: {bad}"
    return diffs


def parser():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true", help="regenerate every case and the manifest")
    ap.add_argument("--case", help="regenerate one case (and the manifest)")
    ap.add_argument("--greedy", action="store_true",
                    help="write every case's generated.txt from its committed model (greedy decoding)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--src-vocab")
    ap.add_argument("--tgt-vocab")
    ap.add_argument("--text")
    ap.add_argument("--target")
    ap.add_argument("--D", type=int, default=16)
    ap.add_argument("--H", type=int, default=2)
    ap.add_argument("--F", type=int, default=32)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--dec-layers", type=int, default=1)
    ap.add_argument("--activation", choices=["relu", "gelu"], default="relu")
    ap.add_argument("--norm-first", type=int, choices=[0, 1], default=0)
    ap.add_argument("--assert-atol", type=float, default=1e-5)
    ap.add_argument("--out")
    return ap


def ids_of(words, vocab):
    return [vocab.index(w) if w in vocab else 0 for w in words]


def generate(a, name, cmdline):
    sv, tv = a.src_vocab.split(","), a.tgt_vocab.split(",")
    for v in (sv, tv):
        if v[0] != "<unk>" or len(set(v)) != len(v):
            sys.exit("error: a vocabulary starts with <unk> and has no word twice")
    if "<bos>" not in tv or "<eos>" not in tv:
        sys.exit("error: the target vocabulary holds <bos> and <eos>")
    src = tokenize(a.text)
    tgt = ["<bos>"] + tokenize(a.target)
    src_ids, tgt_ids = ids_of(src, sv), ids_of(tgt, tv)
    torch.set_num_threads(1)
    src_embed, tgt_embed, tr, head = build(a, len(sv), len(tv))
    with torch.no_grad():
        st = explicit_forward(a, src_embed, tgt_embed, tr, head, src_ids, tgt_ids, len(sv), len(tv))
    diffs = check_against_nn(a, tr, head, st)
    os.makedirs(a.out, exist_ok=True)
    for f in os.listdir(a.out):
        if f.endswith(".npy") or f.endswith(".txt") or f == "model.safetensors":
            os.remove(os.path.join(a.out, f))
    tensors = [("src_embed.weight", src_embed.weight), ("tgt_embed.weight", tgt_embed.weight)]
    tensors += list(tr.state_dict().items())  # encoder.layers.*, encoder.norm.*, decoder.*
    tensors += [("head.weight", head.weight), ("head.bias", head.bias)]
    meta = {"format": "pt", "d_model": str(a.D), "n_heads": str(a.H), "d_ff": str(a.F),
            "n_layers": str(a.layers), "n_decoder_layers": str(a.dec_layers),
            "activation": a.activation, "norm_first": str(a.norm_first), "causal": "0",
            "vocab": "\n".join(sv), "tgt_vocab": "\n".join(tv), "seed": str(a.seed),
            "layer_norm_eps": "1e-05", "pos_encoding": "sinusoidal",
            "generator": "tests/gen_ref_seq2seq.py", "torch_version": torch.__version__}
    path = os.path.join(a.out, "model.safetensors")
    write_safetensors(path, tensors, meta)
    back, meta_back = read_safetensors(path)
    assert meta_back == meta
    for n, t in tensors:
        assert np.array_equal(back[n], t.detach().numpy()), n
    for k, v in st.items():
        np.save(os.path.join(a.out, k + ".npy"), np.ascontiguousarray(v.detach().numpy().astype(np.float32)))
    with open(os.path.join(a.out, "tokens.txt"), "w", encoding="utf-8") as f:
        f.write("".join((w if w in sv else "<unk>") + "\n" for w in src))
    with open(os.path.join(a.out, "dec_tokens.txt"), "w", encoding="utf-8") as f:
        f.write("".join((w if w in tv else "<unk>") + "\n" for w in tgt))
    print(json.dumps({"case": name, "cmd": cmdline, "S": len(src), "T": len(tgt),
                      "max_abs_diff_vs_torch_nn": max(diffs.values())}, ensure_ascii=False))


GREEDY_LIMIT = 6  # generation steps written to generated.txt (the random models rarely write <eos>)


def greedy(name, limit=GREEDY_LIMIT):
    """Greedy decoding with torch's nn.Transformer over the committed weights of tests/ref/<name>/
    (model.safetensors is read, not rewritten): from <bos>, each step runs the whole decoder on the
    prefix written so far (causal mask) and appends the argmax of the last row of softmax(head(.)).
    Writes tests/ref/<name>/generated.txt: a comment, then one line per step, TAB-separated: the
    step (1-based), the chosen id, its word, its probability, then the top five "id:prob"."""
    folder = os.path.join(REF_DIR, name)
    tensors, meta = read_safetensors(os.path.join(folder, "model.safetensors"))
    sv, tv = meta["vocab"].split("\n"), meta["tgt_vocab"].split("\n")
    D, H = int(meta["d_model"]), int(meta["n_heads"])
    torch.set_num_threads(1)
    tr = nn.Transformer(d_model=D, nhead=H, num_encoder_layers=int(meta["n_layers"]),
                        num_decoder_layers=int(meta["n_decoder_layers"]), dim_feedforward=int(meta["d_ff"]),
                        dropout=0.0, activation=meta["activation"], batch_first=True,
                        norm_first=meta["norm_first"] == "1")
    tr.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in tensors.items()
                        if k.startswith("encoder.") or k.startswith("decoder.")})
    tr.eval()
    src_embed = torch.from_numpy(np.array(tensors["src_embed.weight"]))
    tgt_embed = torch.from_numpy(np.array(tensors["tgt_embed.weight"]))
    hw, hb = torch.from_numpy(np.array(tensors["head.weight"])), torch.from_numpy(np.array(tensors["head.bias"]))
    with open(os.path.join(REF_DIR, "seq2seq_cases.txt"), encoding="utf-8") as f:
        text = [ln.split("\t")[1] for ln in f if ln.startswith(name + "\t")][0]
    src_ids = ids_of(tokenize(text), sv)
    bos, eos = tv.index("<bos>"), tv.index("<eos>")
    lines = [f"# greedy generation by torch's nn.Transformer (tests/gen_ref_seq2seq.py --greedy), "
             f"source {text!r}, at most {limit} steps\n"]
    with torch.no_grad():
        zs = src_embed[src_ids] + sinusoidal_pe(len(src_ids), D)
        memory = tr.encoder(zs[None])
        ids = [bos]
        for step in range(1, limit + 1):
            zt = tgt_embed[ids] + sinusoidal_pe(len(ids), D)
            mask = nn.Transformer.generate_square_subsequent_mask(len(ids))
            y = tr.decoder(zt[None], memory, tgt_mask=mask)[0]
            p = torch.softmax(y[-1] @ hw.T + hb, dim=-1)
            top = torch.argsort(p, descending=True, stable=True)[:5].tolist()
            nxt = top[0]
            lines.append(f"{step}\t{nxt}\t{tv[nxt]}\t{float(p[nxt]):.7g}\t" +
                         " ".join(f"{i}:{float(p[i]):.7g}" for i in top) + "\n")
            ids.append(nxt)
            if nxt == eos:
                break
    with open(os.path.join(folder, "generated.txt"), "w", encoding="utf-8") as f:
        f.write("".join(lines))
    print(json.dumps({"case": name, "generated": [tv[i] for i in ids[1:]]}, ensure_ascii=False))


MANIFEST_HEAD = """\
# tests/ref/seq2seq_cases.txt -- the encoder-decoder reference cases, written by
# tests/gen_ref_seq2seq.py. Regenerate with:  /usr/bin/python3 tests/gen_ref_seq2seq.py --all
# One case per line, three TAB-separated fields: folder, source sentence, target sentence (the
# decoder's input is <bos> followed by the target's tokens).
"""


def main(argv=None):
    a = parser().parse_args(argv)
    if a.greedy:
        for name, _ in CASES:
            greedy(name)
        return
    if a.all or a.case:
        names = [n for n, _ in CASES]
        if a.case and a.case not in names:
            sys.exit(f"error: unknown case {a.case!r} (cases: {', '.join(names)})")
        lines = []
        for name, args in CASES:
            ca = parser().parse_args(shlex.split(args) + ["--out", os.path.join(REF_DIR, name)])
            if a.all or a.case == name:
                generate(ca, name, args)
            lines.append(f"{name}\t{ca.text}\t{ca.target}\n")
        with open(os.path.join(REF_DIR, "seq2seq_cases.txt"), "w", encoding="utf-8") as f:
            f.write(MANIFEST_HEAD + "".join(lines))
        return
    if not (a.src_vocab and a.tgt_vocab and a.text and a.target is not None and a.out):
        sys.exit("error: give --all, --case NAME, or --src-vocab, --tgt-vocab, --text, --target, --out")
    generate(a, os.path.basename(os.path.normpath(a.out)), " ".join(map(shlex.quote, sys.argv[1:])))


if __name__ == "__main__":
    main()
