"""course_model.py -- the course notebook's Transformer, as torch modules (issue 20).

A compact form of the notation notebook's classifier (written as the notebook writes it in
tests/course_modules.py, section 3): `Transformer(config, num_classes).state_dict()` has exactly the
names the notebook's has, and tests/gen_course_ref.py asserts on every fixture that the notebook's
own classes, given the same state_dict, compute the same class scores:

    encoder.tok_embed.weight                               [V, D]
    encoder.pos_embed                                      [1, max_seq_len, D]  learned positions
    encoder.encoder_blocks.{i}.mha.W_Q|W_K|W_V|W_O.weight  [D, D]  (.bias [D] with bias=True)
    encoder.encoder_blocks.{i}.feed_forward.0.weight|bias  [F, D], [F]
    encoder.encoder_blocks.{i}.feed_forward.3.weight|bias  [D, F], [D]
    encoder.encoder_blocks.{i}.residual1.norm.weight|bias  [D]   (before attention: pre-norm)
    encoder.encoder_blocks.{i}.residual2.norm.weight|bias  [D]   (before the feed-forward)
    encoder.norm.weight|bias                               [D]   the encoder's final LayerNorm
    linear.weight|bias                                     [C, D] class scores

With config["sanity"] the attention is MultiHeadedAttentionSanity: WQ, WK, WV, linear, always
with biases. No sqrt(D) scaling of the embeddings; the sentence vector is the mean over the
positions of the encoder's output. Used by tests/gen_course_ref.py and scripts/train/bank_sense.py.

    config = {"vocab_size": V, "d_model": D, "n_heads": H, "d_ff": F, "n_layers": N,
              "max_seq_len": M, "bias": False, "dropout": 0.1, "eps": 1e-5, "sanity": False}
"""
import math

import torch
import torch.nn as nn


class MultiHeadedAttention(nn.Module):
    """Four separate maps W_Q, W_K, W_V, W_O [D, D]; head h takes columns h*d_k..(h+1)*d_k-1."""

    def __init__(self, d_model, n_heads, bias=False, dropout=0.0):
        super().__init__()
        assert d_model % n_heads == 0
        self.h, self.d_k = n_heads, d_model // n_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=bias)
        self.W_K = nn.Linear(d_model, d_model, bias=bias)
        self.W_V = nn.Linear(d_model, d_model, bias=bias)
        self.W_O = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)
        self.attn = None  # the last attention weights [B, H, L, L], for a notebook to look at

    def split(self, x):  # [B, L, D] -> [B, H, L, d_k]
        B, L, _ = x.shape
        return x.view(B, L, self.h, self.d_k).transpose(1, 2)

    def project(self, x):
        return self.W_Q(x), self.W_K(x), self.W_V(x)

    def out(self, x):
        return self.W_O(x)

    def forward(self, x):
        q, k, v = (self.split(t) for t in self.project(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        self.attn = torch.softmax(scores, dim=-1)
        ctx = self.dropout(self.attn) @ v  # [B, H, L, d_k]
        B, _, L, _ = ctx.shape
        return self.out(ctx.transpose(1, 2).contiguous().view(B, L, self.h * self.d_k))


class MultiHeadedAttentionSanity(MultiHeadedAttention):
    """The notebook's check of the same computation, with its other names: WQ, WK, WV, linear."""

    def __init__(self, d_model, n_heads, dropout=0.0):
        nn.Module.__init__(self)
        assert d_model % n_heads == 0
        self.h, self.d_k = n_heads, d_model // n_heads
        self.WQ = nn.Linear(d_model, d_model)
        self.WK = nn.Linear(d_model, d_model)
        self.WV = nn.Linear(d_model, d_model)
        self.linear = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self.attn = None

    def project(self, x):
        return self.WQ(x), self.WK(x), self.WV(x)

    def out(self, x):
        return self.linear(x)


class ResidualConnection(nn.Module):
    """x + sublayer(LayerNorm(x)): the norm comes first (pre-norm)."""

    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, sublayer):
        return x + self.dropout(sublayer(self.norm(x)))


class EncoderBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        D, drop = c["d_model"], c.get("dropout", 0.0)
        if c.get("sanity"):
            self.mha = MultiHeadedAttentionSanity(D, c["n_heads"], drop)
        else:
            self.mha = MultiHeadedAttention(D, c["n_heads"], c.get("bias", False), drop)
        self.feed_forward = nn.Sequential(nn.Linear(D, c["d_ff"]), nn.ReLU(), nn.Dropout(drop),
                                          nn.Linear(c["d_ff"], D))
        eps = c.get("eps", 1e-5)
        self.residual1 = ResidualConnection(D, drop, eps)
        self.residual2 = ResidualConnection(D, drop, eps)

    def forward(self, x):
        x = self.residual1(x, self.mha)
        return self.residual2(x, self.feed_forward)


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        D = c["d_model"]
        self.tok_embed = nn.Embedding(c["vocab_size"], D)
        self.pos_embed = nn.Parameter(torch.zeros(1, c["max_seq_len"], D))
        nn.init.normal_(self.pos_embed, std=0.1)
        self.encoder_blocks = nn.ModuleList([EncoderBlock(c) for _ in range(c["n_layers"])])
        self.norm = nn.LayerNorm(D, eps=c.get("eps", 1e-5))

    def forward(self, ids):  # [B, L] -> [B, L, D]; no sqrt(D) scaling of the embeddings
        x = self.tok_embed(ids) + self.pos_embed[:, : ids.shape[1], :]
        for block in self.encoder_blocks:
            x = block(x)
        return self.norm(x)


class Transformer(nn.Module):
    """The course's classifier: encoder, mean over the positions, linear to the class scores."""

    def __init__(self, config, num_classes):
        super().__init__()
        self.encoder = Encoder(config)
        self.linear = nn.Linear(config["d_model"], num_classes)

    def forward(self, ids):  # [B, L] -> class scores [B, C]
        return self.linear(self.encoder(ids).mean(dim=1))
