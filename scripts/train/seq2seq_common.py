#!/usr/bin/python3
"""seq2seq_common.py -- what translate.py and add.py share: the encoder-decoder, its training
loop, greedy decoding and the safetensors file Stepformer opens.

The model is the one tests/gen_ref_seq2seq.py describes and Stepformer reads (src/core/model.h):
nn.Embedding(V_s, D) `src_embed`, nn.Embedding(V_t, D) `tgt_embed`, an nn.Transformer
(batch_first, dropout 0, post-norm, relu) and the head nn.Linear(D, V_t) `head`; the sinusoidal P
is added to the embeddings on both sides, with no sqrt(D) scaling. The decoder reads "<bos>" and
the target's tokens and is trained to give the target's tokens and "<eos>" (teacher forcing,
causal mask, cross-entropy on every row).

No padding anywhere: the examples are grouped by (source length, target length) and every batch
holds one such group, so training computes exactly what Stepformer computes on one sentence.

The files are written with tests/gen_ref_seq2seq.py's writer (imported, not copied: the same
names and metadata as the golden references), to a temporary file that is read back, compared
and renamed over the destination.
"""
import math
import os
import sys
import time
import types

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: before numpy and torch start threads
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import gen_ref_seq2seq as ref  # noqa: E402  (explicit_forward, check_against_nn, the writer)

SPECIALS = ["<unk>", "<bos>", "<eos>"]  # the target vocabulary starts with these, in this order


class Seq2Seq(nn.Module):
    def __init__(self, Vs, Vt, D, H, F_, enc_layers, dec_layers):
        super().__init__()
        self.cfg = types.SimpleNamespace(D=D, H=H, F=F_, layers=enc_layers, dec_layers=dec_layers,
                                         activation="relu", norm_first=0)
        self.src_embed, self.tgt_embed = nn.Embedding(Vs, D), nn.Embedding(Vt, D)
        self.tr = nn.Transformer(d_model=D, nhead=H, num_encoder_layers=enc_layers,
                                 num_decoder_layers=dec_layers, dim_feedforward=F_, dropout=0.0,
                                 activation="relu", batch_first=True, norm_first=False)
        self.head = nn.Linear(D, Vt)
        self.register_buffer("pe", ref.sinusoidal_pe(64, D), persistent=False)

    def encode(self, src):  # [B, S] -> memory [B, S, D]
        return self.tr.encoder(self.src_embed(src) + self.pe[: src.shape[1]])

    def decode(self, memory, tgt_in):  # -> logits [B, T, V_t]
        T = tgt_in.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        y = self.tr.decoder(self.tgt_embed(tgt_in) + self.pe[:T], memory, tgt_mask=mask)
        return self.head(y)

    def forward(self, src, tgt_in):
        return self.decode(self.encode(src), tgt_in)

    def tensors(self):  # the state_dict under Stepformer's names, in file order
        out = [("src_embed.weight", self.src_embed.weight),
               ("tgt_embed.weight", self.tgt_embed.weight)]
        out += list(self.tr.state_dict().items())  # encoder.layers.*, encoder.norm.*, decoder.*
        out += [("head.weight", self.head.weight), ("head.bias", self.head.bias)]
        return [(n, t.detach().float().contiguous()) for n, t in out]


def bucket_examples(examples):
    """examples: (source ids, target ids without <bos>/<eos>). Returns {(S, T): (src [N, S],
    decoder input [N, T] = <bos> + target, decoder output [N, T] = target + <eos>)}."""
    groups = {}
    for s, t in examples:
        groups.setdefault((len(s), len(t) + 1), []).append((s, [1] + t, t + [2]))
    return {k: tuple(torch.tensor([e[i] for e in v]) for i in range(3))
            for k, v in sorted(groups.items())}


def _batches(buckets, batch, gen):
    out = []
    for src, tin, tout in buckets.values():
        perm = torch.randperm(len(src), generator=gen)
        for i in range(0, len(src), batch):
            j = perm[i:i + batch]
            out.append((src[j], tin[j], tout[j]))
    order = torch.randperm(len(out), generator=gen).tolist()
    return [out[i] for i in order]


def train(model, examples, seed, epochs, batch, lr, log=print):
    """Adam, 100 warm-up steps then a linear decay to 0, cross-entropy on every decoder row.
    Deterministic for a seed on one thread. Returns the model in eval mode."""
    t0 = time.time()
    gen = torch.Generator().manual_seed(seed)
    buckets = bucket_examples(examples)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps = epochs * sum(math.ceil(len(b[0]) / batch) for b in buckets.values())
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda step: min(1.0, (step + 1) / 100) * max(0.0, 1 - step / steps))
    model.train()
    for ep in range(epochs):
        tot, cnt = 0.0, 0
        for src, tin, tout in _batches(buckets, batch, gen):
            logits = model(src, tin)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tout.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tot, cnt = tot + float(loss) * tout.numel(), cnt + tout.numel()
        log(f"  epoch {ep + 1:2d}/{epochs}  loss per token {tot / cnt:.4f}  "
            f"({time.time() - t0:.1f} s)")
    return model.eval()


@torch.no_grad()
def greedy(model, sources, max_len=20):
    """Greedy decoding as Stepformer's loop does it (the whole prefix through the decoder at every
    step, argmax of the last row, stop at <eos>). sources: lists of ids. Returns lists of target
    ids (without <bos>/<eos>), in the order of sources."""
    out = [None] * len(sources)
    by_len = {}
    for i, s in enumerate(sources):
        by_len.setdefault(len(s), []).append(i)
    for _, idx in sorted(by_len.items()):
        src = torch.tensor([sources[i] for i in idx])
        memory = model.encode(src)
        ys = torch.ones(len(idx), 1, dtype=torch.long)  # <bos>
        done = torch.zeros(len(idx), dtype=torch.bool)
        for _ in range(max_len):
            nxt = model.decode(memory, ys)[:, -1].argmax(-1)
            ys = torch.cat([ys, nxt[:, None]], 1)
            done |= nxt == 2
            if bool(done.all()):
                break
        for k, i in enumerate(idx):
            seq = ys[k, 1:].tolist()
            out[i] = seq[: seq.index(2)] if 2 in seq else seq
    return out


@torch.no_grad()
def stages(model, src_ids, dec_ids):
    """Every stage of one forward pass under Stepformer's dump names (tests/gen_ref_seq2seq.py's
    explicit float32 forward, checked there against torch.nn to 1e-5): "d0.cA" [H, T, S], "pred"."""
    a = model.cfg
    a.assert_atol = 1e-4
    st = ref.explicit_forward(a, model.src_embed, model.tgt_embed, model.tr, model.head,
                              src_ids, dec_ids, model.src_embed.num_embeddings,
                              model.tgt_embed.num_embeddings)
    diffs = ref.check_against_nn(a, model.tr, model.head, st)
    return {k: v.numpy() for k, v in st.items()}, max(diffs.values())


def write_model(path, model, meta):
    """Writes the model with gen_ref_seq2seq's writer to a temporary file in the same folder,
    reads it back, checks every tensor and the metadata, then renames it over path."""
    tensors = model.tensors()
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        ref.write_safetensors(tmp, tensors, meta)
        back, meta_back = ref.read_safetensors(tmp)
        assert meta_back == meta, "metadata read back differs"
        for n, t in tensors:
            assert np.array_equal(back[n], t.numpy()), n
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return sum(t.numel() for _, t in tensors)


def base_metadata(model, src_vocab, tgt_vocab, seed):
    """The keys Stepformer's model_load reads (src/core/model.c)."""
    c = model.cfg
    return {"format": "pt", "d_model": str(c.D), "n_heads": str(c.H), "d_ff": str(c.F),
            "n_layers": str(c.layers), "n_decoder_layers": str(c.dec_layers),
            "activation": c.activation, "norm_first": str(c.norm_first), "causal": "0",
            "layer_norm_eps": "1e-05", "pos_encoding": "sinusoidal",
            "vocab": "\n".join(src_vocab), "tgt_vocab": "\n".join(tgt_vocab), "seed": str(seed),
            "torch_version": torch.__version__}
