#!/usr/bin/env python3
"""Opening a large model: time and peak memory against the file's size (BENCHMARKS.md, issues 34-35).

    /usr/bin/python3 scripts/bench_open.py write DIR [SHAPE...]        # SHAPE: smollm2-135m llama-1b
    /usr/bin/python3 scripts/bench_open.py time DIR RUNS NAME...       # NAME: a folder or file in DIR

`write` makes, for each shape, random weights (seed 35, one generator per tensor, N(0, 0.02²) for
the matrices, ones for the norms) in every layout Stepformer opens, each written tensor by tensor
(the 1B's 5 GB never sit in memory at once):
  SHAPE-f32/    a Hugging Face folder as downloaded: config.json (the model's own), tokenizer.json
                (a byte-level BPE of the model's vocabulary size: 256 bytes and made-up words, no
                merges), model.safetensors in F32 -- sharded for the 1B (model-0000k-of-0000n
                .safetensors of at most 2 GB and model.safetensors.index.json, as save_pretrained
                writes them)
  SHAPE-bf16/   the same in BF16 (rounded to nearest even), sharded for the 1B as well
  SHAPE-q8_0.gguf    llama.cpp's names and keys (tests/gguf_py.py's encoding), Q and K rows permuted
                     as llama.cpp's converter does, every matrix Q8_0 as quantize_row_q8_0_ref makes
                     it (gguf_py.q8_0, vectorized and exact), norms F32, the same byte-level vocabulary
  SHAPE-q4_k.gguf    every matrix Q4_K (a matrix whose rows are not a multiple of 256, SmolLM2's of
                     576, in Q5_0 or Q8_0 instead of Q4_K or Q6_K, as llama-quantize falls back)
  SHAPE-q4_k_m.gguf  llama.cpp's Q4_K_M mix: Q6_K for token_embd and for attn_v and ffn_down of the
                     layers llama.cpp's use_more_bits picks (the first and last eighth, every third
                     between), Q4_K for the rest
Q4_K and Q6_K here come from a vectorized quantizer (below): ggml's first estimate of each
sub-block's scale and minimum (make_qkx2_quants / make_qx_quants before their search for a better
scale), then quantize_row_q4_K_ref's / q6_K_ref's packing of the 6- and 8-bit sub-block scales and
the codes, exactly. The project's exact quantizers (gguf_py.q4_k, q6_k) run in Python loops: right
for the test fixtures, hours for a billion weights. The files are valid k-quant files either way;
only the rounding of some codes differs from llama-quantize's.

`time` runs `build/stepformer info --model DIR/NAME` RUNS times per name under /usr/bin/time -v
(NAME may be BINARY=NAME: another build's stepformer on the same file, for a before/after),
the names alternated round by round, and prints each run's wall time, user and system time and peak
RSS, then the medians. Run it under /work/bin/sf-quiet on a shared machine.
"""
import json
import os
import statistics
import struct
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import gguf_py as g  # noqa: E402

F = np.float32
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

SHAPES = {
    "smollm2-135m": dict(L=30, D=576, H=9, Hk=3, F=1536, V=49152, theta=100000.0, pre="smollm", shards=0,
                         maxpos=8192, scaling=None, eps=1e-5),
    "llama-1b": dict(L=16, D=2048, H=32, Hk=8, F=8192, V=128256, theta=500000.0, pre="llama-bpe", shards=2 << 30,
                     maxpos=131072, eps=1e-5,
                     scaling={"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                              "original_max_position_embeddings": 8192, "rope_type": "llama3"}),
}


def byte_alphabet():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b), cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def vocab(V):
    return byte_alphabet() + [f"t{i}" for i in range(V - 256)]


def tensors(s):
    """(hub name, gguf name, shape, kind) in the hub's order; kind: 'mat', 'norm', 'q', 'k'."""
    D, Fd, dk = s["D"], s["F"], s["D"] // s["H"]
    out = [("model.embed_tokens.weight", "token_embd.weight", (s["V"], D), "mat")]
    for i in range(s["L"]):
        p, q = f"model.layers.{i}.", f"blk.{i}."
        out += [(p + "input_layernorm.weight", q + "attn_norm.weight", (D,), "norm"),
                (p + "self_attn.q_proj.weight", q + "attn_q.weight", (s["H"] * dk, D), "q"),
                (p + "self_attn.k_proj.weight", q + "attn_k.weight", (s["Hk"] * dk, D), "k"),
                (p + "self_attn.v_proj.weight", q + "attn_v.weight", (s["Hk"] * dk, D), "mat"),
                (p + "self_attn.o_proj.weight", q + "attn_output.weight", (D, s["H"] * dk), "mat"),
                (p + "post_attention_layernorm.weight", q + "ffn_norm.weight", (D,), "norm"),
                (p + "mlp.gate_proj.weight", q + "ffn_gate.weight", (Fd, D), "mat"),
                (p + "mlp.up_proj.weight", q + "ffn_up.weight", (Fd, D), "mat"),
                (p + "mlp.down_proj.weight", q + "ffn_down.weight", (D, Fd), "mat")]
    out.append(("model.norm.weight", "output_norm.weight", (D,), "norm"))
    if s["scaling"]:  # llama.cpp's converter writes Llama 3's rope_scaling as this tensor, no keys
        out.insert(0, (None, "rope_freqs.weight", (dk // 2,), "rope"))
    return out


def rope_freqs(s):
    """convert_hf_to_gguf.py's LlamaModel rope_freqs: each frequency's divisor under rope_scaling."""
    sc, dk = s["scaling"], s["D"] // s["H"]
    freqs = 1.0 / (s["theta"] ** (np.arange(0, dk, 2, dtype=F) / F(dk)))
    lo, hi, old = sc["low_freq_factor"], sc["high_freq_factor"], sc["original_max_position_embeddings"]
    out = []
    for fr in freqs:
        wl = 2 * np.pi / fr
        if wl < old / hi:
            out.append(1.0)
        elif wl > old / lo:
            out.append(sc["factor"])
        else:
            sm = (old / wl - lo) / (hi - lo)
            out.append(1 / ((1 - sm) / sc["factor"] + sm))
    return np.array(out, F)


def values(idx, shape, kind, s):
    if kind == "rope":
        return rope_freqs(s)
    if kind == "norm":
        return np.ones(shape, F)
    rng = np.random.default_rng([35, idx])
    return rng.standard_normal(shape, dtype=F) * F(0.02)


def permute(w, heads):
    """llama.cpp's convert_hf_to_gguf LlamaModel.permute: rows of each head in pairs (2j, 2j+1)."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


# ---------------------------------------------------------------- vectorized k-quants

def nearest(v):
    """ggml's nearest_int, vectorized: the float32 sum with 1.5·2^23, whose low bits are the value."""
    return ((np.asarray(v, F) + F(12582912.0)).view(np.int32) & 0x007FFFFF) - 0x00400000


def f16(v):
    return np.asarray(v, F).astype("<f2")


def q4_k_fast(x):
    """Q4_K blocks of x (a multiple of 256 floats): first-estimate scales, exact packing."""
    b = x.reshape(-1, 8, 32)
    mn = np.minimum(b.min(axis=2), F(0))
    mx = b.max(axis=2)
    rng_ = (mx - mn).astype(F)
    scale = np.where(rng_ > 0, rng_ / F(15), F(0)).astype(F)  # the sub-block's scale, and -min
    mins = (-mn).astype(F)
    max_scale, max_min = scale.max(axis=1), mins.max(axis=1)
    inv_s = np.where(max_scale > 0, F(63) / np.where(max_scale > 0, max_scale, F(1)), F(0)).astype(F)
    inv_m = np.where(max_min > 0, F(63) / np.where(max_min > 0, max_min, F(1)), F(0)).astype(F)
    ls = np.minimum(63, nearest(inv_s[:, None] * scale) & 0xFF).astype(np.uint8)
    lm = np.minimum(63, nearest(inv_m[:, None] * mins) & 0xFF).astype(np.uint8)
    dh, mh = f16(max_scale / F(63)), f16(max_min / F(63))
    d = (dh.astype(F)[:, None] * ls.astype(F)).astype(F)
    dm = (mh.astype(F)[:, None] * lm.astype(F)).astype(F)
    safe = np.where(d != 0, d, F(1))
    L = np.clip(nearest((b + dm[:, :, None]) / safe[:, :, None]), 0, 15)
    L = np.where(d[:, :, None] != 0, L, 0).astype(np.uint8).reshape(-1, 4, 2, 32)
    qs = (L[:, :, 0, :] | (L[:, :, 1, :] << 4)).reshape(-1, 128)
    sc = np.zeros((b.shape[0], 12), np.uint8)  # _pack_scales_k4, vectorized
    sc[:, 0:4], sc[:, 4:8] = ls[:, 0:4], lm[:, 0:4]
    sc[:, 8:12] = (ls[:, 4:8] & 0xF) | ((lm[:, 4:8] & 0xF) << 4)
    sc[:, 0:4] |= (ls[:, 4:8] >> 4) << 6
    sc[:, 4:8] |= (lm[:, 4:8] >> 4) << 6
    out = np.empty((b.shape[0], 144), np.uint8)
    out[:, 0:2], out[:, 2:4] = dh.view(np.uint8).reshape(-1, 2), mh.view(np.uint8).reshape(-1, 2)
    out[:, 4:16], out[:, 16:] = sc, qs
    return out.tobytes()


def q6_k_fast(x):
    """Q6_K blocks of x: each 16's scale -max/32 (make_qx_quants' first estimate), exact packing."""
    b = x.reshape(-1, 16, 16)
    idx = np.abs(b).argmax(axis=2)
    mx = np.take_along_axis(b, idx[:, :, None], axis=2)[:, :, 0]  # the signed value of largest magnitude
    scales = np.where(mx != 0, mx / F(-32), F(0)).astype(F)
    sidx = np.abs(scales).argmax(axis=1)
    max_scale = np.take_along_axis(scales, sidx[:, None], axis=1)[:, 0]
    ok = np.abs(max_scale) >= F(1e-15)
    iscale = np.where(ok, F(-128) / np.where(ok, max_scale, F(1)), F(0)).astype(F)
    dh = f16(np.where(ok, F(1) / np.where(ok, iscale, F(1)), F(0)))
    sc8 = np.minimum(127, nearest(iscale[:, None] * scales)).astype(np.int8)
    d = (dh.astype(F)[:, None] * sc8.astype(F)).astype(F)
    safe = np.where(d != 0, d, F(1))
    L = np.clip(nearest(b / safe[:, :, None]), -32, 31) + 32
    L = np.where(d[:, :, None] != 0, L, 0).astype(np.uint8).reshape(-1, 2, 4, 32)  # [nb, half, q1..q4, l]
    ql = np.concatenate([L[:, :, 0] & 0xF | ((L[:, :, 2] & 0xF) << 4), L[:, :, 1] & 0xF | ((L[:, :, 3] & 0xF) << 4)],
                        axis=2).reshape(-1, 128)
    qh = ((L[:, :, 0] >> 4) | ((L[:, :, 1] >> 4) << 2) | ((L[:, :, 2] >> 4) << 4) | ((L[:, :, 3] >> 4) << 6))
    out = np.empty((b.shape[0], 210), np.uint8)
    out[:, :128], out[:, 128:192] = ql, qh.reshape(-1, 64)
    out[:, 192:208] = sc8.view(np.uint8)
    out[:, 208:210] = dh.view(np.uint8).reshape(-1, 2)
    out[~ok] = 0
    return out.tobytes()


def q5_0_fast(x):
    """quantize_row_q5_0_ref, vectorized (the fallback of Q4_K for rows not a multiple of 256)."""
    b = x.reshape(-1, 32)
    idx = np.abs(b).argmax(axis=1)  # the first of the largest magnitude, signed
    mx = np.take_along_axis(b, idx[:, None], axis=1)[:, 0]
    d = (mx / F(-16)).astype(F)
    id_ = np.where(d != 0, F(1) / np.where(d != 0, d, F(1)), F(0)).astype(F)
    xi = np.minimum(31, np.trunc((b * id_[:, None]).astype(F) + F(16.5)).astype(np.int32)).astype(np.uint32)
    qs = ((xi[:, :16] & 0xF) | ((xi[:, 16:] & 0xF) << 4)).astype(np.uint8)
    j = np.arange(16, dtype=np.uint32)
    qh = ((((xi[:, :16] & 0x10) >> 4) << j) | (((xi[:, 16:] & 0x10) >> 4) << (j + 16))).sum(axis=1, dtype=np.uint32)
    out = np.empty((b.shape[0], 22), np.uint8)
    out[:, 0:2] = f16(d).view(np.uint8).reshape(-1, 2)
    out[:, 2:6] = qh.astype("<u4").view(np.uint8).reshape(-1, 4)
    out[:, 6:] = qs
    return out.tobytes()


def quant(x, t):
    x = np.ascontiguousarray(x, F).ravel()
    step = 1 << 22  # a multiple of every block size: the temporaries stay small
    fn = {"F32": lambda a: a.astype("<f4").tobytes(), "Q8_0": g.q8_0, "Q4_K": q4_k_fast, "Q6_K": q6_k_fast,
          "Q5_0": q5_0_fast}[t]
    return b"".join(fn(x[i:i + step]) for i in range(0, x.size, step))


# ---------------------------------------------------------------- writers

class Safetensors:
    """Files of at most `shard` bytes (0: one model.safetensors), written as save_pretrained does."""

    def __init__(self, folder, items, dtype, shard):
        self.folder, self.dtype = folder, dtype
        size = 4 if dtype == "F32" else 2
        groups, cur, cur_b = [], [], 0
        for name, _, shape, _ in items:
            if not name:
                continue
            nb = int(np.prod(shape)) * size
            if shard and cur and cur_b + nb > shard:
                groups.append(cur)
                cur, cur_b = [], 0
            cur.append((name, shape, nb))
            cur_b += nb
        groups.append(cur)
        self.files, self.where, wmap, total = [], {}, {}, 0
        for k, grp in enumerate(groups):
            fn = "model.safetensors" if len(groups) == 1 else f"model-{k + 1:05d}-of-{len(groups):05d}.safetensors"
            header, off = {"__metadata__": {"format": "pt"}}, 0
            for name, shape, nb in grp:
                header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + nb]}
                off += nb
                wmap[name] = fn
                self.where[name] = k
            total += off
            hj = json.dumps(header, separators=(",", ":")).encode()
            hj += b" " * ((8 - len(hj) % 8) % 8)
            f = open(os.path.join(folder, fn), "wb")
            f.write(struct.pack("<Q", len(hj)) + hj)
            self.files.append(f)
        if len(groups) > 1:
            with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
                json.dump({"metadata": {"total_size": total}, "weight_map": wmap}, f, indent=2)

    def put(self, name, x):
        f = self.files[self.where[name]]
        x = np.ascontiguousarray(x, F).ravel()
        step = 1 << 24
        for i in range(0, x.size, step):
            c = x[i:i + step]
            f.write(c.astype("<f4").tobytes() if self.dtype == "F32" else g.bf16_bits(c).astype("<u2").tobytes())

    def close(self):
        for f in self.files:
            f.close()


class Gguf:
    """A GGUF file written tensor by tensor: the header (with every offset) first, then the data."""

    def __init__(self, path, s, items, types):
        self.f, self.align = open(path, "wb"), 32
        arch = "llama"
        kvs = [("general.architecture", g.STRING, arch), ("general.quantization_version", g.U32, 2)]
        for k, t, v in [("block_count", g.U32, s["L"]), ("context_length", g.U32, s["maxpos"]),
                        ("embedding_length", g.U32, s["D"]), ("feed_forward_length", g.U32, s["F"]),
                        ("attention.head_count", g.U32, s["H"]), ("attention.head_count_kv", g.U32, s["Hk"]),
                        ("rope.freq_base", g.F32, s["theta"]),
                        ("attention.layer_norm_rms_epsilon", g.F32, s["eps"])]:
            kvs.append((arch + "." + k, t, v))
        kvs += [("tokenizer.ggml.model", g.STRING, "gpt2"), ("tokenizer.ggml.pre", g.STRING, s["pre"]),
                ("tokenizer.ggml.tokens", g.ARRAY, (g.STRING, vocab(s["V"]))),
                ("tokenizer.ggml.merges", g.ARRAY, (g.STRING, []))]
        out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(items), len(kvs)))
        for key, vt, v in kvs:
            out += g.gguf_string(key) + struct.pack("<I", vt) + g.encode_value(vt, v)
        off, self.offsets = 0, {}
        for (_, gname, shape, _), t in zip(items, types):
            _, block, size = g.TYPES[t]
            nb = int(np.prod(shape)) // block * size
            out += g.gguf_string(gname) + struct.pack("<I", len(shape)) + b"".join(
                struct.pack("<Q", d) for d in shape[::-1])
            out += struct.pack("<IQ", g.TYPES[t][0], off)
            self.offsets[gname] = (off, t)
            off += nb + (self.align - nb % self.align) % self.align
        out += b"\0" * ((self.align - len(out) % self.align) % self.align)
        self.f.write(out)
        self.base, self.pos = len(out), 0

    def put(self, gname, x):
        off, t = self.offsets[gname]
        self.f.write(b"\0" * (off - self.pos))
        data = quant(x, t)
        self.f.write(data)
        self.pos = off + len(data)

    def close(self):
        self.f.close()


def use_more_bits(i, n):
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def gguf_types(items, s, kind):
    out = []
    for hub, gname, shape, k in items:
        if k in ("norm", "rope"):
            out.append("F32")
        elif kind == "q8_0":
            out.append("Q8_0")
        elif kind == "q4_k":
            out.append("Q4_K")
        else:  # q4_k_m
            layer = int(gname.split(".")[1]) if gname.startswith("blk.") else -1
            more = gname == "token_embd.weight" or (
                (gname.endswith("attn_v.weight") or gname.endswith("ffn_down.weight")) and use_more_bits(layer, s["L"]))
            out.append("Q6_K" if more else "Q4_K")
        if shape[-1] % 256 and out[-1] in ("Q4_K", "Q6_K"):  # llama-quantize's fallback for such rows
            out[-1] = {"Q4_K": "Q5_0", "Q6_K": "Q8_0"}[out[-1]]
    return out


def config(s):
    c = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": s["D"],
         "intermediate_size": s["F"], "num_attention_heads": s["H"], "num_key_value_heads": s["Hk"],
         "num_hidden_layers": s["L"], "head_dim": s["D"] // s["H"], "vocab_size": s["V"], "rms_norm_eps": s["eps"],
         "rope_theta": s["theta"], "tie_word_embeddings": True, "max_position_embeddings": s["maxpos"],
         "hidden_act": "silu", "attention_bias": False, "mlp_bias": False, "torch_dtype": "float32"}
    if s["scaling"]:
        c["rope_scaling"] = s["scaling"]
    return c


def tokenizer_json(V):
    v = vocab(V)
    return {"version": "1.0", "added_tokens": [], "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
            "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "vocab": {w: i for i, w in enumerate(v)}, "merges": []}}


def write(out, name):
    s = SHAPES[name]
    items = tensors(s)
    hubs = []
    for dt in ("F32", "BF16"):
        folder = os.path.join(out, f"{name}-{dt.lower()}")
        os.makedirs(folder, exist_ok=True)
        c = config(s)
        c["torch_dtype"] = "float32" if dt == "F32" else "bfloat16"
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(c, f, indent=2)
        with open(os.path.join(folder, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tokenizer_json(s["V"]), f, ensure_ascii=False)
        shard = s["shards"] if dt == "F32" else s["shards"] // 2
        hubs.append(Safetensors(folder, items, dt, shard))
    ggufs = [Gguf(os.path.join(out, f"{name}-{k}.gguf"), s, items, gguf_types(items, s, k))
             for k in ("q8_0", "q4_k", "q4_k_m")]
    dk = s["D"] // s["H"]
    t0 = time.time()
    for idx, (hub, gname, shape, kind) in enumerate(items):
        x = values(idx, shape, kind, s)
        for h in hubs:
            if hub:
                h.put(hub, x)
        if kind in ("q", "k"):
            x = permute(x, s["H"] if kind == "q" else s["Hk"])
        for w in ggufs:
            w.put(gname, x)
    for w in hubs + ggufs:
        w.close()
    print(f"{name}: written in {time.time() - t0:.0f} s")


def median(v):
    return statistics.median(v)


def time_runs(out, runs, names):
    """names: files or folders of out, each optionally BINARY=NAME (another build's stepformer)."""
    res = {n: [] for n in names}
    for r in range(runs):
        for n in names:
            sf, _, base = n.rpartition("=")
            sf = sf or os.path.join(ROOT, "build", "stepformer")
            p = os.path.join(out, base)
            env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
            q = subprocess.run(["/usr/bin/time", "-v", sf, "info", "--model", p], capture_output=True, text=True,
                               env=env)
            if q.returncode:
                print(n, "failed:", q.stderr.strip().splitlines()[:2])
                continue
            e = q.stderr.splitlines()
            get = lambda key: [l for l in e if key in l][0].split()[-1]
            wall = get("Elapsed (wall clock)")
            mm, ss = wall.split(":")[-2:]
            res[n].append((float(mm) * 60 + float(ss), float(get("User time")), float(get("System time")),
                           int(get("Maximum resident")) / 1024))
            print(f"  {n} run {r + 1}: wall {res[n][-1][0]:.2f} s user {res[n][-1][1]:.2f} s sys {res[n][-1][2]:.2f} s "
                  f"peak RSS {res[n][-1][3]:.0f} MiB", flush=True)
    for n in names:
        p = os.path.join(out, n.rpartition("=")[2])
        size = sum(os.path.getsize(os.path.join(p, f)) for f in os.listdir(p) if f.endswith(".safetensors")) \
            if os.path.isdir(p) else os.path.getsize(p)
        if res[n]:
            w, u, s_, m = (median([x[i] for x in res[n]]) for i in range(4))
            print(f"| {n} | {size / 1e6:.0f} MB | {w:.2f} s | {u:.2f} s | {s_:.2f} s | {m:.0f} MiB ({m * 1048576 / size:.2f}x) |")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "write":
        os.makedirs(sys.argv[2], exist_ok=True)
        for name in sys.argv[3:] or list(SHAPES):
            write(sys.argv[2], name)
    elif len(sys.argv) >= 5 and sys.argv[1] == "time":
        time_runs(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
