#!/usr/bin/python3
"""gen_inside_ref.py -- references for looking inside a pass (issue 36): the logit lens, attention
rollout, input saliency and the FFN's neurons, from torch.

Regenerate every case into tests/ref/inside/<case>/ and tests/ref/inside/cases.txt (read by
test_inside.c) with Debian's python3-torch and python3-numpy:

    /usr/bin/python3 tests/gen_inside_ref.py

Each case builds a model exactly as tests/gen_ref.py does (build_model, explicit_forward:
nn.Embedding, nn.TransformerEncoder, an optional final LayerNorm, the prediction head) and writes
  model.safetensors, tokens.txt      (as gen_grad_ref.py)
  lens.l{i}.npy [L, V]   softmax(head(norm_f(h_i))): every layer output h_i = l{i}.out through the
                         model's own final LayerNorm (when it has one) and head, temperature 1
                         (tuned-lens's LogitLens); the last equals pred
  rollout.l{i}.npy [L, L], rollout.npy   Abnar & Zuidema (samiraabnar/attention_flow): per layer
                         Â = 0.5·mean_h A + 0.5·I, rows renormalized; R_0 = Â_0, R_i = Â_i R_{i-1}
  saliency.npy [L]       gradient × input (Ecco): s_j = ‖∂ log p̂[L-1, t]/∂X_j ⊙ X_j‖₂ over D, X = O·E
                         (torch.autograd through the explicit pass), t the top token at the last
                         position, normalized to sum 1
  neurons.txt            layer 0, the last position: the 3 largest ffn_hidden units with their
                         values, and for each the 5 tokens its row of W_2 promotes most through the
                         final norm (when there is one) and head.weight (no bias)
Post- and pre-norm, with and without the final norm, causal and not, 1-3 layers.
"""
import os
import shlex
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_ref  # noqa: E402

OUT = os.path.join(HERE, "ref", "inside")
VOCAB = gen_ref.BANK_VOCAB

CASES = [
    ("post-causal-2", "--seed 31 --text 'The cat walks by the bank' --D 8 --H 2 --F 16 --layers 2"
     " --activation relu --norm-first 0 --causal 1 --final-norm 0"),
    ("pre-causal-norm-3", "--seed 32 --text 'the mouse eats the money by the river' --D 12 --H 3 --F 24"
     " --layers 3 --activation gelu --norm-first 1 --causal 1 --final-norm 1"),
    ("post-encoder-norm-1", "--seed 33 --text 'the cat sleeps by the river bank' --D 8 --H 4 --F 16"
     " --layers 1 --activation gelu --norm-first 0 --causal 0 --final-norm 1"),
]


def head_of(enc, head, h):
    y = h
    if enc.norm is not None:
        y = F.layer_norm(h, (h.shape[-1],), enc.norm.weight, enc.norm.bias, enc.norm.eps)
    return y @ head.weight.T + head.bias


def run_case(name, args):
    a = gen_ref.parser().parse_args(shlex.split(args + " --head 1 --vocab " + shlex.quote(VOCAB)))
    vocab = a.vocab.split(",")
    toks = [t if t in vocab else "<unk>" for t in gen_ref.tokenize(a.text)]
    ids = [vocab.index(t) for t in toks]
    V, L = len(vocab), len(ids)
    torch.set_num_threads(1)
    embed, enc, head = gen_ref.build_model(a, V)
    st = gen_ref.explicit_forward(a, embed, enc, head, ids, V)
    st["X"].retain_grad()
    out = os.path.join(OUT, name)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))

    def save(n, v):
        np.save(os.path.join(out, n + ".npy"), np.ascontiguousarray(np.asarray(v, dtype=np.float32)))

    with torch.no_grad():
        for i in range(a.layers):  # the logit lens
            lens = torch.softmax(head_of(enc, head, st[f"l{i}.out"]), dim=-1)
            save(f"lens.l{i}", lens.numpy())
        last = float((lens - st["pred"]).abs().max())
        assert last < 1e-6, f"{name}: the last lens row is not pred ({last})"
        R = None  # rollout, in float64
        for i in range(a.layers):
            A = st[f"l{i}.A"].double().mean(0)
            Ah = 0.5 * A + 0.5 * torch.eye(L, dtype=torch.float64)
            Ah = Ah / Ah.sum(-1, keepdim=True)
            R = Ah if R is None else Ah @ R
            save(f"rollout.l{i}", R.numpy())
        save("rollout", R.numpy())
    # saliency: gradient × input at the last position's top token
    t = int(st["pred"][L - 1].argmax())
    logp = torch.log_softmax(st["logits"][L - 1], dim=-1)[t]
    logp.backward()
    s = (st["X"].grad * st["X"]).detach().double().norm(dim=-1)
    save("saliency", (s / s.sum()).numpy())
    # neurons of layer 0 at the last position
    with torch.no_grad():
        hid = st["l0.ffn_hidden"][L - 1]
        top = torch.argsort(-hid, stable=True)[:3]
        W2 = enc.layers[0].linear2.weight  # [D, F]: column n is unit n's direction
        lines = [f"# layer 0, position {L} (1-based): unit value, then its 5 promoted ids with logits"]
        for n in top.tolist():
            d = W2[:, n]
            if enc.norm is not None:
                d = F.layer_norm(d, (a.D,), enc.norm.weight, enc.norm.bias, enc.norm.eps)
            z = d @ head.weight.T
            best = torch.argsort(-z, stable=True)[:5].tolist()
            lines.append(f"{n} {float(hid[n]):.9g} " + " ".join(f"{v}:{float(z[v]):.9g}" for v in best))
    with open(os.path.join(out, "neurons.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    tensors = [("embed.weight", embed.weight)] + list(enc.state_dict().items())
    tensors += [("head.weight", head.weight), ("head.bias", head.bias)]
    meta = {"format": "pt", "d_model": str(a.D), "n_heads": str(a.H), "d_ff": str(a.F),
            "n_layers": str(a.layers), "activation": a.activation, "norm_first": str(a.norm_first),
            "vocab": "\n".join(vocab), "causal": str(a.causal), "seed": str(a.seed), "init": a.init,
            "layer_norm_eps": "1e-05", "pos_encoding": "sinusoidal", "generator": "tests/gen_inside_ref.py",
            "torch_version": torch.__version__}
    gen_ref.write_safetensors(os.path.join(out, "model.safetensors"),
                              [(k, v.detach()) for k, v in tensors], meta)
    with open(os.path.join(out, "tokens.txt"), "w", encoding="utf-8") as f:
        f.write("".join(x + "\n" for x in toks))
    print(f"{name}: top token at the last position {vocab[t]}, saliency {np.round((s / s.sum()).numpy(), 3)}")
    return a


def main():
    os.makedirs(OUT, exist_ok=True)
    lines = ["# tests/ref/inside/cases.txt -- written by tests/gen_inside_ref.py; read by test_inside.c.",
             "# One case a line, two TAB-separated fields: folder and sentence."]
    for name, args in CASES:
        a = run_case(name, args)
        lines.append(f"{name}\t{a.text}")
    with open(os.path.join(OUT, "cases.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
