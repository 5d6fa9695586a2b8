"""gguf_py.py -- the project's own GGUF writer, quantizer and dequantizer (numpy), for fixtures.

Written from the specification (docs/gguf.md in the ggml repository) and from ggml's reference
code in ggml-quants.c: quantize_row_*_ref (the quantizers) and dequantize_row_* (the
dequantizers), step by step in float32 so that every product and sum rounds as ggml's C does.
numpy 1.x turns a float32 times a Python number into a float64, so every constant below is F(...).

    w = Writer(arch="gpt2")                # general.architecture
    w.kv("gpt2.block_count", U32, 2)
    w.tensor("token_embd.weight", np_array_float32, "Q8_0")   # shape as PyTorch's; ne reversed
    w.write("x.gguf")
"""
import struct

import numpy as np

F = np.float32

# metadata value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
_SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?",
           U64: "<Q", I64: "<q", F64: "<d"}

# ggml types: id, weights per block, bytes per block
TYPES = {"F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18), "Q4_1": (3, 32, 20),
         "Q5_0": (6, 32, 22), "Q5_1": (7, 32, 24), "Q8_0": (8, 32, 34), "Q4_K": (12, 256, 144),
         "Q5_K": (13, 256, 176), "Q6_K": (14, 256, 210), "BF16": (30, 1, 2)}


def gguf_string(s):
    b = s.encode() if isinstance(s, str) else bytes(s)
    return struct.pack("<Q", len(b)) + b


def encode_value(vtype, value):
    """The bytes of a value of type vtype; an array is (elem_type, [values])."""
    if vtype == STRING:
        return gguf_string(value)
    if vtype == ARRAY:
        et, items = value
        return struct.pack("<IQ", et, len(items)) + b"".join(encode_value(et, v) for v in items)
    return struct.pack(_SCALAR[vtype], value)


class Writer:
    def __init__(self, arch=None, version=3, alignment=None):
        self.version, self.alignment = version, alignment
        self.kvs, self.tensors = [], []
        if arch:
            self.kv("general.architecture", STRING, arch)
        if alignment is not None:
            self.kv("general.alignment", U32, alignment)

    def kv(self, key, vtype, value):
        self.kvs.append((key, vtype, value))

    def tensor(self, name, array, type_name="F32", raw=None):
        """array: float32 numpy array in PyTorch's shape; raw: the stored bytes (else quantized here)."""
        shape = list(array.shape)
        data = raw if raw is not None else quantize(np.ascontiguousarray(array, dtype=F).ravel(), type_name)
        self.tensors.append((name, shape[::-1], TYPES[type_name][0], data))

    def bytes(self):
        align = self.alignment or 32
        out = bytearray(b"GGUF" + struct.pack("<IQQ", self.version, len(self.tensors), len(self.kvs)))
        for key, vtype, value in self.kvs:
            out += gguf_string(key) + struct.pack("<I", vtype) + encode_value(vtype, value)
        offset, blobs = 0, []
        for name, ne, tid, data in self.tensors:
            out += gguf_string(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
            out += struct.pack("<IQ", tid, offset)
            blobs.append((offset, data))
            offset += len(data)
            offset += (align - offset % align) % align
        out += b"\0" * ((align - len(out) % align) % align)
        base = len(out)
        for off, data in blobs:
            out += b"\0" * (base + off - len(out))
            out += data
        return bytes(out)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.bytes())


# ---------------------------------------------------------------- float conversions

def f16_bits(x):
    return np.array([x], dtype=F).astype(np.float16).view(np.uint16)[0]  # round to nearest even


def f16_to_f32(h):
    return np.array(h, dtype=np.uint16).view(np.float16).astype(F)


def bf16_bits(a):
    """float32 -> bfloat16, round to nearest even (as ggml's GGML_FP32_TO_BF16), NaN kept quiet."""
    u = a.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    r[nan] = ((u[nan] >> 16) | 64).astype(np.uint16)
    return r


def nearest_int(fval):
    """ggml's nearest_int: the float32 sum with 1.5·2^23, whose low bits are the rounded value."""
    val = np.array([F(fval) + F(12582912.0)], dtype=F)
    i = int(val.view(np.int32)[0])
    return (i & 0x007FFFFF) - 0x00400000


def roundf(v):
    """C's roundf: half away from zero (exact in double for |v| < 2^28)."""
    v = float(v)
    return int(np.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def to_int8(v):
    """C's (int8_t) of a float: truncation toward zero (the values here are in range)."""
    return int(np.trunc(float(v)))


# ---------------------------------------------------------------- quantizers (quantize_row_*_ref)

def q8_0(x):
    """quantize_row_q8_0_ref, vectorized (the same float32 operations, element by element)."""
    b = np.asarray(x, dtype=F).reshape(-1, 32)
    amax = np.abs(b).max(axis=1)
    d = (amax / F(127)).astype(F)
    id_ = np.zeros_like(d)
    np.divide(F(1), d, out=id_, where=d != 0)
    v = (b * id_[:, None]).astype(F)
    q = np.trunc(v.astype(np.float64) + np.copysign(0.5, v)).astype(np.int8)  # roundf: half away from 0
    out = np.empty((b.shape[0], 34), dtype=np.uint8)
    out[:, :2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def q8_0_scalar(x):
    """quantize_row_q8_0_ref block by block, as written in C (test: equals q8_0)."""
    out = bytearray()
    for b in x.reshape(-1, 32):
        amax = F(0)
        for v in b:
            amax = max(amax, F(abs(v)))
        d = F(amax / F(127))
        id_ = F(F(1) / d) if d else F(0)
        out += struct.pack("<H", f16_bits(d)) + bytes((roundf(F(v * id_)) & 0xFF) for v in b)
    return bytes(out)


def _absmax_signed(b):
    amax, mx = F(0), F(0)
    for v in b:
        if amax < abs(v):
            amax, mx = F(abs(v)), F(v)
    return mx


def q4_0(x):
    out = bytearray()
    for b in x.reshape(-1, 32):
        d = F(_absmax_signed(b) / F(-8))
        id_ = F(F(1) / d) if d else F(0)
        qs = bytearray(16)
        for j in range(16):
            x0, x1 = F(b[j] * id_), F(b[16 + j] * id_)
            xi0, xi1 = min(15, to_int8(F(x0 + F(8.5)))), min(15, to_int8(F(x1 + F(8.5))))
            qs[j] = xi0 | (xi1 << 4)
        out += struct.pack("<H", f16_bits(d)) + qs
    return bytes(out)


def _minmax(b):
    mn, mx = F(np.finfo(F).max), F(-np.finfo(F).max)
    for v in b:
        mn, mx = min(mn, v), max(mx, v)
    return F(mn), F(mx)


def q4_1(x):
    out = bytearray()
    for b in x.reshape(-1, 32):
        mn, mx = _minmax(b)
        d = F(F(mx - mn) / F(15))
        id_ = F(F(1) / d) if d else F(0)
        qs = bytearray(16)
        for j in range(16):
            x0, x1 = F(F(b[j] - mn) * id_), F(F(b[16 + j] - mn) * id_)
            qs[j] = min(15, to_int8(F(x0 + F(0.5)))) | (min(15, to_int8(F(x1 + F(0.5)))) << 4)
        out += struct.pack("<HH", f16_bits(d), f16_bits(mn)) + qs
    return bytes(out)


def q5_0(x):
    out = bytearray()
    for b in x.reshape(-1, 32):
        d = F(_absmax_signed(b) / F(-16))
        id_ = F(F(1) / d) if d else F(0)
        qs, qh = bytearray(16), 0
        for j in range(16):
            x0, x1 = F(b[j] * id_), F(b[16 + j] * id_)
            xi0, xi1 = min(31, to_int8(F(x0 + F(16.5)))), min(31, to_int8(F(x1 + F(16.5))))
            qs[j] = (xi0 & 0xF) | ((xi1 & 0xF) << 4)
            qh |= ((xi0 & 0x10) >> 4) << j
            qh |= ((xi1 & 0x10) >> 4) << (j + 16)
        out += struct.pack("<HI", f16_bits(d), qh) + qs
    return bytes(out)


def q5_1(x):
    out = bytearray()
    for b in x.reshape(-1, 32):
        mn, mx = _minmax(b)
        d = F(F(mx - mn) / F(31))
        id_ = F(F(1) / d) if d else F(0)
        qs, qh = bytearray(16), 0
        for j in range(16):
            x0, x1 = F(F(b[j] - mn) * id_), F(F(b[16 + j] - mn) * id_)
            xi0, xi1 = int(F(x0 + F(0.5))), int(F(x1 + F(0.5)))  # (uint8_t): in range here
            qs[j] = (xi0 & 0xF) | ((xi1 & 0xF) << 4)
            qh |= ((xi0 & 0x10) >> 4) << j
            qh |= ((xi1 & 0x10) >> 4) << (j + 16)
        out += struct.pack("<HHI", f16_bits(d), f16_bits(mn), qh) + qs
    return bytes(out)


def make_qkx2_quants(n, nmax, x, weights, rmin, rdelta, nstep):
    """ggml's make_qkx2_quants (use_mad false): the sub-block's scale, -min and codes L."""
    mn, mx = F(x[0]), F(x[0])
    sum_w = F(weights[0])
    sum_x = F(sum_w * x[0])
    for i in range(1, n):
        mn, mx = (F(x[i]) if x[i] < mn else mn), (F(x[i]) if x[i] > mx else mx)
        sum_w = F(sum_w + weights[i])
        sum_x = F(sum_x + F(weights[i] * x[i]))
    if mn > 0:
        mn = F(0)
    if mx == mn:
        return F(0), F(-mn), [0] * n
    iscale = F(F(nmax) / F(mx - mn))
    scale = F(F(1) / iscale)
    L = [0] * n
    best_error = F(0)
    for i in range(n):
        L[i] = max(0, min(nmax, nearest_int(F(iscale * F(x[i] - mn)))))
        diff = F(F(F(scale * F(L[i])) + mn) - x[i])
        best_error = F(best_error + F(weights[i] * F(diff * diff)))
    for is_ in range(nstep + 1):
        iscale = F(F(F(rmin + F(rdelta * F(is_))) + F(nmax)) / F(mx - mn))
        sum_l = sum_l2 = sum_xl = F(0)
        Laux = [0] * n
        for i in range(n):
            l = max(0, min(nmax, nearest_int(F(iscale * F(x[i] - mn)))))
            Laux[i] = l
            w = F(weights[i])
            sum_l = F(sum_l + F(w * F(l)))
            sum_l2 = F(sum_l2 + F(F(w * F(l)) * F(l)))
            sum_xl = F(sum_xl + F(F(w * F(l)) * x[i]))
        D = F(F(sum_w * sum_l2) - F(sum_l * sum_l))
        if D > 0:
            this_scale = F(F(F(sum_w * sum_xl) - F(sum_x * sum_l)) / D)
            this_min = F(F(F(sum_l2 * sum_x) - F(sum_l * sum_xl)) / D)
            if this_min > 0:
                this_min = F(0)
                this_scale = F(sum_xl / sum_l2)
            cur_error = F(0)
            for i in range(n):
                diff = F(F(F(this_scale * F(Laux[i])) + this_min) - x[i])
                cur_error = F(cur_error + F(weights[i] * F(diff * diff)))
            if cur_error < best_error:
                L, best_error, scale, mn = Laux, cur_error, this_scale, this_min
    return scale, F(-mn), L


def _pack_scales_k4(ls, lm):
    s = bytearray(12)
    for j in range(8):
        if j < 4:
            s[j], s[j + 4] = ls[j], lm[j]
        else:
            s[j + 4] = (ls[j] & 0xF) | ((lm[j] & 0xF) << 4)
            s[j - 4] |= (ls[j] >> 4) << 6
            s[j] |= (lm[j] >> 4) << 6
    return s


def scale_min_k4(j, q):
    if j < 4:
        return q[j] & 63, q[j + 4] & 63
    return (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4)


def _qk_sub(x, nmax, rmin, rdelta, nstep):
    """Q4_K / Q5_K: 8 sub-blocks' codes, packed 6-bit scales and mins, d and dmin."""
    scales, mins, L = [], [], []
    for j in range(8):
        s = x[32 * j:32 * j + 32]
        sum_x2 = F(0)
        for v in s:
            sum_x2 = F(sum_x2 + F(v * v))
        av_x = F(np.sqrt(F(sum_x2 / F(32)), dtype=F))
        weights = [F(av_x + F(abs(v))) for v in s]
        sc, mn, l = make_qkx2_quants(32, nmax, s, weights, rmin, rdelta, nstep)
        scales.append(sc), mins.append(mn), L.extend(l)
    max_scale = max_min = F(0)  # as ggml: the largest positive scale and min, else 0
    for j in range(8):
        max_scale = scales[j] if scales[j] > max_scale else max_scale
        max_min = mins[j] if mins[j] > max_min else max_min
    inv_scale = F(F(63) / max_scale) if max_scale > 0 else F(0)
    inv_min = F(F(63) / max_min) if max_min > 0 else F(0)
    ls = [min(63, nearest_int(F(inv_scale * scales[j])) & 0xFF) for j in range(8)]
    lm = [min(63, nearest_int(F(inv_min * mins[j])) & 0xFF) for j in range(8)]
    packed = _pack_scales_k4(ls, lm)
    dh, mh = f16_bits(F(max_scale / F(63))), f16_bits(F(max_min / F(63)))
    d16, m16 = f16_to_f32(dh), f16_to_f32(mh)
    for j in range(8):
        sc, m = scale_min_k4(j, packed)
        d = F(d16 * F(sc))
        if not d:
            continue
        dm = F(m16 * F(m))
        for ii in range(32):
            L[32 * j + ii] = max(0, min(nmax, nearest_int(F(F(x[32 * j + ii] + dm) / d))))
    return L, packed, dh, mh


def q4_k(x):
    out = bytearray()
    for b in x.reshape(-1, 256):
        L, packed, dh, mh = _qk_sub(b, 15, F(-1.0), F(0.1), 20)
        qs = bytearray(128)
        for j in range(0, 256, 64):
            for l in range(32):
                qs[j // 2 + l] = L[j + l] | (L[j + l + 32] << 4)
        out += struct.pack("<HH", dh, mh) + packed + qs
    return bytes(out)


def q5_k(x):
    out = bytearray()
    for b in x.reshape(-1, 256):
        L, packed, dh, mh = _qk_sub(b, 31, F(-0.5), F(0.1), 15)
        qh, ql = bytearray(32), bytearray(128)
        m1, m2 = 1, 2
        for n in range(0, 256, 64):
            for j in range(32):
                l1, l2 = L[n + j], L[n + j + 32]
                if l1 > 15:
                    l1 -= 16
                    qh[j] |= m1
                if l2 > 15:
                    l2 -= 16
                    qh[j] |= m2
                ql[n // 2 + j] = l1 | (l2 << 4)
            m1, m2 = m1 << 2, m2 << 2
        out += struct.pack("<HH", dh, mh) + packed + qh + ql
    return bytes(out)


def make_qx_quants(n, nmax, x):
    """ggml's make_qx_quants with rmse_type 1 and no weights (Q6_K's sub-blocks)."""
    amax, mx = F(0), F(0)
    for v in x:
        if abs(v) > amax:
            amax, mx = F(abs(v)), F(v)
    if amax < F(1e-15):
        return F(0), [0] * n
    iscale = F(F(-nmax) / mx)
    sumlx = suml2 = F(0)
    L = [0] * n
    for i in range(n):
        l = max(-nmax, min(nmax - 1, nearest_int(F(iscale * x[i]))))
        L[i] = l + nmax
        w = F(x[i] * x[i])
        sumlx = F(sumlx + F(F(w * x[i]) * F(l)))
        suml2 = F(suml2 + F(F(w * F(l)) * F(l)))
    scale = F(sumlx / suml2) if suml2 else F(0)
    best = F(scale * sumlx)
    for is_ in range(-9, 10):
        if is_ == 0:
            continue
        iscale = F(-F(F(nmax) + F(F(0.1) * F(is_))) / mx)
        sumlx = suml2 = F(0)
        for i in range(n):
            l = max(-nmax, min(nmax - 1, nearest_int(F(iscale * x[i]))))
            w = F(x[i] * x[i])
            sumlx = F(sumlx + F(F(w * x[i]) * F(l)))
            suml2 = F(suml2 + F(F(w * F(l)) * F(l)))
        if suml2 > 0 and F(sumlx * sumlx) > F(best * suml2):
            for i in range(n):
                L[i] = nmax + max(-nmax, min(nmax - 1, nearest_int(F(iscale * x[i]))))
            scale = F(sumlx / suml2)
            best = F(scale * sumlx)
    return scale, L


def q6_k(x):
    out = bytearray()
    for b in x.reshape(-1, 256):
        scales, L = [], []
        max_scale = max_abs = F(0)
        for ib in range(16):
            sc, l = make_qx_quants(16, 32, b[16 * ib:16 * ib + 16])
            scales.append(sc), L.extend(l)
            if abs(sc) > max_abs:
                max_abs, max_scale = F(abs(sc)), sc
        if max_abs < F(1e-15):
            out += bytes(208) + struct.pack("<H", f16_bits(F(0)))
            continue
        iscale = F(F(-128) / max_scale)
        dh = f16_bits(F(F(1) / iscale))
        sc8 = [min(127, nearest_int(F(iscale * s))) for s in scales]
        d16 = f16_to_f32(dh)
        for j in range(16):
            d = F(d16 * F(sc8[j]))
            if not d:
                continue
            for ii in range(16):
                L[16 * j + ii] = max(-32, min(31, nearest_int(F(b[16 * j + ii] / d)))) + 32
        ql, qh = bytearray(128), bytearray(64)
        for j in range(0, 256, 128):
            for l in range(32):
                q1, q2, q3, q4 = (L[j + l] & 0xF, L[j + l + 32] & 0xF, L[j + l + 64] & 0xF, L[j + l + 96] & 0xF)
                ql[j // 2 + l] = q1 | (q3 << 4)
                ql[j // 2 + l + 32] = q2 | (q4 << 4)
                qh[j // 4 + l] = ((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4)
                                  | ((L[j + l + 96] >> 4) << 6))
        out += ql + qh + bytes(s & 0xFF for s in sc8) + struct.pack("<H", dh)
    return bytes(out)


def quantize(x, type_name):
    x = np.asarray(x, dtype=F)
    if type_name == "F32":
        return x.astype("<f4").tobytes()
    if type_name == "F16":
        return x.astype("<f2").tobytes()
    if type_name == "BF16":
        return bf16_bits(x).astype("<u2").tobytes()
    return {"Q8_0": q8_0, "Q4_0": q4_0, "Q4_1": q4_1, "Q5_0": q5_0, "Q5_1": q5_1, "Q4_K": q4_k,
            "Q5_K": q5_k, "Q6_K": q6_k}[type_name](x)


# ---------------------------------------------------------------- dequantizers (dequantize_row_*)

def dequantize(raw, type_name, n):
    """n float32 values from the stored bytes, as ggml's dequantize_row_* computes them."""
    tid, block, size = TYPES[type_name]
    buf = np.frombuffer(raw, dtype=np.uint8)
    if type_name == "F32":
        return buf.view("<f4").astype(F)[:n]
    if type_name == "F16":
        return buf.view("<f2").astype(F)[:n]
    if type_name == "BF16":
        return (buf.view("<u2").astype(np.uint32) << 16).view(F)[:n]
    b = buf[: n // block * size].reshape(-1, size)
    half = lambda col: b[:, col:col + 2].copy().view("<f2").astype(F).reshape(-1, 1)
    if type_name == "Q8_0":
        return (b[:, 2:].view(np.int8).astype(F) * half(0)).ravel()
    if type_name in ("Q4_0", "Q4_1"):
        q = b[:, 2 if type_name == "Q4_0" else 4:]
        codes = np.concatenate([q & 0xF, q >> 4], axis=1).astype(np.int32)
        if type_name == "Q4_0":
            return ((codes - 8).astype(F) * half(0)).ravel()
        return ((codes.astype(F) * half(0)) + half(2)).ravel()
    if type_name in ("Q5_0", "Q5_1"):
        o = 2 if type_name == "Q5_0" else 4
        qh = b[:, o:o + 4].copy().view("<u4").astype(np.uint32)  # [nb, 1]
        q = b[:, o + 4:].astype(np.uint32)
        j = np.arange(16, dtype=np.uint32)
        h0 = ((qh >> j) << 4) & 0x10
        h1 = (qh >> (j + 12)) & 0x10
        codes = np.concatenate([(q & 0xF) | h0, (q >> 4) | h1], axis=1).astype(np.int32)
        if type_name == "Q5_0":
            return ((codes - 16).astype(F) * half(0)).ravel()
        return ((codes.astype(F) * half(0)) + half(2)).ravel()
    if type_name in ("Q4_K", "Q5_K"):
        out = np.empty((b.shape[0], 256), dtype=F)
        d, dmin = half(0)[:, 0], half(2)[:, 0]
        for i in range(b.shape[0]):
            sc12 = b[i, 4:16]
            qs = b[i, 16:144] if type_name == "Q4_K" else b[i, 48:176]
            qh = b[i, 16:48] if type_name == "Q5_K" else None
            for k in range(4):
                q = qs[32 * k:32 * k + 32]
                for half_i in range(2):
                    sc, m = scale_min_k4(2 * k + half_i, sc12)
                    d1, m1 = F(d[i] * F(sc)), F(dmin[i] * F(m))
                    c = (q & 0xF) if half_i == 0 else (q >> 4)
                    c = c.astype(np.int32)
                    if qh is not None:
                        bit = 1 << (2 * k + half_i)
                        c = c + np.where(qh & bit, 16, 0)
                    out[i, 64 * k + 32 * half_i:64 * k + 32 * half_i + 32] = d1 * c.astype(F) - m1
        return out.ravel()
    if type_name == "Q6_K":
        out = np.empty((b.shape[0], 256), dtype=F)
        for i in range(b.shape[0]):
            d = f16_to_f32(b[i, 208:210].copy().view("<u2")[0])
            sc = b[i, 192:208].view(np.int8)
            for n0 in range(2):
                ql, qh, s = b[i, 64 * n0:64 * n0 + 64].astype(np.int32), b[i, 128 + 32 * n0:160 + 32 * n0].astype(np.int32), sc[8 * n0:8 * n0 + 8]
                l = np.arange(32)
                is_ = l // 16
                q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32
                q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32
                q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32
                q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32
                y = out[i, 128 * n0:128 * n0 + 128]
                for k, q in enumerate((q1, q2, q3, q4)):
                    y[32 * k:32 * k + 32] = (d * s[is_ + 2 * k].astype(F)) * q.astype(F)
        return out.ravel()
    raise ValueError(type_name)
