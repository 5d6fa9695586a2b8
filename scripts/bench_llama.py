#!/usr/bin/python3
"""Times Stepformer on today's LLMs' shapes against a plain PyTorch Llama on the same weights.

The shapes of issue 34 (random weights, numpy seed 34, normal with std 0.02, RMSNorm gains 1),
written once into a folder in the hub's layout: config.json (LlamaForCausalLM) and
model.safetensors under the hub's names, plus the tokenizer.json of tests/ref/llama/llama-gqa2 (a
byte-level BPE of 293 ids: the vocabulary is larger than the tokenizer, as Qwen's is); the folder
is kept (--dir) and opened as `stepformer --model DIR` opens it.
  smollm2-135m  SmolLM2-135M: 30 layers, D 576, 9 query and 3 K/V heads (head_dim 64), F 1536,
                V 49152, tied head, rope_theta 100000, rms_norm_eps 1e-5; F32 (538 MB)
  llama-1b      Llama 3.2 1B: 16 layers, D 2048, 32 query and 8 K/V heads (head_dim 64), F 8192,
                V 128256, tied head, rope_theta 500000 with rope_scaling llama3 (factor 32);
                BF16 as the hub ships it (2.5 GB; both sides compute in float32)
A text of L tokens: L times " the" (one token each, checked against the L the C side reports).

Rows, per shape, thread count and L (32 and 256):
  - traced forward: Stepformer's model_forward (every stage kept, pred = softmax of the logits of
    every position) against PyTorch computing the same. The PyTorch model is written here in plain
    torch, following transformers' modeling_llama.py (eager attention): LlamaRMSNorm (float32,
    rsqrt), q_proj/k_proj/v_proj as F.linear, rotary embedding (inv_freq as modeling_rope_utils,
    llama3 scaling, rotate_half), repeat_kv for grouped-query attention, scores · head_dim^-0.5,
    causal mask, softmax, o_proj, LlamaMLP down(silu(gate(x)) * up(x)), final norm, the tied
    lm_head for every position, softmax. It reads the same safetensors file.
  - one cached token: Stepformer's key/value cache (kv_push: token L through every layer, its
    logits) against PyTorch's cached step (past_key_values as transformers' DynamicCache keeps it:
    each layer's K after RoPE and V, torch.cat of the new row; the one row's logits), and
    Stepformer's own full recompute of the L + 1 tokens for reference.

Method as scripts/bench_gpt2.py: each measurement is the median of --runs timed runs after a
warm-up (a run shorter than a millisecond repeats the call); the sides alternate (PyTorch first in
even rounds, C first in odd ones) for --rounds rounds. PyTorch runs in persistent workers, one per
thread count and OpenBLAS mode, started with OMP_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n (Debian's
torch multiplies with OpenBLAS, which ignores torch.set_num_threads) and torch.set_num_threads(n),
OMP_WAIT_POLICY=PASSIVE for 2 threads; --torch-blas pinned keeps this environment's
OPENBLAS_CORETYPE (Haswell: AVX2 kernels), free unsets it and OPENBLAS_L2_SIZE for PyTorch alone
(its AVX-512 kernels here). The C side is `stepformer bench --model DIR --text ... --threads n
--tsv` in a fresh process with OPENBLAS_NUM_THREADS=1 (it loads the model each time; only the
forward is timed).

    /usr/bin/python3 scripts/bench_llama.py --bin build/stepformer [--shape smollm2-135m]
        [--dir /tmp/sf-smollm2-135m] [--rounds 3] [--runs 7] [--threads 1,2] [--lengths 32,256]
        [--torch-blas pinned,free] [--markdown]
Needs python3-torch and python3-numpy (Debian). Machines are shared: compare medians.
"""
import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SHAPES = {
    "smollm2-135m": dict(
        cfg={"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 576,
             "num_attention_heads": 9, "num_key_value_heads": 3, "head_dim": 64, "intermediate_size": 1536,
             "num_hidden_layers": 30, "vocab_size": 49152, "rms_norm_eps": 1e-05, "rope_theta": 100000.0,
             "hidden_act": "silu", "tie_word_embeddings": True, "max_position_embeddings": 8192,
             "torch_dtype": "float32", "bos_token_id": 0, "eos_token_id": 0},
        dtype="F32"),
    "llama-1b": dict(
        cfg={"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
             "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 8192,
             "num_hidden_layers": 16, "vocab_size": 128256, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
             "hidden_act": "silu", "tie_word_embeddings": True, "max_position_embeddings": 131072,
             "torch_dtype": "bfloat16", "bos_token_id": 128000, "eos_token_id": 128001,
             "rope_scaling": {"factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                              "original_max_position_embeddings": 8192, "rope_type": "llama3"}},
        dtype="BF16"),
}


def tensor_list(cfg):
    """(hub name, shape, std or None for a gain of ones), in the hub's order."""
    D, F, n = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    dk, H, Hk, V = cfg["head_dim"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["vocab_size"]
    out = [("model.embed_tokens.weight", (V, D), 0.02)]
    for i in range(n):
        p = "model.layers.%d." % i
        out += [(p + "input_layernorm.weight", (D,), None),
                (p + "self_attn.q_proj.weight", (H * dk, D), 0.02),
                (p + "self_attn.k_proj.weight", (Hk * dk, D), 0.02),
                (p + "self_attn.v_proj.weight", (Hk * dk, D), 0.02),
                (p + "self_attn.o_proj.weight", (D, H * dk), 0.02),
                (p + "post_attention_layernorm.weight", (D,), None),
                (p + "mlp.gate_proj.weight", (F, D), 0.02),
                (p + "mlp.up_proj.weight", (F, D), 0.02),
                (p + "mlp.down_proj.weight", (D, F), 0.02)]
    out.append(("model.norm.weight", (D,), None))
    return out


def write_folder(d, shape):
    """The shape's config with random weights in the hub's layout (tied head: no lm_head.weight)."""
    spec = SHAPES[shape]
    cfg, dtype = spec["cfg"], spec["dtype"]
    os.makedirs(d, exist_ok=True)
    tensors = tensor_list(cfg)
    width = 4 if dtype == "F32" else 2
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, shp, _ in tensors:
        size = width * int(np.prod(shp))
        header[name] = {"dtype": dtype, "shape": list(shp), "data_offsets": [off, off + size]}
        off += size
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    rng = np.random.default_rng(34)
    tmp = os.path.join(d, "model.safetensors.tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj)
        for name, shp, std in tensors:
            if std is None:
                a = np.ones(shp, "<f4")
            else:
                a = (rng.standard_normal(shp, dtype=np.float32) * np.float32(std)).astype("<f4")
            if dtype == "BF16":  # round to nearest even, as torch's .to(torch.bfloat16)
                u = a.view("<u4").astype(np.uint64)
                u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
                a = u.astype("<u2")
            f.write(a.tobytes())
    os.replace(tmp, os.path.join(d, "model.safetensors"))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    shutil.copy(os.path.join(ROOT, "tests", "ref", "llama", "llama-gqa2", "tokenizer.json"),
                os.path.join(d, "tokenizer.json"))


# The PyTorch worker: argv = threads model_dir; reads "L RUNS" lines, answers
# "forward_median forward_min cached_median cached_min".
WORKER = r"""
import json, math, sys, time, statistics
import numpy as np, torch
import torch.nn.functional as F
torch.set_num_threads(int(sys.argv[1]))
d = sys.argv[2]
cfg = json.load(open(d + "/config.json"))
D, H, Hk, dk = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
n_layer, eps, V = cfg["num_hidden_layers"], cfg["rms_norm_eps"], cfg["vocab_size"]
group = H // Hk
raw = open(d + "/model.safetensors", "rb").read()
hl = int.from_bytes(raw[:8], "little")
hdr = json.loads(raw[8:8 + hl])
w = {}
for name, e in hdr.items():
    if name == "__metadata__":
        continue
    a, b = e["data_offsets"]
    if e["dtype"] == "F32":
        t = np.frombuffer(raw, "<f4", (b - a) // 4, 8 + hl + a).copy()
    else:  # BF16: the upper half of a float32
        t = (np.frombuffer(raw, "<u2", (b - a) // 2, 8 + hl + a).astype("<u4") << 16).view("<f4")
    w[name] = torch.from_numpy(t.reshape(e["shape"]))
del raw
head = w.get("lm_head.weight", w["model.embed_tokens.weight"])

# modeling_rope_utils: default inv_freq, and _compute_llama3_parameters for rope_type llama3
inv_freq = 1.0 / (cfg["rope_theta"] ** (torch.arange(0, dk, 2, dtype=torch.int64).float() / dk))
rs = cfg.get("rope_scaling")
if rs and rs.get("rope_type") == "llama3":
    factor, lo, hi, old = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"], rs["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv_freq
    inv_l = torch.where(wavelen > old / lo, inv_freq / factor, inv_freq)
    smooth = (old / wavelen - lo) / (hi - lo)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    medium = ~(wavelen < old / hi) * ~(wavelen > old / lo)
    inv_freq = torch.where(medium, smoothed, inv_l)

def rms_norm(x, g):  # LlamaRMSNorm
    return g * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))

def rotate_half(x):
    return torch.cat((-x[..., dk // 2:], x[..., : dk // 2]), dim=-1)

def rotary(pos0, n):  # LlamaRotaryEmbedding: cos, sin [n, dk]
    freqs = torch.arange(pos0, pos0 + n, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()

def repeat_kv(x):  # [Hk, m, dk] -> [H, m, dk]
    if group == 1:
        return x
    m = x.shape[1]
    return x[:, None].expand(Hk, group, m, dk).reshape(H, m, dk)

def layer(i, x, cos, sin, past):
    # LlamaDecoderLayer on x [n, D]; past: (K after RoPE, V) [Hk, m, dk] of the tokens before, or None
    g = lambda s: w["model.layers.%d.%s" % (i, s)]
    n = x.shape[0]
    h = rms_norm(x, g("input_layernorm.weight"))
    q = F.linear(h, g("self_attn.q_proj.weight")).view(n, H, dk).transpose(0, 1)
    k = F.linear(h, g("self_attn.k_proj.weight")).view(n, Hk, dk).transpose(0, 1)
    v = F.linear(h, g("self_attn.v_proj.weight")).view(n, Hk, dk).transpose(0, 1)
    q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin  # apply_rotary_pos_emb
    if past is not None:  # DynamicCache.update
        k, v = torch.cat([past[0], k], 1), torch.cat([past[1], v], 1)
    m = k.shape[1]
    s = torch.matmul(q, repeat_kv(k).transpose(1, 2)) * dk ** -0.5
    if n > 1:
        s = s.masked_fill(torch.ones(n, m, dtype=torch.bool).triu(m - n + 1), float("-inf"))
    a = torch.softmax(s, dim=-1, dtype=torch.float32)
    att = torch.matmul(a, repeat_kv(v)).transpose(0, 1).reshape(n, H * dk)
    x = x + F.linear(att, g("self_attn.o_proj.weight"))
    h = rms_norm(x, g("post_attention_layernorm.weight"))
    f = F.silu(F.linear(h, g("mlp.gate_proj.weight"))) * F.linear(h, g("mlp.up_proj.weight"))
    return x + F.linear(f, g("mlp.down_proj.weight")), (k, v)

def forward(ids, pos0=0, cache=None):
    x = w["model.embed_tokens.weight"][ids]
    cos, sin = rotary(pos0, len(ids))
    new = []
    for i in range(n_layer):
        x, kv = layer(i, x, cos, sin, cache[i] if cache else None)
        new.append(kv)
    y = rms_norm(x, w["model.norm.weight"])
    logits = F.linear(y, head)
    return (torch.softmax(logits, -1) if cache is None else logits), new

def timed(fn, runs):
    n, t0 = 0, time.perf_counter()
    while n < 3 or time.perf_counter() - t0 < 0.1:
        fn()
        n += 1
    one = (time.perf_counter() - t0) / n
    reps = 1 if one >= 1e-3 else int(1e-3 / one) + 1
    dt = []
    for _ in range(runs):
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        dt.append((time.perf_counter() - t) / reps)
    dt.sort()
    return statistics.median(dt), dt[0]

torch.manual_seed(42)
print("ready", torch.__version__, flush=True)
with torch.no_grad():
    for line in sys.stdin:
        L, runs = (int(x) for x in line.split())
        ids = torch.randint(0, V, (L + 1,))
        fm, fmin = timed(lambda: forward(ids[:L]), runs)
        _, cache = forward(ids[:L])
        cm, cmin = timed(lambda: forward(ids[L:], L, cache), runs)
        print(fm, fmin, cm, cmin, flush=True)
"""


class TorchWorker:
    def __init__(self, threads, blas, d):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                   MKL_NUM_THREADS=str(threads))
        if blas == "free":
            env.pop("OPENBLAS_CORETYPE", None)
            env.pop("OPENBLAS_L2_SIZE", None)
        if threads > 1:
            env["OMP_WAIT_POLICY"] = "PASSIVE"
        else:
            env.pop("OMP_WAIT_POLICY", None)
        self.p = subprocess.Popen([sys.executable, "-c", WORKER, str(threads), d], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self.p.stdout.readline().split()
        if not ready or ready[0] != "ready":
            sys.exit("bench_llama: the PyTorch worker did not start (is python3-torch installed?)")
        self.version = ready[1]

    def time(self, L, runs):
        self.p.stdin.write("%d %d\n" % (L, runs))
        self.p.stdin.flush()
        return [float(x) for x in self.p.stdout.readline().split()]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def time_c(binary, d, L, threads, runs):
    text = " the" * L
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([binary, "bench", "--tsv", "--model", d, "--text", text, "--threads", str(threads),
                          "--runs", str(runs)], env=env, check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    lines = [l for l in out.splitlines() if not l.startswith("#")]
    row = dict(zip(lines[0].split("\t"), lines[1].split("\t")))
    if int(row["L"]) != L:
        sys.exit("bench_llama: the text gave %s tokens, not %d" % (row["L"], L))
    return [float(row[k]) for k in ("median_s", "min_s", "cached_median_s", "cached_min_s",
                                    "next_full_median_s", "next_full_min_s")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/stepformer")
    ap.add_argument("--shape", default="smollm2-135m", choices=sorted(SHAPES))
    ap.add_argument("--dir", help="the folder (made when missing); default /tmp/sf-SHAPE")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--lengths", default="32,256")
    ap.add_argument("--torch-blas", default="pinned,free")
    ap.add_argument("--pause", type=float, default=0.3)
    ap.add_argument("--write-only", action="store_true", help="write the folder and stop")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    d = a.dir or "/tmp/sf-" + a.shape
    if not os.path.exists(os.path.join(d, "model.safetensors")):
        print("writing %s (%s's shapes, random weights, %s)" % (d, a.shape, SHAPES[a.shape]["dtype"]),
              file=sys.stderr)
        write_folder(d, a.shape)
    if a.write_only:
        return
    if not os.access(a.bin, os.X_OK):
        sys.exit("bench_llama: %s is not an executable; build first or pass --bin" % a.bin)
    threads = [int(t) for t in a.threads.split(",")]
    lengths = [int(x) for x in a.lengths.split(",")]
    modes = a.torch_blas.split(",")
    workers = {(n, m): TorchWorker(n, m, d) for n in threads for m in modes}
    print("%s; PyTorch %s; OPENBLAS_CORETYPE=%s; %d rounds of %d runs, alternated"
          % (a.shape, workers[(threads[0], modes[0])].version, os.environ.get("OPENBLAS_CORETYPE", "unset"),
             a.rounds, a.runs))
    tt = {(n, L, m): [] for n in threads for L in lengths for m in modes}
    ct = {(n, L): [] for n in threads for L in lengths}
    load_before = os.getloadavg()
    for r in range(a.rounds):
        for n in threads:
            for L in lengths:
                order = ["torch:" + m for m in modes] + ["c"]
                if r % 2:
                    order.reverse()
                for who in order:
                    time.sleep(a.pause)
                    if who == "c":
                        ct[(n, L)].append(time_c(a.bin, d, L, n, a.runs))
                    else:
                        m = who.split(":")[1]
                        tt[(n, L, m)].append(workers[(n, m)].time(L, a.runs))
        print("round %d/%d done" % (r + 1, a.rounds), file=sys.stderr)
    for w in workers.values():
        w.close()
    load_after = os.getloadavg()
    print("load average (1 min) before/after: %.2f / %.2f" % (load_before[0], load_after[0]))
    med = lambda v, i: statistics.median(x[i] for x in v)
    if a.markdown:
        print("\n| threads | L | PyTorch's OpenBLAS | PyTorch forward ms | C traced forward ms | C/PyTorch "
              "| of mins | PyTorch cached token ms | C cached token ms | C/PyTorch cached "
              "| C full recompute of L+1 ms |")
        print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in threads:
        for L in lengths:
            c = ct[(n, L)]
            for m in modes:
                t = tt[(n, L, m)]
                row = (n, L, m, med(t, 0) * 1e3, med(c, 0) * 1e3, med(c, 0) / med(t, 0),
                       min(x[1] for x in c) / min(x[1] for x in t), med(t, 2) * 1e3, med(c, 2) * 1e3,
                       med(c, 2) / med(t, 2), med(c, 4) * 1e3)
                if a.markdown:
                    print("| %d | %d | %s | %.2f | %.2f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f |" % row)
                else:
                    print("threads %d L %d torch-blas %s: PyTorch %.2f ms, C %.2f ms, C/PyTorch %.3f "
                          "(of mins %.3f); one cached token: PyTorch %.3f ms, C %.3f ms (C/PyTorch %.3f); "
                          "C full recompute %.2f ms" % row)


if __name__ == "__main__":
    main()
