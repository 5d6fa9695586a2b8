#!/usr/bin/env python3
"""Gradients of today's decoders (issue 34, item 6) from torch.autograd, for test_llama_grad.c.

    /usr/bin/python3 tests/gen_llama_grad_ref.py      # rewrites tests/ref/llama_grad/

The models are tests/ref/llama's fixtures (the same configurations and seeds as gen_llama_ref.py:
GQA with 1, 2 and 4 query heads per K/V head, QK-norm and head_dim ≠ D/H, Qwen 2's Q/K/V biases,
tied and untied heads, both RoPE conventions, Llama 3's rope_scaling, Gemma's 1 + g and GELU-gated
FFN); the forward is gen_llama_ref.forward, plain torch, differentiated as is. For sentence s0 of
each fixture, tests/ref/llama_grad/<folder>/ holds
  loss.npy [1]          mean over positions 0..L-2 of −log p̂[i, id(i+1)] (the next token)
  grad.<stage>.npy      dL/d stage for every stage of the dump (X, Z, l{i}.*, final_norm, logits;
                        Q, K after RoPE; K, V with num_key_value_heads heads)
  grad.<tensor>.npy     dL/dθ under the canonical names (model.h): in_proj_weight stacks q, k, v's
                        (in_proj_bias their biases), gate.weight, linear1 (up), linear2 (down),
                        norm1|norm2|norm.weight, q_norm|k_norm, head.weight (untied), embed.weight
                        (tied: both contributions)
  loss_after.npy [1]    the loss after one SGD step θ − 0.1·dL/dθ (train_sgd_step)
  saliency.npy [L]      gradient × input of log p̂[L−1, t] (t the top token), ‖∂/∂X_j ⊙ X_j‖₂ over D,
                        normalized to sum 1 (gen_inside_ref.py's method)
  edits.txt, edit.<k>.npy   what-if edits (edits.h): line k is a --edit spec, edit.k.npy the
                        logits [L, V] of the forward with that one weight changed
cases.txt lists folder, ids.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_llama_ref as R  # noqa: E402
from gen_hub_fixtures import bpe_encode, make_bpe  # noqa: E402

OUT = os.path.join(HERE, "ref", "llama_grad")


def fixtures(V):
    """gen_llama_ref.main's variants: (folder, cfg, dtype, seed)."""
    b = R.base
    return [
        ("llama-gqa2", b("llama", "LlamaForCausalLM", 32, 4, 2, 64, 2, V, rms_norm_eps=1e-5, attention_bias=False,
                         mlp_bias=False), "F32", 1),
        ("llama3-bf16", b("llama", "LlamaForCausalLM", 32, 4, 4, 48, 2, V, rope_theta=500000.0,
                          tie_word_embeddings=True, torch_dtype="bfloat16",
                          rope_scaling={"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                        "original_max_position_embeddings": 256, "rope_type": "llama3"}),
         "BF16", 2),
        ("qwen3-sharded", b("qwen3", "Qwen3ForCausalLM", 32, 4, 1, 64, 2, V + 12, head_dim=16,
                            rope_theta=1000000.0, tie_word_embeddings=True, qk_norm=True, attention_bias=False),
         "F32", 3),
        ("qwen2-f16", b("qwen2", "Qwen2ForCausalLM", 48, 6, 2, 64, 3, V, torch_dtype="float16",
                        attention_bias_qkv=True), "F16", 4),
        ("canon-pairs", b("llama", "LlamaForCausalLM", 16, 2, 1, 32, 1, V, rope_style="pairs", rms_offset=True,
                          hidden_act="gelu_pytorch_tanh", tie_word_embeddings=True), "F32", 5),
    ]


# What-if edits of a weight, (--edit spec, the forward dict's tensor, its index, value): the trace's
# views are transposed ([in, out]: Wg[d1, d2] is gate_proj[1, 0]); d and units count from 1.
EDITS = [
    ("1:Wg[d1,d2]=5", lambda w: w["layers"][0]["gate_proj"], (1, 0), 5.0),
    ("1:Wk[d2,d3]=2", lambda w: w["layers"][0]["k_proj"], (2, 1), 2.0),
    ("1:gamma_rms2[d4]=0", lambda w: w["layers"][0]["post_attention_layernorm"], (3,), 0.0),
    ("1:Wo[d3,d1]=-4", lambda w: w["layers"][0]["o_proj"], (0, 2), -4.0),
]


def write_edits(folder, cfg, w0, ids):
    specs = EDITS + ([("1:gamma_q[d3]=2", lambda w: w["layers"][0]["q_norm"], (2,), 2.0)]
                     if cfg.get("qk_norm") else [])
    with open(os.path.join(folder, "edits.txt"), "w") as f:
        for k, (spec, get, at, val) in enumerate(specs):
            w = {"embed": w0["embed"], "norm": w0["norm"], "lm_head": w0["lm_head"],
                 "layers": [{n: t.clone() for n, t in lw.items()} for lw in w0["layers"]]}
            get(w)[at] = val
            with torch.no_grad():
                save(os.path.join(folder, f"edit.{k}.npy"), R.forward(w, cfg, ids)["logits"].numpy())
            f.write(spec + "\n")


def leaves(w):
    """Every weight tensor of the forward dict as a leaf that collects its gradient (a tied head is
    the embedding itself)."""
    out = {"embed": w["embed"].clone().requires_grad_(), "layers": []}
    for lw in w["layers"]:
        out["layers"].append({k: v.clone().requires_grad_() for k, v in lw.items()})
    out["norm"] = w["norm"].clone().requires_grad_()
    out["lm_head"] = out["embed"] if w["lm_head"] is w["embed"] else w["lm_head"].clone().requires_grad_()
    return out


def next_token_loss(st, ids):
    return F.cross_entropy(st["logits"][:-1], torch.tensor(ids[1:]))


def canonical_grads(w, cfg):
    out = [("embed.weight", w["embed"].grad)]
    for i, lw in enumerate(w["layers"]):
        c = f"layers.{i}."
        out.append((c + "norm1.weight", lw["input_layernorm"].grad))
        out.append((c + "self_attn.in_proj_weight", torch.cat([lw[n + "_proj"].grad for n in "qkv"], 0)))
        if "q_bias" in lw:
            out.append((c + "self_attn.in_proj_bias", torch.cat([lw[n + "_bias"].grad for n in "qkv"], 0)))
        if "q_norm" in lw:
            out.append((c + "self_attn.q_norm.weight", lw["q_norm"].grad))
            out.append((c + "self_attn.k_norm.weight", lw["k_norm"].grad))
        out.append((c + "self_attn.out_proj.weight", lw["o_proj"].grad))
        out.append((c + "norm2.weight", lw["post_attention_layernorm"].grad))
        out.append((c + "gate.weight", lw["gate_proj"].grad))
        out.append((c + "linear1.weight", lw["up_proj"].grad))
        out.append((c + "linear2.weight", lw["down_proj"].grad))
    out.append(("norm.weight", w["norm"].grad))
    if w["lm_head"] is not w["embed"]:
        out.append(("head.weight", w["lm_head"].grad))
    return out


def all_params(w):
    ps = [w["embed"], w["norm"]] + [p for lw in w["layers"] for p in lw.values()]
    if w["lm_head"] is not w["embed"]:
        ps.append(w["lm_head"])
    return ps


def save(path, t):
    np.save(path, np.ascontiguousarray(np.asarray(t, dtype="<f4")))


def main():
    torch.manual_seed(0)
    vocab, merges, ranks = make_bpe()
    rows = []
    for name, cfg, dtype, seed in fixtures(len(vocab)):
        _, w0 = R.weights(cfg, seed, dtype)
        ids = bpe_encode(R.SENTENCES[0], vocab, ranks)
        folder = os.path.join(OUT, name)
        os.makedirs(folder, exist_ok=True)
        for f in os.listdir(folder):
            os.remove(os.path.join(folder, f))
        w = leaves(w0)
        st = R.forward(w, cfg, ids)
        for k, t in st.items():
            if t.requires_grad and k not in ("O", "pred"):
                t.retain_grad()
        loss = next_token_loss(st, ids)
        loss.backward()
        save(os.path.join(folder, "loss.npy"), [loss.item()])
        for k, t in st.items():
            if k in ("O", "pred") or t.grad is None:
                continue
            save(os.path.join(folder, f"grad.{k}.npy"), t.grad.detach().numpy())
        for n, gr in canonical_grads(w, cfg):
            save(os.path.join(folder, f"grad.{n}.npy"), gr.detach().numpy())
        with torch.no_grad():
            for p in all_params(w):
                p -= 0.1 * p.grad
            after = next_token_loss(R.forward(w, cfg, ids), ids)
        save(os.path.join(folder, "loss_after.npy"), [after.item()])
        # saliency: gradient × input of log p̂ at the last position's top token
        w = leaves(w0)
        st = R.forward(w, cfg, ids)
        st["X"].retain_grad()
        L = len(ids)
        top = int(st["pred"][L - 1].argmax())
        torch.log_softmax(st["logits"][L - 1], dim=-1)[top].backward()
        s = (st["X"].grad * st["X"]).detach().double().norm(dim=-1)
        save(os.path.join(folder, "saliency.npy"), (s / s.sum()).numpy())
        write_edits(folder, cfg, w0, ids)
        rows.append((name, " ".join(map(str, ids))))
        print(name, "loss", loss.item(), "->", after.item())
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("# folder TAB ids: written by tests/gen_llama_grad_ref.py (the fixtures of tests/ref/llama)\n")
        f.write("".join(f"{n}\t{s}\n" for n, s in rows))


if __name__ == "__main__":
    main()
