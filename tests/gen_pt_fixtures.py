#!/usr/bin/python3
"""gen_pt_fixtures.py -- writes the .pt fixtures of tests/test_ptfile.c into tests/ref/pt/.

Run once, by hand, with Debian's python3-torch (1.13.1) and python3-numpy; not part of the
build or the tests, which read the committed files and need no torch:

    cd tests && /usr/bin/python3 gen_pt_fixtures.py          # writes ref/pt/*

What it writes
  good files, each NAME.pt with NAME.txt, the values torch itself reads back:
    floats.pt   float32 tensors: a 0-d scalar, [1, 5, 3], an empty [0, 4], a 4-d tensor,
                a transposed view (strides not contiguous), a slice at a storage offset, a
                second name for the same tensor (tied weights)
    halfs.pt    float16 and bfloat16, with subnormals, the largest half, infinities, -0
    doubles.pt  float64, one value beyond float32's range
    module.pt   torch.save(nn.Sequential(nn.Linear(4, 3), nn.LayerNorm(3)).state_dict())
    params.pt   a dict of nn.Parameters (torch._utils._rebuild_parameter)
    proto4.pt   a state_dict pickled with protocol 4 (FRAME, SHORT_BINUNICODE, STACK_GLOBAL,
                MEMOIZE)
  NAME.txt: "tensor NAME NDIM D0 D1 ..." then one line of its values in C order (%.9g, which
  gives a float32 back exactly; inf, -inf, nan as such).
  bad files, listed in bad.txt as "FILE<Tab>words its one-line message must hold":
    forbidden.pt (GLOBAL os system + REDUCE), eval.pt (STACK_GLOBAL builtins eval),
    whole_module.pt (torch.save(model)), truncated.pt, short_storage.pt, beyond_storage.pt,
    long_storage.pt (BatchNorm's int64 num_batches_tracked), unknown_storage.pt, legacy.pt,
    deflated.pt, five_dims.pt, not_a_dict.pt, big_endian.pt.
Bad pickles are written as bytes by hand (nothing here runs them) and zipped with torch's own
writer (torch._C.PyTorchFileWriter), as torch.save would.
"""
import io
import os
import pickle
import struct
import zipfile

import numpy as np
import torch
import torch.nn as nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ref", "pt")


def path(name):
    return os.path.join(OUT, name)


def fmt(x):
    x = float(x)
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return "%.9g" % x


def save_good(name, sd, **kw):
    """torch.save the dict, read it back with torch.load, write the manifest from what torch read."""
    torch.save(sd, path(name + ".pt"), **kw)
    back = torch.load(path(name + ".pt"))
    lines = []
    for k, v in back.items():
        a = v.detach().to(torch.float32).contiguous().numpy()
        lines.append("tensor %s %d %s" % (k, a.ndim, " ".join(str(d) for d in a.shape)))
        lines.append(" ".join(fmt(x) for x in a.reshape(-1)))
    with open(path(name + ".txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def write_zip(name, records):
    """Zips (entry, bytes) as torch.save does: top folder named after the file, stored, aligned."""
    w = torch._C.PyTorchFileWriter(path(name))
    for entry, data in records:
        w.write_record(entry, data, len(data))
    w.write_end_of_file()


def bu(s):  # BINUNICODE
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def tensor_pickle(entries):
    """Protocol-2 bytes of a dict {name: tensor}, as torch.save lays them out. entries: a list of
    (name, storage type, key, numel, offset, size, stride)."""
    out = b"\x80\x02}("
    for name, stype, key, numel, offset, size, stride in entries:
        out += bu(name) + b"ctorch._utils\n_rebuild_tensor_v2\n(("
        out += bu("storage") + b"ctorch\n" + stype.encode() + b"\n" + bu(key) + bu("cpu")
        out += b"J" + struct.pack("<i", numel) + b"tQ"
        out += b"J" + struct.pack("<i", offset)
        out += b"(" + b"".join(b"J" + struct.pack("<i", d) for d in size) + b"t"
        out += b"(" + b"".join(b"J" + struct.pack("<i", d) for d in stride) + b"t"
        out += b"\x89ccollections\nOrderedDict\n)RtR"  # requires_grad, hooks; args; REDUCE
    return out + b"u."


def f32(vals):
    return struct.pack("<%df" % len(vals), *vals)


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    bad = []

    # ---- good files
    base = torch.arange(20, dtype=torch.float32) * 0.5 - 3.0
    w = torch.randn(3, 4)
    floats = {
        "scalar": torch.tensor(1.5),
        "x": torch.randn(1, 5, 3),
        "empty": torch.zeros(0, 4),
        "four": torch.randn(2, 1, 3, 2),
        "w": w,
        "w_t": w.t(),  # strides (1, 4)
        "slice": base[5:11].view(2, 3),  # storage offset 5
        "w_again": w,  # the same storage as "w"
        "vec": torch.tensor([1e-30, -0.0, 3.4e38, -1.0]),
    }
    save_good("floats", floats)

    h = torch.tensor([0.0, -0.0, 1.0, -2.5, 65504.0, 6e-8, 1e-5, float("inf"), float("-inf"), 0.1],
                     dtype=torch.float16)
    save_good("halfs", {
        "h": h,
        "h2": torch.randn(2, 3).to(torch.float16),
        "b": torch.tensor([1.0, -3.140625, 1e38, 1e-38, float("inf"), 0.0], dtype=torch.bfloat16),
        "b2": torch.randn(3, 2).to(torch.bfloat16),
    })
    save_good("doubles", {"d": torch.tensor([[1.0 / 3.0, -2.0], [1e-300, 1e300]], dtype=torch.float64)})

    model = nn.Sequential(nn.Linear(4, 3), nn.LayerNorm(3))
    with torch.no_grad():
        model[1].weight.uniform_(0.5, 1.5)
        model[1].bias.uniform_(-0.5, 0.5)
    save_good("module", model.state_dict())
    save_good("params", dict(model.named_parameters()))
    save_good("proto4", model.state_dict(), pickle_protocol=4)

    # ---- bad files
    write_zip("forbidden.pt", [("data.pkl", b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00echo\x85R."),
                               ("version", b"3\n")])
    bad.append(("forbidden.pt", "os.system|nothing was run"))
    write_zip("eval.pt", [("data.pkl", b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x08builtins\x8c\x04eval"
                                       b"\x93\x8c\x011\x85R."), ("version", b"3\n")])
    bad.append(("eval.pt", "builtins.eval|nothing was run"))
    torch.save(nn.Linear(2, 2), path("whole_module.pt"))
    bad.append(("whole_module.pt", "torch.nn.modules.linear.Linear|state_dict()"))

    good = open(path("module.pt"), "rb").read()
    with open(path("truncated.pt"), "wb") as f:
        f.write(good[: len(good) // 2])
    bad.append(("truncated.pt", "truncated"))

    # data/0 holds 3 floats where the persistent id promises 6
    write_zip("short_storage.pt", [("data.pkl", tensor_pickle([("w", "FloatStorage", "0", 6, 0, (2, 3), (3, 1))])),
                                   ("data/0", f32([1, 2, 3])), ("version", b"3\n")])
    bad.append(("short_storage.pt", "\"w\"|fewer than its 6 float32 values"))
    # a [4, 4] tensor over a storage of 6
    write_zip("beyond_storage.pt", [("data.pkl", tensor_pickle([("w", "FloatStorage", "0", 6, 0, (4, 4), (4, 1))])),
                                    ("data/0", f32([1, 2, 3, 4, 5, 6])), ("version", b"3\n")])
    bad.append(("beyond_storage.pt", "\"w\"|storage is shorter than the tensor"))
    torch.save(nn.BatchNorm1d(3).state_dict(), path("long_storage.pt"))
    bad.append(("long_storage.pt", "num_batches_tracked|LongStorage"))
    write_zip("unknown_storage.pt", [("data.pkl", tensor_pickle([("q", "QuantumStorage", "0", 2, 0, (2,), (1,))])),
                                     ("data/0", f32([1, 2])), ("version", b"3\n")])
    bad.append(("unknown_storage.pt", "\"q\"|QuantumStorage"))
    torch.save({"w": torch.ones(2)}, path("legacy.pt"), _use_new_zipfile_serialization=False)
    bad.append(("legacy.pt", "legacy format|_use_new_zipfile_serialization"))
    with zipfile.ZipFile(path("module.pt")) as src, zipfile.ZipFile(path("deflated.pt"), "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename.replace("module/", "deflated/"), src.read(info.filename))
    bad.append(("deflated.pt", "compressed"))
    torch.save({"t5": torch.zeros(1, 1, 1, 1, 2)}, path("five_dims.pt"))
    bad.append(("five_dims.pt", "\"t5\"|5 dimensions"))
    torch.save({"epoch": 3, "w": torch.ones(1)}, path("not_a_dict.pt"))
    bad.append(("not_a_dict.pt", "\"epoch\"|an integer|not a tensor"))
    pkl = tensor_pickle([("w", "FloatStorage", "0", 2, 0, (2,), (1,))])
    write_zip("big_endian.pt", [("data.pkl", pkl), ("data/0", f32([1, 2])), ("byteorder", b"big"),
                                ("version", b"3\n")])
    bad.append(("big_endian.pt", "big-endian"))
    # the hand-made pickle is what torch itself reads: a good one loads
    write_zip("handmade_check.pt", [("data.pkl", pkl), ("data/0", f32([1, 2])), ("version", b"3\n")])
    assert torch.load(path("handmade_check.pt"))["w"].tolist() == [1.0, 2.0]
    os.remove(path("handmade_check.pt"))

    with open(path("bad.txt"), "w") as f:
        f.write("# FILE<TAB>what its one-line message must hold (every part between | must be in it)\n")
        for name, words in bad:
            f.write("%s\t%s\n" % (name, words))


if __name__ == "__main__":
    main()
