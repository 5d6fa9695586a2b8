"""course_modules.py -- the course notebooks' own attention modules, as torch modules (issue 12).

Two families, written as the notebooks write them, so that a state_dict() of these classes has
exactly the notebooks' names and the forward computes what theirs computes. Used by
tests/gen_course_modules_ref.py.

1. The per-head family: MultiHeadAttention of AttentionHeads + PositionWiseFeedForward, in an
   encoder layer with the Embeddings around it (the "Transformers from scratch" chapter's form):

    embeddings.token_embeddings.weight            [V, D]
    embeddings.position_embeddings.weight         [M, D]  (positions="learned"; else none)
    embeddings.layer_norm.weight|bias             [D]     (embed_norm=True; eps 1e-12)
    layers.{i}.layer_norm_1|layer_norm_2.weight|bias   [D]   pre-norm (norm_first=False: post)
    layers.{i}.attention.heads.{h}.q|k|v.weight   [d_k, D] (.bias [d_k]; nn.Linear's default)
    layers.{i}.attention.output_linear.weight|bias     [D, D], [D]
    layers.{i}.feed_forward.linear_1.weight|bias       [F, D], [F]
    layers.{i}.feed_forward.linear_2.weight|bias       [D, F], [D]   GELU (erf) between

   head h: softmax(q(x) k(x)ᵀ / √d_k) v(x); the heads concatenated (torch.cat, dim=-1), then
   output_linear.

2. The einsum family: SelfAttention + TransformerBlock, exactly as the course's einsum notebook
   (shared/seeds/004) writes them, in an Encoder with word and position embeddings:

    word_embedding.weight                         [V, D]
    position_embedding.weight                     [M, D]  (positions="learned"; else sinusoid)
    layers.{i}.attention.values|keys|queries.weight    [D, D], no bias
    layers.{i}.attention.fc_out.weight            [D, D], no bias
    layers.{i}.norm1|norm2.weight|bias            [D]   post-norm: norm1(attention + query)
    layers.{i}.feed_forward.0|2.weight|bias       [F, D] / [D, F]  GELU (erf) between

   attn_scores = einsum("nqhd,nkhd->nhqk", queries, keys); attention = softmax(attn_scores /
   head_dim**0.5); out = einsum("nhql,nlhd->nqhd", attention, values), then fc_out. (The
   notebook indents TransformerBlock.forward inside __init__, so its block has no forward: here it
   is a method, as the notebook meant.)

   The "Transformer from scratch" tutorial the notebook resembles is the variant
   (TutorialSelfAttention, TutorialTransformerBlock): one [d_k, d_k] map shared by the heads
   (shared=True) or [D, D] maps, fc_out with a bias, softmax(energy / embed_size**0.5), ReLU.
   Encoder(form="notebook" | "tutorial"); the tutorial's classes take `energy_scale` ("head_dim" |
   "embed_size"), `activation` ("gelu" | "relu") and `fc_bias`, for a student's own mixture of the
   two (the notebook's weights with the tutorial's √D and ReLU: what model.json must then say).
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def sinusoid(L, D):
    """P[pos, 2i] = sin(pos / 10000^(2i/D)), P[pos, 2i+1] = cos(...): float64, then float32."""
    pos = np.arange(L, dtype=np.float64)[:, None]
    ang = pos / np.power(10000.0, np.arange(0, D, 2, dtype=np.float64)[None, :] / D)
    P = np.zeros((L, D))
    P[:, 0::2] = np.sin(ang)
    P[:, 1::2] = np.cos(ang[:, : D // 2])
    return torch.from_numpy(P.astype(np.float32))


# ---------------------------------------------------------------- 1. the per-head family
def scaled_dot_product_attention(query, key, value):
    dim_k = query.size(-1)
    scores = torch.bmm(query, key.transpose(1, 2)) / math.sqrt(dim_k)
    weights = F.softmax(scores, dim=-1)
    return torch.bmm(weights, value)


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_dim, bias=True):
        super().__init__()
        self.q = nn.Linear(embed_dim, head_dim, bias=bias)
        self.k = nn.Linear(embed_dim, head_dim, bias=bias)
        self.v = nn.Linear(embed_dim, head_dim, bias=bias)

    def forward(self, hidden_state):
        return scaled_dot_product_attention(self.q(hidden_state), self.k(hidden_state), self.v(hidden_state))


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, bias=True):
        super().__init__()
        head_dim = embed_dim // num_heads
        self.heads = nn.ModuleList([AttentionHead(embed_dim, head_dim, bias) for _ in range(num_heads)])
        self.output_linear = nn.Linear(embed_dim, embed_dim)

    def forward(self, hidden_state):
        x = torch.cat([h(hidden_state) for h in self.heads], dim=-1)
        return self.output_linear(x)


class PositionWiseFeedForward(nn.Module):
    def __init__(self, embed_dim, ff_dim, dropout=0.1):
        super().__init__()
        self.linear_1 = nn.Linear(embed_dim, ff_dim)
        self.linear_2 = nn.Linear(ff_dim, embed_dim)
        self.gelu = nn.GELU()  # the erf form
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.linear_2(self.gelu(self.linear_1(x))))


class TransformerEncoderLayer(nn.Module):
    """Pre-norm as the notebook's: x + attention(LN1(x)), then x + feed_forward(LN2(x)).
    norm_first=False: the post-norm variant LN1(x + attention(x)), LN2(x + feed_forward(x))."""

    def __init__(self, D, H, Fw, bias=True, norm_first=True):
        super().__init__()
        self.layer_norm_1 = nn.LayerNorm(D)
        self.layer_norm_2 = nn.LayerNorm(D)
        self.attention = MultiHeadAttention(D, H, bias)
        self.feed_forward = PositionWiseFeedForward(D, Fw)
        self.norm_first = norm_first

    def forward(self, x):
        if self.norm_first:
            x = x + self.attention(self.layer_norm_1(x))
            return x + self.feed_forward(self.layer_norm_2(x))
        x = self.layer_norm_1(x + self.attention(x))
        return self.layer_norm_2(x + self.feed_forward(x))


class Embeddings(nn.Module):
    def __init__(self, V, D, M, positions="learned", embed_norm=True, eps=1e-12):
        super().__init__()
        self.token_embeddings = nn.Embedding(V, D)
        if positions == "learned":
            self.position_embeddings = nn.Embedding(M, D)
        if embed_norm:
            self.layer_norm = nn.LayerNorm(D, eps=eps)
        self.positions, self.embed_norm = positions, embed_norm
        self.dropout = nn.Dropout()

    def forward(self, input_ids):
        L = input_ids.size(1)
        x = self.token_embeddings(input_ids)
        if self.positions == "learned":
            x = x + self.position_embeddings(torch.arange(L, dtype=torch.long).unsqueeze(0))
        else:
            x = x + sinusoid(L, x.size(-1))[None]
        if self.embed_norm:
            x = self.layer_norm(x)
        return self.dropout(x)


class TransformerEncoder(nn.Module):
    def __init__(self, V, D, H, Fw, n_layers, M, bias=True, norm_first=True, positions="learned",
                 embed_norm=True, embed_eps=1e-12):
        super().__init__()
        self.embeddings = Embeddings(V, D, M, positions, embed_norm, embed_eps)
        self.layers = nn.ModuleList([TransformerEncoderLayer(D, H, Fw, bias, norm_first)
                                     for _ in range(n_layers)])

    def forward(self, x):
        x = self.embeddings(x)
        for layer in self.layers:
            x = layer(x)
        return x


# ---------------------------------------------------------------- 2. the einsum family
class SelfAttention(nn.Module):
    """The course notebook's, line for line (its comments shortened)."""

    def __init__(self, embed_size, heads):
        super(SelfAttention, self).__init__()
        self.embed_size = embed_size
        self.heads = heads
        self.head_dim = embed_size // heads
        assert (self.head_dim * heads == embed_size), "Embedding size needs to be divisible by number of heads"
        self.values = nn.Linear(embed_size, embed_size, bias=False)
        self.keys = nn.Linear(embed_size, embed_size, bias=False)
        self.queries = nn.Linear(embed_size, embed_size, bias=False)
        self.fc_out = nn.Linear(embed_size, embed_size, bias=False)

    def forward(self, values, keys, query, mask=None):
        N = query.shape[0]
        values_len, key_len, query_len = values.shape[1], keys.shape[1], query.shape[1]
        values = self.values(values)
        keys = self.keys(keys)
        queries = self.queries(query)
        values = values.reshape(N, values_len, self.heads, self.head_dim)
        keys = keys.reshape(N, key_len, self.heads, self.head_dim)
        queries = queries.reshape(N, query_len, self.heads, self.head_dim)
        attn_scores = torch.einsum("nqhd,nkhd->nhqk", [queries, keys])
        if mask is not None:
            attn_scores = attn_scores.masked_fill(mask == 0, float("-1e20"))
        attention = torch.softmax(attn_scores / (self.head_dim ** 0.5), dim=3)
        self.attn = attention  # (not the notebook's) for the generator's check
        out = torch.einsum("nhql,nlhd->nqhd", [attention, values])
        out = out.reshape(N, query_len, self.heads * self.head_dim)
        out = self.fc_out(out)
        return out


class TransformerBlock(nn.Module):
    """The course notebook's: post-norm, GELU."""

    def __init__(self, embed_size, heads, dropout, forward_expansion):
        super(TransformerBlock, self).__init__()
        self.attention = SelfAttention(embed_size, heads)
        self.norm1 = nn.LayerNorm(embed_size)
        self.norm2 = nn.LayerNorm(embed_size)
        self.feed_forward = nn.Sequential(
            nn.Linear(embed_size, forward_expansion * embed_size),
            nn.GELU(),
            nn.Linear(forward_expansion * embed_size, embed_size)
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, values, key, query, mask):
        attention = self.attention(values, key, query, mask)
        x = self.dropout(self.norm1(attention + query))
        forward = self.feed_forward(x)
        out = self.dropout(self.norm2(forward + x))
        return out


class TutorialSelfAttention(nn.Module):
    """The "Transformer from scratch" tutorial's: shared [d_k, d_k] maps (or [D, D]), fc_out with a
    bias, energy / √embed_size -- or a mixture: energy_scale "head_dim" divides by √head_dim."""

    def __init__(self, embed_size, heads, shared=True, energy_scale="embed_size", fc_bias=True):
        super().__init__()
        self.embed_size, self.heads = embed_size, heads
        self.head_dim = embed_size // heads
        assert self.head_dim * heads == embed_size, "Embedding size needs to be divisible by heads"
        k = self.head_dim if shared else embed_size
        self.values = nn.Linear(k, k, bias=False)
        self.keys = nn.Linear(k, k, bias=False)
        self.queries = nn.Linear(k, k, bias=False)
        self.fc_out = nn.Linear(heads * self.head_dim, embed_size, bias=fc_bias)
        self.shared, self.energy_scale = shared, energy_scale

    def forward(self, values, keys, query, mask):
        N = query.shape[0]
        value_len, key_len, query_len = values.shape[1], keys.shape[1], query.shape[1]
        if not self.shared:  # the later form: D x D maps before the split into heads
            values, keys, query = self.values(values), self.keys(keys), self.queries(query)
        values = values.reshape(N, value_len, self.heads, self.head_dim)
        keys = keys.reshape(N, key_len, self.heads, self.head_dim)
        queries = query.reshape(N, query_len, self.heads, self.head_dim)
        if self.shared:  # the classic form: one map applied to each head's slice
            values, keys, queries = self.values(values), self.keys(keys), self.queries(queries)
        energy = torch.einsum("nqhd,nkhd->nhqk", [queries, keys])
        if mask is not None:
            energy = energy.masked_fill(mask == 0, float("-1e20"))
        scale = self.embed_size if self.energy_scale == "embed_size" else self.head_dim
        attention = torch.softmax(energy / (scale ** (1 / 2)), dim=3)
        self.attn = attention  # for the generator's check
        out = torch.einsum("nhql,nlhd->nqhd", [attention, values]).reshape(
            N, query_len, self.heads * self.head_dim)
        return self.fc_out(out)


class TutorialTransformerBlock(nn.Module):
    """The tutorial's block: post-norm, ReLU (activation="gelu" for a mixture)."""

    def __init__(self, embed_size, heads, dropout, forward_expansion, shared=True, energy_scale="embed_size",
                 activation="relu", fc_bias=True):
        super().__init__()
        self.attention = TutorialSelfAttention(embed_size, heads, shared, energy_scale, fc_bias)
        self.norm1 = nn.LayerNorm(embed_size)
        self.norm2 = nn.LayerNorm(embed_size)
        self.feed_forward = nn.Sequential(
            nn.Linear(embed_size, forward_expansion * embed_size),
            nn.ReLU() if activation == "relu" else nn.GELU(),
            nn.Linear(forward_expansion * embed_size, embed_size),
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, value, key, query, mask):
        attention = self.attention(value, key, query, mask)
        x = self.dropout(self.norm1(attention + query))
        forward = self.feed_forward(x)
        return self.dropout(self.norm2(forward + x))


class Encoder(nn.Module):
    """Word and position embeddings, then the blocks. form="notebook": the course notebook's
    TransformerBlock as written; form="tutorial": the tutorial's (shared: one d_k x d_k map;
    energy_scale, activation and fc_bias=False make a student's mixture of the two)."""

    def __init__(self, src_vocab_size, embed_size, num_layers, heads, forward_expansion, dropout,
                 max_length, form="notebook", shared=True, positions="learned", energy_scale="embed_size",
                 activation="relu", fc_bias=True):
        super().__init__()
        self.embed_size = embed_size
        self.word_embedding = nn.Embedding(src_vocab_size, embed_size)
        if positions == "learned":
            self.position_embedding = nn.Embedding(max_length, embed_size)
        self.positions = positions
        if form == "notebook":
            blocks = [TransformerBlock(embed_size, heads, dropout, forward_expansion) for _ in range(num_layers)]
        else:
            blocks = [TutorialTransformerBlock(embed_size, heads, dropout, forward_expansion, shared, energy_scale,
                                               activation, fc_bias) for _ in range(num_layers)]
        self.layers = nn.ModuleList(blocks)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        N, seq_length = x.shape
        if self.positions == "learned":
            positions = torch.arange(0, seq_length).expand(N, seq_length)
            out = self.word_embedding(x) + self.position_embedding(positions)
        else:
            out = self.word_embedding(x) + sinusoid(seq_length, self.embed_size)[None]
        out = self.dropout(out)
        for layer in self.layers:
            out = layer(out, out, out, mask)
        return out


# ---------------------------------------------------------------- 3. the notation notebook's classifier
# The last code cell of the notation notebook (shared/seeds/001), as written: ModelConfig,
# MultiHeadedAttention (W_Q, W_K, W_V, W_O; transpose_qkv), ResidualConnection (pre-norm),
# Encoder (learned pos_embed, a final LayerNorm), EncoderBlock (feed_forward: Linear, ReLU, Dropout,
# Linear), Transformer (the mean over positions, then linear). The notebook uses but does not
# define ScaledDotProductAttention (it checks it against d2l's DotProductAttention): written here as
# d2l's computes it, softmax(QKᵀ/√d_k) V, returning (context, weights). tests/course_model.py is the
# generator's compact form of the same model; tests/gen_course_ref.py asserts the two equal on
# every fixture (the same state_dict loaded strictly into both).
from dataclasses import dataclass  # noqa: E402
from typing import Optional  # noqa: E402

Attention = nn.Module


class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        d_k = query.size(-1)
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        attention_weights = scores.softmax(dim=-1)
        return torch.matmul(self.dropout(attention_weights), value), attention_weights


@dataclass
class ModelConfig:
    attention: Attention
    num_layers: int
    vocab_size: int
    H: int
    d_model: int
    d_ff: int
    dropout: float
    max_seq_len: int
    bias: bool = False


class MultiHeadedAttention(nn.Module):
    def __init__(self, attention, H, d_model, dropout=0.1, bias=False):
        super().__init__()
        assert d_model % H == 0
        self.d_model = d_model
        self.d_k = d_model // H
        self.d_q = d_model // H
        self.d_v = d_model // H
        self.H = H
        self.W_Q = nn.Linear(self.d_model, self.d_q * self.H, bias=bias)
        self.W_K = nn.Linear(self.d_model, self.d_k * self.H, bias=bias)
        self.W_V = nn.Linear(self.d_model, self.d_v * self.H, bias=bias)
        self.W_O = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.attention = attention
        self.dropout = nn.Dropout(p=dropout, inplace=False)

    def forward(self, query, key, value, mask: Optional[torch.BoolTensor] = None):
        if mask is not None:
            mask = mask.unsqueeze(1)
        Q = self.W_Q(query).contiguous()
        K = self.W_K(key).contiguous()
        V = self.W_V(value).contiguous()
        Q = self.transpose_qkv(Q)
        K = self.transpose_qkv(K)
        V = self.transpose_qkv(V)
        context_vector, attention_weights = self.attention(Q, K, V, mask)
        self.attention_weights = attention_weights  # (not the notebook's) for the generator's check
        context_vector_concat = self.reverse_transpose_qkv(context_vector)
        return self.W_O(context_vector_concat)

    def transpose_qkv(self, q_or_k_or_v):
        batch_size, seq_len, _ = q_or_k_or_v.shape
        q_or_k_or_v = q_or_k_or_v.view(batch_size, seq_len, self.H, self.d_model // self.H)
        return q_or_k_or_v.permute(0, 2, 1, 3)

    def reverse_transpose_qkv(self, q_or_k_or_v):
        q_or_k_or_v = q_or_k_or_v.permute(0, 2, 1, 3)
        batch_size, seq_len, _, _ = q_or_k_or_v.shape
        return q_or_k_or_v.contiguous().view(batch_size, seq_len, self.d_model)


class ResidualConnection(nn.Module):
    """residual connection: x + dropout(sublayer(layernorm(x)))"""

    def __init__(self, d_model, dropout):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x, sublayer):
        return x + self.drop(sublayer(self.norm(x)))


class NotationEncoder(nn.Module):
    """The notebook's Encoder (renamed here: this file has another Encoder)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.d_model = config.d_model
        self.tok_embed = nn.Embedding(config.vocab_size, config.d_model)
        self.pos_embed = nn.Parameter(torch.zeros(1, config.max_seq_len, config.d_model))
        self.encoder_blocks = nn.ModuleList([EncoderBlock(config) for _ in range(config.num_layers)])
        self.dropout = nn.Dropout(config.dropout)
        self.norm = nn.LayerNorm(config.d_model)
        self._reset_parameters()

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                torch.nn.init.xavier_uniform_(p)

    def forward(self, input, mask=None):
        x = self.tok_embed(input)
        x_pos = self.pos_embed[:, : x.size(1), :]
        x = self.dropout(x + x_pos)
        for layer in self.encoder_blocks:
            x = layer(x, mask)
        return self.norm(x)


class EncoderBlock(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.mha = MultiHeadedAttention(config.attention, config.H, config.d_model, config.dropout, config.bias)
        self.feed_forward = nn.Sequential(
            nn.Linear(config.d_model, config.d_ff),
            nn.ReLU(),
            nn.Dropout(config.dropout),
            nn.Linear(config.d_ff, config.d_model),
        )
        self.residual1 = ResidualConnection(config.d_model, config.dropout)
        self.residual2 = ResidualConnection(config.d_model, config.dropout)

    def forward(self, x, mask=None):
        x = self.residual1(x, lambda x: self.mha(x, x, x, mask=mask))
        return self.residual2(x, self.feed_forward)


class Transformer(nn.Module):
    """The notation notebook's classifier."""

    def __init__(self, config: ModelConfig, num_classes):
        super().__init__()
        self.encoder = NotationEncoder(config)
        self.linear = nn.Linear(config.d_model, num_classes)

    def forward(self, x, pad_mask=None):
        x = self.encoder(x, pad_mask)
        return self.linear(torch.mean(x, -2))
