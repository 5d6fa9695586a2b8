#!/usr/bin/env python3
"""Writes the SentencePiece GGUF fixture (tokenizer.ggml.model = llama) into tests/ref/gguf/ (numpy
only; run once by hand, then tests/gen_gguf_spm_ref.mjs for the reference ids):

    /usr/bin/python3 tests/gen_gguf_spm.py

tinyllama-spm.json.gz: a TinyLlama-like tokenizer.json cut from Llama 2's (tests/ref/tokjson/llama2.json.gz,
which TinyLlama shares): <unk> <s> </s>, the 256 byte tokens <0x00>..<0xFF>, the first 1000 merged
tokens (ids 259..1258), every one-character token (CJK, accents ...), then two added tokens
<|im_start|> (special) and <|user|> (not special); ids renumbered in that order; the merges of
Llama 2's file whose two halves and join are all kept, in their order; the same normalizer (Prepend
"▁", Replace " " -> "▁"), byte fallback, <s> as BOS, SentencePiece decoder.
tinyllama-spm.gguf: that vocabulary as llama.cpp's converter writes a SentencePiece model
(tokenizer.ggml.model "llama", tokens, scores, token_type: <unk> UNKNOWN 2, <s> </s> <|im_start|>
CONTROL 3, <|user|> USER_DEFINED 4, <0xHH> BYTE 6, the rest NORMAL 1; bos 1, eos 2, unknown 0,
add_bos_token true, add_eos_token false, add_space_prefix true). The scores: sentencepiece's model is
not on npm, so each token's score is -(the rank of the first merge of the tokenizer.json that makes
it) -- the order in which the converter wrote the merges, sorted by sentencepiece's scores -- and
-1e9 for a token no merge makes (they are never merged into). The weights: a random Llama (seed 35,
D 16, 2 heads, 1 K/V head, F 32, 1 layer, tied head), F16 matrices, F32 norms.
tests/fuzz/corpus/gguf/spm-*.gguf: seeds of fuzz_gguf with D 8: the first 300 tokens and the two
added ones (spm-small), without the byte tokens (spm-nobytes: the unknown token instead), without
add_space_prefix (spm-noprefix), and one with a BYTE token not of the form <0xHH> (spm-bad-byte).
bad-spm/NAME.gguf: the same file cut to its first 300 tokens, with one lie each (bad-spm/cases.txt: a piece of its one-line message).
"""
import gzip
import json
import os

import numpy as np

import gguf_py as g

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "ref", "gguf")
F = np.float32


def cut_tokenizer():
    tj = json.load(gzip.open(os.path.join(HERE, "ref", "tokjson", "llama2.json.gz"), "rt", encoding="utf-8"))
    old = tj["model"]["vocab"]
    inv = sorted(old, key=lambda t: old[t])
    keep = [t for t in inv if old[t] < 1259 or len(t) == 1]
    new = {t: i for i, t in enumerate(keep)}
    added = [a for a in tj["added_tokens"]]
    for content, special in (("<|im_start|>", True), ("<|user|>", False)):
        new[content] = len(new)
        added.append({"id": new[content], "content": content, "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": special})
    merges = []
    for m in tj["model"]["merges"]:
        a, b = m.split(" ") if isinstance(m, str) else m
        if a in new and b in new and a + b in new:
            merges.append(m)
    tj["model"]["vocab"] = new
    tj["model"]["merges"] = merges
    tj["added_tokens"] = added
    return tj


def scores_and_types(tj):
    vocab = tj["model"]["vocab"]
    V = len(vocab)
    tokens = [None] * V
    for t, i in vocab.items():
        tokens[i] = t
    scores = [-1e9] * V
    for rank, m in enumerate(tj["model"]["merges"]):
        a, b = m.split(" ") if isinstance(m, str) else m
        i = vocab[a + b]
        scores[i] = max(scores[i], -float(rank)) if scores[i] != -1e9 else -float(rank)
    special = {a["content"]: a["special"] for a in tj["added_tokens"]}
    types = []
    for t in tokens:
        if t == "<unk>":
            types.append(2)
        elif t in special:
            types.append(3 if special[t] else 4)
        elif len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            types.append(6)
        else:
            types.append(1)
    return tokens, scores, types


def writer(tokens, scores, types, rng, lie=None, D=16):
    lie = lie or {}
    H, Hk, FF, L = 2, 1, 2 * D, 1
    dk = D // H
    V = len(tokens)
    w = g.Writer(arch="llama")
    w.kv("general.name", g.STRING, "tinyllama-spm")
    for k, t, v in [("block_count", g.U32, L), ("context_length", g.U32, 2048), ("embedding_length", g.U32, D),
                    ("feed_forward_length", g.U32, FF), ("attention.head_count", g.U32, H),
                    ("attention.head_count_kv", g.U32, Hk), ("rope.freq_base", g.F32, 10000.0),
                    ("attention.layer_norm_rms_epsilon", g.F32, 1e-5), ("rope.dimension_count", g.U32, dk)]:
        w.kv("llama." + k, t, v)
    w.kv("tokenizer.ggml.model", g.STRING, lie.get("model", "llama"))
    w.kv("tokenizer.ggml.tokens", g.ARRAY, (g.STRING, lie.get("tokens", tokens)))
    w.kv("tokenizer.ggml.scores", g.ARRAY, (g.F32, lie.get("scores", scores)))
    w.kv("tokenizer.ggml.token_type", g.ARRAY, (g.I32, lie.get("types", types)))
    w.kv("tokenizer.ggml.bos_token_id", g.U32, lie.get("bos", 1))
    w.kv("tokenizer.ggml.eos_token_id", g.U32, 2)
    w.kv("tokenizer.ggml.unknown_token_id", g.U32, 0)
    w.kv("tokenizer.ggml.add_bos_token", g.BOOL, True)
    w.kv("tokenizer.ggml.add_eos_token", g.BOOL, False)
    w.kv("tokenizer.ggml.add_space_prefix", g.BOOL, lie.get("prefix", True))

    def rnd(*shape):
        return (rng.normal(size=shape) * 0.3).astype(F)

    w.tensor("token_embd.weight", rnd(V, D), "F16")
    for i in range(L):
        w.tensor(f"blk.{i}.attn_norm.weight", (1 + rnd(D) * 0.1).astype(F), "F32")
        w.tensor(f"blk.{i}.attn_q.weight", rnd(H * dk, D), "F16")
        w.tensor(f"blk.{i}.attn_k.weight", rnd(Hk * dk, D), "F16")
        w.tensor(f"blk.{i}.attn_v.weight", rnd(Hk * dk, D), "F16")
        w.tensor(f"blk.{i}.attn_output.weight", rnd(D, H * dk), "F16")
        w.tensor(f"blk.{i}.ffn_norm.weight", (1 + rnd(D) * 0.1).astype(F), "F32")
        w.tensor(f"blk.{i}.ffn_gate.weight", rnd(FF, D), "F16")
        w.tensor(f"blk.{i}.ffn_up.weight", rnd(FF, D), "F16")
        w.tensor(f"blk.{i}.ffn_down.weight", rnd(D, FF), "F16")
    w.tensor("output_norm.weight", (1 + rnd(D) * 0.1).astype(F), "F32")
    return w


def main():
    tj = cut_tokenizer()
    with gzip.GzipFile(os.path.join(OUT, "tinyllama-spm.json.gz"), "wb", compresslevel=9, mtime=0) as f:
        f.write(json.dumps(tj, ensure_ascii=False, indent=1).encode("utf-8"))
    tokens, scores, types = scores_and_types(tj)
    writer(tokens, scores, types, np.random.default_rng(35)).write(os.path.join(OUT, "tinyllama-spm.gguf"))
    fuzz_seeds(tokens, scores, types)
    bad = os.path.join(OUT, "bad-spm")
    os.makedirs(bad, exist_ok=True)
    tokens, scores, types = tokens[:300], scores[:300], types[:300]  # small files: the first 300 tokens
    byte_a = tokens.index("<0x41>")
    cases = {
        "score-count": ({"scores": scores[:-1]}, "scores for"),
        "byte-token": ({"tokens": tokens[:byte_a] + ["<0x4G>"] + tokens[byte_a + 1:]}, "not of the form <0xHH>"),
        "type-count": ({"types": types + [1]}, "tokenizer.ggml.token_type"),
        "duplicate-token": ({"tokens": tokens[:5] + [tokens[4]] + tokens[6:]}, "is there twice"),
        "unknown-type": ({"types": types[:7] + [9] + types[8:]}, "has type 9"),
        "bos-outside": ({"bos": len(tokens)}, "bos_token_id is not a token id"),
        "tokenizer-model": ({"model": "t5"}, "tokenizer.ggml.model \"t5\""),
    }
    with open(os.path.join(bad, "cases.txt"), "w") as f:
        f.write("# file TAB a piece of the one-line message: written by tests/gen_gguf_spm.py\n")
        for name, (lie, msg) in cases.items():
            writer(tokens, scores, types, np.random.default_rng(35), lie).write(os.path.join(bad, name + ".gguf"))
            f.write(f"{name}.gguf\t{msg}\n")


def fuzz_seeds(tokens, scores, types):
    d = os.path.join(HERE, "fuzz", "corpus", "gguf")
    keep = list(range(300)) + [len(tokens) - 2, len(tokens) - 1]  # the two added tokens are last
    tok, sc, ty = [tokens[i] for i in keep], [scores[i] for i in keep], [types[i] for i in keep]
    rng = lambda: np.random.default_rng(35)  # noqa: E731
    writer(tok, sc, ty, rng(), D=8).write(os.path.join(d, "spm-small.gguf"))
    nob = [i for i in range(len(tok)) if ty[i] != 6]
    writer([tok[i] for i in nob], [sc[i] for i in nob], [ty[i] for i in nob], rng(), D=8).write(
        os.path.join(d, "spm-nobytes.gguf"))
    writer(tok, sc, ty, rng(), {"prefix": False}, D=8).write(os.path.join(d, "spm-noprefix.gguf"))
    a = tok.index("<0x41>")
    writer(tok[:a] + ["<0x4G>"] + tok[a + 1:], sc, ty, rng(), D=8).write(os.path.join(d, "spm-bad-byte.gguf"))


if __name__ == "__main__":
    main()
