#!/usr/bin/python3
"""Times Stepformer on GPT-2 small's shapes against a plain PyTorch GPT-2 on the same weights.

The shapes of issue 12: 12 layers, D=768, 12 heads, F=3072, V=50257, 1024 positions, random
weights (numpy, seed 1, GPT-2's initialisation: normal with std 0.02, LayerNorm gains 1) written
once, F32, into a folder in the hub's layout (config.json, model.safetensors under the hub's names,
and the real vocab.json + merges.txt of tests/ref/gpt2/); the folder is kept (--dir) and opened as
`stepformer --model DIR` opens it. A text of L tokens: "the" then L - 1 times " the" (one token
each, checked against the L the C side reports).

Rows, per thread count and L (32 and 256):
  - traced forward: Stepformer's model_forward (every stage kept, pred = softmax of the logits of
    every position) against PyTorch computing the same: embeddings, 12 pre-norm layers (Conv1D
    x·W + b, causal attention, GELU tanh), ln_f, logits against wte for every position, softmax.
    The PyTorch model is written here from the published architecture (plain torch.nn.functional,
    not transformers), reading the same safetensors file.
  - one generated token: Stepformer's key/value cache (kv_push: token L through every layer, its
    logits) against its own full recompute of the L + 1 tokens, and PyTorch's cached step (the
    same model with each layer's K and V kept) for reference.

Method as scripts/bench_forward.py: each measurement is the median of --runs timed runs after a
warm-up (a run shorter than a millisecond repeats the call); the sides alternate (PyTorch first in
even rounds, C first in odd ones) for --rounds rounds. PyTorch runs in persistent workers, one per
thread count and OpenBLAS mode, started with OMP_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n (Debian's
torch multiplies with OpenBLAS, which ignores torch.set_num_threads), OMP_WAIT_POLICY=PASSIVE
for 2 threads; --torch-blas pinned keeps this environment's OPENBLAS_CORETYPE (Haswell: AVX2
kernels), free unsets it and OPENBLAS_L2_SIZE for PyTorch alone (its AVX-512 kernels here). The
C side is `stepformer bench --model DIR --text ... --threads n --tsv` in a fresh process with
OPENBLAS_NUM_THREADS=1 (it loads the model each time; only the forward is timed).

    /usr/bin/python3 scripts/bench_gpt2.py --bin build/stepformer [--dir /tmp/sf-gpt2-small]
        [--rounds 3] [--runs 9] [--threads 1,2] [--lengths 32,256] [--torch-blas pinned,free]
        [--markdown]
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
CFG = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 768, "n_head": 12,
       "n_layer": 12, "n_positions": 1024, "n_ctx": 1024, "n_inner": None, "vocab_size": 50257,
       "layer_norm_epsilon": 1e-05, "activation_function": "gelu_new"}


def write_folder(d):
    """GPT-2 small's shapes with random weights, F32, in the hub's layout (no prefix, tied head)."""
    os.makedirs(d, exist_ok=True)
    D, V, P, n = CFG["n_embd"], CFG["vocab_size"], CFG["n_positions"], CFG["n_layer"]
    rng = np.random.default_rng(1)
    tensors = [("wte.weight", (V, D), 0.02), ("wpe.weight", (P, D), 0.01)]
    for i in range(n):
        h = "h.%d." % i
        tensors += [(h + "ln_1.weight", (D,), None), (h + "ln_1.bias", (D,), 0.0),
                    (h + "attn.c_attn.weight", (D, 3 * D), 0.02), (h + "attn.c_attn.bias", (3 * D,), 0.0),
                    (h + "attn.c_proj.weight", (D, D), 0.02), (h + "attn.c_proj.bias", (D,), 0.0),
                    (h + "ln_2.weight", (D,), None), (h + "ln_2.bias", (D,), 0.0),
                    (h + "mlp.c_fc.weight", (D, 4 * D), 0.02), (h + "mlp.c_fc.bias", (4 * D,), 0.0),
                    (h + "mlp.c_proj.weight", (4 * D, D), 0.02), (h + "mlp.c_proj.bias", (D,), 0.0)]
    tensors += [("ln_f.weight", (D,), None), ("ln_f.bias", (D,), 0.0)]
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, shape, _ in tensors:
        size = 4 * int(np.prod(shape))
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [off, off + size]}
        off += size
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    tmp = os.path.join(d, "model.safetensors.tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj)
        for name, shape, std in tensors:
            if std is None:
                a = np.ones(shape, "<f4")
            elif std == 0.0:
                a = (rng.standard_normal(shape) * 0.01).astype("<f4")  # small biases
            else:
                a = (rng.standard_normal(shape) * std).astype("<f4")
            f.write(a.tobytes())
    os.replace(tmp, os.path.join(d, "model.safetensors"))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(CFG, f, indent=2)
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(os.path.join(ROOT, "tests", "ref", "gpt2", name), os.path.join(d, name))


# The PyTorch worker: argv = threads model_dir; reads "L RUNS" lines, answers
# "forward_median forward_min cached_median cached_min".
WORKER = r"""
import json, math, sys, time
import numpy as np, torch
import torch.nn.functional as F
torch.set_num_threads(int(sys.argv[1]))
d = sys.argv[2]
cfg = json.load(open(d + "/config.json"))
D, H, n_layer, eps = cfg["n_embd"], cfg["n_head"], cfg["n_layer"], cfg["layer_norm_epsilon"]
dk = D // H
raw = open(d + "/model.safetensors", "rb").read()
hl = int.from_bytes(raw[:8], "little")
hdr = json.loads(raw[8:8 + hl])
w = {}
for name, e in hdr.items():
    if name == "__metadata__":
        continue
    a, b = e["data_offsets"]
    w[name] = torch.from_numpy(np.frombuffer(raw, "<f4", (b - a) // 4, 8 + hl + a).reshape(e["shape"]).copy())
del raw

def block(i, x, past):
    # one pre-norm GPT-2 layer on x [n, D]; past: (K, V) [H, m, dk] of the tokens before, or None
    g = lambda s: w["h.%d.%s" % (i, s)]
    a = F.layer_norm(x, (D,), g("ln_1.weight"), g("ln_1.bias"), eps)
    qkv = torch.addmm(g("attn.c_attn.bias"), a, g("attn.c_attn.weight"))  # Conv1D: x·W + b
    q, k, v = (t.view(-1, H, dk).transpose(0, 1) for t in qkv.split(D, dim=1))
    if past is not None:
        k, v = torch.cat([past[0], k], 1), torch.cat([past[1], v], 1)
    n, m = q.shape[1], k.shape[1]
    s = q @ k.transpose(1, 2) / math.sqrt(dk)
    if n > 1:
        s = s.masked_fill(torch.ones(n, m, dtype=torch.bool).triu(m - n + 1), float("-inf"))
    att = (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(n, D)
    x = x + torch.addmm(g("attn.c_proj.bias"), att, g("attn.c_proj.weight"))
    f = F.layer_norm(x, (D,), g("ln_2.weight"), g("ln_2.bias"), eps)
    f = F.gelu(torch.addmm(g("mlp.c_fc.bias"), f, g("mlp.c_fc.weight")), approximate="tanh")
    return x + torch.addmm(g("mlp.c_proj.bias"), f, g("mlp.c_proj.weight")), (k, v)

def forward(ids, pos0=0, cache=None):
    x = w["wte.weight"][ids] + w["wpe.weight"][pos0:pos0 + len(ids)]
    new = []
    for i in range(n_layer):
        x, kv = block(i, x, cache[i] if cache else None)
        new.append(kv)
    y = F.layer_norm(x, (D,), w["ln_f.weight"], w["ln_f.bias"], eps)
    return torch.softmax(y @ w["wte.weight"].T, -1), new

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

import statistics
torch.manual_seed(42)
print("ready", torch.__version__, flush=True)
with torch.no_grad():
    for line in sys.stdin:
        L, runs = (int(x) for x in line.split())
        ids = torch.randint(0, cfg["vocab_size"], (L + 1,))
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
            sys.exit("bench_gpt2: the PyTorch worker did not start (is python3-torch installed?)")
        self.version = ready[1]

    def time(self, L, runs):
        self.p.stdin.write("%d %d\n" % (L, runs))
        self.p.stdin.flush()
        return [float(x) for x in self.p.stdout.readline().split()]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def time_c(binary, d, L, threads, runs):
    text = "the" + " the" * (L - 1)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([binary, "bench", "--tsv", "--model", d, "--text", text, "--threads", str(threads),
                          "--runs", str(runs)], env=env, check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    lines = [l for l in out.splitlines() if not l.startswith("#")]
    row = dict(zip(lines[0].split("\t"), lines[1].split("\t")))
    if int(row["L"]) != L:
        sys.exit("bench_gpt2: the text gave %s tokens, not %d" % (row["L"], L))
    return [float(row[k]) for k in ("median_s", "min_s", "cached_median_s", "cached_min_s",
                                    "next_full_median_s", "next_full_min_s")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/stepformer")
    ap.add_argument("--dir", default="/tmp/sf-gpt2-small", help="the folder (made when missing)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--lengths", default="32,256")
    ap.add_argument("--torch-blas", default="pinned,free")
    ap.add_argument("--pause", type=float, default=0.3)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK):
        sys.exit("bench_gpt2: %s is not an executable; build first or pass --bin" % a.bin)
    if not os.path.exists(os.path.join(a.dir, "model.safetensors")):
        print("writing %s (GPT-2 small's shapes, random weights, F32)" % a.dir, file=sys.stderr)
        write_folder(a.dir)
    threads = [int(t) for t in a.threads.split(",")]
    lengths = [int(x) for x in a.lengths.split(",")]
    modes = a.torch_blas.split(",")
    workers = {(n, m): TorchWorker(n, m, a.dir) for n in threads for m in modes}
    print("PyTorch %s; OPENBLAS_CORETYPE=%s; %d rounds of %d runs, alternated"
          % (workers[(threads[0], modes[0])].version, os.environ.get("OPENBLAS_CORETYPE", "unset"),
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
                        ct[(n, L)].append(time_c(a.bin, a.dir, L, n, a.runs))
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
              "| of mins | PyTorch cached token ms | C cached token ms | C full recompute of L+1 ms "
              "| recompute / cached |")
        print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in threads:
        for L in lengths:
            c = ct[(n, L)]
            for m in modes:
                t = tt[(n, L, m)]
                row = (n, L, m, med(t, 0) * 1e3, med(c, 0) * 1e3, med(c, 0) / med(t, 0),
                       min(x[1] for x in c) / min(x[1] for x in t), med(t, 2) * 1e3, med(c, 2) * 1e3,
                       med(c, 4) * 1e3, med(c, 4) / med(c, 2))
                if a.markdown:
                    print("| %d | %d | %s | %.2f | %.2f | %.3f | %.3f | %.3f | %.3f | %.2f | %.1f× |" % row)
                else:
                    print("threads %d L %d torch-blas %s: PyTorch %.2f ms, C %.2f ms, C/PyTorch %.3f "
                          "(of mins %.3f); one token: PyTorch cached %.3f ms, C cached %.3f ms, C full "
                          "recompute %.2f ms (%.1fx)" % row)


if __name__ == "__main__":
    main()
