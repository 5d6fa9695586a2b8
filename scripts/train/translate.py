#!/usr/bin/python3
"""translate.py -- trains the tiny English->French model Stepformer ships
(assets/models/translate.safetensors).

Run from the repository root with Debian's python3-torch (a few minutes on one core):

    /usr/bin/python3 scripts/train/translate.py [--out FILE]

--out defaults to assets/models/translate.safetensors in the repository this script belongs to.

The model (scripts/train/seq2seq_common.py): nn.Embedding(V_s, 64) and nn.Embedding(V_t, 64) +
sinusoidal positions on both sides (no sqrt(D) scaling) + nn.Transformer(d_model=64, nhead=4,
2 encoder and 2 decoder layers, dim_feedforward=128, relu, post-norm, batch_first, no dropout) +
a head nn.Linear(64, V_t). The corpus is corpus_fr.py: English sentences where "bank" is
"banque" beside money (money, coins) and "rive" beside a river (river, fish), and, one bank
sentence in five, no clue at all and either word at random.

The objective: translation with teacher forcing. The encoder reads the English sentence; the
decoder reads "<bos>" and the French tokens (causal mask) and every row is trained to give the
next French token, "<eos>" after the last (cross-entropy on every row). Both sides use
Stepformer's word tokenizer (corpus.tokenize), so "de l'argent" is the three tokens de, l, argent.

Seeds: the corpus, the initial weights and the batch order come from one seed. The script trains
with seed 1 and, if that model fails a check, with seeds 2, 3, ... (at most --tries) and keeps the
first that passes; every run is deterministic (one thread), so a seed gives the same file.

Checks (the script refuses to write a model that fails any, and exits 1):
  (a) greedy decoding (the loop Stepformer runs: the whole prefix through the decoder, argmax of
      the last row, stop at <eos>) translates fresh sentences from the generator exactly: 600
      sentences that are not in the training corpus and whose translation is determined (no
      ambiguous bank), rate at least 95%; and the sentences of CHECKS exactly as written there
      ("She puts money in the bank" -> "elle met de l argent dans la banque", ...).
  (b) the cross-attention head: in the greedy translations of those fresh sentences, at every row
      where the decoder writes "banque" or "rive" (the row whose input is the word before it), one
      head (layer, head) of the cross-attention d{layer}.cA puts its largest weight on the source
      word "bank" or on the clue word (money, coins, river, fish), in at least 90% of those rows.
      Of the heads that pass, the documented one is the one that peaks on the clue word itself
      most often: it shows why the word is banque or rive, where other heads only find "bank".
      It is recorded as the metadata keys cross_layer and cross_head (0-based).
  (c) the ambiguity: for "The cat walks by the bank" the decoder, fed "<bos> le chat marche près de
      la", predicts "banque" and "rive" as its two best words, each with probability at least 0.2.
Every check runs on tests/gen_ref_seq2seq.py's explicit float32 forward (the stages Stepformer
computes, under its dump names), which is asserted equal to torch.nn to 1e-4.
"""
import argparse
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import seq2seq_common as s2s  # noqa: E402  (sets one thread before torch loads)
from corpus_fr import make_pairs, tokenize, vocabularies  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

SEED, TRIES = 1, 5
D, H, FF, ENC, DEC = 64, 4, 128, 2, 2
N_PAIRS, EPOCHS, BATCH, LR = 6000, 12, 64, 2e-3
N_HELDOUT, MIN_EXACT, MIN_HEAD, MIN_AMBIG = 600, 0.95, 0.90, 0.2
CLUES = {"money", "coins", "river", "fish"}

# (English, the French the model must write, word for word as the tokenizer splits it)
CHECKS = [
    ("She puts money in the bank", "elle met de l argent dans la banque"),
    ("The cat sleeps by the river bank", "le chat dort près de la rive"),
    ("he walks with coins to the bank", "il marche avec des pièces vers la banque"),
    ("she sees the river and runs to the bank", "elle voit la rivière et court vers la rive"),
    ("the dogs walk to the bank with fish", "les chiens marchent vers la rive avec du poisson"),
    ("the mice eat the cheese", "les souris mangent le fromage"),
]
AMBIGUOUS = ("The cat walks by the bank", "le chat marche près de la")  # the next word: ?
OBJECTIVE = ("translation with teacher forcing: the encoder reads the English sentence, the "
             "decoder reads <bos> and the French tokens (causal mask) and every row is trained to "
             "give the next French token, <eos> after the last. 'bank' is 'banque' beside money "
             "or coins, 'rive' beside a river or fish, either at random without a clue.")


def ids(words, vocab):
    return [vocab.index(w) if w in vocab else 0 for w in words]


def heldout(train_en, n, seed=987654):
    """n fresh pairs from the generator: English not in the training corpus, translation
    determined (not a bank without clue)."""
    out, seen = [], set(train_en)
    for en, fr, sense in make_pairs(20 * n, seed=seed):
        if sense != "none" and en not in seen:
            seen.add(en)
            out.append((en, fr))
            if len(out) == n:
                break
    return out


def evaluate(model, sv, tv, train_en):
    """Runs checks (a), (b), (c). Returns (ok, cross layer, cross head, report lines, numbers)."""
    ok, rep = True, []
    test = heldout(train_en, N_HELDOUT)
    outs = s2s.greedy(model, [ids(tokenize(en), sv) for en, _ in test])
    got = [" ".join(tv[i] for i in o) for o in outs]
    exact = sum(g == " ".join(tokenize(fr)) for g, (_, fr) in zip(got, test)) / len(test)
    bad = [(en, g) for g, (en, fr) in zip(got, test) if g != " ".join(tokenize(fr))]
    good = exact >= MIN_EXACT
    ok &= good
    rep.append(f"  {'ok  ' if good else 'FAIL'} (a) exact greedy translations of {len(test)} fresh "
               f"sentences: {exact:.1%} (want {MIN_EXACT:.0%})" +
               "".join(f"\n         missed: {en!r} -> {g!r}" for en, g in bad[:5]))
    c_out = s2s.greedy(model, [ids(tokenize(en), sv) for en, _ in CHECKS])
    for (en, fr), o in zip(CHECKS, c_out):
        g = " ".join(tv[i] for i in o)
        good = g == fr and 0 not in ids(tokenize(en), sv)
        ok &= good
        rep.append(f"  {'ok  ' if good else 'FAIL'} (a) {en!r} -> {g!r}" +
                   ("" if good else f" (want {fr!r})"))

    # (b) the rows where the decoder writes banque or rive, in every (layer, head): where does the
    # row peak, on "bank" or its clue (any), and on the clue word itself (clue)?
    hits, clue_hits, rows, worst = np.zeros((DEC, H)), np.zeros((DEC, H)), 0, 0.0
    for (en, _), o in zip(test + CHECKS, outs + c_out):
        src = tokenize(en)
        want = [i for i, w in enumerate(src) if w == "bank" or w in CLUES]
        clue = [i for i, w in enumerate(src) if w in CLUES]
        dec = [1] + o
        targets = [t for t, i in enumerate(o) if tv[i] in ("banque", "rive")]
        if not targets:
            continue
        st, diff = s2s.stages(model, ids(src, sv), dec)
        worst = max(worst, diff)
        for t in targets:  # row t of the decoder reads dec[t] and writes o[t]
            rows += 1
            for j in range(DEC):
                peak = st[f"d{j}.cA"][:, t, :].argmax(-1)
                hits[j] += np.isin(peak, want)
                clue_hits[j] += np.isin(peak, clue)
    rate, clue_rate = hits / max(rows, 1), clue_hits / max(rows, 1)
    # the documented head: of the heads that pass, the one that looks at the clue word most often
    # (the one that shows WHY the word is banque or rive, not only where "bank" is)
    score = np.where(rate >= MIN_HEAD, 1.0, 0.0) * 10 + clue_rate + rate * 1e-3
    layer, head = np.unravel_index(np.argmax(score), score.shape)
    layer, head = int(layer), int(head)
    good = rows > 0 and rate[layer, head] >= MIN_HEAD
    ok &= good
    rep.append(f"  {'ok  ' if good else 'FAIL'} (b) cross-attention layer {layer} head {head} peaks "
               f"on 'bank' or its clue at {rate[layer, head]:.1%} of the {rows} rows that write "
               f"banque/rive (want {MIN_HEAD:.0%}), on the clue word itself at "
               f"{clue_rate[layer, head]:.1%}; every head, bank or clue: "
               f"{np.round(rate, 2).tolist()}, clue: {np.round(clue_rate, 2).tolist()}")

    # (c) the ambiguity
    en, prefix = AMBIGUOUS
    dec = [1] + ids(tokenize(prefix), tv)
    st, diff = s2s.stages(model, ids(tokenize(en), sv), dec)
    worst = max(worst, diff)
    p = st["pred"][-1]
    top = [tv[i] for i in np.argsort(-p)[:3]]
    pb, pr = p[tv.index("banque")], p[tv.index("rive")]
    good = set(top[:2]) == {"banque", "rive"} and min(pb, pr) >= MIN_AMBIG
    ok &= good
    rep.append(f"  {'ok  ' if good else 'FAIL'} (c) {en!r}, after {prefix!r}: " +
               ", ".join(f"{w} {p[tv.index(w)]:.3f}" for w in top) +
               f" (want banque and rive first, each at least {MIN_AMBIG})")
    rep.append(f"  explicit float32 stages vs torch.nn: max |diff| {worst:.1e}")
    nums = {"exact": exact, "n_heldout": len(test), "head_rate": float(rate[layer, head]),
            "clue_rate": float(clue_rate[layer, head]),
            "head_rows": rows, "p_banque": float(pb), "p_rive": float(pr)}
    return ok, layer, head, rep, nums


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(s2s.ROOT, "assets", "models",
                                                  "translate.safetensors"))
    ap.add_argument("--seed", type=int, default=SEED, help=f"first seed to try (default {SEED})")
    ap.add_argument("--tries", type=int, default=TRIES, help="seeds to try, one after the other")
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    a = ap.parse_args()

    t0 = time.time()
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    # the vocabularies: every word the generator makes (a fixed sample, whatever the seed)
    src_words, tgt_words = vocabularies(make_pairs(20000, seed=0))
    sv, tv = ["<unk>"] + src_words, s2s.SPECIALS + tgt_words
    for en, fr in CHECKS + [AMBIGUOUS]:
        assert all(w in sv for w in tokenize(en)) and all(w in tv for w in tokenize(fr)), en
    ok = False
    for seed in range(a.seed, a.seed + a.tries):
        t1 = time.time()
        torch.manual_seed(seed)
        random.seed(seed)
        pairs = make_pairs(N_PAIRS, seed=seed)
        examples = [(ids(tokenize(en), sv), ids(tokenize(fr), tv)) for en, fr, _ in pairs]
        assert all(0 not in s and 0 not in t for s, t in examples)
        print(f"seed {seed}: {len(pairs)} pairs ({len({p[0] for p in pairs})} distinct English), "
              f"vocabularies {len(sv)} English, {len(tv)} French", flush=True)
        model = s2s.Seq2Seq(len(sv), len(tv), D, H, FF, ENC, DEC)
        s2s.train(model, examples, seed, a.epochs, BATCH, LR,
                  log=lambda s: print(s, flush=True))
        train_s = time.time() - t1
        ok, layer, head, rep, nums = evaluate(model, sv, tv, {p[0] for p in pairs})
        print("\n".join(rep), flush=True)
        if ok:
            break
        print(f"seed {seed} fails the checks" +
              (", trying the next seed" if seed + 1 < a.seed + a.tries else ""))
    if not ok:
        print(f"REFUSED: no model passed the checks; {a.out} is left as it was", file=sys.stderr)
        return 1
    meta = s2s.base_metadata(model, sv, tv, seed)
    meta.update({"objective": OBJECTIVE, "cross_layer": str(layer), "cross_head": str(head),
                 "cross_query": "banque rive", "expect": "; ".join(f"{e} -> {f}" for e, f in CHECKS),
                 "ambiguous": f"{AMBIGUOUS[0]} -> {AMBIGUOUS[1]} banque {nums['p_banque']:.2f} / "
                              f"rive {nums['p_rive']:.2f}",
                 "heldout_exact": f"{nums['exact']:.4f} of {nums['n_heldout']}",
                 "cross_head_rate": f"bank or clue {nums['head_rate']:.4f}, clue word "
                                    f"{nums['clue_rate']:.4f}, of {nums['head_rows']} rows",
                 "generator": "scripts/train/translate.py"})
    n = s2s.write_model(a.out, model, meta)
    print(f"wrote {a.out} ({os.path.getsize(a.out)} bytes, {n} parameters, seed {seed}); "
          f"training took {train_s:.1f} s, everything {time.time() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
