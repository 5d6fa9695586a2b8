#!/usr/bin/env python3
"""Writes tiny Llama, Qwen 2 and Qwen 3 checkpoints in the Hugging Face hub's layout, and every stage.

    /usr/bin/python3 tests/gen_llama_ref.py        # rewrites tests/ref/llama/

Plain torch (transformers is not imported), written from the published architectures as
transformers' modeling_llama.py, modeling_qwen2.py and modeling_qwen3.py compute them:

  LlamaRMSNorm        x · rsqrt(mean(x²) + eps) in float32, times the gain (Gemma: times 1 + gain)
  rotary embedding    inv_freq[j] = 1 / theta^(2j/d_k) (modeling_rope_utils' default), Llama 3's
                      rope_scaling of rope_type "llama3" (_compute_llama3_parameters: wavelengths
                      above original_max_position_embeddings / low_freq_factor divided by factor,
                      below .. / high_freq_factor kept, the ones between blended smoothly);
                      angle = position · inv_freq[j]; apply_rotary_pos_emb rotates halves
                      (q·cos + rotate_half(q)·sin, rotate_half(x) = [-x₂, x₁]): dimension j pairs
                      with j + d_k/2. The paper's and llama.cpp's convention rotates adjacent pairs
                      (2j, 2j+1): the canonical form's metadata rope_style=pairs (fixture
                      canon-pairs, a canonical .safetensors, since no hub config says so).
  attention           q_proj, k_proj, v_proj (Qwen 2: with biases), view [L, heads, head_dim];
                      Qwen 3: q_norm / k_norm (RMSNorm over head_dim) before RoPE; repeat_kv: query
                      head h reads K/V head h // (H / H_kv); scores · head_dim^-0.5, causal mask,
                      softmax in float32, o_proj without bias
  LlamaMLP            down_proj(act(gate_proj(x)) ⊙ up_proj(x)), act = SiLU (Gemma: GELU tanh)
  decoder layer       h = x + attn(input_layernorm(x)); out = h + mlp(post_attention_layernorm(h))
  model               embed_tokens (no positions), layers, norm, lm_head (tied: embed_tokens)

Each folder holds config.json, model.safetensors (or shards with model.safetensors.index.json),
a tokenizer.json (a byte-level BPE of the GPT-2 fixtures' made-up vocabulary: the tests feed the
ids of ids.txt), and per sentence sN/ with ids.txt, tokens.txt and one float32 .npy per stage
under the dump names of issue 34:
  O X Z, l{i}.in l{i}.rms1 l{i}.Q_norope l{i}.K_norope (after any QK-norm, before RoPE)
  l{i}.Q l{i}.K (after RoPE; K and V with num_key_value_heads heads) l{i}.V l{i}.S (−inf where
  masked) l{i}.A l{i}.AV l{i}.concat l{i}.attn l{i}.res1 l{i}.rms2 l{i}.gate l{i}.up
  l{i}.ffn_hidden l{i}.ffn l{i}.out, final_norm, logits, pred.
cases.txt lists folder, ids (space-separated).

Variants (D 16..64, 1..3 layers, vocabulary about 280):
  llama-gqa2      F32, 4 query heads on 2 K/V heads, untied lm_head, rope_theta 10000
  llama3-bf16     BF16, 4 heads on 4 (plain multi-head), tied, rope_theta 500000 and rope_scaling
                  llama3 (original_max_position_embeddings 256: every band of the scaling is used)
  qwen3-sharded   F32 in two shards (model.safetensors.index.json), 4 query heads on 1 K/V head,
                  q_norm/k_norm, head_dim 16 ≠ D/H, tied, vocab_size larger than the tokenizer
  qwen2-f16       F16, q/k/v biases, 6 query heads on 2, untied, 3 layers
  canon-pairs     the canonical form (model.h's metadata): RoPE in adjacent pairs, Gemma's 1 + g
                  RMSNorm gain, GELU-gated FFN, 2 query heads on 1
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_hub_fixtures import BYTE, bpe_encode, bpe_label, make_bpe, stored, write_safetensors  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ref", "llama")
SENTENCES = ["The cat walks by the bank", "a bank, the river's bank! The cat sat by the river."]


# ---------------------------------------------------------------- the architecture
def rms_norm(x, g, eps, offset):
    x32 = x.to(torch.float32)
    y = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return y * ((1.0 + g) if offset else g)


def inv_freq(cfg):
    dk = cfg["head_dim"]
    inv = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, dk, 2, dtype=torch.int64).float() / dk))
    rs = cfg.get("rope_scaling")
    if rs and rs.get("rope_type", rs.get("type")) == "llama3":
        factor, lo, hi = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / lo, old / hi
        wavelen = 2 * math.pi / inv
        inv_l = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        inv = torch.where(medium, smoothed, inv_l)
    return inv


def rope(x, cfg):
    """x [heads, L, d_k]: each head's rows rotated by position · inv_freq."""
    L, dk = x.shape[1], x.shape[2]
    ang = torch.arange(L, dtype=torch.float32)[:, None] * inv_freq(cfg)[None, :]  # [L, d_k/2]
    cos, sin = ang.cos(), ang.sin()
    if cfg.get("rope_style", "half") == "half":
        emb_cos, emb_sin = torch.cat([cos, cos], -1), torch.cat([sin, sin], -1)
        x1, x2 = x[..., : dk // 2], x[..., dk // 2:]
        return x * emb_cos + torch.cat([-x2, x1], -1) * emb_sin
    xe, xo = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = xe * cos - xo * sin
    out[..., 1::2] = xe * sin + xo * cos
    return out


def forward(w, cfg, ids):
    st = {}
    V, D, H, Hk, dk = cfg["vocab_size"], cfg["hidden_size"], cfg["num_attention_heads"], \
        cfg["num_key_value_heads"], cfg["head_dim"]
    eps, off = cfg["rms_norm_eps"], cfg.get("rms_offset", False)
    L = len(ids)
    O = torch.zeros(L, V)
    O[torch.arange(L), torch.tensor(ids)] = 1.0
    st["O"] = O
    x = w["embed"][torch.tensor(ids)]
    st["X"] = x
    st["Z"] = x
    mask = torch.triu(torch.ones(L, L, dtype=torch.bool), 1)
    for i in range(cfg["num_hidden_layers"]):
        p = f"l{i}."
        lw = w["layers"][i]
        st[p + "in"] = x
        h = rms_norm(x, lw["input_layernorm"], eps, off)
        st[p + "rms1"] = h
        q = h @ lw["q_proj"].T + (lw["q_bias"] if "q_bias" in lw else 0)
        k = h @ lw["k_proj"].T + (lw["k_bias"] if "k_bias" in lw else 0)
        v = h @ lw["v_proj"].T + (lw["v_bias"] if "v_bias" in lw else 0)
        q = q.view(L, H, dk)
        k = k.view(L, Hk, dk)
        if "q_norm" in lw:
            q = rms_norm(q, lw["q_norm"], eps, off)
            k = rms_norm(k, lw["k_norm"], eps, off)
        q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.view(L, Hk, dk).transpose(0, 1)
        st[p + "Q_norope"], st[p + "K_norope"] = q, k
        q, k = rope(q, cfg), rope(k, cfg)
        st[p + "Q"], st[p + "K"], st[p + "V"] = q, k, v
        g = H // Hk
        kr, vr = k.repeat_interleave(g, 0), v.repeat_interleave(g, 0)  # repeat_kv
        s = (q @ kr.transpose(1, 2)) * dk ** -0.5
        s = s.masked_fill(mask, float("-inf"))
        st[p + "S"] = s
        a = torch.softmax(s, dim=-1, dtype=torch.float32)
        st[p + "A"] = a
        av = a @ vr
        st[p + "AV"] = av
        cat = av.transpose(0, 1).reshape(L, H * dk)
        st[p + "concat"] = cat
        attn = cat @ lw["o_proj"].T
        st[p + "attn"] = attn
        res1 = x + attn
        st[p + "res1"] = res1
        h2 = rms_norm(res1, lw["post_attention_layernorm"], eps, off)
        st[p + "rms2"] = h2
        gate = h2 @ lw["gate_proj"].T
        up = h2 @ lw["up_proj"].T
        st[p + "gate"], st[p + "up"] = gate, up
        act = F.silu(gate) if cfg.get("hidden_act", "silu") == "silu" else F.gelu(gate, approximate="tanh")
        hid = act * up
        st[p + "ffn_hidden"] = hid
        ffn = hid @ lw["down_proj"].T
        st[p + "ffn"] = ffn
        x = res1 + ffn
        st[p + "res2"] = x
        st[p + "out"] = x
    fn = rms_norm(x, w["norm"], eps, off)
    st["final_norm"] = fn
    logits = fn @ w["lm_head"].T
    st["logits"] = logits
    st["pred"] = torch.softmax(logits, dim=-1)
    return st


# ---------------------------------------------------------------- weights
def rand(g, *shape, std=None):
    """Normal weights; a matrix [out, in] by default with std 1/√in (each product keeps the scale of
    its input, so that rounding is not amplified from layer to layer)."""
    if std is None:
        std = shape[-1] ** -0.5 if len(shape) == 2 else 0.3
    return torch.randn(*shape, generator=g) * std


def weights(cfg, seed, dtype):
    """Random weights under the hub's names, rounded to dtype; returns (hub list, forward dict)."""
    g = torch.Generator().manual_seed(seed)
    V, D, H, Hk, dk, Fd = cfg["vocab_size"], cfg["hidden_size"], cfg["num_attention_heads"], \
        cfg["num_key_value_heads"], cfg["head_dim"], cfg["intermediate_size"]
    hub = []

    def put(name, t):
        t = stored(t, dtype)
        hub.append((name, t))
        return t

    w = {"embed": put("model.embed_tokens.weight", rand(g, V, D, std=1.0)), "layers": []}
    gain = (lambda n: rand(g, n, std=0.2)) if cfg.get("rms_offset") else (lambda n: 1.0 + rand(g, n, std=0.2))
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        lw = {}
        lw["input_layernorm"] = put(p + "input_layernorm.weight", gain(D))
        lw["q_proj"] = put(p + "self_attn.q_proj.weight", rand(g, H * dk, D))
        lw["k_proj"] = put(p + "self_attn.k_proj.weight", rand(g, Hk * dk, D))
        lw["v_proj"] = put(p + "self_attn.v_proj.weight", rand(g, Hk * dk, D))
        if cfg.get("attention_bias_qkv"):
            lw["q_bias"] = put(p + "self_attn.q_proj.bias", rand(g, H * dk))
            lw["k_bias"] = put(p + "self_attn.k_proj.bias", rand(g, Hk * dk))
            lw["v_bias"] = put(p + "self_attn.v_proj.bias", rand(g, Hk * dk))
        if cfg.get("qk_norm"):
            lw["q_norm"] = put(p + "self_attn.q_norm.weight", gain(dk))
            lw["k_norm"] = put(p + "self_attn.k_norm.weight", gain(dk))
        lw["o_proj"] = put(p + "self_attn.o_proj.weight", rand(g, D, H * dk))
        lw["post_attention_layernorm"] = put(p + "post_attention_layernorm.weight", gain(D))
        lw["gate_proj"] = put(p + "mlp.gate_proj.weight", rand(g, Fd, D))
        lw["up_proj"] = put(p + "mlp.up_proj.weight", rand(g, Fd, D))
        lw["down_proj"] = put(p + "mlp.down_proj.weight", rand(g, D, Fd))
        w["layers"].append(lw)
    w["norm"] = put("model.norm.weight", gain(D))
    if cfg["tie_word_embeddings"]:
        w["lm_head"] = w["embed"]
    else:
        w["lm_head"] = put("lm_head.weight", rand(g, V, D))
    return hub, w


def canonical_names(hub, cfg):
    """The hub's tensors under model.h's canonical names (the canon-pairs fixture): q, k, v stacked
    into in_proj_weight, gate_proj -> gate.weight, up_proj -> linear1, down_proj -> linear2."""
    out, by = [], dict(hub)
    out.append(("embed.weight", by["model.embed_tokens.weight"]))
    for i in range(cfg["num_hidden_layers"]):
        p, c = f"model.layers.{i}.", f"layers.{i}."
        out.append((c + "norm1.weight", by[p + "input_layernorm.weight"]))
        out.append((c + "self_attn.in_proj_weight", torch.cat(
            [by[p + "self_attn." + n + "_proj.weight"] for n in "qkv"], 0)))
        if p + "self_attn.q_norm.weight" in by:
            out.append((c + "self_attn.q_norm.weight", by[p + "self_attn.q_norm.weight"]))
            out.append((c + "self_attn.k_norm.weight", by[p + "self_attn.k_norm.weight"]))
        out.append((c + "self_attn.out_proj.weight", by[p + "self_attn.o_proj.weight"]))
        out.append((c + "norm2.weight", by[p + "post_attention_layernorm.weight"]))
        out.append((c + "gate.weight", by[p + "mlp.gate_proj.weight"]))
        out.append((c + "linear1.weight", by[p + "mlp.up_proj.weight"]))
        out.append((c + "linear2.weight", by[p + "mlp.down_proj.weight"]))
    out.append(("norm.weight", by["model.norm.weight"]))
    if "lm_head.weight" in by:
        out.append(("head.weight", by["lm_head.weight"]))
    return out


# ---------------------------------------------------------------- files
def tokenizer_json(vocab, merges):
    return {
        "version": "1.0",
        "added_tokens": [{"id": vocab["<|endoftext|>"], "content": "<|endoftext|>", "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "vocab": vocab, "merges": [a + " " + b for a, b in merges]},
    }


def save_npy(path, t):
    np.save(path, np.ascontiguousarray(t.detach().numpy().astype("<f4")))


def variant(name, cfg, dtype, seed, shards=1, canonical=False):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    for f in os.listdir(folder):
        if os.path.isfile(os.path.join(folder, f)):
            os.remove(os.path.join(folder, f))
    vocab, merges, ranks = make_bpe()
    hub, w = weights(cfg, seed, dtype)
    if canonical:
        meta = {"format": "pt", "d_model": str(cfg["hidden_size"]), "n_heads": str(cfg["num_attention_heads"]),
                "n_kv_heads": str(cfg["num_key_value_heads"]), "d_ff": str(cfg["intermediate_size"]),
                "n_layers": str(cfg["num_hidden_layers"]), "norm_first": "1", "causal": "1",
                "norm": "rmsnorm", "rms_offset": "1" if cfg.get("rms_offset") else "0",
                "layer_norm_eps": repr(cfg["rms_norm_eps"]), "pos_encoding": "rope",
                "rope_theta": repr(cfg["rope_theta"]), "rope_style": cfg["rope_style"], "ffn": "gated",
                "activation": "silu" if cfg["hidden_act"] == "silu" else "gelu_tanh",
                "tie_head": "1" if cfg["tie_word_embeddings"] else "0", "tokenizer": "words",
                "vocab": "\n".join(["<unk>"] + [f"w{i}" for i in range(1, cfg["vocab_size"])])}
        write_canonical(os.path.join(OUT, name + ".safetensors"), canonical_names(hub, cfg), dtype, meta)
    else:
        hub_cfg = {k: v for k, v in cfg.items() if k not in ("attention_bias_qkv", "qk_norm")}
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(hub_cfg, f, indent=2)
        with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tokenizer_json(vocab, merges), f, ensure_ascii=False)
        if shards == 1:
            write_safetensors(os.path.join(folder, "model.safetensors"), [(n, t.numpy(), dtype) for n, t in hub])
        else:
            per = (len(hub) + shards - 1) // shards
            wmap = {}
            for s in range(shards):
                fn = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
                part = hub[s * per:(s + 1) * per]
                write_safetensors(os.path.join(folder, fn), [(n, t.numpy(), dtype) for n, t in part])
                wmap.update({n: fn for n, _ in part})
            with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
                json.dump({"metadata": {"total_size": 0}, "weight_map": wmap}, f, indent=2)
    cases = []
    inv = {i: t for t, i in vocab.items()}
    for si, text in enumerate(SENTENCES):
        ids = bpe_encode(text, vocab, ranks)
        sd = os.path.join(folder, f"s{si}")
        os.makedirs(sd, exist_ok=True)
        st = forward(w, cfg, ids)
        for k, t in st.items():
            save_npy(os.path.join(sd, k + ".npy"), t)
        with open(os.path.join(sd, "ids.txt"), "w") as f:
            f.write(" ".join(map(str, ids)) + "\n")
        with open(os.path.join(sd, "tokens.txt"), "w", encoding="utf-8") as f:
            f.write("".join(bpe_label(inv[i]) + "\n" for i in ids))
        with open(os.path.join(sd, "text.txt"), "w", encoding="utf-8") as f:
            f.write(text + "\n")
        cases.append((name, " ".join(map(str, ids))))
    return cases


def write_canonical(path, tensors, dtype, meta):
    write_safetensors(path, [(n, t.numpy(), dtype) for n, t in tensors])
    # write_safetensors puts {"format": "pt"} as metadata: rewrite the header with ours
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    header["__metadata__"] = meta
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(path, "wb") as f:
        f.write(len(hj).to_bytes(8, "little") + hj + data[8 + n:])


def base(model_type, arch, D, H, Hk, Fd, layers, V, **kw):
    c = {"architectures": [arch], "model_type": model_type, "hidden_size": D, "num_attention_heads": H,
         "num_key_value_heads": Hk, "intermediate_size": Fd, "num_hidden_layers": layers,
         "vocab_size": V, "head_dim": D // H, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
         "hidden_act": "silu", "tie_word_embeddings": False, "max_position_embeddings": 128,
         "torch_dtype": "float32"}
    c.update(kw)
    return c


def main():
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    cases = []
    V = len(make_bpe()[0])
    cases += variant("llama-gqa2", base("llama", "LlamaForCausalLM", 32, 4, 2, 64, 2, V,
                                        rms_norm_eps=1e-5, attention_bias=False, mlp_bias=False), "F32", 1)
    cases += variant("llama3-bf16", base("llama", "LlamaForCausalLM", 32, 4, 4, 48, 2, V, rope_theta=500000.0,
                                         tie_word_embeddings=True, torch_dtype="bfloat16",
                                         rope_scaling={"factor": 8.0, "low_freq_factor": 1.0,
                                                       "high_freq_factor": 4.0,
                                                       "original_max_position_embeddings": 256,
                                                       "rope_type": "llama3"}), "BF16", 2)
    cases += variant("qwen3-sharded", base("qwen3", "Qwen3ForCausalLM", 32, 4, 1, 64, 2, V + 12, head_dim=16,
                                           rope_theta=1000000.0, tie_word_embeddings=True, qk_norm=True,
                                           attention_bias=False), "F32", 3, shards=2)
    cases += variant("qwen2-f16", base("qwen2", "Qwen2ForCausalLM", 48, 6, 2, 64, 3, V, torch_dtype="float16",
                                       attention_bias_qkv=True), "F16", 4)
    cases += variant("canon-pairs", base("llama", "LlamaForCausalLM", 16, 2, 1, 32, 1, V, rope_style="pairs",
                                         rms_offset=True, hidden_act="gelu_pytorch_tanh",
                                         tie_word_embeddings=True), "F32", 5, canonical=True)
    with open(os.path.join(OUT, "cases.txt"), "w", encoding="utf-8") as f:
        f.write("# folder TAB ids: written by tests/gen_llama_ref.py; sN/ holds sentence N's stages\n")
        f.write("".join(f"{n}\t{s}\n" for n, s in cases))
    print(json.dumps({"cases": len(cases), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
