#!/usr/bin/python3
"""Times Stepformer's traced forward pass against PyTorch on the same shapes, in one run.

For each thread count (1 and 2) and each size of `stepformer bench`, runs PyTorch's
nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0, batch_first=True) in
eval mode under torch.no_grad() on a random [1, L, D] input, and `stepformer bench --tsv` on the
same shape, alternating the two (PyTorch first in even rounds, C first in odd ones) for several
rounds. Each measurement is the median of --runs timed runs after a warm-up, the same method on
both sides (a run of a tiny size repeats the forward to last about a millisecond); the table
shows, per row, the median over rounds of those medians, C/PyTorch, the target and pass/fail
(and, as a check on noise from other programs, the ratio of the fastest runs).

Threads: PyTorch runs in two persistent worker processes whose environment is set before torch
is imported: OMP_NUM_THREADS=n and OPENBLAS_NUM_THREADS=n (Debian's torch calls OpenBLAS for
its products, and OpenBLAS ignores torch.set_num_threads: without the variable a "1-thread"
PyTorch multiplies on every core), torch.set_num_threads(n), and OMP_WAIT_POLICY=PASSIVE for 2
threads (its best setting on a shared 2-core machine). The C side gets OPENBLAS_NUM_THREADS=1
and --threads n: the forward splits its own work between n threads and keeps BLAS on one.

Kernels: --c-kernel avx512|avx2|blas sets SF_GEMM for Stepformer (gemm.h; default: the widest
the CPU runs). --torch-blas pinned keeps the environment for PyTorch's OpenBLAS (here
OPENBLAS_CORETYPE=Haswell: its AVX2 kernels); free unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
for the PyTorch worker alone, so that OpenBLAS picks its kernels for the CPU (AVX-512 where it
has it); pinned,free times both in the same alternated rounds. The coretype OpenBLAS used
(openblas_get_corename, asked in the worker) is printed and is a column of the table.

Run from the repository root, after building:
    /usr/bin/python3 scripts/bench_forward.py --bin build/stepformer [--rounds 5] [--runs 25]
        [--threads 1,2] [--sizes tiny,seed6,...] [--torch-blas pinned,free] [--c-kernel avx512]
        [--markdown]
Needs python3-torch (Debian). Machines are shared and noisy: compare medians of alternated runs.
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

SIZES = [  # name, D, H, F, L: the sizes of `stepformer bench`
    ("tiny", 16, 2, 64, 6),
    ("seed6", 512, 8, 2048, 6),
    ("seed100", 512, 8, 2048, 100),
    ("bert128", 768, 12, 3072, 128),
    ("bert512", 768, 12, 3072, 512),
]
# The most C may take, as a share of PyTorch's time (GitHub issue 2): it keeps every stage in
# its trace, PyTorch keeps none.
TARGETS = {"tiny": 0.05, "seed6": 0.8, "seed100": 0.95, "bert128": 0.95, "bert512": 0.95}

# The PyTorch worker: reads "NAME D H F L RUNS" lines, answers "median_s min_s reps".
TORCH_WORKER = r"""
import sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
torch.manual_seed(42)

def timed(layer, x, runs):
    with torch.no_grad():
        n, t0 = 0, time.perf_counter()
        while n < 3 or time.perf_counter() - t0 < 0.1:  # warm up, learn the time of one call
            layer(x)
            n += 1
        one = (time.perf_counter() - t0) / n
        reps = 1 if one >= 1e-3 else int(1e-3 / one) + 1
        dt = []
        for _ in range(runs):
            t = time.perf_counter()
            for _ in range(reps):
                layer(x)
            dt.append((time.perf_counter() - t) / reps)
    dt.sort()
    med = dt[len(dt) // 2] if len(dt) % 2 else 0.5 * (dt[len(dt) // 2 - 1] + dt[len(dt) // 2])
    return med, dt[0], reps

def openblas_core():
    # the kernels OpenBLAS chose (its coretype), from the library this process loaded
    import ctypes
    try:
        with open("/proc/self/maps") as f:
            libs = sorted({l.split()[-1] for l in f if "libopenblas" in l or "libblas" in l})
        for lib in libs:
            try:
                fn = ctypes.CDLL(lib).openblas_get_corename
            except (OSError, AttributeError):
                continue
            fn.restype = ctypes.c_char_p
            return fn().decode()
    except OSError:
        pass
    return "unknown"

torch.randn(4, 4) @ torch.randn(4, 4)  # loads the BLAS
print("ready", torch.__version__, torch.get_num_threads(), openblas_core(), flush=True)
for line in sys.stdin:
    name, D, H, F, L, runs = line.split()
    D, H, F, L, runs = int(D), int(H), int(F), int(L), int(runs)
    layer = torch.nn.TransformerEncoderLayer(D, H, F, dropout=0.0, batch_first=True).eval()
    x = torch.randn(1, L, D)
    med, mn, reps = timed(layer, x, runs)
    print(med, mn, reps, flush=True)
"""


def flops(D, H, F, L):
    """2·M·N·K for QKV, scores, A·V, output projection, FFN1, FFN2 (as stepformer bench)."""
    return 2.0 * L * (3 * D * D + L * D + L * D + D * D + F * D + D * F)


class TorchWorker:
    def __init__(self, threads, blas="pinned"):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                   MKL_NUM_THREADS=str(threads))
        if blas == "free":  # OpenBLAS picks its kernels for this CPU (AVX-512 where it has it)
            env.pop("OPENBLAS_CORETYPE", None)
            env.pop("OPENBLAS_L2_SIZE", None)
        if threads > 1:
            env["OMP_WAIT_POLICY"] = "PASSIVE"
        else:
            env.pop("OMP_WAIT_POLICY", None)
        self.p = subprocess.Popen([sys.executable, "-c", TORCH_WORKER, str(threads)], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self.p.stdout.readline().split()
        if not ready or ready[0] != "ready":
            sys.exit("bench_forward: the PyTorch worker did not start (is python3-torch installed?)")
        self.version, self.threads, self.core = ready[1], int(ready[2]), ready[3]

    def time(self, size, runs):
        name, D, H, F, L = size
        self.p.stdin.write("%s %d %d %d %d %d\n" % (name, D, H, F, L, runs))
        self.p.stdin.flush()
        med, mn, _ = self.p.stdout.readline().split()
        return float(med), float(mn)

    def close(self):
        self.p.stdin.close()
        self.p.wait()


C_KERNEL = "auto"  # --c-kernel: SF_GEMM for the C side (auto: the widest kernel the CPU runs)


def c_env():
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    if C_KERNEL != "auto":
        env["SF_GEMM"] = C_KERNEL
    return env


def run_c(binary, args):
    out = subprocess.run([binary, "bench", "--tsv"] + args, env=c_env(), check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    meta, rows = {}, []
    header = None
    for line in out.splitlines():
        if line.startswith("#"):
            key, _, value = line[1:].partition("\t")
            meta[key] = value
        elif header is None:
            header = line.split("\t")
        else:
            rows.append(dict(zip(header, line.split("\t"))))
    return meta, rows


def time_c(binary, size, threads, runs):
    _, rows = run_c(binary, ["--no-peak", "--sizes", size[0], "--threads", str(threads),
                             "--runs", str(runs)])
    return float(rows[0]["median_s"]), float(rows[0]["min_s"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/stepformer", help="the stepformer executable")
    ap.add_argument("--rounds", type=int, default=5, help="alternated rounds (default 5)")
    ap.add_argument("--runs", type=int, default=25, help="timed runs per measurement (default 25)")
    ap.add_argument("--threads", default="1,2", help="thread counts to compare (default 1,2)")
    ap.add_argument("--sizes", default=",".join(s[0] for s in SIZES))
    ap.add_argument("--pause", type=float, default=0.3,
                    help="seconds to wait between measurements, for BLAS threads to go idle")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--torch-blas", default="pinned",
                    help="PyTorch's OpenBLAS kernels, one or both of pinned,free: pinned keeps this "
                         "environment (OPENBLAS_CORETYPE=Haswell pins the AVX2 kernels); free unsets "
                         "OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for the PyTorch worker alone, so "
                         "that OpenBLAS picks its kernels for the CPU (default pinned)")
    ap.add_argument("--c-kernel", default="auto", choices=["auto", "avx512", "avx2", "blas"],
                    help="Stepformer's product kernel (sets SF_GEMM; auto: the widest the CPU runs)")
    a = ap.parse_args()
    global C_KERNEL
    C_KERNEL = a.c_kernel
    modes = a.torch_blas.split(",")
    if not modes or any(m not in ("pinned", "free") for m in modes):
        sys.exit("bench_forward: --torch-blas %s: use pinned, free or pinned,free" % a.torch_blas)
    if not os.access(a.bin, os.X_OK):
        sys.exit("bench_forward: %s is not an executable; build first or pass --bin" % a.bin)
    sizes = [s for s in SIZES if s[0] in a.sizes.split(",")]
    threads = [int(t) for t in a.threads.split(",")]

    meta, _ = run_c(a.bin, ["--machine", "--peak-only"])
    peaks = {}
    workers = {(n, m): TorchWorker(n, m) for n in threads for m in modes}
    print("machine: %s, %s cores; %s" % (meta.get("cpu"), meta.get("cores"), meta.get("openblas")))
    print("C: product kernel %s (SF_GEMM%s)" % (a.c_kernel, "=" + a.c_kernel if a.c_kernel != "auto"
                                                 else " unset: the widest this CPU runs"))
    for m in modes:
        print("PyTorch, OpenBLAS %s: coretype %s (OPENBLAS_CORETYPE %s)"
              % (m, workers[(threads[0], m)].core,
                 "unset" if m == "free" else os.environ.get("OPENBLAS_CORETYPE", "unset")))
    print("PyTorch %s (python %s); %d rounds of %d runs, alternated"
          % (workers[(threads[0], modes[0])].version, platform.python_version(), a.rounds, a.runs))
    sys.stdout.flush()

    # one (median, min) per round; torch_t by (threads, size, mode)
    torch_t = {(n, s[0], m): [] for n in threads for s in sizes for m in modes}
    c_t = {(n, s[0]): [] for n in threads for s in sizes}
    load_before = os.getloadavg()
    for r in range(a.rounds):
        for n in threads:
            m, _ = run_c(a.bin, ["--peak-only", "--threads", str(n)])
            peaks.setdefault(n, []).append(float(m["peak_gflops"]))
            for s in sizes:
                order = ["torch:" + m for m in modes] + ["c"]
                if r % 2:
                    order.reverse()
                for who in order:
                    time.sleep(a.pause)
                    if who != "c":
                        m = who.split(":")[1]
                        torch_t[(n, s[0], m)].append(workers[(n, m)].time(s, a.runs))
                    else:
                        c_t[(n, s[0])].append(time_c(a.bin, s, n, a.runs))
        print("round %d/%d done" % (r + 1, a.rounds), file=sys.stderr)
    for w in workers.values():
        w.close()

    load_after = os.getloadavg()
    print("load average (1 min) before/after: %.2f / %.2f" % (load_before[0], load_after[0]))
    rows, failed = [], 0
    for n in threads:
        peak = statistics.median(peaks[n])
        for s in sizes:
            for mode in modes:
                name, D, H, F, L = s
                tm = statistics.median(m for m, _ in torch_t[(n, name, mode)])
                cm = statistics.median(m for m, _ in c_t[(n, name)])
                tmin = min(m for _, m in torch_t[(n, name, mode)])
                cmin = min(m for _, m in c_t[(n, name)])
                ratio, target = cm / tm, TARGETS[name]
                ok = ratio <= target
                failed += not ok
                gf = flops(D, H, F, L) / cm * 1e-9
                rows.append((n, name, D, H, F, L, workers[(n, mode)].core, tm * 1e3, cm * 1e3, ratio,
                             cmin / tmin, target, gf, 100 * gf / peak, "pass" if ok else "FAIL"))
        print("sgemm peak, %d thread%s: %.1f GFLOP/s (median of %d)"
              % (n, "s" if n > 1 else "", peak, len(peaks[n])))
    print("C/PyTorch compares the medians; \"of mins\" compares the fastest runs (less sensitive to"
          " other programs).")
    if a.markdown:
        print("\n| threads | size | D | H | F | L | PyTorch's OpenBLAS | PyTorch ms | C ms | C/PyTorch "
              "| of mins | target | C GFLOP/s | % of sgemm peak | result |")
        print("|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for r in rows:
            print("| %d | %s | %d | %d | %d | %d | %s | %.4g | %.4g | %.3f | %.3f | ≤ %.2f | %.1f | %.0f %% "
                  "| %s |" % r)
    else:
        print("\n%-7s %-8s %5s %3s %5s %4s %-10s %11s %11s %9s %7s %6s %9s %6s  %s"
              % ("threads", "size", "D", "H", "F", "L", "torch BLAS", "PyTorch ms", "C ms", "C/PyTorch",
                 "of mins", "target", "GFLOP/s", "%peak", "result"))
        for r in rows:
            print("%-7d %-8s %5d %3d %5d %4d %-10s %11.4f %11.4f %9.3f %7.3f %6.2f %9.1f %5.0f%%  %s" % r)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
