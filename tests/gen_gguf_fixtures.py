#!/usr/bin/env python3
"""Writes the GGUF reader's fixtures into tests/ref/gguf/ (numpy only; run once by hand):

    /usr/bin/python3 tests/gen_gguf_fixtures.py

types.gguf (version 3, alignment 32 by default): for every type T the reader dequantizes
(F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q4_K Q5_K Q6_K) a tensor "q.T" of PyTorch shape [2, 256]
quantized by tests/gguf_py.py (ggml's quantize_row_*_ref), and for the quantized types "r.T": random
block bytes (finite scales); beside each, "x.q.T" / "x.r.T" (F32): the values gguf_py's
dequantizer (ggml's dequantize_row_*) computes from those bytes. The C dequantizer must equal them
bit for bit. Metadata of every value type, arrays, an array of strings and nested arrays, with the
values test_gguf checks.
v2-align64.gguf: version 2, general.alignment 64, a [3, 2, 32] Q8_0 tensor and a 1-D F16 one.
gpt2-tiny-f32.gguf, gpt2-tiny-f16.gguf: tests/ref/hub's GPT-2 folders (gpt2-tiny, gpt2-tiny-f16) as
llama.cpp's convert_hf_to_gguf.py writes them (its names, the Conv1D weights transposed into
nn.Linear's [out, in], gpt2.* keys, tokenizer.ggml.* from vocab.json and merges.txt; F16 for the
2-D tensors, F32 for the 1-D ones; the F16 file keeps an output.weight equal to token_embd, as
older converters wrote it). gpt2-tiny-q8.gguf: gpt2-tiny with blk.0.ffn_down in Q8_0 and
blk.1.ffn_down in Q4_0 (the only matrices whose rows hold 32 or more weights at D = 16).
llama-gqa2.gguf, qwen2-f16.gguf, qwen3-sharded.gguf, llama3-bf16.gguf: tests/ref/llama's folders (tests/gen_llama_ref.py)
as llama.cpp's converter writes them: llama.cpp's names (token_embd, blk.{i}.attn_q|k|v|output,
attn_q|k_norm, ffn_gate|up|down, attn_norm, ffn_norm, output_norm, output), Llama's Q and K rows
permuted as its LlamaModel.permute does (for the pairwise RoPE; Qwen's are not), the {arch}.* keys,
tokenizer.ggml.* from tokenizer.json (pre-tokenizer "gpt-2": the fixtures' ByteLevel), the weights
in the type they are stored in (F32, F16, BF16; 1-D ones F32); Llama 3's rope_scaling as the
converter writes it, a rope_freqs.weight tensor of each frequency's divisor. llama-gqa2-q8_0.gguf: llama-gqa2
with every matrix in Q8_0. llama-wide-f16.gguf, llama-wide-q4_k_m.gguf (+ .npy), llama-wide-q4_0-swapped.gguf:
see llama_wide.
bad/NAME.gguf: files that lie (listed in bad/cases.txt with a piece of the one-line message each
must give); the command line must exit 2 on each.
"""
import os
import struct

import numpy as np

import gguf_py as g

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ref", "gguf")
READ = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"]
F = np.float32


def random_blocks(rng, type_name, nblocks):
    """Random bytes for nblocks blocks, the f16 scale fields set to finite values."""
    _, block, size = g.TYPES[type_name]
    b = rng.integers(0, 256, size=(nblocks, size), dtype=np.uint8)
    halves = {"Q8_0": [0], "Q4_0": [0], "Q5_0": [0], "Q4_1": [0, 2], "Q5_1": [0, 2], "Q4_K": [0, 2],
              "Q5_K": [0, 2], "Q6_K": [208]}[type_name]
    for i in range(nblocks):
        for o in halves:
            h = np.float16(rng.normal() * 0.05).view(np.uint16)
            b[i, o], b[i, o + 1] = h & 0xFF, h >> 8
    return b.tobytes()


def data(rng):
    x = (rng.normal(size=(2, 256)) * 0.1).astype(F)
    x[0, 32:64] = 0  # a sub-block of zeros
    x[1, 100] = 1.5  # an outlier
    x[1, 200:232] = np.abs(x[1, 200:232]) + 0.05  # all positive: min > 0
    return x


def types_file(rng):
    w = g.Writer(arch="test")
    w.kv("general.name", g.STRING, "Stepformer GGUF types fixture")
    w.kv("t.u8", g.U8, 200)
    w.kv("t.i8", g.I8, -100)
    w.kv("t.u16", g.U16, 60000)
    w.kv("t.i16", g.I16, -30000)
    w.kv("t.u32", g.U32, 4000000000)
    w.kv("t.i32", g.I32, -2000000000)
    w.kv("t.f32", g.F32, 0.5)
    w.kv("t.bool", g.BOOL, True)
    w.kv("t.str", g.STRING, "héllo")
    w.kv("t.u64", g.U64, 2**60)
    w.kv("t.i64", g.I64, -(2**40))
    w.kv("t.f64", g.F64, 0.1)
    w.kv("t.arr_i32", g.ARRAY, (g.I32, [1, -2, 3]))
    w.kv("t.arr_str", g.ARRAY, (g.STRING, ["a", "", "ccc"]))
    w.kv("t.arr_nested", g.ARRAY, (g.ARRAY, [(g.U8, [1, 2]), (g.STRING, ["x"]), (g.ARRAY, [(g.F32, [1.0])])]))
    w.kv("t.arr_empty", g.ARRAY, (g.F64, []))
    x = data(rng)
    for t in READ:
        raw = g.quantize(x.ravel(), t)
        w.tensor("q." + t, x, t, raw=raw)
        w.tensor("x.q." + t, g.dequantize(raw, t, x.size).reshape(x.shape), "F32")
        if g.TYPES[t][1] > 1:
            rb = random_blocks(rng, t, 512 // g.TYPES[t][1])
            w.tensor("r." + t, x, t, raw=rb)
            w.tensor("x.r." + t, g.dequantize(rb, t, 512).reshape(x.shape), "F32")
    w.write(os.path.join(OUT, "types.gguf"))


def v2_file(rng):
    w = g.Writer(arch="test", version=2, alignment=64)
    a = (rng.normal(size=(3, 2, 32)) * 0.1).astype(F)
    raw = g.quantize(a.ravel(), "Q8_0")
    w.tensor("a", a, "Q8_0", raw=raw)
    w.tensor("x.a", g.dequantize(raw, "Q8_0", a.size).reshape(a.shape), "F32")
    b = np.arange(5, dtype=F) - 2
    w.tensor("b", b, "F16")
    w.write(os.path.join(OUT, "v2-align64.gguf"))


def header(version=3, n_t=0, n_kv=0):
    return b"GGUF" + struct.pack("<IQQ", version, n_t, n_kv)


def kv(key, vtype, value):
    return g.gguf_string(key) + struct.pack("<I", vtype) + g.encode_value(vtype, value)


def tinfo(name, ne, tid, offset):
    return g.gguf_string(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne) + struct.pack("<IQ", tid, offset)


def pad(b, a=32):
    return b + b"\0" * ((a - len(b) % a) % a)


def bad_files():
    d = os.path.join(OUT, "bad")
    os.makedirs(d, exist_ok=True)
    ok_kv = kv("general.architecture", g.STRING, "gpt2")
    cases = {
        "magic": (b"GGML" + bytes(20), "not a GGUF file"),
        "version1": (header(1) + bytes(8), "version 1"),
        "bigendian": (b"GGUF" + struct.pack(">IQQ", 3, 0, 0), "big-endian"),
        "truncated-header": (b"GGUF" + struct.pack("<I", 3) + bytes(4), "the tensor count at byte 8"),
        "lying-kv-count": (header(3, 0, 2**40) + ok_kv, "claims 0 tensors and 1099511627776 metadata keys"),
        "lying-tensor-count": (header(3, 2**62, 1) + ok_kv, "claims 4611686018427387904 tensors"),
        "lying-string": (header(3, 0, 1) + struct.pack("<Q", 2**50) + b"general", "metadata key 0 at byte 24 is 1125899906842624 bytes long"),
        "lying-array": (header(3, 0, 1) + g.gguf_string("a.b") + struct.pack("<IIQ", g.ARRAY, g.U32, 2**61) + bytes(8),
                        "claims 2305843009213693952 elements of uint32"),
        "unknown-value-type": (header(3, 0, 1) + g.gguf_string("a.b") + struct.pack("<I", 13) + bytes(8), "value type 13"),
        "bad-bool": (header(3, 0, 1) + g.gguf_string("a.b") + struct.pack("<IB", g.BOOL, 7), "bool of value 7"),
        "deep-array": (header(3, 0, 1) + g.gguf_string("a.b") + struct.pack("<I", g.ARRAY)
                       + b"".join(struct.pack("<IQ", g.ARRAY, 1) for _ in range(12)) + struct.pack("<IQ", g.U8, 0), "nests arrays"),
        "bad-alignment": (header(3, 0, 1) + kv("general.alignment", g.U32, 48), "general.alignment"),
        "unknown-tensor-type": (pad(header(3, 1, 1) + ok_kv + tinfo("w", [32], 4, 0)) + bytes(64), "type 4, which ggml does not define"),
        "unread-tensor-type": (pad(header(3, 1, 1) + ok_kv + tinfo("w", [256], 16, 0)) + bytes(256), "type IQ2_XXS"),
        "huge-dimension": (pad(header(3, 1, 1) + ok_kv + tinfo("w", [2**40, 2**40], 0, 0)) + bytes(64), "more than 2^63 elements"),
        "too-many-dims": (pad(header(3, 1, 1) + ok_kv + tinfo("w", [1, 1, 1, 1, 1], 0, 0)) + bytes(64), "5 dimensions"),
        "offset-past-end": (pad(header(3, 1, 1) + ok_kv + tinfo("w", [8], 0, 4096)) + bytes(32), "lies at bytes [4096, 4128)"),
        "size-past-end": (pad(header(3, 1, 1) + ok_kv + tinfo("w", [1000], 0, 0)) + bytes(32), "lies at bytes [0, 4000)"),
        "unaligned-offset": (pad(header(3, 1, 1) + ok_kv + tinfo("w", [4], 0, 4)) + bytes(64), "not a multiple of the alignment"),
        "partial-block": (pad(header(3, 1, 1) + ok_kv + tinfo("w", [48], 8, 0)) + bytes(64), "not a multiple of its block of 32"),
        "overlap": (pad(header(3, 2, 1) + ok_kv + tinfo("w", [16], 0, 0) + tinfo("v", [16], 0, 32)) + bytes(128), "overlap"),
        "duplicate-tensor": (pad(header(3, 2, 1) + ok_kv + tinfo("w", [8], 0, 0) + tinfo("w", [8], 0, 32)) + bytes(64), "tensor \"w\" is there twice"),
        "duplicate-key": (header(3, 0, 2) + ok_kv + ok_kv, "metadata key \"general.architecture\" is there twice"),
        "long-name": (pad(header(3, 1, 1) + ok_kv + tinfo("w" * 65, [8], 0, 0)) + bytes(32), "more than the 64 GGUF allows"),
        "data-past-end": (header(3, 1, 1) + ok_kv + tinfo("w", [8], 0, 0) + b"\0", "the tensor data should start at byte"),
    }
    with open(os.path.join(d, "cases.txt"), "w") as f:
        f.write("# file TAB a piece of the one-line message: written by tests/gen_gguf_fixtures.py\n")
        for name, (blob, msg) in cases.items():
            with open(os.path.join(d, name + ".gguf"), "wb") as b:
                b.write(blob)
            f.write(f"{name}.gguf\t{msg}\n")


DTYPES = {}
LLAMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ref", "llama")


def llama_permute(w, n_head):
    """llama.cpp's LlamaModel.permute: each head's rows from rotate-half order into adjacent pairs."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama_file(folder, out_name, quant=None, model=None, swap_tokens=None):
    """A tests/ref/llama folder as llama.cpp's converter writes it; quant: the 2-D weights' type, or a
    function of (gguf name, array) giving each one's; model: (config, tensors) instead of the folder's
    (its tokenizer.json is still the folder's); swap_tokens: (i, j), two token strings exchanged (a
    tokenizer that differs)."""
    import glob
    import json
    d = os.path.join(LLAMA, folder)
    cfg = json.load(open(os.path.join(d, "config.json")))
    st = {}
    for f in sorted(glob.glob(os.path.join(d, "*.safetensors"))):
        st.update(read_safetensors(f))
    if model:
        cfg, st = model
    tj = json.load(open(os.path.join(d, "tokenizer.json"), encoding="utf-8"))
    arch = cfg["model_type"]
    D, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    Hk = cfg.get("num_key_value_heads", H)
    dk = cfg.get("head_dim", D // H)
    w = g.Writer(arch=arch)
    w.kv("general.name", g.STRING, folder)
    w.kv(f"{arch}.block_count", g.U32, L)
    w.kv(f"{arch}.context_length", g.U32, cfg.get("max_position_embeddings", 128))
    w.kv(f"{arch}.embedding_length", g.U32, D)
    w.kv(f"{arch}.feed_forward_length", g.U32, cfg["intermediate_size"])
    w.kv(f"{arch}.attention.head_count", g.U32, H)
    w.kv(f"{arch}.attention.head_count_kv", g.U32, Hk)
    w.kv(f"{arch}.rope.freq_base", g.F32, cfg.get("rope_theta", 10000.0))
    w.kv(f"{arch}.attention.layer_norm_rms_epsilon", g.F32, cfg.get("rms_norm_eps", 1e-6))
    w.kv(f"{arch}.rope.dimension_count", g.U32, dk)
    if dk != D // H:
        w.kv(f"{arch}.attention.key_length", g.U32, dk)
        w.kv(f"{arch}.attention.value_length", g.U32, dk)
    if quant:
        w.kv("general.quantization_version", g.U32, 2)
    vocab = dict(tj["model"]["vocab"])
    added = {a["id"]: a["content"] for a in tj.get("added_tokens", [])}
    V = max(list(vocab.values()) + list(added) + [st["model.embed_tokens.weight"].shape[0] - 1]) + 1
    tokens, types = [""] * V, [1] * V
    for t, i in vocab.items():
        tokens[i] = t
    for i, t in added.items():
        tokens[i], types[i] = t, 3
    for i in range(V):  # rows beyond the tokenizer's: llama.cpp's converter names them [PAD{i}]
        if not tokens[i]:
            tokens[i], types[i] = f"[PAD{i}]", 5
    if swap_tokens:
        i, j = swap_tokens
        tokens[i], tokens[j] = tokens[j], tokens[i]
    merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
    w.kv("tokenizer.ggml.model", g.STRING, "gpt2")
    w.kv("tokenizer.ggml.pre", g.STRING, "gpt-2")
    w.kv("tokenizer.ggml.tokens", g.ARRAY, (g.STRING, tokens))
    w.kv("tokenizer.ggml.token_type", g.ARRAY, (g.I32, types))
    w.kv("tokenizer.ggml.merges", g.ARRAY, (g.STRING, merges))
    if added:
        w.kv("tokenizer.ggml.eos_token_id", g.U32, max(added))
    w.kv("tokenizer.ggml.add_bos_token", g.BOOL, False)

    def put(name, hub, perm=None):
        a = st[hub]
        if perm:
            a = np.ascontiguousarray(llama_permute(a, perm))
        if a.ndim == 1:
            t = "F32"
        elif callable(quant):
            t = quant(name, a)
        else:
            t = quant or {"F32": "F32", "F16": "F16", "BF16": "BF16"}[DTYPES[hub]]
        w.tensor(name, a, t)

    put("token_embd.weight", "model.embed_tokens.weight")
    for i in range(L):
        b = f"model.layers.{i}."
        put(f"blk.{i}.attn_norm.weight", b + "input_layernorm.weight")
        put(f"blk.{i}.attn_q.weight", b + "self_attn.q_proj.weight", H if arch == "llama" else None)
        put(f"blk.{i}.attn_k.weight", b + "self_attn.k_proj.weight", Hk if arch == "llama" else None)
        put(f"blk.{i}.attn_v.weight", b + "self_attn.v_proj.weight")
        for p in "qkv":
            if b + f"self_attn.{p}_proj.bias" in st:
                put(f"blk.{i}.attn_{p}.bias", b + f"self_attn.{p}_proj.bias",
                    (H if p == "q" else Hk) if arch == "llama" and p != "v" else None)
        put(f"blk.{i}.attn_output.weight", b + "self_attn.o_proj.weight")
        if b + "self_attn.q_norm.weight" in st:
            put(f"blk.{i}.attn_q_norm.weight", b + "self_attn.q_norm.weight")
            put(f"blk.{i}.attn_k_norm.weight", b + "self_attn.k_norm.weight")
        put(f"blk.{i}.ffn_norm.weight", b + "post_attention_layernorm.weight")
        put(f"blk.{i}.ffn_gate.weight", b + "mlp.gate_proj.weight")
        put(f"blk.{i}.ffn_up.weight", b + "mlp.up_proj.weight")
        put(f"blk.{i}.ffn_down.weight", b + "mlp.down_proj.weight")
    put("output_norm.weight", "model.norm.weight")
    rs = cfg.get("rope_scaling") or {}
    if rs.get("rope_type", rs.get("type")) == "llama3":  # as LlamaModel.generate_extra_tensors
        import math
        base = F(cfg.get("rope_theta", 10000.0))
        freqs = F(1.0) / (base ** (np.arange(0, dk, 2, dtype=F) / F(dk)))
        factor, lo, hi = rs.get("factor", 8.0), rs.get("low_freq_factor", 1.0), rs.get("high_freq_factor", 4.0)
        old = rs.get("original_max_position_embeddings", 8192)
        ff = []
        for freq in freqs:
            wavelen = F(F(2 * math.pi) / freq)
            if wavelen < old / hi:
                ff.append(1)
            elif wavelen > old / lo:
                ff.append(factor)
            else:
                smooth = (old / float(wavelen) - lo) / (hi - lo)
                ff.append(1 / ((1 - smooth) / factor + smooth))
        w.tensor("rope_freqs.weight", np.array(ff, dtype=F), "F32")
    if not cfg.get("tie_word_embeddings", False) and "lm_head.weight" in st:
        put("output.weight", "lm_head.weight")
    w.write(os.path.join(OUT, out_name))


def q4_k_m(name, a):
    """The types llama.cpp's Q4_K_M gives a small model: Q4_K, Q6_K for half the ffn_down (here the
    second layer's), and where a row is not a multiple of 256 weights its fallbacks, Q5_0 for Q4_K
    and Q8_0 for Q6_K (token_embd and output, which Q4_K_M keeps in Q6_K)."""
    want = "Q6_K" if name in ("token_embd.weight", "output.weight", "blk.1.ffn_down.weight") else "Q4_K"
    if a.shape[-1] % 256 == 0:
        return want
    return {"Q4_K": "Q5_0", "Q6_K": "Q8_0"}[want]


def llama_wide(rng):
    """llama-wide-f16.gguf and llama-wide-q4_k_m.gguf: one random Llama (llama-gqa2's tokenizer and
    shape, but F = 256, so that ffn_down's rows hold a k-quant block) stored twice: in F16, and as
    llama.cpp's Q4_K_M stores a model this small (q4_k_m). Beside them, llama-wide-q4_k_m.npy: the
    Q4_K file's blk.0.ffn_down.weight [32, 256] as gguf_py's dequantizer (ggml's dequantize_row_q4_K)
    computes it from the stored bytes. llama-wide-q4_0-swapped.gguf: the same weights in Q4_0, two
    tokens of its tokenizer exchanged (--compare-model refuses it: the tokenizers differ)."""
    import json
    cfg = json.load(open(os.path.join(LLAMA, "llama-gqa2", "config.json")))
    cfg = dict(cfg, intermediate_size=256, tie_word_embeddings=False)
    D, H, Hk, dk, Fw, L = 32, 4, 2, 8, 256, 2
    V = 293
    r = lambda *shape: (rng.normal(size=shape) * 0.2).astype(F)
    st = {"model.embed_tokens.weight": r(V, D), "model.norm.weight": (1 + r(D) * 0.5).astype(F),
          "lm_head.weight": r(V, D)}
    for i in range(L):
        b = f"model.layers.{i}."
        st.update({b + "input_layernorm.weight": (1 + r(D) * 0.5).astype(F),
                   b + "post_attention_layernorm.weight": (1 + r(D) * 0.5).astype(F),
                   b + "self_attn.q_proj.weight": r(H * dk, D), b + "self_attn.k_proj.weight": r(Hk * dk, D),
                   b + "self_attn.v_proj.weight": r(Hk * dk, D), b + "self_attn.o_proj.weight": r(D, H * dk),
                   b + "mlp.gate_proj.weight": r(Fw, D), b + "mlp.up_proj.weight": r(Fw, D),
                   b + "mlp.down_proj.weight": r(D, Fw)})
    # an outlier in one block of blk.0.ffn_down, as trained matrices have: its block's scale is large
    st["model.layers.0.mlp.down_proj.weight"][3, 40] = 1.5
    for k in st:
        DTYPES[k] = "F32"
    llama_file("llama-gqa2", "llama-wide-f16.gguf", quant="F16", model=(cfg, st))
    llama_file("llama-gqa2", "llama-wide-q4_k_m.gguf", quant=q4_k_m, model=(cfg, st))
    llama_file("llama-gqa2", "llama-wide-q4_0-swapped.gguf", quant="Q4_0", model=(cfg, st), swap_tokens=(70, 71))
    down = st["model.layers.0.mlp.down_proj.weight"]
    ref = g.dequantize(g.quantize(down.ravel(), "Q4_K"), "Q4_K", down.size).reshape(down.shape)
    np.save(os.path.join(OUT, "llama-wide-q4_k_m.npy"), ref)


HUB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ref", "hub")


def read_safetensors(path):
    """{name: float32 array} of a safetensors file (F32 or F16)."""
    import json
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    head = json.loads(blob[8:8 + n])
    out = {}
    for name, info in head.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        raw = blob[8 + n + b:8 + n + e]
        if info["dtype"] == "BF16":
            a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(F)
        elif info["dtype"] in ("F32", "F16"):
            a = np.frombuffer(raw, dtype={"F32": "<f4", "F16": "<f2"}[info["dtype"]]).astype(F)
        else:
            continue
        out[name] = a.reshape(info["shape"])
        DTYPES[name] = info["dtype"]
    return out


def gpt2_file(folder, out_name, two_d_type, keep_output=False, quant=None):
    """A hub GPT-2 folder as llama.cpp's converter writes it; quant: {gguf name: type}."""
    import json
    d = os.path.join(HUB, folder)
    cfg = json.load(open(os.path.join(d, "config.json")))
    st = read_safetensors(os.path.join(d, "model.safetensors"))
    pre = "transformer." if "transformer.wte.weight" in st else ""
    vocab = json.load(open(os.path.join(d, "vocab.json"), encoding="utf-8"))
    merges = [l for l in open(os.path.join(d, "merges.txt"), encoding="utf-8").read().split("\n")
              if l and not l.startswith("#version")]
    D, L = cfg["n_embd"], cfg["n_layer"]
    w = g.Writer(arch="gpt2")
    w.kv("general.name", g.STRING, folder)
    w.kv("general.file_type", g.U32, 1 if two_d_type == "F16" else 0)
    if quant:
        w.kv("general.quantization_version", g.U32, 2)
    w.kv("gpt2.block_count", g.U32, L)
    w.kv("gpt2.context_length", g.U32, cfg["n_ctx"])
    w.kv("gpt2.embedding_length", g.U32, D)
    w.kv("gpt2.feed_forward_length", g.U32, 4 * D)
    w.kv("gpt2.attention.head_count", g.U32, cfg["n_head"])
    w.kv("gpt2.attention.layer_norm_epsilon", g.F32, cfg["layer_norm_epsilon"])
    tokens = sorted(vocab, key=lambda t: vocab[t])
    w.kv("tokenizer.ggml.model", g.STRING, "gpt2")
    w.kv("tokenizer.ggml.pre", g.STRING, "gpt-2")
    w.kv("tokenizer.ggml.tokens", g.ARRAY, (g.STRING, tokens))
    w.kv("tokenizer.ggml.token_type", g.ARRAY, (g.I32, [1] * len(tokens)))
    w.kv("tokenizer.ggml.merges", g.ARRAY, (g.STRING, merges))
    names = [("wte.weight", "token_embd.weight"), ("wpe.weight", "position_embd.weight")]
    for i in range(L):
        for hub, gg in [("ln_1", "attn_norm"), ("attn.c_attn", "attn_qkv"), ("attn.c_proj", "attn_output"),
                        ("ln_2", "ffn_norm"), ("mlp.c_fc", "ffn_up"), ("mlp.c_proj", "ffn_down")]:
            for part in ("weight", "bias"):
                names.append((f"h.{i}.{hub}.{part}", f"blk.{i}.{gg}.{part}"))
    names += [("ln_f.weight", "output_norm.weight"), ("ln_f.bias", "output_norm.bias")]
    if keep_output:
        names.append(("lm_head.weight", "output.weight"))
    for hub, gg in names:
        a = st[hub if hub == "lm_head.weight" else pre + hub]
        if hub.endswith((".c_attn.weight", ".c_proj.weight", ".c_fc.weight")):
            a = np.ascontiguousarray(a.T)  # Conv1D [in, out] -> [out, in], as the converter does
        t = (quant or {}).get(gg) or (two_d_type if a.ndim == 2 else "F32")
        w.tensor(gg, a, t)
    w.write(os.path.join(OUT, out_name))


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(35)
    types_file(rng)
    v2_file(rng)
    bad_files()
    gpt2_file("gpt2-tiny", "gpt2-tiny-f32.gguf", "F32")
    gpt2_file("gpt2-tiny-f16", "gpt2-tiny-f16.gguf", "F16", keep_output=True)
    for f in ("llama-gqa2", "qwen2-f16", "qwen3-sharded", "llama3-bf16"):
        llama_file(f, f + ".gguf")
    llama_file("llama-gqa2", "llama-gqa2-q8_0.gguf", quant="Q8_0")
    gpt2_file("gpt2-tiny", "gpt2-tiny-q8.gguf", "F32", quant={"blk.0.ffn_down.weight": "Q8_0",
                                                              "blk.1.ffn_down.weight": "Q4_0"})
    llama_wide(np.random.default_rng(3535))


if __name__ == "__main__":
    main()
