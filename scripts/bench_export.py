#!/usr/bin/python3
"""bench_export.py -- time `stepformer export` of the cat/bank sentence to PNG beside matplotlib.

    /usr/bin/python3 scripts/bench_export.py --bin build/stepformer [--rounds 7] [--threads 1,2]

Stepformer writes one 1920x1080 PNG per step of the pass (per head for per-head stages: 25
pictures for the shipped model). matplotlib draws the same matrices at the same size the way a
notebook user does: imshow + colorbar + token tick labels + title, savefig, close -- one figure
per picture, under the Agg backend, in this process (imports done before timing, so Python's
start-up is not counted; Stepformer's start-up, model load and fonts are). The two alternate
within each round (which goes first flips every round); the table gives medians over rounds.
Needs python3-matplotlib and numpy (Debian); only for this benchmark.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

# picture name (without NN- and -hH) -> the .npy of the matrix it shows
STAGE_FILE = {"tokens": "O", "onehot": "O", "embed": "X", "posenc": "P", "addpos": "Z", "qkv": "{l}.Q",
              "scores": "{l}.S", "mask": "{l}.S", "softmax": "{l}.A", "av": "{l}.AV", "concat": "{l}.concat",
              "outproj": "{l}.attn", "addnorm1": "{l}.norm1", "ffn_hidden": "{l}.ffn_hidden", "ffn_out": "{l}.ffn",
              "addnorm2": "{l}.out", "predict": "pred", "prenorm": "{l}.norm1"}


def matrices(bin_, text, work):
    """The matrix of every picture stepformer exports, in its order, as (name, array, tokens)."""
    npy, png = os.path.join(work, "npy"), os.path.join(work, "names")
    subprocess.run([bin_, "export", "--text", text, "--format", "npy", "--out", npy], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([bin_, "export", "--text", text, "--format", "png", "--out", png], check=True,
                   stdout=subprocess.DEVNULL)
    tokens = open(os.path.join(npy, "tokens.txt")).read().split()
    out = []
    for name in sorted(f for f in os.listdir(png) if f.endswith(".png")):
        parts = name[:-4].split("-")[1:]
        layer = "l0"
        if parts[0].startswith("l") and parts[0][1:].isdigit():
            layer = "l%d" % (int(parts[0][1:]) - 1)
            parts = parts[1:]
        head = None
        if parts[-1].startswith("h") and parts[-1][1:].isdigit():
            head = int(parts[-1][1:]) - 1
            parts = parts[:-1]
        stage = "-".join(parts)
        a = np.load(os.path.join(npy, STAGE_FILE[stage].format(l=layer) + ".npy"))
        if a.ndim == 3:
            a = a[head] if head is not None else np.concatenate(list(a), axis=1)
        out.append((name, a, tokens))
    return out


def run_matplotlib(mats, outdir):
    for name, a, tokens in mats:
        fig = plt.figure(figsize=(19.2, 10.8), dpi=100)
        ax = fig.add_subplot(1, 1, 1)
        im = ax.imshow(np.where(np.isfinite(a), a, np.nan), cmap="RdBu_r", aspect="auto")
        fig.colorbar(im, ax=ax)
        if a.shape[0] == len(tokens):
            ax.set_yticks(range(len(tokens)), tokens)
        if a.shape[1] == len(tokens):
            ax.set_xticks(range(len(tokens)), tokens)
        ax.set_title(name)
        fig.savefig(os.path.join(outdir, name))
        plt.close(fig)


def run_stepformer(bin_, text, outdir, threads):
    subprocess.run([bin_, "export", "--text", text, "--format", "png", "--out", outdir, "--threads", str(threads)],
                   check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/stepformer")
    ap.add_argument("--text", default="The cat walks by the bank")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", default="1,2")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    work = tempfile.mkdtemp(prefix="sf-bench-export-")
    try:
        mats = matrices(a.bin, a.text, work)
        n = len(mats)
        times = {"matplotlib": []}
        times.update({t: [] for t in threads})
        run_matplotlib(mats[:2], work)  # warm matplotlib's caches (fonts, colormaps)
        for r in range(a.rounds):
            order = ["matplotlib"] + threads
            if r % 2:
                order.reverse()
            for who in order:
                out = os.path.join(work, "out-%s" % who)
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out)
                t0 = time.perf_counter()
                if who == "matplotlib":
                    run_matplotlib(mats, out)
                else:
                    run_stepformer(a.bin, a.text, out, who)
                times[who].append(time.perf_counter() - t0)
                time.sleep(0.2)
        mpl = statistics.median(times["matplotlib"])
        print("Export of every stage of \"%s\": %d pictures of 1920x1080, median of %d rounds" % (a.text, n, a.rounds))
        print("")
        print("| exporter | total (median) | per picture | vs matplotlib |")
        print("| --- | ---: | ---: | ---: |")
        print("| matplotlib %s (imshow + colorbar + savefig) | %.0f ms | %.1f ms | 1.0x |"
              % (matplotlib.__version__, mpl * 1e3, mpl * 1e3 / n))
        for t in threads:
            m = statistics.median(times[t])
            print("| stepformer export, %d thread%s (whole command) | %.0f ms | %.1f ms | %.1fx faster |"
                  % (t, "s" if t > 1 else "", m * 1e3, m * 1e3 / n, mpl / m))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
