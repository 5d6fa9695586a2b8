#!/usr/bin/python3
"""notebook_example.py -- a model from a notebook, saved so Stepformer opens it.

The part above the line "not part of the snippet" is what a notebook user copies: build
nn.Embedding + nn.TransformerEncoder (+ an optional prediction head), train it as you like with
the forward below, and save the state_dict as safetensors with the config in __metadata__.
Open the result with:  stepformer --model model.safetensors

It writes model.safetensors into the current folder (and, below the line, tokens.txt and pred.npy:
the prediction torch computes, which the C test compares with). Regenerate the test reference
tests/ref/notebook/ from the repository root with:

    cd tests/ref/notebook && /usr/bin/python3 ../../../scripts/train/notebook_example.py
"""
import json
import struct

import torch
import torch.nn as nn

vocab = ["<unk>", "the", "cat", "walks", "sleeps", "by", "near", "river", "money", "bank"]
D, H, F, LAYERS = 16, 2, 32, 1

torch.manual_seed(0)
embed = nn.Embedding(len(vocab), D)
encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, H, F, batch_first=True), LAYERS)
head = nn.Linear(D, len(vocab))  # optional: the prediction head


def positions(L, D):  # sinusoidal, as Stepformer computes it (float64, then float32)
    i = torch.arange(L, dtype=torch.float64)[:, None]
    ang = i / 10000 ** (torch.arange(0, D, 2, dtype=torch.float64) / D)
    return torch.stack([ang.sin(), ang.cos()], -1).reshape(L, D).float()


def forward(ids):  # ids [B, L] -> next-word probabilities [B, L, V]; no sqrt(D) scaling
    x = embed(ids) + positions(ids.shape[1], D)
    return head(encoder(x)).softmax(-1)


# ... train here: a loss on forward(ids), optimizer steps; encoder.eval() when done ...


def save_safetensors(path, tensors, metadata):
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        b = t.detach().cpu().float().numpy().astype("<f4").tobytes()  # little-endian float32
        span = [offset, offset + len(b)]
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": span}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)  # pad the header to a multiple of 8 bytes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


tensors = {"embed.weight": embed.weight, **encoder.state_dict(),  # layers.0.self_attn...
           "head.weight": head.weight, "head.bias": head.bias}
config = {"d_model": D, "n_heads": H, "d_ff": F, "n_layers": LAYERS, "activation": "relu",
          "norm_first": 0, "causal": 0, "layer_norm_eps": 1e-5, "vocab": "\n".join(vocab)}
save_safetensors("model.safetensors", tensors, {k: str(v) for k, v in config.items()})

# ---------------------------------------------------------------- not part of the snippet
if __name__ == "__main__":
    import numpy as np

    torch.set_num_threads(1)
    encoder.eval()  # no dropout
    words = "the cat sleeps by the river bank".split()
    with torch.no_grad():
        pred = forward(torch.tensor([[vocab.index(w) for w in words]]))[0]
    np.save("pred.npy", pred.numpy().astype("<f4"))
    with open("tokens.txt", "w") as f:
        f.write("".join(w + "\n" for w in words))
    print(f"wrote model.safetensors, pred.npy [{len(words)}, {len(vocab)}], tokens.txt")
