#!/usr/bin/python3
"""Times one training step (forward + backward) of Stepformer against PyTorch on the same weights.

Two shapes (issue 38's targets):
  bert  one BERT-base-shaped encoder layer (D=768, H=12, F=3072, post-norm, ReLU) with a
        prediction head over a vocabulary of <unk> and L distinct words w0 .. w{L-1}
        (tests/gen_ref.py's construction, seed 0), written as a canonical safetensors model into
        a temporary folder; the text "w0 ... w{L-1}" (default L = 128);
        PyTorch: the same model as nn.Embedding + sinusoidal positions + nn.TransformerEncoder +
        nn.Linear in training mode (dropout 0);
  gpt2  GPT-2 small's shapes (12 pre-norm layers, D=768, 12 heads, F=3072, V=50257, the head tied
        to wte; random weights, scripts/bench_gpt2.py's folder, kept in --dir); the text "the"
        then L - 1 times " the" (default L = 64);
        PyTorch: bench_gpt2.py's plain torch.nn.functional GPT-2 on the same file, every weight a
        leaf that requires its gradient.
Each side's step: the loss against the next token (position i predicts token i+1), mean
cross-entropy over the L − 1 positions that have one, and its gradients:
  C:       stepformer bench --model M --text T --train --tsv --no-peak --threads n
           (model_forward, every stage kept in the trace, then backward_run: every stage's and
           every weight's gradient), a fresh process per measurement, OPENBLAS_NUM_THREADS=1;
  PyTorch: zero_grad, forward, F.cross_entropy, loss.backward() (parameter gradients only), in a
           persistent worker per (threads, BLAS mode) started with OMP_NUM_THREADS,
           OPENBLAS_NUM_THREADS and torch.set_num_threads = n (OMP_WAIT_POLICY=PASSIVE for 2).
--torch-blas: pinned keeps this environment's OPENBLAS_CORETYPE (e.g. Haswell: AVX2 kernels);
free unsets it and OPENBLAS_L2_SIZE (OpenBLAS picks its own, AVX-512 where the CPU has it), for
PyTorch and for the C side alike (the C side's own products do not use OpenBLAS; any that does
sees the same setting).
Each measurement is the median of --runs timed steps after a warm-up of 3; the sides alternate
(PyTorch first in even rounds, C first in odd ones) for --rounds rounds. Prints the median over
rounds of each side's medians and C/PyTorch.

    /usr/bin/python3 scripts/bench_train.py --bin build/stepformer [--shapes bert,gpt2]
        [--bert-L 128] [--gpt2-L 64] [--rounds 5] [--runs 11] [--threads 1,2]
        [--torch-blas pinned,free] [--dir /tmp/sf-gpt2-small]
Needs python3-torch and python3-numpy (Debian). Run it under /work/bin/sf-quiet on a shared machine.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# argv: tests_dir threads shape L write_path_or_empty gpt2_dir; then reads "RUNS" lines and answers
# the median step time in seconds.
WORKER = r"""
import math, os, sys, time, statistics, json
import numpy as np
import torch, torch.nn as nn, torch.nn.functional as F
sys.path.insert(0, sys.argv[1])
torch.set_num_threads(int(sys.argv[2]))
shape, L, write, gdir = sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
if shape == "bert":
    import gen_ref
    a = gen_ref.parser().parse_args(["--seed", "0", "--D", "768", "--H", "12", "--F", "3072", "--layers",
                                     "1", "--head", "1", "--init", "torch"])
    V = L + 1
    embed, enc, head = gen_ref.build_model(a, V)
    for m in (embed, enc, head):
        m.train()
    ids = torch.arange(1, L + 1)
    P = gen_ref.sinusoidal_pe(L, a.D)
    def step():
        for m in (embed, enc, head):
            m.zero_grad(set_to_none=True)
        y = enc((embed(ids) + P)[None])[0]
        loss = F.cross_entropy(head(y)[:-1], ids[1:])
        loss.backward()
    if write:
        tensors = [("embed.weight", embed.weight)] + list(enc.state_dict().items())
        tensors += [("head.weight", head.weight), ("head.bias", head.bias)]
        vocab = ["<unk>"] + ["w%d" % i for i in range(L)]
        meta = {"format": "pt", "d_model": "768", "n_heads": "12", "d_ff": "3072", "n_layers": "1",
                "activation": "relu", "norm_first": "0", "vocab": "\n".join(vocab), "causal": "0",
                "layer_norm_eps": "1e-05", "pos_encoding": "sinusoidal"}
        gen_ref.write_safetensors(write, tensors, meta)
        sys.exit(0)
else:
    cfg = json.load(open(gdir + "/config.json"))
    D, H, n_layer, eps = cfg["n_embd"], cfg["n_head"], cfg["n_layer"], cfg["layer_norm_epsilon"]
    dk = D // H
    raw = open(gdir + "/model.safetensors", "rb").read()
    hl = int.from_bytes(raw[:8], "little")
    hdr = json.loads(raw[8:8 + hl])
    w = {}
    for name, e in hdr.items():
        if name == "__metadata__":
            continue
        b0, b1 = e["data_offsets"]
        t = np.frombuffer(raw, "<f4", (b1 - b0) // 4, 8 + hl + b0).reshape(e["shape"]).copy()
        w[name] = torch.from_numpy(t).requires_grad_(True)
    del raw
    mask = torch.ones(L, L, dtype=torch.bool).triu(1)
    def block(i, x):
        g = lambda s: w["h.%d.%s" % (i, s)]
        a = F.layer_norm(x, (D,), g("ln_1.weight"), g("ln_1.bias"), eps)
        qkv = torch.addmm(g("attn.c_attn.bias"), a, g("attn.c_attn.weight"))  # Conv1D: x·W + b
        q, k, v = (t.view(-1, H, dk).transpose(0, 1) for t in qkv.split(D, dim=1))
        s = (q @ k.transpose(1, 2) / math.sqrt(dk)).masked_fill(mask, float("-inf"))
        att = (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(L, D)
        x = x + torch.addmm(g("attn.c_proj.bias"), att, g("attn.c_proj.weight"))
        f = F.layer_norm(x, (D,), g("ln_2.weight"), g("ln_2.bias"), eps)
        f = F.gelu(torch.addmm(g("mlp.c_fc.bias"), f, g("mlp.c_fc.weight")), approximate="tanh")
        return x + torch.addmm(g("mlp.c_proj.bias"), f, g("mlp.c_proj.weight"))
    tok = json.load(open(gdir + "/vocab.json"))
    ids = torch.tensor([tok["the"]] + [tok["\u0120the"]] * (L - 1))
    def step():
        for p in w.values():
            p.grad = None
        x = w["wte.weight"][ids] + w["wpe.weight"][:L]
        for i in range(n_layer):
            x = block(i, x)
        y = F.layer_norm(x, (D,), w["ln_f.weight"], w["ln_f.bias"], eps)
        loss = F.cross_entropy((y @ w["wte.weight"].T)[:-1], ids[1:])
        loss.backward()
for _ in range(3):
    step()
print("ready", torch.__version__, flush=True)
for line in sys.stdin:
    dt = []
    for _ in range(int(line)):
        t0 = time.perf_counter(); step(); dt.append(time.perf_counter() - t0)
    print(statistics.median(dt), flush=True)
"""


def blas_env(threads, blas):
    env = dict(os.environ)
    if blas == "free":
        env.pop("OPENBLAS_CORETYPE", None)
        env.pop("OPENBLAS_L2_SIZE", None)
    return env


class TorchWorker:
    def __init__(self, shape, L, threads, blas, gdir, write=""):
        env = blas_env(threads, blas)
        env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
        if threads > 1:
            env["OMP_WAIT_POLICY"] = "PASSIVE"
        else:
            env.pop("OMP_WAIT_POLICY", None)
        args = [sys.executable, "-c", WORKER, os.path.join(HERE, "..", "tests"), str(threads), shape, str(L),
                write, gdir]
        if write:
            subprocess.run(args, env=env, check=True)
            return
        self.p = subprocess.Popen(args, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self.p.stdout.readline().split()
        if not ready or ready[0] != "ready":
            sys.exit("bench_train: the PyTorch worker did not start (is python3-torch installed?)")
        self.version = ready[1]

    def time(self, runs):
        self.p.stdin.write("%d\n" % runs)
        self.p.stdin.flush()
        return float(self.p.stdout.readline())

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def c_time(binary, model, text, threads, blas, runs):
    env = blas_env(threads, blas)
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([binary, "bench", "--model", model, "--text", text, "--train", "--tsv", "--no-peak",
                          "--threads", str(threads), "--runs", str(runs)], env=env, check=True,
                         capture_output=True, text=True).stdout
    lines = [line for line in out.splitlines() if line and not line.startswith("#")]
    row = dict(zip(lines[0].split("\t"), lines[-1].split("\t")))
    return float(row["median_s"]), int(row["L"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/stepformer")
    ap.add_argument("--shapes", default="bert,gpt2")
    ap.add_argument("--bert-L", type=int, default=128)
    ap.add_argument("--gpt2-L", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--torch-blas", default="pinned,free")
    ap.add_argument("--dir", default="/tmp/sf-gpt2-small", help="GPT-2's folder (made when missing)")
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK):
        sys.exit("bench_train: %s is not an executable; build first or pass --bin" % a.bin)
    shapes = a.shapes.split(",")
    threads = [int(x) for x in a.threads.split(",")]
    modes = a.torch_blas.split(",")
    tmp = tempfile.mkdtemp()
    models = {}
    if "bert" in shapes:
        models["bert"] = (os.path.join(tmp, "bert128-train.safetensors"), a.bert_L,
                          " ".join("w%d" % i for i in range(a.bert_L)))
        TorchWorker("bert", a.bert_L, 1, "pinned", a.dir, write=models["bert"][0])
    if "gpt2" in shapes:
        if not os.path.exists(os.path.join(a.dir, "model.safetensors")):
            sys.path.insert(0, HERE)
            import bench_gpt2
            print("writing %s (GPT-2 small's shapes, random weights, F32)" % a.dir, file=sys.stderr)
            bench_gpt2.write_folder(a.dir)
        models["gpt2"] = (a.dir, a.gpt2_L, "the" + " the" * (a.gpt2_L - 1))
    print("OPENBLAS_CORETYPE=%s; %d rounds of %d runs, alternated"
          % (os.environ.get("OPENBLAS_CORETYPE", "unset"), a.rounds, a.runs))
    print("load average before:", open("/proc/loadavg").read().split()[:3])
    print("| shape | L | threads | PyTorch's OpenBLAS | Stepformer forward+backward (ms) "
          "| PyTorch forward+backward (ms) | C / PyTorch |")
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: |")
    for shape in shapes:
        path, L, text = models[shape]
        for n in threads:
            for m in modes:
                worker = TorchWorker(shape, L, n, m, a.dir)
                cs, ts = [], []
                for r in range(a.rounds):
                    for who in (("torch", "c") if r % 2 == 0 else ("c", "torch")):
                        time.sleep(0.2)
                        if who == "torch":
                            ts.append(worker.time(a.runs))
                        else:
                            c, cl = c_time(a.bin, path, text, n, m, a.runs)
                            if cl != L:
                                sys.exit("bench_train: the text gave %d tokens, not %d" % (cl, L))
                            cs.append(c)
                worker.close()
                c, t = statistics.median(cs), statistics.median(ts)
                print(f"| {shape} | {L} | {n} | {m} | {c * 1e3:.1f} | {t * 1e3:.1f} | {c / t:.3f} |", flush=True)
    print("load average after:", open("/proc/loadavg").read().split()[:3])
    if "bert" in models:
        os.remove(models["bert"][0])
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
