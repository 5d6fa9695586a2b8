#!/usr/bin/python3
"""gen_grad_ref.py -- the training step's references: torch.autograd's gradients (issue 21).

Regenerate every case into tests/ref/grad/<case>/ and tests/ref/grad/cases.txt (read by
test_grad_golden.c) with Debian's python3-torch and python3-numpy:

    /usr/bin/python3 tests/gen_grad_ref.py

Each case builds a model exactly as tests/gen_ref.py does (its build_model and explicit_forward:
nn.Embedding, nn.TransformerEncoder, an optional final LayerNorm, the prediction head), runs the
explicit stages with autograd on, and takes the loss Stepformer takes: the mean cross-entropy of
the logits at positions 0 .. L-2 against the next token (F.cross_entropy). It asserts that the
same loss through the torch.nn modules (encoder slow path + head) and its parameter gradients
equal the explicit ones, then writes into the case folder
  model.safetensors, tokens.txt                   (as gen_ref.py)
  loss.npy [1]
  grad.<stage>.npy   dL/d<stage> of every stage of gen_ref.py's explicit pass that feeds the loss
                     (O, X, P, Z, l{l}.in/Q/K/V/S/A/AV/concat/attn/res1/norm1/ffn_pre/ffn_hidden/ffn/
                     res2/norm2/out, final_norm, logits); grad.O = grad.X · Eᵀ and grad.P = grad.Z
                     (O and P are constants to autograd: their gradients by the chain rule's last step)
  grad.<tensor>.npy  dL/dθ of every parameter under its file name (embed.weight, layers.{i}.*, norm.*,
                     head.weight, head.bias)
  loss_after.npy [1] the loss after one SGD step θ ← θ − lr·dL/dθ (lr = 0.1, the dump's default)
Keep the models small: the files are committed.
"""
import os
import shlex
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_ref  # noqa: E402  (build_model, explicit_forward, tokenize, write_safetensors)

OUT = os.path.join(HERE, "ref", "grad")
LR = 0.1
VOCAB = gen_ref.BANK_VOCAB

# name -> gen_ref.py arguments (always with a head). Post- and pre-norm, ReLU and GELU, causal and
# not, 1-3 layers.
CASES = [
    ("post-relu-1", "--seed 11 --text 'The cat walks by the bank' --D 8 --H 2 --F 16 --layers 1"
     " --activation relu --norm-first 0 --causal 0 --final-norm 0"),
    ("pre-gelu-causal-2", "--seed 12 --text 'the mouse eats the money by the river' --D 8 --H 2 --F 16"
     " --layers 2 --activation gelu --norm-first 1 --causal 1 --final-norm 1"),
    ("post-gelu-causal-3", "--seed 13 --text 'the cat sleeps by the river bank' --D 8 --H 4 --F 12"
     " --layers 3 --activation gelu --norm-first 0 --causal 1 --final-norm 1"),
    ("pre-relu-3", "--seed 14 --text 'The cat eats the mouse' --D 12 --H 3 --F 16 --layers 3"
     " --activation relu --norm-first 1 --causal 0 --final-norm 0"),
]


def params_of(embed, enc, head):
    out = [("embed.weight", embed.weight)]
    out += list(enc.named_parameters())
    out += [("head.weight", head.weight), ("head.bias", head.bias)]
    return out


def loss_of(st, ids):
    return F.cross_entropy(st["logits"][:-1], torch.tensor(ids[1:]))


def run_case(name, args):
    a = gen_ref.parser().parse_args(shlex.split(args + " --head 1 --vocab " + shlex.quote(VOCAB)))
    vocab = a.vocab.split(",")
    toks = [t if t in vocab else "<unk>" for t in gen_ref.tokenize(a.text)]
    ids = [vocab.index(t) for t in toks]
    V, L = len(vocab), len(ids)
    torch.set_num_threads(1)
    embed, enc, head = gen_ref.build_model(a, V)
    params = params_of(embed, enc, head)

    st = gen_ref.explicit_forward(a, embed, enc, head, ids, V)
    for v in st.values():
        if v.requires_grad:
            v.retain_grad()
    loss = loss_of(st, ids)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in params}
    stage_grads = {k: v.grad.detach().clone() for k, v in st.items() if v.requires_grad and v.grad is not None}
    stage_grads["O"] = stage_grads["X"] @ embed.weight.detach().T
    stage_grads["P"] = stage_grads["Z"].clone()

    # the same loss through the torch.nn modules, and its parameter gradients
    for _, p in params:
        p.grad = None
    mask = gen_ref.causal_mask(L) if a.causal else None
    Z = (F.one_hot(torch.tensor(ids), V).float() @ embed.weight + gen_ref.sinusoidal_pe(L, a.D))[None]
    nn_loss = F.cross_entropy(head(enc(Z, mask=mask)[0])[:-1], torch.tensor(ids[1:]))
    nn_loss.backward()
    assert abs(float(nn_loss) - float(loss)) < 1e-5, (float(nn_loss), float(loss))
    for n, p in params:
        d = float((p.grad - grads[n]).abs().max())
        assert d < 1e-5, f"{name}: {n}: explicit and nn gradients differ by {d}"

    with torch.no_grad():  # one SGD step, then the loss again
        for n, p in params:
            p.sub_(LR * grads[n])
        after = loss_of(gen_ref.explicit_forward(a, embed, enc, head, ids, V), ids)
        for n, p in params:  # the model as built, for model.safetensors
            p.add_(LR * grads[n])

    out = os.path.join(OUT, name)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    tensors = [("embed.weight", embed.weight)] + list(enc.state_dict().items())
    tensors += [("head.weight", head.weight), ("head.bias", head.bias)]
    meta = {"format": "pt", "d_model": str(a.D), "n_heads": str(a.H), "d_ff": str(a.F),
            "n_layers": str(a.layers), "activation": a.activation, "norm_first": str(a.norm_first),
            "vocab": "\n".join(vocab), "causal": str(a.causal), "seed": str(a.seed), "init": a.init,
            "layer_norm_eps": "1e-05", "pos_encoding": "sinusoidal", "generator": "tests/gen_grad_ref.py",
            "torch_version": torch.__version__}
    gen_ref.write_safetensors(os.path.join(out, "model.safetensors"), tensors, meta)

    def save(n, v):
        np.save(os.path.join(out, n + ".npy"), np.ascontiguousarray(np.asarray(v, dtype=np.float32)))

    save("loss", [float(loss)])
    save("loss_after", [float(after)])
    for k, v in stage_grads.items():
        save("grad." + k, v.numpy())
    for n, g in grads.items():
        save("grad." + n, g.numpy())
    with open(os.path.join(out, "tokens.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in toks))
    print(f"{name}: loss {float(loss):.6f} -> {float(after):.6f}, {len(stage_grads)} stage and "
          f"{len(grads)} weight gradients")
    return a


def main():
    lines = ["# tests/ref/grad/cases.txt -- written by tests/gen_grad_ref.py; read by test_grad_golden.c.",
             "# One case a line, two TAB-separated fields: folder and sentence. Regenerate with:",
             "#   /usr/bin/python3 tests/gen_grad_ref.py"]
    for name, args in CASES:
        a = run_case(name, args)
        lines.append(f"{name}\t{a.text}")
    with open(os.path.join(OUT, "cases.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
