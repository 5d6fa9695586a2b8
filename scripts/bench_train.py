#!/usr/bin/python3
"""Times one training step (forward + backward) of Stepformer against PyTorch on the same weights.

Builds one BERT-base-shaped encoder layer (D=768, H=12, F=3072, post-norm, ReLU) with a prediction
head over a vocabulary of <unk> and L distinct words w0 .. w{L-1} (tests/gen_ref.py's construction,
seed 0), writes it as a canonical safetensors model into a temporary folder, and alternates rounds
of
  C:       stepformer bench --model M --text "w0 ... w{L-1}" --train --tsv --no-peak --threads n
           (model_forward, every stage kept in the trace, then backward_run: the loss against the
           next token and every stage's and weight's gradient)
  PyTorch: the same model as nn.Embedding + sinusoidal positions + nn.TransformerEncoder + nn.Linear
           in training mode (dropout 0), F.cross_entropy against the next token, loss.backward()
           (parameter gradients only), in a worker process with OMP_NUM_THREADS, OPENBLAS_NUM_THREADS
           and torch.set_num_threads = n,
each the median of --runs timed runs after a warm-up, PyTorch first in even rounds. Prints the
median over rounds of each side's medians and C/PyTorch.

    /usr/bin/python3 scripts/bench_train.py --bin build/stepformer [--L 128] [--rounds 5] [--runs 11]
        [--threads 1,2]
"""
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

WORKER = r"""
import os, sys, time, statistics
import torch, torch.nn as nn, torch.nn.functional as F
sys.path.insert(0, sys.argv[1])
import gen_ref
torch.set_num_threads(int(sys.argv[2]))
L, runs = int(sys.argv[3]), int(sys.argv[4])
a = gen_ref.parser().parse_args(["--seed", "0", "--D", "768", "--H", "12", "--F", "3072", "--layers", "1",
                                 "--head", "1", "--init", "torch"])
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
if sys.argv[5]:
    tensors = [("embed.weight", embed.weight)] + list(enc.state_dict().items())
    tensors += [("head.weight", head.weight), ("head.bias", head.bias)]
    vocab = ["<unk>"] + ["w%d" % i for i in range(L)]
    meta = {"format": "pt", "d_model": "768", "n_heads": "12", "d_ff": "3072", "n_layers": "1",
            "activation": "relu", "norm_first": "0", "vocab": "\n".join(vocab), "causal": "0",
            "layer_norm_eps": "1e-05", "pos_encoding": "sinusoidal"}
    gen_ref.write_safetensors(sys.argv[5], tensors, meta)
for _ in range(3):
    step()
dt = []
for _ in range(runs):
    t0 = time.perf_counter(); step(); dt.append(time.perf_counter() - t0)
print(statistics.median(dt))
"""


def torch_time(threads, L, runs, write=""):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    if threads > 1:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    out = subprocess.run([sys.executable, "-c", WORKER, os.path.join(HERE, "..", "tests"), str(threads), str(L),
                          str(runs), write], env=env, check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


def c_time(binary, model, text, threads, runs):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([binary, "bench", "--model", model, "--text", text, "--train", "--tsv", "--no-peak",
                          "--threads", str(threads), "--runs", str(runs)], env=env, check=True,
                         capture_output=True, text=True).stdout
    row = [line for line in out.splitlines() if line and not line.startswith(("#", "model"))][-1]
    return float(row.split("\t")[5])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/stepformer")
    ap.add_argument("--L", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--threads", default="1,2")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    model = os.path.join(tmp, "bert128-train.safetensors")
    torch_time(1, a.L, 1, write=model)
    text = " ".join("w%d" % i for i in range(a.L))
    print("load average before:", open("/proc/loadavg").read().split()[:3])
    print("| threads | Stepformer forward+backward (ms) | PyTorch forward+backward (ms) | C / PyTorch |")
    print("| --- | --- | --- | --- |")
    for n in [int(x) for x in a.threads.split(",")]:
        cs, ts = [], []
        for r in range(a.rounds):
            if r % 2 == 0:
                ts.append(torch_time(n, a.L, a.runs))
                cs.append(c_time(a.bin, model, text, n, a.runs))
            else:
                cs.append(c_time(a.bin, model, text, n, a.runs))
                ts.append(torch_time(n, a.L, a.runs))
        c, t = statistics.median(cs), statistics.median(ts)
        print(f"| {n} | {c * 1e3:.2f} | {t * 1e3:.2f} | {c / t:.2f} |", flush=True)
    print("load average after:", open("/proc/loadavg").read().split()[:3])
    os.remove(model)
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
