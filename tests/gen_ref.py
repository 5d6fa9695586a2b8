#!/usr/bin/python3
"""gen_ref.py -- Stepformer's own PyTorch reference generator (the C tests read what it writes).

Regenerate every reference case into tests/ref/<case>/ (and tests/ref/cases.txt, the manifest
test_golden.c reads) with Debian's python3-torch and python3-numpy:

    /usr/bin/python3 tests/gen_ref.py --all

One case of the table below:       /usr/bin/python3 tests/gen_ref.py --case cat-bank
An ad-hoc configuration anywhere:  /usr/bin/python3 tests/gen_ref.py --vocab "<unk>,the,cat" \\
                                       --text "the cat" --D 8 --H 2 --F 16 --layers 1 --out DIR

The tests themselves never need Python: the files are committed.

What it does (as ../shared/golden/gen.py, plus an optional prediction head)
  1. tokenizes --text (ASCII-lowercase, split on ASCII whitespace and ASCII punctuation,
     unknown words -> "<unk>", which must be vocab[0]);
  2. builds, with torch.manual_seed(seed), nn.Embedding(V,D) and an nn.TransformerEncoder of
     nn.TransformerEncoderLayer(batch_first=True, dropout=0.0, norm_first, activation), each
     layer initialised separately, 1-D parameters perturbed with 0.1*N(0,1) (--init perturbed),
     then optionally the final LayerNorm `norm` (--final-norm 1: nn.TransformerEncoder's norm,
     perturbed too) and the prediction head `head` = nn.Linear(D, V) (--head 1);
  3. computes every stage explicitly with torch ops in float32 and asserts that it equals the
     torch.nn modules (encoder fast and slow path, every layer, MultiheadAttention's weights,
     the head) to --assert-atol;
  4. writes model.safetensors (config and vocabulary in __metadata__), one float32 .npy per
     stage and tokens.txt into the case folder.

Stage files: O, X, P, Z, l{l}.in/Q/K/V/S/A/AV/concat/attn/res1/norm1/ffn_pre/ffn_hidden/ffn/
res2/norm2/out, and with a head: final_norm (when --final-norm 1), logits = y @ head.weight^T +
head.bias (y = final_norm, or the last layer's out), pred = softmax(logits) over the vocabulary.
Per-head tensors are [H, L, d_k] or [H, L, L]; masked scores are -inf.
"""
import argparse
import json
import math
import os
import shlex
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
REF_DIR = os.path.join(HERE, "ref")

BANK_VOCAB = "<unk>,the,cat,walks,by,bank,river,money,sleeps,eats,mouse"

# The reference cases: name -> arguments of one run. Keep the models small: they are committed.
CASES = [
    ("cat-bank", "--seed 0 --vocab " + shlex.quote(BANK_VOCAB) +
     " --text 'The cat walks by the bank' --D 16 --H 2 --F 64 --layers 2 --activation relu"
     " --norm-first 0 --causal 0"),
    ("gelu-prenorm", "--seed 1 --vocab " + shlex.quote(BANK_VOCAB) +
     " --text 'The cat sleeps by the river bank.' --D 32 --H 4 --F 64 --layers 1"
     " --activation gelu --norm-first 1 --causal 0"),
    ("causal", "--seed 2 --vocab " + shlex.quote(BANK_VOCAB) +
     " --text 'the cat eats the mouse' --D 16 --H 2 --F 32 --layers 1 --activation relu"
     " --norm-first 0 --causal 1"),
    ("causal-prenorm-gelu", "--seed 3 --vocab " + shlex.quote(BANK_VOCAB) +
     " --text 'The mouse sleeps. The cat eats the mouse by the river.' --D 16 --H 4 --F 32"
     " --layers 2 --activation gelu --norm-first 1 --causal 1"),
    ("deep-d64-h8", "--seed 4 --vocab " + shlex.quote(BANK_VOCAB) +
     " --text 'The cat walks by the river bank and the mouse sleeps by the money' --D 64 --H 8"
     " --F 64 --layers 3 --activation relu --norm-first 0 --causal 0"),
    ("single-head", "--seed 5 --vocab " + shlex.quote(BANK_VOCAB) +
     " --text 'The cat walks by the bank' --D 16 --H 1 --F 32 --layers 2 --activation relu"
     " --norm-first 0 --causal 0"),
    ("unknown-punct", "--seed 6 --vocab '<unk>,the,cat,walks,by,bank,river,café,s'"
     " --text \"  The CAT's café-walk, by the (bank)... CAFÉ?! Zebra; the  RIVER!\""
     " --D 16 --H 2 --F 32 --layers 1 --activation gelu --norm-first 0 --causal 0"),
    ("one-token", "--seed 7 --vocab " + shlex.quote(BANK_VOCAB) +
     " --text 'Bank!' --D 8 --H 2 --F 16 --layers 1 --activation relu --norm-first 0 --causal 1"),
    ("head", "--seed 8 --vocab " + shlex.quote(BANK_VOCAB) +
     " --text 'the cat walks by the river bank' --D 16 --H 2 --F 32 --layers 2"
     " --activation relu --norm-first 1 --causal 1 --head 1 --final-norm 1"),
    ("head-nonorm", "--seed 9 --vocab " + shlex.quote(BANK_VOCAB) +
     " --text 'the mouse eats the money' --D 8 --H 2 --F 16 --layers 1 --activation gelu"
     " --norm-first 0 --causal 0 --head 1 --final-norm 0"),
]

# ASCII whitespace (C isspace) and ASCII punctuation (C ispunct, "C" locale)
WHITESPACE = " \t\n\v\f\r"
PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
SEPARATORS = set(WHITESPACE + PUNCT)


def ascii_lower(s):
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def tokenize(text):
    """Lowercase A-Z only; a token is a maximal run of characters that are neither ASCII
    whitespace nor ASCII punctuation. Punctuation is dropped. Non-ASCII stays inside tokens."""
    toks, cur = [], []
    for c in ascii_lower(text):
        if c in SEPARATORS:
            if cur:
                toks.append("".join(cur))
                cur = []
        else:
            cur.append(c)
    if cur:
        toks.append("".join(cur))
    return toks


def sinusoidal_pe(L, D):
    """P[pos,2i] = sin(pos / 10000^(2i/D)), P[pos,2i+1] = cos(...), in float64, then float32."""
    pos = np.arange(L, dtype=np.float64)[:, None]
    i2 = np.arange(0, D, 2, dtype=np.float64)[None, :]
    ang = pos / np.power(10000.0, i2 / D)
    P = np.zeros((L, D), dtype=np.float64)
    P[:, 0::2] = np.sin(ang)
    P[:, 1::2] = np.cos(ang[:, : D // 2])
    return torch.from_numpy(P.astype(np.float32))


# ---------------------------------------------------------------- safetensors
def write_safetensors(path, tensors, metadata):
    """u64 little-endian header length N, N bytes of JSON padded with spaces to a multiple of 8,
    then the raw little-endian float32 data, contiguous in the given order."""
    header, blobs, off = {}, [], 0
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    header["__metadata__"] = metadata
    for name, t in tensors:
        a = np.ascontiguousarray(t.detach().cpu().numpy().astype("<f4"))
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    hj = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("utf-8")
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """Strict reader: F32 only, byte size == 4*prod(shape), offsets contiguous to the end."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    buf = data[8 + n:]
    meta = header.pop("__metadata__", {})
    spans, out = [], {}
    for name, h in header.items():
        assert h["dtype"] == "F32", h
        b, e = h["data_offsets"]
        assert e - b == 4 * int(np.prod(h["shape"], dtype=np.int64)), name
        spans.append((b, e))
        out[name] = np.frombuffer(buf[b:e], dtype="<f4").reshape(h["shape"])
    spans.sort()
    pos = 0
    for b, e in spans:
        assert b == pos, "hole or overlap in data_offsets"
        pos = e
    assert pos == len(buf), "trailing bytes after the last tensor"
    return out, meta


# ---------------------------------------------------------------- model
def build_model(a, V):
    """The same seeded construction as golden/gen.py (so cat-bank reproduces the golden files),
    then the optional final LayerNorm and prediction head, drawn after everything else."""
    torch.manual_seed(a.seed)
    embed = nn.Embedding(V, a.D)
    kw = dict(d_model=a.D, nhead=a.H, dim_feedforward=a.F, dropout=0.0, activation=a.activation,
              batch_first=True, norm_first=bool(a.norm_first))
    norm = nn.LayerNorm(a.D) if a.final_norm else None  # ones/zeros: draws no random numbers
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(**kw), a.layers, norm=norm,
                                enable_nested_tensor=False)
    for layer in enc.layers:  # every layer its own seeded default init
        layer.load_state_dict(nn.TransformerEncoderLayer(**kw).state_dict())
    if a.init == "perturbed":
        # default init leaves biases 0 and LayerNorm weights 1: add noise so bugs there show
        with torch.no_grad():
            for layer in enc.layers:
                for _, p in layer.named_parameters():
                    if p.dim() == 1:
                        p.add_(0.1 * torch.randn(p.shape))
            if norm is not None:
                for p in (norm.weight, norm.bias):
                    p.add_(0.1 * torch.randn(p.shape))
    head = nn.Linear(a.D, V) if a.head else None
    for mod in (embed, enc, head):
        if mod is not None:
            mod.eval()
    return embed, enc, head


def causal_mask(L):
    return torch.triu(torch.full((L, L), float("-inf")), diagonal=1)


def explicit_forward(a, embed, enc, head, ids, V):
    """Every stage, explicitly, in float32. Returns an ordered dict name -> tensor."""
    st = {}
    L, D, H = len(ids), a.D, a.H
    dk = D // H
    O = F.one_hot(torch.tensor(ids), V).to(torch.float32)
    X = O @ embed.weight
    P = sinusoidal_pe(L, D)
    Z = X + P
    st["O"], st["X"], st["P"], st["Z"] = O, X, P, Z
    act = F.relu if a.activation == "relu" else F.gelu  # F.gelu: the exact erf form
    h = Z
    for l, layer in enumerate(enc.layers):
        sa = layer.self_attn
        x_in = h
        n1w, n1b, eps1 = layer.norm1.weight, layer.norm1.bias, layer.norm1.eps
        n2w, n2b, eps2 = layer.norm2.weight, layer.norm2.bias, layer.norm2.eps
        if a.norm_first:
            norm1 = F.layer_norm(x_in, (D,), n1w, n1b, eps1)
            a_in = norm1
        else:
            a_in = x_in
        qkv = a_in @ sa.in_proj_weight.T + sa.in_proj_bias
        Q = qkv[:, 0:D].reshape(L, H, dk).transpose(0, 1).contiguous()
        K = qkv[:, D:2 * D].reshape(L, H, dk).transpose(0, 1).contiguous()
        Vv = qkv[:, 2 * D:3 * D].reshape(L, H, dk).transpose(0, 1).contiguous()
        S = (Q @ K.transpose(1, 2)) / math.sqrt(dk)
        if a.causal:
            S = S.masked_fill(torch.triu(torch.ones(L, L, dtype=torch.bool), 1), float("-inf"))
        A = torch.softmax(S, dim=-1)
        AV = A @ Vv
        concat = AV.transpose(0, 1).reshape(L, D)
        attn = concat @ sa.out_proj.weight.T + sa.out_proj.bias
        res1 = x_in + attn
        if a.norm_first:
            norm2 = F.layer_norm(res1, (D,), n2w, n2b, eps2)
            f_in = norm2
        else:
            norm1 = F.layer_norm(res1, (D,), n1w, n1b, eps1)
            f_in = norm1
        ffn_pre = f_in @ layer.linear1.weight.T + layer.linear1.bias
        ffn_hidden = act(ffn_pre)
        ffn = ffn_hidden @ layer.linear2.weight.T + layer.linear2.bias
        if a.norm_first:
            res2 = res1 + ffn
            out = res2
        else:
            res2 = norm1 + ffn
            norm2 = F.layer_norm(res2, (D,), n2w, n2b, eps2)
            out = norm2
        p = f"l{l}."
        for k, v in [("in", x_in), ("Q", Q), ("K", K), ("V", Vv), ("S", S), ("A", A), ("AV", AV),
                     ("concat", concat), ("attn", attn), ("res1", res1), ("norm1", norm1),
                     ("ffn_pre", ffn_pre), ("ffn_hidden", ffn_hidden), ("ffn", ffn),
                     ("res2", res2), ("norm2", norm2), ("out", out)]:
            st[p + k] = v
        h = out
    if head is not None:
        y = h
        if enc.norm is not None:
            y = F.layer_norm(h, (D,), enc.norm.weight, enc.norm.bias, enc.norm.eps)
            st["final_norm"] = y
        logits = y @ head.weight.T + head.bias
        st["logits"] = logits
        st["pred"] = torch.softmax(logits, dim=-1)
    return st


def check_against_nn(a, enc, head, st, L):
    """Asserts the explicit stages equal the torch.nn modules. Returns the max abs diffs."""
    mask = causal_mask(L) if a.causal else None
    Z = st["Z"][None]
    diffs = {}
    with torch.no_grad():  # eval + no_grad: the fast path where 1.13 takes it
        ref_fast = enc(Z, mask=mask)[0]
    with torch.enable_grad():  # parameters requiring grad: the slow (python) path
        ref_slow = enc(Z, mask=mask)[0].detach()
    final = st["final_norm"] if "final_norm" in st else st[f"l{a.layers - 1}.out"]
    diffs["final_vs_encoder_nograd"] = float((final - ref_fast).abs().max())
    diffs["final_vs_encoder_grad"] = float((final - ref_slow).abs().max())
    with torch.no_grad():
        for l, layer in enumerate(enc.layers):
            ref = layer(st[f"l{l}.in"][None], src_mask=mask)[0]
            diffs[f"l{l}.out_vs_layer"] = float((st[f"l{l}.out"] - ref).abs().max())
            src = st[f"l{l}.norm1"] if a.norm_first else st[f"l{l}.in"]
            _, w = layer.self_attn(src[None], src[None], src[None], attn_mask=mask,
                                   need_weights=True, average_attn_weights=False)
            diffs[f"l{l}.A_vs_mha"] = float((st[f"l{l}.A"] - w[0]).abs().max())
        if head is not None:
            logits = head(ref_fast)
            diffs["logits_vs_head"] = float((st["logits"] - logits).abs().max())
            diffs["pred_vs_head"] = float((st["pred"] - torch.softmax(logits, -1)).abs().max())
    bad = {k: v for k, v in diffs.items() if not (v <= a.assert_atol)}
    assert not bad, f"explicit stages differ from torch.nn by more than {a.assert_atol}: {bad}"
    return diffs


def parser():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true",
                    help="regenerate every case of the table into tests/ref/ and the manifest")
    ap.add_argument("--case", help="regenerate one case of the table (and the manifest)")
    ap.add_argument("--list", action="store_true", help="list the cases and their arguments")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--vocab", help='comma list; vocab[0] must be "<unk>"')
    ap.add_argument("--text")
    ap.add_argument("--D", type=int, default=16)
    ap.add_argument("--H", type=int, default=2)
    ap.add_argument("--F", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--activation", choices=["relu", "gelu"], default="relu")
    ap.add_argument("--norm-first", type=int, choices=[0, 1], default=0)
    ap.add_argument("--causal", type=int, choices=[0, 1], default=0)
    ap.add_argument("--head", type=int, choices=[0, 1], default=0,
                    help="add a prediction head head.weight [V,D], head.bias [V]")
    ap.add_argument("--final-norm", type=int, choices=[0, 1], default=0,
                    help="with --head 1: a final LayerNorm norm.weight|bias [D] before the head")
    ap.add_argument("--init", choices=["perturbed", "torch"], default="perturbed")
    ap.add_argument("--assert-atol", type=float, default=1e-5)
    ap.add_argument("--out")
    return ap


def generate(a, name, cmdline):
    """One case: checks, builds, runs, writes. Returns the tokens."""
    vocab = a.vocab.split(",")
    if vocab[0] != "<unk>":
        sys.exit('error: vocab[0] must be "<unk>"')
    if len(set(vocab)) != len(vocab) or any(w == "" for w in vocab):
        sys.exit("error: vocab entries must be unique and non-empty")
    for w in vocab[1:]:
        if tokenize(w) != [w]:
            sys.exit(f"error: vocab word {w!r} can never be produced by the tokenizer")
    if a.D % a.H or a.D % 2:
        sys.exit("error: D must be even and divisible by H")
    if a.final_norm and not a.head:
        sys.exit("error: --final-norm 1 needs --head 1 (the final norm feeds the head)")
    if any(len(w.encode("utf-8")) > 63 for w in tokenize(a.text)):
        sys.exit("error: words longer than 63 bytes are cut by Stepformer's tokenizer")
    toks = [t if t in vocab else "<unk>" for t in tokenize(a.text)]
    if not toks:
        sys.exit("error: the text has no tokens")
    ids = [vocab.index(t) for t in toks]
    V, L = len(vocab), len(toks)

    torch.set_num_threads(1)
    embed, enc, head = build_model(a, V)
    with torch.no_grad():
        st = explicit_forward(a, embed, enc, head, ids, V)
    diffs = check_against_nn(a, enc, head, st, L)

    os.makedirs(a.out, exist_ok=True)
    for f in os.listdir(a.out):  # stale stage files of an earlier configuration
        if f.endswith(".npy") or f in ("tokens.txt", "model.safetensors"):
            os.remove(os.path.join(a.out, f))
    tensors = [("embed.weight", embed.weight)]
    tensors += list(enc.state_dict().items())  # layers.{i}.* and, with a final norm, norm.*
    if head is not None:
        tensors += [("head.weight", head.weight), ("head.bias", head.bias)]
    meta = {"format": "pt", "d_model": str(a.D), "n_heads": str(a.H), "d_ff": str(a.F),
            "n_layers": str(a.layers), "activation": a.activation,
            "norm_first": str(a.norm_first), "vocab": "\n".join(vocab), "causal": str(a.causal),
            "seed": str(a.seed), "init": a.init, "layer_norm_eps": "1e-05",
            "pos_encoding": "sinusoidal", "generator": "tests/gen_ref.py",
            "torch_version": torch.__version__}
    path = os.path.join(a.out, "model.safetensors")
    write_safetensors(path, tensors, meta)
    back, meta_back = read_safetensors(path)
    assert meta_back == meta
    for n, t in tensors:
        assert np.array_equal(back[n], t.detach().numpy()), n
    for k, v in st.items():
        np.save(os.path.join(a.out, k + ".npy"),
                np.ascontiguousarray(v.detach().numpy().astype(np.float32)))
    with open(os.path.join(a.out, "tokens.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in toks))
    print(json.dumps({"case": name, "cmd": cmdline, "tokens": toks,
                      "max_abs_diff_vs_torch_nn": max(diffs.values())}, ensure_ascii=False))
    return toks


MANIFEST_HEAD = """\
# tests/ref/cases.txt -- the reference cases, written by tests/gen_ref.py; read by test_golden.c.
# Regenerate everything with:  /usr/bin/python3 tests/gen_ref.py --all
# One case per line, three TAB-separated fields: folder, causal (0|1: run with the causal mask,
# as `stepformer --causal`), and the sentence (UTF-8, no TAB or newline).
"""

README = """\
# Reference cases

Made by `tests/gen_ref.py` (PyTorch {torch}, NumPy {numpy}); regenerate them all with

    /usr/bin/python3 tests/gen_ref.py --all

`cases.txt` lists the cases (folder, causal, sentence) for `test_golden.c`. Each folder holds
`model.safetensors` (config and vocabulary in `__metadata__`), `tokens.txt` and one float32
`.npy` per stage, named as in `../../../shared/golden/README.md` and DESIGN.md: O, X, P, Z,
l{{l}}.in/Q/K/V/S/A/AV/concat/attn/res1/norm1/ffn_pre/ffn_hidden/ffn/res2/norm2/out, and with a
prediction head final_norm (when the model has `norm.weight`), logits and pred. Per-head tensors
are [H, L, d_k] or [H, L, L]; masked scores are -inf. `notebook/` is not a case of gen_ref.py: it
holds a model saved the way a notebook saves one (see its own README).

| case | arguments of gen_ref.py |
| --- | --- |
{rows}
"""


def main(argv=None):
    a = parser().parse_args(argv)
    if a.list:
        for name, args in CASES:
            print(f"{name}: {args}")
        return
    if a.all or a.case:
        names = [n for n, _ in CASES]
        if a.case and a.case not in names:
            sys.exit(f"error: unknown case {a.case!r} (cases: {', '.join(names)})")
        lines, manifest = [], os.path.join(REF_DIR, "cases.txt")
        for name, args in CASES:
            ca = parser().parse_args(shlex.split(args) + ["--out", os.path.join(REF_DIR, name)])
            assert "\t" not in ca.text and "\n" not in ca.text, name
            if a.all or a.case == name:
                generate(ca, name, args)
            lines.append(f"{name}\t{ca.causal}\t{ca.text}\n")
        # keep the lines of cases that other tools added (folders not in the table)
        if os.path.exists(manifest):
            with open(manifest, encoding="utf-8") as f:
                lines += [ln for ln in f if ln.strip() and not ln.startswith("#")
                          and ln.split("\t")[0] not in names]
        with open(manifest, "w", encoding="utf-8") as f:
            f.write(MANIFEST_HEAD + "".join(lines))
        rows = "\n".join(f"| {n} | `{args}` |" for n, args in CASES)
        with open(os.path.join(REF_DIR, "README.md"), "w", encoding="utf-8") as f:
            f.write(README.format(torch=torch.__version__, numpy=np.__version__, rows=rows))
        return
    if not (a.vocab and a.text and a.out):
        sys.exit("error: give --all, --case NAME, or --vocab, --text and --out")
    cmdline = " ".join(shlex.quote(x) for x in (sys.argv[1:] if argv is None else argv))
    generate(a, os.path.basename(os.path.normpath(a.out)), cmdline)


if __name__ == "__main__":
    main()
