#!/usr/bin/env python3
"""Opening a GGUF file: time and peak memory against the file's size (BENCHMARKS.md, issue 35).

    /usr/bin/python3 scripts/bench_gguf.py [--keep] [SHAPE...]     # SHAPE: smollm2-135m llama-1b

Writes a random-weight Llama-architecture GGUF of the shape (tests/gguf_py.py: llama.cpp's names and
keys, every matrix in Q8_0 quantized as ggml's quantize_row_q8_0_ref, norms in F32, a byte-level
tokenizer of the model's vocabulary size) into /tmp, then runs `build/stepformer info --model` on it
three times under /usr/bin/time -v and prints the file's size, the wall time and the peak resident
memory of each run. Random weights (seed 35): only the sizes matter here.
"""
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import gguf_py as g  # noqa: E402

SHAPES = {  # layers, D, heads, K/V heads, F, V, tied, pre-tokenizer
    "smollm2-135m": (30, 576, 9, 3, 1536, 49152, True, "smollm"),
    "llama-1b": (16, 2048, 32, 8, 8192, 128256, True, "llama-bpe"),
}
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def byte_alphabet():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b), cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def write(name, path):
    L, D, H, Hk, F, V, tied, pre = SHAPES[name]
    rng = np.random.default_rng(35)
    w = g.Writer(arch="llama")
    for k, t, v in [("block_count", g.U32, L), ("context_length", g.U32, 8192), ("embedding_length", g.U32, D),
                    ("feed_forward_length", g.U32, F), ("attention.head_count", g.U32, H),
                    ("attention.head_count_kv", g.U32, Hk), ("rope.freq_base", g.F32, 100000.0),
                    ("attention.layer_norm_rms_epsilon", g.F32, 1e-5)]:
        w.kv("llama." + k, t, v)
    w.kv("general.quantization_version", g.U32, 2)
    tokens = byte_alphabet() + [f"t{i}" for i in range(V - 256)]
    w.kv("tokenizer.ggml.model", g.STRING, "gpt2")
    w.kv("tokenizer.ggml.pre", g.STRING, pre)
    w.kv("tokenizer.ggml.tokens", g.ARRAY, (g.STRING, tokens))
    w.kv("tokenizer.ggml.merges", g.ARRAY, (g.STRING, []))
    dk = D // H

    def mat(rows, cols):
        return (rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(0.02))

    w.tensor("token_embd.weight", mat(V, D), "Q8_0")
    for i in range(L):
        w.tensor(f"blk.{i}.attn_norm.weight", np.ones(D, np.float32), "F32")
        w.tensor(f"blk.{i}.attn_q.weight", mat(H * dk, D), "Q8_0")
        w.tensor(f"blk.{i}.attn_k.weight", mat(Hk * dk, D), "Q8_0")
        w.tensor(f"blk.{i}.attn_v.weight", mat(Hk * dk, D), "Q8_0")
        w.tensor(f"blk.{i}.attn_output.weight", mat(D, H * dk), "Q8_0")
        w.tensor(f"blk.{i}.ffn_norm.weight", np.ones(D, np.float32), "F32")
        w.tensor(f"blk.{i}.ffn_gate.weight", mat(F, D), "Q8_0")
        w.tensor(f"blk.{i}.ffn_up.weight", mat(F, D), "Q8_0")
        w.tensor(f"blk.{i}.ffn_down.weight", mat(D, F), "Q8_0")
    w.tensor("output_norm.weight", np.ones(D, np.float32), "F32")
    w.write(path)


def main():
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or list(SHAPES)
    sf = os.path.join(ROOT, "build", "stepformer")
    for name in names:
        path = f"/tmp/bench-{name}-q8_0.gguf"
        t0 = time.time()
        write(name, path)
        print(f"{name}: wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB) in {time.time() - t0:.0f} s")
        for run in range(3):
            r = subprocess.run(["/usr/bin/time", "-v", sf, "info", "--model", path], capture_output=True, text=True)
            if r.returncode:
                print(r.stderr.strip().splitlines()[0])
                break
            wall = [l for l in r.stderr.splitlines() if "Elapsed (wall clock)" in l][0].split()[-1]
            rss = int([l for l in r.stderr.splitlines() if "Maximum resident" in l][0].split()[-1])
            params = [l for l in r.stdout.splitlines() if l.startswith("parameters")][0].split()[1]
            print(f"  run {run + 1}: {wall} wall, peak RSS {rss / 1024:.0f} MB, {params} parameters")
        if "--keep" not in sys.argv:
            os.remove(path)


if __name__ == "__main__":
    main()
