#!/usr/bin/python3
"""Times Stepformer's traced encoder-decoder forward against PyTorch's nn.Transformer, in one run.

The shapes of issue 11: the base model of "Attention Is All You Need" (D=512, H=8, F=2048, 6
encoder and 6 decoder layers, post-norm, ReLU) with random weights (seed 1), a source of S=32
words and a decoder input of T=32 (<bos> and 31 target words). Both sides compute the same thing:
embeddings + sinusoidal P, the encoder, memory, the decoder with its causal mask, the head and the
softmax over the target vocabulary (V_s = 64, V_t = 67). PyTorch: scripts/train/seq2seq_common.py's
Seq2Seq (nn.Transformer, batch_first, dropout 0) in eval mode under torch.no_grad(); Stepformer:
`stepformer bench --model FILE --text ... --target ...` on the same weights, written once to a
temporary file with the project's writer (every stage equal to PyTorch: tests/test_golden.c).

Two rows per thread count: the full forward, and one generation step with memory kept — PyTorch's
`decode(memory, tgt)` + softmax against Stepformer's decoder alone (the encoder, memory and the
cross-attention's K and V of memory kept from a first forward, as every generation step after the
first computes it).

Method as scripts/bench_forward.py: each measurement is the median of --runs timed runs after a
warm-up; the two sides alternate (PyTorch first in even rounds, C first in odd ones) for --rounds
rounds, in fresh processes whose environment sets the threads before torch is imported
(OMP_NUM_THREADS, OPENBLAS_NUM_THREADS; OMP_WAIT_POLICY=PASSIVE for 2 threads; --torch-native unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
for PyTorch alone, so that its OpenBLAS picks its own kernels); the C side gets
OPENBLAS_NUM_THREADS=1 and --threads n. The table gives the median over rounds of those medians
and C/PyTorch (the target of issue 11: at most 1.0).

    /usr/bin/python3 scripts/bench_seq2seq.py --bin build/stepformer [--rounds 5] [--runs 15]
        [--threads 1,2] [--markdown] [--torch-native]
Needs python3-torch (Debian). Machines are shared and noisy: compare medians of alternated runs.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
S_WORDS = [f"w{i}" for i in range(64)]
T_WORDS = [f"v{i}" for i in range(64)]
S, T = 32, 32
TEXT = " ".join(S_WORDS[:S])
TARGET = " ".join(T_WORDS[: T - 1])

# The PyTorch worker: argv = threads runs model_dir; prints "full_median_s decode_median_s".
WORKER = r"""
import os, sys, time, statistics
sys.path.insert(0, os.path.join(sys.argv[3], "train"))
import torch
torch.set_num_threads(int(sys.argv[1]))
import seq2seq_common as sc
runs = int(sys.argv[2])
torch.manual_seed(1)
m = sc.Seq2Seq(64, 67, 512, 8, 2048, 6, 6).eval()
src = torch.arange(1, 33).unsqueeze(0)
tgt = torch.cat([torch.tensor([1]), torch.arange(3, 34)]).unsqueeze(0)
def full():
    return torch.softmax(m(src, tgt), -1)
with torch.no_grad():
    memory = m.encode(src)
def dec():
    return torch.softmax(m.decode(memory, tgt), -1)
def timed(f):
    with torch.no_grad():
        t0 = time.perf_counter(); n = 0
        while n < 3 or time.perf_counter() - t0 < 0.3:
            f(); n += 1
        dt = []
        for _ in range(runs):
            a = time.perf_counter(); f(); dt.append(time.perf_counter() - a)
    return statistics.median(dt)
print(timed(full), timed(dec))
"""


NATIVE = False  # --torch-native: PyTorch's OpenBLAS picks its own kernels (AVX-512 where the CPU has it)


def env_for(threads, c_side):
    e = dict(os.environ)
    if NATIVE and not c_side:
        e.pop("OPENBLAS_CORETYPE", None)
        e.pop("OPENBLAS_L2_SIZE", None)
    e["OPENBLAS_NUM_THREADS"] = "1" if c_side else str(threads)
    e["OMP_NUM_THREADS"] = "1" if c_side else str(threads)
    if threads > 1 and not c_side:
        e["OMP_WAIT_POLICY"] = "PASSIVE"
    return e


def run_torch(threads, runs):
    out = subprocess.run([sys.executable, "-c", WORKER, str(threads), str(runs), HERE],
                         env=env_for(threads, False), capture_output=True, text=True, check=True)
    full, dec = out.stdout.split()
    return float(full), float(dec)


def run_c(binary, model, threads, runs):
    out = subprocess.run([binary, "bench", "--model", model, "--text", TEXT, "--target", TARGET,
                          "--threads", str(threads), "--runs", str(runs), "--tsv", "--no-peak"],
                         env=env_for(threads, True), capture_output=True, text=True, check=True)
    rows = [line.split("\t") for line in out.stdout.splitlines() if line and not line.startswith("#")]
    head, vals = rows[0], rows[1]
    d = dict(zip(head, vals))
    assert int(d["L"]) == S and int(d["T"]) == T, d
    return float(d["median_s"]), float(d["decoder_median_s"])


def write_model(path):
    sys.path.insert(0, os.path.join(HERE, "train"))
    import torch
    import seq2seq_common as sc
    torch.manual_seed(1)
    m = sc.Seq2Seq(64, 67, 512, 8, 2048, 6, 6).eval()
    tgt_vocab = sc.SPECIALS + T_WORDS
    src_vocab = ["<unk>"] + S_WORDS[:63]
    sc.write_model(path, m, sc.base_metadata(m, src_vocab, tgt_vocab, 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/stepformer")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--torch-native", action="store_true",
                    help="unset OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE for PyTorch alone (its own kernel choice)")
    a = ap.parse_args()
    global NATIVE
    NATIVE = a.torch_native
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "base6x6.safetensors")
        write_model(model)
        rows = []
        for threads in [int(x) for x in a.threads.split(",")]:
            c_full, c_dec, t_full, t_dec = [], [], [], []
            for r in range(a.rounds):
                order = [0, 1] if r % 2 == 0 else [1, 0]
                for side in order:
                    if side == 0:
                        f, d = run_torch(threads, a.runs)
                        t_full.append(f), t_dec.append(d)
                    else:
                        f, d = run_c(a.bin, model, threads, a.runs)
                        c_full.append(f), c_dec.append(d)
                print(f"threads {threads} round {r + 1}: C {c_full[-1] * 1e3:.2f} / {c_dec[-1] * 1e3:.2f} ms,"
                      f" PyTorch {t_full[-1] * 1e3:.2f} / {t_dec[-1] * 1e3:.2f} ms", file=sys.stderr)
            for what, c, t in (("full forward", c_full, t_full), ("one generation step", c_dec, t_dec)):
                cm, tm = statistics.median(c), statistics.median(t)
                rows.append((threads, what, cm, tm, cm / tm))
    if a.markdown:
        print("| threads | what | Stepformer ms | PyTorch ms | C/PyTorch |")
        print("| --- | --- | --- | --- | --- |")
        for th, what, cm, tm, q in rows:
            print(f"| {th} | {what} | {cm * 1e3:.2f} | {tm * 1e3:.2f} | {q:.2f} |")
    else:
        for th, what, cm, tm, q in rows:
            print(f"{th} thread(s)  {what:20s}  C {cm * 1e3:8.2f} ms  PyTorch {tm * 1e3:8.2f} ms  C/PyTorch {q:.2f}")


if __name__ == "__main__":
    main()
