#!/usr/bin/env python3
"""Writes tiny GPT-2 and BERT checkpoints in the Hugging Face hub's layout, and every stage.

    /usr/bin/python3 tests/gen_hub_fixtures.py        # rewrites tests/ref/hub/

Plain torch, written from the published architectures (transformers is not used): GPT-2
(Radford et al. 2019; the hub's GPT2Model: Conv1D layers y = x·W + b with W [in, out], pre-norm,
gelu_new = the tanh form, learned positions, causal attention, ln_f, head tied to wte) and BERT
(Devlin et al. 2019; BertForMaskedLM: word + position + token-type embeddings, LayerNorm,
post-norm layers with nn.Linear query/key/value, erf GELU, the masked-LM transform dense + GELU +
LayerNorm, decoder tied to the word embeddings plus its own bias).

Each folder holds config.json, model.safetensors (under the hub's exact tensor names), the
tokenizer's files, and per sentence a subfolder sN/ with tokens.txt (one label a line), ids.txt
and one float32 .npy per stage, named as the encoder's dump (O X P Z l{i}.* final_norm logits
pred) plus embed_sum, head_hidden, head_norm for BERT. cases.txt lists folder, sentence.

Variants:
  gpt2-tiny       F32, no prefix (as the hub's gpt2), with the attn.bias / masked_bias buffers
  gpt2-tiny-f16   F16, "transformer." prefix, lm_head.weight saved (equal to wte)
  bert-tiny       F32, "bert." prefix, pooler, cls.seq_relationship, position_ids (I64), decoder
                  weight saved (equal to word_embeddings)
  bert-tiny-bf16  BF16, no prefix, LayerNorm.gamma|beta (the old TensorFlow names)
The tokenizers are small made-up vocabularies (the real ones are tested in test_bpe and
test_wordpiece); the references use the weights as the file stores them (rounded to F16/BF16).
"""
import json
import math
import os
import re
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ref", "hub")
SENTENCES_GPT2 = ["The cat walks by the bank", "a bank, the river's bank!"]
SENTENCES_BERT = ["The cat walks by the [MASK].", "A dog sat on the mat, by the river bank."]


# ---------------------------------------------------------------- safetensors
def write_safetensors(path, tensors):
    """tensors: list of (name, array, dtype) with dtype F32, F16, BF16 or I64."""
    header, blobs, off = {}, [], 0
    header["__metadata__"] = {"format": "pt"}
    for name, a, dtype in tensors:
        a = np.ascontiguousarray(a)
        if dtype == "F32":
            b = a.astype("<f4").tobytes()
        elif dtype == "F16":
            b = a.astype("<f2").tobytes()
        elif dtype == "BF16":
            u = np.ascontiguousarray(a.astype("<f4")).view("<u4")
            b = (u >> 16).astype("<u2").tobytes()  # the values were rounded to bf16 before
        elif dtype == "I64":
            b = a.astype("<i8").tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))


def stored(t, dtype):
    """The float32 values a tensor has once stored in dtype and read back."""
    if dtype == "F16":
        return t.to(torch.float16).to(torch.float32)
    if dtype == "BF16":
        return t.to(torch.bfloat16).to(torch.float32)
    return t.clone()


# ---------------------------------------------------------------- GPT-2's byte-level BPE
def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE = bytes_to_unicode()
# GPT-2's pattern for ASCII text (the fixtures' sentences are ASCII)
PAT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


def bpe_word(word, ranks):
    parts = list(word)
    while len(parts) > 1:
        pairs = [(ranks.get((a, b), 1 << 30), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
        r, _ = min(pairs)
        if r == 1 << 30:
            break
        a, b = [p for p in zip(parts, parts[1:]) if ranks.get(p) == r][0]
        out, i = [], 0
        while i < len(parts):
            if i + 1 < len(parts) and parts[i] == a and parts[i + 1] == b:
                out.append(a + b)
                i += 2
            else:
                out.append(parts[i])
                i += 1
        parts = out
    return parts


def make_bpe():
    """A small vocabulary: the 256 byte characters, merges learned greedily from a corpus, and
    <|endoftext|>."""
    corpus = "The cat walks by the bank. The bank of the river. A cat sat by the river bank " \
             "and the cat walks to the bank, the banks, walking cats."
    words = ["".join(BYTE[b] for b in w.encode()) for w in PAT.findall(corpus)]
    merges, ranks = [], {}
    for _ in range(40):
        counts = {}
        for w in words:
            ps = bpe_word(w, ranks)
            for p in zip(ps, ps[1:]):
                counts[p] = counts.get(p, 0) + 1
        if not counts:
            break
        best = max(sorted(counts), key=lambda p: counts[p])
        ranks[best] = len(merges)
        merges.append(best)
    vocab = {c: i for i, c in enumerate(BYTE.values())}  # bytes_to_unicode's order, as GPT-2's
    for a, b in merges:
        if a + b not in vocab:
            vocab[a + b] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    return vocab, merges, ranks


def bpe_encode(text, vocab, ranks):
    ids = []
    for piece in PAT.findall(text):
        for tok in bpe_word("".join(BYTE[b] for b in piece.encode()), ranks):
            ids.append(vocab[tok])
    return ids


def bpe_label(tok):
    inv = {c: b for b, c in BYTE.items()}
    s = bytes(inv[c] for c in tok).decode("utf-8", "replace")
    return s.replace(" ", "␣").replace("\n", "↵").replace("\t", "⇥")


# ---------------------------------------------------------------- BERT's WordPiece
BERT_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "?", "'", "the", "cat",
              "walk", "##s", "##ing", "by", "bank", "a", "dog", "sat", "on", "mat", "river", "money",
              "is", "to", "went", "ban", "##k", "ri", "##ver", "d", "##og"] + \
             list("bcefghijklmnopqrstuvwxyz") + ["##" + c for c in "abcdefghijlmnpqrtuvwxyz"]


def wp_encode(text, vocab):
    index = {t: i for i, t in enumerate(vocab)}
    ids = [index["[CLS]"]]
    for chunk in re.split(r"(\[MASK\])", text):
        if chunk == "[MASK]":
            ids.append(index["[MASK]"])
            continue
        for word in re.findall(r"[A-Za-z0-9]+|[^\sA-Za-z0-9]", chunk.lower()):
            start, pieces = 0, []
            while start < len(word):
                end = len(word)
                while end > start:
                    sub = ("##" if start else "") + word[start:end]
                    if sub in index:
                        break
                    end -= 1
                if end == start:
                    pieces = [index["[UNK]"]]
                    break
                pieces.append(index[sub])
                start = end
            ids += pieces
    return ids + [index["[SEP]"]]


# ---------------------------------------------------------------- the models
def layer_norm(x, w, b, eps):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def attention(st, p, x_in, a_in, wq, bq, wk, bk, wv, bv, H, causal):
    """Q K V S A AV concat from a_in; weights as nn.Linear [out, in]."""
    L, D = a_in.shape
    dk = D // H
    split = lambda t: t.reshape(L, H, dk).transpose(0, 1).contiguous()
    Q, K, V = split(a_in @ wq.T + bq), split(a_in @ wk.T + bk), split(a_in @ wv.T + bv)
    S = Q @ K.transpose(1, 2) / math.sqrt(dk)
    if causal:
        S = S.masked_fill(torch.triu(torch.ones(L, L, dtype=torch.bool), 1), float("-inf"))
    A = torch.softmax(S, dim=-1)
    AV = A @ V
    concat = AV.transpose(0, 1).reshape(L, D)
    st.update({p + "in": x_in, p + "Q": Q, p + "K": K, p + "V": V, p + "S": S, p + "A": A,
               p + "AV": AV, p + "concat": concat})
    return concat


def gpt2_forward(w, cfg, ids):
    """GPT2LMHeadModel's forward, every stage. w: hub names without prefix, float32."""
    D, H, V = cfg["n_embd"], cfg["n_head"], cfg["vocab_size"]
    eps, L = cfg["layer_norm_epsilon"], len(ids)
    st = {}
    O = F.one_hot(torch.tensor(ids), V).to(torch.float32)
    X = O @ w["wte.weight"]
    P = w["wpe.weight"][:L]
    Z = X + P
    st.update(O=O, X=X, P=P, Z=Z)
    h = Z
    for i in range(cfg["n_layer"]):
        g = lambda n: w[f"h.{i}.{n}"]
        p = f"l{i}."
        norm1 = layer_norm(h, g("ln_1.weight"), g("ln_1.bias"), eps)
        Wa, ba = g("attn.c_attn.weight"), g("attn.c_attn.bias")  # Conv1D [D, 3D]: x·W + b
        concat = attention(st, p, h, norm1, Wa[:, :D].T, ba[:D], Wa[:, D:2 * D].T, ba[D:2 * D],
                           Wa[:, 2 * D:].T, ba[2 * D:], H, True)
        attn = concat @ g("attn.c_proj.weight") + g("attn.c_proj.bias")
        res1 = h + attn
        norm2 = layer_norm(res1, g("ln_2.weight"), g("ln_2.bias"), eps)
        ffn_pre = norm2 @ g("mlp.c_fc.weight") + g("mlp.c_fc.bias")
        ffn_hidden = gelu_tanh(ffn_pre)
        ffn = ffn_hidden @ g("mlp.c_proj.weight") + g("mlp.c_proj.bias")
        res2 = res1 + ffn
        st.update({p + "attn": attn, p + "res1": res1, p + "norm1": norm1, p + "ffn_pre": ffn_pre,
                   p + "ffn_hidden": ffn_hidden, p + "ffn": ffn, p + "res2": res2, p + "norm2": norm2,
                   p + "out": res2})
        h = res2
    y = layer_norm(h, w["ln_f.weight"], w["ln_f.bias"], eps)
    logits = y @ w["wte.weight"].T
    st.update(final_norm=y, logits=logits, pred=torch.softmax(logits, dim=-1))
    return st


def bert_forward(w, cfg, ids):
    """BertForMaskedLM's forward (token type 0 throughout), every stage. w: names without bert."""
    D, H, V = cfg["hidden_size"], cfg["num_attention_heads"], cfg["vocab_size"]
    eps, L = cfg["layer_norm_eps"], len(ids)
    st = {}
    O = F.one_hot(torch.tensor(ids), V).to(torch.float32)
    X = O @ w["embeddings.word_embeddings.weight"]
    P = w["embeddings.position_embeddings.weight"][:L]
    s = X + P + w["embeddings.token_type_embeddings.weight"][0]
    Z = layer_norm(s, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    st.update(O=O, X=X, P=P, embed_sum=s, Z=Z)
    h = Z
    for i in range(cfg["num_hidden_layers"]):
        g = lambda n: w[f"encoder.layer.{i}.{n}"]
        p = f"l{i}."
        concat = attention(st, p, h, h, g("attention.self.query.weight"), g("attention.self.query.bias"),
                           g("attention.self.key.weight"), g("attention.self.key.bias"),
                           g("attention.self.value.weight"), g("attention.self.value.bias"), H, False)
        attn = concat @ g("attention.output.dense.weight").T + g("attention.output.dense.bias")
        res1 = h + attn
        norm1 = layer_norm(res1, g("attention.output.LayerNorm.weight"), g("attention.output.LayerNorm.bias"), eps)
        ffn_pre = norm1 @ g("intermediate.dense.weight").T + g("intermediate.dense.bias")
        ffn_hidden = F.gelu(ffn_pre)
        ffn = ffn_hidden @ g("output.dense.weight").T + g("output.dense.bias")
        res2 = norm1 + ffn
        norm2 = layer_norm(res2, g("output.LayerNorm.weight"), g("output.LayerNorm.bias"), eps)
        st.update({p + "attn": attn, p + "res1": res1, p + "norm1": norm1, p + "ffn_pre": ffn_pre,
                   p + "ffn_hidden": ffn_hidden, p + "ffn": ffn, p + "res2": res2, p + "norm2": norm2,
                   p + "out": norm2})
        h = norm2
    hh = F.gelu(h @ w["cls.predictions.transform.dense.weight"].T + w["cls.predictions.transform.dense.bias"])
    hn = layer_norm(hh, w["cls.predictions.transform.LayerNorm.weight"],
                    w["cls.predictions.transform.LayerNorm.bias"], eps)
    logits = hn @ w["embeddings.word_embeddings.weight"].T + w["cls.predictions.bias"]
    st.update(head_hidden=hh, head_norm=hn, logits=logits, pred=torch.softmax(logits, dim=-1))
    return st


def rand(g, *shape, std=0.3):
    return torch.randn(*shape, generator=g) * std


def gpt2_weights(cfg, seed):
    g = torch.Generator().manual_seed(seed)
    D, V, Pn, Fw = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"], 4 * cfg["n_embd"]
    w = {"wte.weight": rand(g, V, D, std=0.5), "wpe.weight": rand(g, Pn, D, std=0.3)}
    for i in range(cfg["n_layer"]):
        b = f"h.{i}."
        w[b + "ln_1.weight"], w[b + "ln_1.bias"] = 1 + rand(g, D, std=0.1), rand(g, D, std=0.1)
        w[b + "attn.c_attn.weight"], w[b + "attn.c_attn.bias"] = rand(g, D, 3 * D), rand(g, 3 * D, std=0.1)
        w[b + "attn.c_proj.weight"], w[b + "attn.c_proj.bias"] = rand(g, D, D), rand(g, D, std=0.1)
        w[b + "ln_2.weight"], w[b + "ln_2.bias"] = 1 + rand(g, D, std=0.1), rand(g, D, std=0.1)
        w[b + "mlp.c_fc.weight"], w[b + "mlp.c_fc.bias"] = rand(g, D, Fw), rand(g, Fw, std=0.1)
        w[b + "mlp.c_proj.weight"], w[b + "mlp.c_proj.bias"] = rand(g, Fw, D, std=0.15), rand(g, D, std=0.1)
    w["ln_f.weight"], w["ln_f.bias"] = 1 + rand(g, D, std=0.1), rand(g, D, std=0.1)
    return w


def bert_weights(cfg, seed):
    g = torch.Generator().manual_seed(seed)
    D, V, Fw = cfg["hidden_size"], cfg["vocab_size"], cfg["intermediate_size"]
    w = {"embeddings.word_embeddings.weight": rand(g, V, D, std=0.5),
         "embeddings.position_embeddings.weight": rand(g, cfg["max_position_embeddings"], D),
         "embeddings.token_type_embeddings.weight": rand(g, cfg["type_vocab_size"], D),
         "embeddings.LayerNorm.weight": 1 + rand(g, D, std=0.1), "embeddings.LayerNorm.bias": rand(g, D, std=0.1)}
    for i in range(cfg["num_hidden_layers"]):
        b = f"encoder.layer.{i}."
        for n in ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"]:
            w[b + n + ".weight"], w[b + n + ".bias"] = rand(g, D, D), rand(g, D, std=0.1)
        w[b + "intermediate.dense.weight"], w[b + "intermediate.dense.bias"] = rand(g, Fw, D), rand(g, Fw, std=0.1)
        w[b + "output.dense.weight"], w[b + "output.dense.bias"] = rand(g, D, Fw, std=0.15), rand(g, D, std=0.1)
        for n in ["attention.output.LayerNorm", "output.LayerNorm"]:
            w[b + n + ".weight"], w[b + n + ".bias"] = 1 + rand(g, D, std=0.1), rand(g, D, std=0.1)
    w["cls.predictions.transform.dense.weight"] = rand(g, D, D)
    w["cls.predictions.transform.dense.bias"] = rand(g, D, std=0.1)
    w["cls.predictions.transform.LayerNorm.weight"] = 1 + rand(g, D, std=0.1)
    w["cls.predictions.transform.LayerNorm.bias"] = rand(g, D, std=0.1)
    w["cls.predictions.bias"] = rand(g, V, std=0.1)
    return w


# ---------------------------------------------------------------- writing
def write_stages(folder, sentences, forward, encode, label):
    for k, text in enumerate(sentences):
        d = os.path.join(folder, f"s{k}")
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        ids = encode(text)
        with torch.no_grad():
            st = forward(ids)
        for n, v in st.items():
            np.save(os.path.join(d, n + ".npy"), np.ascontiguousarray(v.numpy().astype(np.float32)))
        with open(os.path.join(d, "tokens.txt"), "w", encoding="utf-8") as f:
            f.write("".join(label(i) + "\n" for i in ids))
        with open(os.path.join(d, "ids.txt"), "w") as f:
            f.write(" ".join(map(str, ids)) + "\n")
        with open(os.path.join(d, "text.txt"), "w", encoding="utf-8") as f:
            f.write(text + "\n")


def gpt2_variant(name, dtype, prefix, lm_head, buffers):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    vocab, merges, ranks = make_bpe()
    cfg = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 16, "n_head": 2,
           "n_layer": 2, "n_positions": 32, "n_ctx": 32, "n_inner": None, "vocab_size": len(vocab),
           "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    w = {k: stored(v, dtype) for k, v in gpt2_weights(cfg, 1234).items()}
    tensors = [(prefix + k, v.numpy(), dtype) for k, v in w.items()]
    if buffers:
        for i in range(cfg["n_layer"]):
            mask = np.tril(np.ones((32, 32), np.float32)).reshape(1, 1, 32, 32)
            tensors += [(f"{prefix}h.{i}.attn.bias", mask, "F32"),
                        (f"{prefix}h.{i}.attn.masked_bias", np.array(-1e4, np.float32), "F32")]
    if lm_head:
        tensors.append(("lm_head.weight", w["wte.weight"].numpy(), dtype))
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    inv = {i: t for t, i in vocab.items()}
    write_stages(folder, SENTENCES_GPT2, lambda ids: gpt2_forward(w, cfg, ids),
                 lambda t: bpe_encode(t, vocab, ranks), lambda i: bpe_label(inv[i]))
    return [(name, s) for s in SENTENCES_GPT2]


def bert_variant(name, dtype, prefix, extras, old_names):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    cfg = {"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": 16,
           "num_attention_heads": 2, "num_hidden_layers": 2, "intermediate_size": 64,
           "max_position_embeddings": 32, "type_vocab_size": 2, "vocab_size": len(BERT_VOCAB),
           "layer_norm_eps": 1e-12, "hidden_act": "gelu", "position_embedding_type": "absolute"}
    w = {k: stored(v, dtype) for k, v in bert_weights(cfg, 4321).items()}
    tensors = []
    for k, v in w.items():
        n = k if k.startswith("cls.") else prefix + k
        if old_names and "LayerNorm" in n:
            n = n.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        tensors.append((n, v.numpy(), dtype))
    if extras:
        g = torch.Generator().manual_seed(99)
        D = cfg["hidden_size"]
        tensors += [("cls.predictions.decoder.weight", w["embeddings.word_embeddings.weight"].numpy(), dtype),
                    (prefix + "pooler.dense.weight", rand(g, D, D).numpy(), dtype),
                    (prefix + "pooler.dense.bias", rand(g, D).numpy(), dtype),
                    ("cls.seq_relationship.weight", rand(g, 2, D).numpy(), dtype),
                    ("cls.seq_relationship.bias", rand(g, 2).numpy(), dtype),
                    (prefix + "embeddings.position_ids", np.arange(32).reshape(1, 32), "I64")]
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in BERT_VOCAB))
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": True}, f)
    write_stages(folder, SENTENCES_BERT, lambda ids: bert_forward(w, cfg, ids),
                 lambda t: wp_encode(t, BERT_VOCAB), lambda i: BERT_VOCAB[i])
    return [(name, s) for s in SENTENCES_BERT]


def main():
    torch.set_num_threads(1)
    cases = []
    cases += gpt2_variant("gpt2-tiny", "F32", "", lm_head=False, buffers=True)
    cases += gpt2_variant("gpt2-tiny-f16", "F16", "transformer.", lm_head=True, buffers=False)
    cases += bert_variant("bert-tiny", "F32", "bert.", extras=True, old_names=False)
    cases += bert_variant("bert-tiny-bf16", "BF16", "", extras=False, old_names=True)
    with open(os.path.join(OUT, "cases.txt"), "w", encoding="utf-8") as f:
        f.write("# folder TAB sentence: written by tests/gen_hub_fixtures.py; sN/ holds sentence N's stages\n")
        f.write("".join(f"{n}\t{s}\n" for n, s in cases))
    print(json.dumps({"cases": len(cases), "torch": torch.__version__}))


if __name__ == "__main__":
    sys.exit(main())
