"""_torch.py -- a live torch.nn.Module into the bytes of a .safetensors libstepformer opens.

Only imported when a module is passed (torch is never imported otherwise). The weights come from
the module's state_dict() in memory, written as safetensors bytes (float32) with the configuration
in __metadata__; no file is written. The C loader (src/formats/course.c, course_modules.c) reads
the course notebooks' names; this side says what the names cannot:

  - the notation notebook's Transformer classifier (encoder.tok_embed, encoder.encoder_blocks.*,
    linear): n_heads from its attention module, eps from its LayerNorms, the class count;
  - the per-head encoder (layers.{i}.attention.heads.{h}.q|k|v, embeddings.*): norm_first when the
    layer says it, the embedding LayerNorm's eps, sinusoidal positions when there is no table;
  - the einsum encoder (word_embedding, layers.{i}.attention.queries|keys|values|fc_out): the
    activation read from the live feed_forward[1] (nn.ReLU / nn.GELU / GELU(approximate="tanh")),
    and the energy scale found by running the module's own attention on a probe input and comparing
    its output with both candidates, softmax(energy/sqrt(head_dim)) and softmax(energy/sqrt(D));
  - a module holding an nn.Embedding and an nn.TransformerEncoder (batch_first; the repository's
    own encoder): renamed to the canonical names (embed.weight, layers.{i}.*, norm.*, head.*), its
    configuration from the layers' attributes, sinusoidal positions as Stepformer's encoder adds them.

Anything else raises StepformerError naming what Stepformer can open.
"""
import copy
import json
import struct

import numpy as np
import torch
import torch.nn as nn

from ._lib import StepformerError

KNOWN = ("the course notebooks' modules (the notation notebook's Transformer classifier with "
         "encoder.tok_embed and encoder.encoder_blocks; the per-head MultiHeadAttention of AttentionHeads; "
         "the einsum SelfAttention/TransformerBlock Encoder) and a module holding an nn.Embedding and an "
         "nn.TransformerEncoder; or a model file's path")


def safetensors_bytes(tensors, metadata):
    """{name: np.float32 array} and {key: str} -> the bytes of a .safetensors file."""
    header, offset, blobs = {}, 0, []
    for name, a in tensors.items():
        a = np.ascontiguousarray(a, dtype="<f4")
        blobs.append(a.tobytes())
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    h = json.dumps(header, ensure_ascii=False).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def _state(module):
    return {k: v.detach().cpu().float().numpy() for k, v in module.state_dict().items()
            if v.is_floating_point()}


def _strip(sd, prefix):
    return {k[len(prefix):]: v for k, v in sd.items() if k.startswith(prefix)}


def _quiet(module):
    """A copy of module without forward hooks: probing it must not fire the student's hooks."""
    c = copy.deepcopy(module)
    for m in c.modules():
        m._forward_hooks.clear()
        m._forward_pre_hooks.clear()
    return c.eval()


def _first(module, kind):
    for m in module.modules():
        if isinstance(m, kind):
            return m
    return None


def _vocab_lines(vocab, V):
    """The vocabulary as the loader reads it: V words, "<unk>" first."""
    words = list(vocab) if vocab is not None else ["<unk>"] + [f"#{i}" for i in range(1, V)]
    if len(words) < V:  # ids the list does not name are shown by their number
        seen = set(words)
        words += [f"#{i}" if f"#{i}" not in seen else f"#{i}'" for i in range(len(words), V)]
    if len(words) > V:
        raise StepformerError(f"vocab has {len(words)} words and the module's embedding {V} rows: "
                              "give the vocabulary the module was trained with")
    return "\n".join(words)


def _ff_activation(ff, where):
    """The activation of a feed-forward written as nn.Sequential(Linear, act, ...)."""
    try:
        return _activation(ff[1])
    except (TypeError, IndexError, AttributeError, KeyError):
        raise StepformerError(f"{where}: the feed-forward is not nn.Sequential(nn.Linear, activation, ...) as the "
                              "notebook writes it: Stepformer cannot read its activation") from None


def _activation(fn):
    """relu | gelu | gelu_tanh for a module or function of the feed-forward."""
    if isinstance(fn, nn.ReLU) or fn is torch.relu or getattr(fn, "__name__", "") == "relu":
        return "relu"
    if isinstance(fn, nn.GELU):
        return "gelu_tanh" if getattr(fn, "approximate", "none") == "tanh" else "gelu"
    if getattr(fn, "__name__", "") == "gelu":
        return "gelu"
    raise StepformerError(f"the feed-forward's activation {fn!r} is none of ReLU, GELU, GELU(tanh): "
                          "Stepformer computes those three")


# ---------------------------------------------------------------- the einsum encoder
def _einsum_candidates(att, x):
    """The einsum attention's output on x [1, L, D] for both scales: {"head_dim": y, "embed_size": y}."""
    N, L, D = x.shape
    H = att.heads
    d = D // H
    Wq, Wk, Wv = att.queries.weight, att.keys.weight, att.values.weight
    if Wq.shape[1] == D:  # [D, D] maps before the split
        q, k, v = x @ Wq.T, x @ Wk.T, x @ Wv.T
        q, k, v = (t.reshape(N, L, H, d) for t in (q, k, v))
    else:  # one [d, d] map applied to each head's slice
        xs = x.reshape(N, L, H, d)
        q, k, v = xs @ Wq.T, xs @ Wk.T, xs @ Wv.T
    energy = torch.einsum("nqhd,nkhd->nhqk", q, k)
    out = {}
    for name, s in (("head_dim", d), ("embed_size", D)):
        a = torch.softmax(energy / s ** 0.5, dim=3)
        y = torch.einsum("nhql,nlhd->nqhd", a, v).reshape(N, L, D)
        out[name] = att.fc_out(y)
    return out


def _einsum_scale(att, D):
    """Which scale the live attention module divides its energy by, found by running it."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, 5, D, generator=g) * 3.0  # large enough that the two scales differ clearly
    att = _quiet(att)
    with torch.no_grad():
        try:
            y = att(x, x, x, None)
        except TypeError:
            y = att(x, x, x)
        if isinstance(y, tuple):
            y = y[0]
        cands = _einsum_candidates(att, x)
    err = {k: float((y - c).abs().max()) for k, c in cands.items()}
    best = min(err, key=err.get)
    tol = 1e-4 * (1.0 + float(y.abs().max()))
    if err[best] > tol:
        raise StepformerError(
            "the einsum SelfAttention computes neither softmax(energy/sqrt(head_dim)) nor softmax(energy/sqrt(D)) "
            f"on a probe input (differences {err['head_dim']:.3g} and {err['embed_size']:.3g}): Stepformer "
            "shows these two forms")
    return best


def _einsum(module, sd, prefix, vocab):
    enc = module
    for part in prefix.split(".")[:-1]:
        enc = getattr(enc, part)
    layers = enc.layers
    block = layers[0]
    D = sd["word_embedding.weight"].shape[1]
    meta = {"vocab": _vocab_lines(vocab, sd["word_embedding.weight"].shape[0]),
            "n_heads": block.attention.heads,
            "energy_scale": _einsum_scale(block.attention, D),
            "activation": _ff_activation(block.feed_forward, "layers[0]"),
            "eps": block.norm1.eps}
    if "position_embedding.weight" not in sd:
        meta["pos_encoding"] = "sinusoidal"
    return sd, meta


# ---------------------------------------------------------------- the per-head encoder
def _heads(module, sd, prefix, vocab):
    enc = module
    for part in prefix.split(".")[:-1]:
        enc = getattr(enc, part)
    meta = {"vocab": _vocab_lines(vocab, sd["embeddings.token_embeddings.weight"].shape[0]),
            "n_heads": len(enc.layers[0].attention.heads)}
    layer = enc.layers[0]
    nf = _heads_norm_first(layer, sd["embeddings.token_embeddings.weight"].shape[1])
    if nf is not None:
        meta["norm_first"] = nf
    emb = enc.embeddings
    if getattr(emb, "layer_norm", None) is not None:
        meta["embed_eps"] = emb.layer_norm.eps
    ln = getattr(layer, "layer_norm_1", None)
    if ln is not None:
        meta["eps"] = ln.eps
    ff = getattr(layer, "feed_forward", None)
    act = getattr(ff, "gelu", None) or getattr(ff, "activation", None)
    if act is not None:
        meta["activation"] = _activation(act)
    if "embeddings.position_embeddings.weight" not in sd:
        meta["pos_encoding"] = _heads_positions(emb, sd["embeddings.token_embeddings.weight"].shape[1])
    return sd, meta


def _heads_norm_first(layer, D):
    """1 when the live layer computes x + attention(LN1(x)) (pre-norm), 0 when LN1(x + attention(x))
    (post-norm), found by running it on a probe input with its own sub-modules; None when the layer
    is not made of attention, feed_forward, layer_norm_1 and layer_norm_2."""
    if not all(hasattr(layer, a) for a in ("attention", "feed_forward", "layer_norm_1", "layer_norm_2")):
        return None
    q = _quiet(layer)
    x = torch.randn(1, 5, D, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        y = q(x)
        h = x + q.attention(q.layer_norm_1(x))
        pre = h + q.feed_forward(q.layer_norm_2(h))
        h = q.layer_norm_1(x + q.attention(x))
        post = q.layer_norm_2(h + q.feed_forward(h))
    e_pre, e_post = float((y - pre).abs().max()), float((y - post).abs().max())
    tol = 1e-4 * (1.0 + float(y.abs().max()))
    if min(e_pre, e_post) > tol:
        raise StepformerError("the encoder layer computes neither x + attention(layer_norm_1(x)) (pre-norm) nor "
                              f"layer_norm_1(x + attention(x)) (post-norm) on a probe input (differences {e_pre:.3g}, "
                              f"{e_post:.3g}): Stepformer shows these two forms")
    return 1 if e_pre <= e_post else 0


def _sinusoid(L, D):
    """Stepformer's P (DESIGN.md): P[pos, 2i] = sin(pos / 10000^(2i/D)), P[pos, 2i+1] = cos(...)."""
    pos = np.arange(L, dtype=np.float64)[:, None]
    ang = pos / np.power(10000.0, np.arange(0, D, 2, dtype=np.float64)[None, :] / D)
    P = np.zeros((L, D))
    P[:, 0::2] = np.sin(ang)
    P[:, 1::2] = np.cos(ang[:, : D // 2])
    return torch.from_numpy(P.astype(np.float32))


def _heads_positions(emb, D):
    """Whether the live Embeddings module (no position table) adds the sinusoid or nothing, found by
    running it on a probe sentence."""
    V = emb.token_embeddings.weight.shape[0]
    ids = torch.arange(min(V, 6)).unsqueeze(0)
    emb = _quiet(emb)
    with torch.no_grad():
        y = emb(ids)
        x = emb.token_embeddings(ids)
        ln = getattr(emb, "layer_norm", None)
        cands = {"none": x, "sinusoidal": x + _sinusoid(ids.shape[1], D)[None]}
        if ln is not None:
            cands = {k: ln(v) for k, v in cands.items()}
    err = {k: float((y - c).abs().max()) for k, c in cands.items()}
    best = min(err, key=err.get)
    if err[best] > 1e-4 * (1.0 + float(y.abs().max())):
        raise StepformerError("the Embeddings module adds neither no positions nor the sinusoid (DESIGN.md) "
                              f"on a probe sentence (differences {err['none']:.3g}, {err['sinusoidal']:.3g}): give it "
                              "a position table (position_embeddings) or one of the two")
    return best


# ---------------------------------------------------------------- the notation classifier
def _notation(module, sd, vocab, classes):
    H = None
    for m in module.modules():
        for attr in ("H", "n_heads", "num_heads", "h"):
            v = getattr(m, attr, None)
            if isinstance(v, int) and v > 0 and any(k.endswith("W_Q.weight") or k.endswith("WQ.weight")
                                                    for k in dict(m.named_parameters())):
                H = v
                break
        if H:
            break
    if H is None:
        raise StepformerError("the classifier's attention has no attribute H (its number of heads): "
                              "Stepformer reads it from MultiHeadedAttention.H as the notebook writes it")
    ln = _first(module, nn.LayerNorm)
    meta = {"vocab": _vocab_lines(vocab, sd["encoder.tok_embed.weight"].shape[0]), "n_heads": H}
    if ln is not None:
        meta["eps"] = ln.eps
    if classes is not None:
        meta["classes"] = "\n".join(str(c) for c in classes)
    blocks = getattr(getattr(module, "encoder", None), "encoder_blocks", None)
    if blocks is not None and len(blocks) and hasattr(blocks[0], "feed_forward"):
        meta["activation"] = _ff_activation(blocks[0].feed_forward, "encoder.encoder_blocks[0]")
    return sd, meta


# ---------------------------------------------------------------- nn.TransformerEncoder
def _encoder(module, vocab):
    if isinstance(module, nn.TransformerEncoder):
        raise StepformerError(
            "an nn.TransformerEncoder alone takes vectors, not words: pass the module that holds it with its "
            "nn.Embedding (Stepformer then shows every stage from the tokens on)")
    enc = _first(module, nn.TransformerEncoder)
    emb = [m for m in module.modules() if isinstance(m, nn.Embedding)]
    if len(emb) != 1:
        raise StepformerError(
            f"the module holds an nn.TransformerEncoder and {len(emb)} nn.Embedding modules: Stepformer opens "
            "one token embedding (and adds the sinusoidal positions itself)")
    layer = enc.layers[0]
    if not getattr(layer.self_attn, "batch_first", True):
        pass  # the weights are the same either way
    E = emb[0].weight.detach().cpu().float().numpy()
    V, D = E.shape
    t = {"embed.weight": E}
    for i, l in enumerate(enc.layers):
        for k, v in l.state_dict().items():
            t[f"layers.{i}.{k}"] = v.detach().cpu().float().numpy()
    if enc.norm is not None:
        t["norm.weight"] = enc.norm.weight.detach().cpu().float().numpy()
        t["norm.bias"] = enc.norm.bias.detach().cpu().float().numpy()
    heads = [m for m in module.modules() if isinstance(m, nn.Linear) and m.out_features == V
             and m.in_features == D and not any(m is x for x in enc.modules())]
    if heads:
        t["head.weight"] = heads[0].weight.detach().cpu().float().numpy()
        if heads[0].bias is not None:
            t["head.bias"] = heads[0].bias.detach().cpu().float().numpy()
    act = getattr(layer, "activation", None)
    meta = {"d_model": D, "n_heads": layer.self_attn.num_heads, "d_ff": layer.linear1.out_features,
            "n_layers": len(enc.layers), "activation": _activation(act) if act is not None else "relu",
            "norm_first": int(bool(getattr(layer, "norm_first", False))), "causal": 0,
            "layer_norm_eps": layer.norm1.eps, "vocab": _vocab_lines(vocab, V)}
    return t, meta


def module_bytes(module, vocab=None, classes=None):
    """(safetensors bytes, a name for captions) for a module Stepformer knows."""
    if not isinstance(module, nn.Module):
        raise StepformerError(f"{type(module).__name__} is not a torch.nn.Module: Stepformer opens {KNOWN}")
    sd = _state(module)
    name = type(module).__name__
    keys = list(sd)
    if "encoder.tok_embed.weight" in sd or any(k.startswith("encoder.encoder_blocks.") for k in keys):
        t, meta = _notation(module, sd, vocab, classes)
    else:
        t = None
        for prefix in ("", "encoder."):
            s = _strip(sd, prefix) if prefix else sd
            if "word_embedding.weight" in s and any(".attention.queries.weight" in k for k in s):
                t, meta = _einsum(module, s, prefix, vocab)
                break
            if "embeddings.token_embeddings.weight" in s and any(".attention.heads." in k for k in s):
                t, meta = _heads(module, s, prefix, vocab)
                break
        if t is None:
            if isinstance(module, nn.TransformerEncoder) or _first(module, nn.TransformerEncoder) is not None:
                t, meta = _encoder(module, vocab)
            else:
                raise StepformerError(f"Stepformer does not know a {name} (its weights are named "
                                      f"{', '.join(keys[:4])}{' ...' if len(keys) > 4 else ''}): it opens {KNOWN}")
    return safetensors_bytes(t, meta), f"{name} (notebook)"
