"""make_notebooks.py -- writes tests/notebooks/*.ipynb (issue 37): notebooks in the course notebooks'
style that define their modules as the notebooks write them, train a few steps with a fixed seed,
then call stepformer.show and stepformer.stages, and check every stage they can reach with forward
hooks against the module's own forward. Run once by hand after a change:

    /usr/bin/python3 tests/notebooks/make_notebooks.py

tests/notebooks/run.sh executes them (jupyter nbconvert --execute) and checks that show drew.
"""
import os

import nbformat as nbf

HERE = os.path.dirname(os.path.abspath(__file__))

SETUP = '''import math
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import stepformer

torch.manual_seed(0)
vocab = ["<unk>", "the", "cat", "walks", "by", "bank", "river", "money", "sleeps", "mouse", "eats"]
sentences = ["the cat walks by the bank", "the mouse sleeps by the river", "the cat eats the mouse",
             "the money sleeps by the bank"]
def encode(s):
    return torch.tensor([[vocab.index(w) for w in s.split()]])'''

HOOKS = '''captured = {}
def keep(name, pick=None):
    def hook(module, inputs, output):
        out = output if pick is None else pick(output)
        captured[name] = out.detach()[0].numpy()
    return hook

def compare(stages, captured):
    worst = 0.0
    for name, want in captured.items():
        got = stages[name]
        assert got.shape == want.shape, (name, got.shape, want.shape)
        diff = float(np.abs(got - want).max() / (1 + np.abs(want).max()))
        print(f"{name:12s} {str(got.shape):14s} largest difference {diff:.2e}")
        worst = max(worst, diff)
    assert worst < 1e-5, f"a stage differs from the module's own forward by {worst}"
    print(f"{len(captured)} stages equal the module's forward (largest relative difference {worst:.1e})")'''

TRAIN_LM = '''# a few steps of next-word prediction, seeded
head = nn.Linear({D}, len(vocab))
opt = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=1e-2)
for step in range(20):
    loss = 0
    for s in sentences:
        x = encode(s)
        logits = head(model(x{extra}))
        loss = loss + F.cross_entropy(logits[0, :-1], x[0, 1:])
    opt.zero_grad(); loss.backward(); opt.step()
print("loss after 20 steps:", float(loss) / len(sentences))
model.eval();'''


def md(s):
    return nbf.v4.new_markdown_cell(s)


def code(s):
    return nbf.v4.new_code_cell(s)


def numbered(cells):
    for i, c in enumerate(cells):
        c["id"] = f"cell-{i}"
    return cells


def write(name, cells):
    nb = nbf.v4.new_notebook()
    nb.cells = numbered(cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbf.write(nb, os.path.join(HERE, name))


EINSUM = '''class SelfAttention(nn.Module):
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
        out = torch.einsum("nhql,nlhd->nqhd", [attention, values])
        out = out.reshape(N, query_len, self.heads * self.head_dim)
        out = self.fc_out(out)
        return out


class TransformerBlock(nn.Module):
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


class Encoder(nn.Module):
    def __init__(self, src_vocab_size, embed_size, num_layers, heads, forward_expansion, dropout, max_length):
        super(Encoder, self).__init__()
        self.embed_size = embed_size
        self.word_embedding = nn.Embedding(src_vocab_size, embed_size)
        self.position_embedding = nn.Embedding(max_length, embed_size)
        self.layers = nn.ModuleList(
            [TransformerBlock(embed_size, heads, dropout=dropout, forward_expansion=forward_expansion)
             for _ in range(num_layers)])
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        N, seq_length = x.shape
        positions = torch.arange(0, seq_length).expand(N, seq_length)
        out = self.dropout(self.word_embedding(x) + self.position_embedding(positions))
        for layer in self.layers:
            out = layer(out, out, out, mask)
        return out'''

VARIANT = '''# A variant of my own: the tutorial's scale, energy / sqrt(embed_size), and ReLU in the block.
class MySelfAttention(SelfAttention):
    def forward(self, values, keys, query, mask=None):
        N, L = query.shape[0], query.shape[1]
        v = self.values(values).reshape(N, L, self.heads, self.head_dim)
        k = self.keys(keys).reshape(N, L, self.heads, self.head_dim)
        q = self.queries(query).reshape(N, L, self.heads, self.head_dim)
        energy = torch.einsum("nqhd,nkhd->nhqk", [q, k])
        attention = torch.softmax(energy / (self.embed_size ** (1 / 2)), dim=3)
        out = torch.einsum("nhql,nlhd->nqhd", [attention, v]).reshape(N, L, self.embed_size)
        return self.fc_out(out)

variant = Encoder(len(vocab), 12, 1, 3, 2, 0.0, 16)
for block in variant.layers:
    block.attention = MySelfAttention(12, 3)
    block.feed_forward[1] = nn.ReLU()
variant.eval()
text = "the cat walks by the bank"
captured = {}
for i, block in enumerate(variant.layers):
    block.attention.register_forward_hook(keep(f"l{i}.attn"))
    block.register_forward_hook(keep(f"l{i}.out"))
with torch.no_grad():
    variant(encode(text))
compare(stepformer.stages(variant, text, vocab=vocab), captured)'''


def einsum_notebook():
    write("einsum_encoder.ipynb", [
        md("# The einsum encoder, then every stage in Stepformer\n\n"
           "The course's `SelfAttention` and `TransformerBlock`, written with `einsum`, in an `Encoder`; "
           "a few training steps; then `stepformer.show` draws a stage inline and `stepformer.stages` "
           "gives every stage's numbers, which must equal the module's own forward."),
        code(SETUP),
        code(EINSUM),
        code("model = Encoder(len(vocab), embed_size=12, num_layers=2, heads=3, forward_expansion=2, dropout=0.1, "
             "max_length=16)\n" + TRAIN_LM.format(D=12, extra="")),
        md("## The attention weights of layer 1, inline"),
        code('text = "the cat walks by the bank"\nstepformer.show(model, text, vocab=vocab, step="softmax", head=0);'),
        md("## Every stage against the module's own forward (forward hooks)"),
        code(HOOKS),
        code('''for i, block in enumerate(model.layers):
    block.attention.register_forward_hook(keep(f"l{i}.attn"))
    block.register_forward_hook(keep(f"l{i}.out"))
with torch.no_grad():
    model(encode(text))
stages = stepformer.stages(model, text, vocab=vocab)
print(sorted(stages)[:8], "...", len(stages), "stages")
compare(stages, captured)'''),
        md("## A student's variant: Stepformer reads what the module computes"),
        code(VARIANT),
        code('stepformer.show(variant, text, vocab=vocab, step="l0.A", head=-1);'),
    ])


HEADS = '''def scaled_dot_product_attention(query, key, value):
    dim_k = query.size(-1)
    scores = torch.bmm(query, key.transpose(1, 2)) / math.sqrt(dim_k)
    weights = F.softmax(scores, dim=-1)
    return torch.bmm(weights, value)


class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_dim):
        super().__init__()
        self.q = nn.Linear(embed_dim, head_dim)
        self.k = nn.Linear(embed_dim, head_dim)
        self.v = nn.Linear(embed_dim, head_dim)

    def forward(self, hidden_state):
        attn_outputs = scaled_dot_product_attention(
            self.q(hidden_state), self.k(hidden_state), self.v(hidden_state))
        return attn_outputs


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        head_dim = embed_dim // num_heads
        self.heads = nn.ModuleList([AttentionHead(embed_dim, head_dim) for _ in range(num_heads)])
        self.output_linear = nn.Linear(embed_dim, embed_dim)

    def forward(self, hidden_state):
        x = torch.cat([h(hidden_state) for h in self.heads], dim=-1)
        x = self.output_linear(x)
        return x


class FeedForward(nn.Module):
    def __init__(self, embed_dim, intermediate_size, dropout=0.1):
        super().__init__()
        self.linear_1 = nn.Linear(embed_dim, intermediate_size)
        self.linear_2 = nn.Linear(intermediate_size, embed_dim)
        self.gelu = nn.GELU()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = self.linear_1(x)
        x = self.gelu(x)
        x = self.linear_2(x)
        x = self.dropout(x)
        return x


class TransformerEncoderLayer(nn.Module):
    def __init__(self, embed_dim, num_heads, intermediate_size):
        super().__init__()
        self.layer_norm_1 = nn.LayerNorm(embed_dim)
        self.layer_norm_2 = nn.LayerNorm(embed_dim)
        self.attention = MultiHeadAttention(embed_dim, num_heads)
        self.feed_forward = FeedForward(embed_dim, intermediate_size)

    def forward(self, x):
        hidden_state = self.layer_norm_1(x)
        x = x + self.attention(hidden_state)
        x = x + self.feed_forward(self.layer_norm_2(x))
        return x


class Embeddings(nn.Module):
    def __init__(self, vocab_size, embed_dim, max_position_embeddings):
        super().__init__()
        self.token_embeddings = nn.Embedding(vocab_size, embed_dim)
        self.position_embeddings = nn.Embedding(max_position_embeddings, embed_dim)
        self.layer_norm = nn.LayerNorm(embed_dim, eps=1e-12)
        self.dropout = nn.Dropout()

    def forward(self, input_ids):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long).unsqueeze(0)
        token_embeddings = self.token_embeddings(input_ids)
        position_embeddings = self.position_embeddings(position_ids)
        embeddings = token_embeddings + position_embeddings
        embeddings = self.layer_norm(embeddings)
        embeddings = self.dropout(embeddings)
        return embeddings


class TransformerEncoder(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_heads, intermediate_size, num_layers, max_len):
        super().__init__()
        self.embeddings = Embeddings(vocab_size, embed_dim, max_len)
        self.layers = nn.ModuleList([TransformerEncoderLayer(embed_dim, num_heads, intermediate_size)
                                     for _ in range(num_layers)])

    def forward(self, x):
        x = self.embeddings(x)
        for layer in self.layers:
            x = layer(x)
        return x'''


def heads_notebook():
    write("heads_encoder.ipynb", [
        md("# Attention head by head, then every stage in Stepformer\n\n"
           "`AttentionHead` and `MultiHeadAttention` as the course writes them (one `nn.Linear` per head "
           "for $q$, $k$, $v$), in a pre-norm encoder; a few training steps; then Stepformer."),
        code(SETUP),
        code(HEADS),
        code("model = TransformerEncoder(len(vocab), embed_dim=16, num_heads=4, intermediate_size=32, num_layers=2, "
             "max_len=16)\n" + TRAIN_LM.format(D=16, extra="")),
        code('text = "the mouse sleeps by the river bank"\n'
             'stepformer.show(model, text, vocab=vocab, step="softmax", layer=1, head=-1);'),
        code(HOOKS),
        code('''model.embeddings.register_forward_hook(keep("Z"))
for i, layer in enumerate(model.layers):
    for h, head in enumerate(layer.attention.heads):  # each head's A·V: one slice of l{i}.AV
        head.register_forward_hook(keep(f"l{i}.AV.h{h}"))
    layer.attention.register_forward_hook(keep(f"l{i}.attn"))
    layer.register_forward_hook(keep(f"l{i}.out"))
with torch.no_grad():
    model(encode(text))
stages = stepformer.stages(model, text, vocab=vocab)
for i in range(len(model.layers)):  # the heads' slices, as Stepformer's [H, L, d_k]
    stages.update({f"l{i}.AV.h{h}": stages[f"l{i}.AV"][h] for h in range(4)})
compare(stages, captured)'''),
    ])


NOTATION = '''from dataclasses import dataclass
from typing import Optional

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
        self.H = H
        self.W_Q = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.W_K = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.W_V = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.W_O = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.attention = attention
        self.dropout = nn.Dropout(p=dropout, inplace=False)

    def forward(self, query, key, value, mask: Optional[torch.BoolTensor] = None):
        if mask is not None:
            mask = mask.unsqueeze(1)
        Q = self.transpose_qkv(self.W_Q(query).contiguous())
        K = self.transpose_qkv(self.W_K(key).contiguous())
        V = self.transpose_qkv(self.W_V(value).contiguous())
        context_vector, attention_weights = self.attention(Q, K, V, mask)
        return self.W_O(self.reverse_transpose_qkv(context_vector))

    def transpose_qkv(self, x):
        batch_size, seq_len, _ = x.shape
        return x.view(batch_size, seq_len, self.H, self.d_k).permute(0, 2, 1, 3)

    def reverse_transpose_qkv(self, x):
        x = x.permute(0, 2, 1, 3)
        batch_size, seq_len, _, _ = x.shape
        return x.contiguous().view(batch_size, seq_len, self.d_model)


class ResidualConnection(nn.Module):
    def __init__(self, d_model, dropout):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x, sublayer):
        return x + self.drop(sublayer(self.norm(x)))


class Encoder(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.d_model = config.d_model
        self.tok_embed = nn.Embedding(config.vocab_size, config.d_model)
        self.pos_embed = nn.Parameter(torch.zeros(1, config.max_seq_len, config.d_model))
        self.encoder_blocks = nn.ModuleList([EncoderBlock(config) for _ in range(config.num_layers)])
        self.dropout = nn.Dropout(config.dropout)
        self.norm = nn.LayerNorm(config.d_model)
        for p in self.parameters():
            if p.dim() > 1:
                torch.nn.init.xavier_uniform_(p)

    def forward(self, input, mask=None):
        x = self.tok_embed(input)
        x = self.dropout(x + self.pos_embed[:, : x.size(1), :])
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
    def __init__(self, config: ModelConfig, num_classes):
        super().__init__()
        self.encoder = Encoder(config)
        self.linear = nn.Linear(config.d_model, num_classes)

    def forward(self, x, pad_mask=None):
        x = self.encoder(x, pad_mask)
        return self.linear(torch.mean(x, -2))'''


def notation_notebook():
    write("notation_classifier.ipynb", [
        md("# The notation notebook's classifier, then every stage in Stepformer\n\n"
           "The `Transformer` of the notation notebook (pre-norm blocks, learned positions, the mean over "
           "positions, then `linear`), trained a few steps to tell the river bank from the money bank."),
        code(SETUP),
        code(NOTATION),
        code('''data = [("the cat walks by the river bank", 0), ("the mouse sleeps by the river", 0),
        ("the money sleeps by the bank", 1), ("the cat eats the money", 1)]
config = ModelConfig(attention=ScaledDotProductAttention(), num_layers=2, vocab_size=len(vocab), H=2,
                     d_model=16, d_ff=32, dropout=0.1, max_seq_len=16)
model = Transformer(config, num_classes=2)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(20):
    loss = sum(F.cross_entropy(model(encode(s)), torch.tensor([c])) for s, c in data)
    opt.zero_grad(); loss.backward(); opt.step()
print("loss after 20 steps:", float(loss) / len(data))
model.eval();'''),
        md("## The whole pass, step by step"),
        code('text = "the cat walks by the bank"\n'
             'stepformer.show(model, text, vocab=vocab, step="all", size=(960, 540));'),
        code(HOOKS),
        code('''weights = []  # the blocks share config.attention: its calls come in the blocks' order
model.encoder.encoder_blocks[0].mha.attention.register_forward_hook(
    lambda module, inputs, out: weights.append(out[1].detach()[0].numpy()))
for i, block in enumerate(model.encoder.encoder_blocks):
    block.register_forward_hook(keep(f"l{i}.out"))
model.encoder.register_forward_hook(keep("enc_norm"))
model.register_forward_hook(keep("class_logits", pick=lambda out: out[None]))
with torch.no_grad():
    model(encode(text))
captured.update({f"l{i}.A": a for i, a in enumerate(weights)})
stages = stepformer.stages(model, text, vocab=vocab)
compare(stages, captured)'''),
    ])


ENC = '''class Model(nn.Module):
    """An nn.Embedding, Stepformer's sinusoidal positions, an nn.TransformerEncoder, a head."""

    def __init__(self, V, D, H, F_, layers):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        layer = nn.TransformerEncoderLayer(D, H, F_, dropout=0.1, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(D), enable_nested_tensor=False)
        self.head = nn.Linear(D, V)
        pos = torch.arange(64, dtype=torch.float64)[:, None]
        ang = pos / torch.pow(10000.0, torch.arange(0, D, 2, dtype=torch.float64)[None, :] / D)
        P = torch.zeros(64, D, dtype=torch.float64)
        P[:, 0::2], P[:, 1::2] = torch.sin(ang), torch.cos(ang)
        self.register_buffer("P", P.float())

    def forward(self, x):
        z = self.embed(x) + self.P[: x.shape[1]]
        return self.head(self.encoder(z))'''


def torch_notebook():
    write("torch_encoder.ipynb", [
        md("# nn.TransformerEncoder, then every stage in Stepformer"),
        code(SETUP),
        code(ENC),
        code('''model = Model(len(vocab), 16, 2, 32, 2)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(20):
    loss = sum(F.cross_entropy(model(encode(s))[0, :-1], encode(s)[0, 1:]) for s in sentences)
    opt.zero_grad(); loss.backward(); opt.step()
model.eval();
text = "the cat walks by the bank"
stepformer.show(model, text, vocab=vocab);'''),
        code(HOOKS),
        code('''for i, layer in enumerate(model.encoder.layers):
    layer.register_forward_hook(keep(f"l{i}.out"))
model.head.register_forward_hook(keep("logits"))
with torch.no_grad():
    model(encode(text))
compare(stepformer.stages(model, text, vocab=vocab), captured)'''),
    ])


LESSON_CLASSES = '''class AttentionHead(nn.Module):
    def __init__(self, embed_dim, head_dim):
        super().__init__()
        self.q = nn.Linear(embed_dim, head_dim)
        self.k = nn.Linear(embed_dim, head_dim)
        self.v = nn.Linear(embed_dim, head_dim)

    def forward(self, z):
        q, k, v = self.q(z), self.k(z), self.v(z)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.size(-1))
        return F.softmax(scores, dim=-1) @ v


class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.heads = nn.ModuleList([AttentionHead(embed_dim, embed_dim // num_heads) for _ in range(num_heads)])
        self.output_linear = nn.Linear(embed_dim, embed_dim)

    def forward(self, z):
        return self.output_linear(torch.cat([h(z) for h in self.heads], dim=-1))


class FeedForward(nn.Module):
    def __init__(self, embed_dim, hidden):
        super().__init__()
        self.linear_1 = nn.Linear(embed_dim, hidden)
        self.linear_2 = nn.Linear(hidden, embed_dim)
        self.gelu = nn.GELU()

    def forward(self, x):
        return self.linear_2(self.gelu(self.linear_1(x)))


class TransformerEncoderLayer(nn.Module):
    def __init__(self, embed_dim, num_heads, hidden):
        super().__init__()
        self.attention = MultiHeadAttention(embed_dim, num_heads)
        self.feed_forward = FeedForward(embed_dim, hidden)
        self.layer_norm_1 = nn.LayerNorm(embed_dim)
        self.layer_norm_2 = nn.LayerNorm(embed_dim)

    def forward(self, x):  # the attention sees z itself: the layer norms come after
        x = self.layer_norm_1(x + self.attention(x))
        return self.layer_norm_2(x + self.feed_forward(x))


class Embeddings(nn.Module):  # a table of meanings, no positions
    def __init__(self, vocab_size, embed_dim):
        super().__init__()
        self.token_embeddings = nn.Embedding(vocab_size, embed_dim)

    def forward(self, input_ids):
        return self.token_embeddings(input_ids)


class TransformerEncoder(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_heads, hidden, num_layers):
        super().__init__()
        self.embeddings = Embeddings(vocab_size, embed_dim)
        self.layers = nn.ModuleList([TransformerEncoderLayer(embed_dim, num_heads, hidden)
                                     for _ in range(num_layers)])

    def forward(self, x):
        x = self.embeddings(x)
        for layer in self.layers:
            x = layer(x)
        return x'''


def lesson_notebook():
    nb_path = os.path.join(HERE, "..", "..", "lessons", "notebook.ipynb")
    cells = [
        md("# The intuition of attention, in your own notebook\n\n"
           "The companion of the lesson *The intuition of attention* (`lessons/intuition.md`): the same "
           "sentence and the same three-number table of meanings (noun, verb, adjective), written as a "
           "student writes a Transformer in PyTorch. No training: we set the weights by hand, so that "
           "$q = k = v = z$ (one head, $d_k = D = 3$) and there are no positions. Then `stepformer.show` "
           "draws the stages inline, with their numbers, and `stepformer.stages` gives them as arrays.\n\n"
           "Run it from a checkout after the build (`PYTHONPATH=python`), or after `pip install ./python` "
           "or the Debian package."),
        code('''import math
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import stepformer'''),
        md("## The table of meanings\n\nEach word gets three numbers: how much of a noun, a verb, an "
           "adjective it is. The small words get zeros; `<unk>` (any other word) too."),
        code('''sentence = "Jane, who loves art, visited the museum, in Paris"
table = {"jane": [1, 0, 0], "art": [1, 0, 0], "museum": [1, 0, 0], "paris": [1, 0, 0],
         "loves": [0, 1, 0], "visited": [0, 1, 0], "who": [0, 0, 0], "the": [0, 0, 0], "in": [0, 0, 0]}
vocab = ["<unk>"] + list(table)
E = torch.tensor([[0.0, 0.0, 0.0]] + [table[w] for w in vocab[1:]])
E'''),
        md("## The model, written as the course writes it"),
        code(LESSON_CLASSES),
        md("## Weights by hand: $q = k = v = z$\n\nEvery projection is the identity matrix without a "
           "bias, so the attention scores are $S = Z Z^\\top / \\sqrt{3}$ and the attention weights "
           "$A = \\operatorname{softmax}(S)$; we stop at $AV$."),
        code('''model = TransformerEncoder(len(vocab), embed_dim=3, num_heads=1, hidden=4, num_layers=1)
with torch.no_grad():
    model.embeddings.token_embeddings.weight.copy_(E)
    head = model.layers[0].attention.heads[0]
    for lin in (head.q, head.k, head.v, model.layers[0].attention.output_linear):
        lin.weight.copy_(torch.eye(3))
        lin.bias.zero_()
model.eval()

words = [w.strip(",").lower() for w in sentence.split()]
z = E[[vocab.index(w) for w in words]]
A = F.softmax(z @ z.T / math.sqrt(3), dim=-1)
print(words)
print("attention of jane:", np.round(A[0].numpy(), 3))'''),
        md("## In Stepformer: the scores and the attention weights\n\n"
           "Jane (a noun) attends to the nouns; the small words, all zeros, attend to every word alike."),
        code('stepformer.show(model, sentence, vocab=vocab, step="softmax");'),
        md("## $AV$: each word becomes a mix of the words it attends to"),
        code('stepformer.show(model, sentence, vocab=vocab, step="l0.AV");'),
        md("## The numbers behind the pictures\n\n`stepformer.stages` gives every stage by the name "
           "`stepformer dump` uses; they equal what we computed by hand."),
        code('''stages = stepformer.stages(model, sentence, vocab=vocab)
print(list(stages)[:10], "...")
assert np.allclose(stages["l0.A"][0], A.numpy(), atol=1e-6)
print("A from Stepformer equals softmax(Z Z^T / sqrt(3)):", np.round(stages["l0.A"][0][0], 3))'''),
        md("## The lesson's own step, on this model\n\nThe same step as the lesson tells it, with its "
           "narration, drawn on the model of this notebook (`lesson=` runs the program's export)."),
        code('stepformer.show(model, sentence, vocab=vocab, lesson="intuition.md", step=9);'),
    ]
    nb = nbf.v4.new_notebook()
    nb.cells = numbered(cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbf.write(nb, nb_path)


if __name__ == "__main__":
    lesson_notebook()
    einsum_notebook()
    heads_notebook()
    notation_notebook()
    torch_notebook()
