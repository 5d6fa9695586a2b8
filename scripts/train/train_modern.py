#!/usr/bin/python3
"""train_modern.py -- trains the tiny Llama-style model of lessons/modern.md
(assets/models/modern.safetensors): the bank corpus through today's decoder.

Run from the repository root with Debian's python3-torch (a few minutes on one core):

    /usr/bin/python3 scripts/train/train_modern.py [--out FILE] [--seed N]

The architecture is the one of Llama 3, Qwen and SmolLM, small: D = 64, four query heads and two
K/V heads (grouped-query attention, d_k = 16), two layers, RMSNorm before attention and before the
feed-forward, rotary positions (RoPE, Hugging Face's rotate-half, θ = 10000) on Q and K and
nothing added to the embeddings, a SwiGLU feed-forward (F = 128: SiLU(x W_g) ⊙ x W_1, then W_2),
no biases, a final RMSNorm and a separate head. The forward is tests/gen_llama_ref.py's (plain
torch written from transformers' modeling_llama.py), the one Stepformer's golden tests hold the C
core to, so the trained file is read exactly as it was trained.

The objective is a decoder's: every position predicts the next word (causal mask), on the bank
corpus of corpus.py (scripts/train/corpus.py): after "bank" the next word is "where" (a river
bank) or "to" (a money bank), and the clues (river, fish / money, coins) come before it, so a head
of the model must look back from "bank" at the clue -- with RoPE, by what it is and how far back.

Checks (the script refuses to write a model that fails any, and exits 1):
  - after "the cat sleeps by the river bank" the top word is "where", after "she puts money in
    the bank" it is "to", and after "the cat walks by the bank" (no clue) both are among the
    three most likely words;
  - one query head of the last layer puts its largest weight from "bank" on "river" in the river
    sentence and on "money" in the money sentence (recorded as sense_layer, sense_head, 0-based).
The file is written atomically, in Stepformer's canonical form (model.h: in_proj_weight = the
Q, K, V rows stacked, gate.weight, linear1 = up, linear2 = down, norm1/norm2/norm, head), the
vocabulary and the architecture in its metadata.
"""
import argparse
import os
import random
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from corpus import corpus_words, make_corpus, tokenize  # noqa: E402
from train_bank import write_safetensors  # noqa: E402  (F32, atomic: temporary file + rename)
import gen_llama_ref as ref  # noqa: E402  (forward: the architecture, as the golden tests hold it)

D, H, HK, DK, FF, LAYERS = 64, 4, 2, 16, 128, 2
EPOCHS, LR, BATCH, N_SENTENCES = 12, 3e-3, 32, 3000
CHECKS = [("the cat sleeps by the river bank", "where", "river"), ("she puts money in the bank", "to", "money")]
NO_CLUE = "the cat walks by the bank"


def config(V):
    return {"vocab_size": V, "hidden_size": D, "num_attention_heads": H, "num_key_value_heads": HK,
            "head_dim": DK, "intermediate_size": FF, "num_hidden_layers": LAYERS, "rms_norm_eps": 1e-6,
            "rope_theta": 10000.0, "rope_style": "half", "hidden_act": "silu", "tie_word_embeddings": False}


def init(V, seed):
    g = torch.Generator().manual_seed(seed)

    def mat(o, i):
        return torch.nn.Parameter(torch.randn(o, i, generator=g) * i ** -0.5)

    def ones(n):
        return torch.nn.Parameter(torch.ones(n))

    w = {"embed": torch.nn.Parameter(torch.randn(V, D, generator=g) * 0.5), "layers": []}
    for _ in range(LAYERS):
        w["layers"].append({"input_layernorm": ones(D), "q_proj": mat(H * DK, D), "k_proj": mat(HK * DK, D),
                            "v_proj": mat(HK * DK, D), "o_proj": mat(D, H * DK), "post_attention_layernorm": ones(D),
                            "gate_proj": mat(FF, D), "up_proj": mat(FF, D), "down_proj": mat(D, FF)})
    w["norm"] = ones(D)
    w["lm_head"] = mat(V, D)
    return w


def params(w):
    out = [w["embed"], w["norm"], w["lm_head"]]
    for lw in w["layers"]:
        out += list(lw.values())
    return out


def train(seed, vocab):
    ids_of = {t: i for i, t in enumerate(vocab)}
    cfg = config(len(vocab))
    torch.manual_seed(seed)
    w = init(len(vocab), seed)
    opt = torch.optim.Adam(params(w), lr=LR)
    data = [[ids_of.get(t, 0) for t in tokenize(s)] for s, _ in make_corpus(N_SENTENCES, seed=seed)]
    data = [d for d in data if len(d) >= 2]
    rng = random.Random(seed)
    for epoch in range(EPOCHS):
        rng.shuffle(data)
        total = 0.0
        for b in range(0, len(data), BATCH):
            opt.zero_grad()
            loss = 0.0
            for ids in data[b:b + BATCH]:
                st = ref.forward(w, cfg, ids)
                loss = loss + F.cross_entropy(st["logits"][:-1], torch.tensor(ids[1:]))
            loss = loss / len(data[b:b + BATCH])
            loss.backward()
            opt.step()
            total += float(loss) * len(data[b:b + BATCH])
        print(f"  seed {seed} epoch {epoch + 1}: loss {total / len(data):.3f}", flush=True)
    return w, cfg


def evaluate(w, cfg, vocab):
    """The checks of the docstring; returns (ok, layer, head)."""
    ids_of = {t: i for i, t in enumerate(vocab)}
    with torch.no_grad():
        sense = None
        for text, word, clue in CHECKS:
            toks = tokenize(text)
            st = ref.forward(w, cfg, [ids_of[t] for t in toks])
            top = vocab[int(st["pred"][-1].argmax())]
            if top != word:
                print(f"  {text!r} -> {top}, expected {word}")
                return False, -1, -1
            A = st[f"l{LAYERS - 1}.A"][:, -1, :]  # [H, L]: the bank row of every head
            heads = {h for h in range(H) if toks[int(A[h].argmax())] == clue}
            sense = heads if sense is None else sense & heads
        toks = tokenize(NO_CLUE)
        p = ref.forward(w, cfg, [ids_of[t] for t in toks])["pred"][-1]
        top3 = [vocab[int(i)] for i in torch.argsort(-p)[:3]]
        if "where" not in top3 or "to" not in top3:
            print(f"  {NO_CLUE!r} -> {top3}: where and to should both be among the top three")
            return False, -1, -1
        if not sense:
            print("  no head of the last layer looks from bank at the clue in both sentences")
            return False, -1, -1
    return True, LAYERS - 1, min(sense)


def canonical(w):
    out = [("embed.weight", w["embed"])]
    for i, lw in enumerate(w["layers"]):
        c = f"layers.{i}."
        out += [(c + "norm1.weight", lw["input_layernorm"]),
                (c + "self_attn.in_proj_weight", torch.cat([lw["q_proj"], lw["k_proj"], lw["v_proj"]], 0)),
                (c + "self_attn.out_proj.weight", lw["o_proj"]), (c + "norm2.weight", lw["post_attention_layernorm"]),
                (c + "gate.weight", lw["gate_proj"]), (c + "linear1.weight", lw["up_proj"]),
                (c + "linear2.weight", lw["down_proj"])]
    return out + [("norm.weight", w["norm"]), ("head.weight", w["lm_head"])]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "assets", "models", "modern.safetensors"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tries", type=int, default=4)
    a = ap.parse_args()
    torch.set_num_threads(1)
    vocab = ["<unk>"] + corpus_words()
    t0 = time.time()
    for seed in range(a.seed, a.seed + a.tries):
        w, cfg = train(seed, vocab)
        ok, layer, head = evaluate(w, cfg, vocab)
        if ok:
            break
        print(f"seed {seed} fails the checks")
    if not ok:
        print(f"REFUSED: no model passed the checks; {a.out} is left as it was", file=sys.stderr)
        return 1
    meta = {"format": "pt", "d_model": str(D), "n_heads": str(H), "n_kv_heads": str(HK), "d_ff": str(FF),
            "n_layers": str(LAYERS), "norm_first": "1", "causal": "1", "norm": "rmsnorm", "rms_offset": "0",
            "layer_norm_eps": "1e-06", "pos_encoding": "rope", "rope_theta": "10000.0", "rope_style": "half",
            "ffn": "gated", "activation": "silu", "tie_head": "0", "tokenizer": "words", "vocab": "\n".join(vocab),
            "seed": str(seed), "sense_layer": str(layer), "sense_head": str(head), "sense_query": "bank",
            "objective": "next word at every position (causal)", "generator": "scripts/train/train_modern.py",
            "torch_version": torch.__version__}
    write_safetensors(a.out, [(n, t.detach()) for n, t in canonical(w)], meta)
    print(f"wrote {a.out} ({os.path.getsize(a.out)} bytes, seed {seed}, sense head layer {layer + 1} head "
          f"{head + 1}); {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
