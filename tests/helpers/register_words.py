"""An mma fragment's 32-bit register words and the values they hold, both ways, for the simulated tensor cores
of the mma and mma.sp tests (tests/apis): written from the PTX ISA's packing (slot s of a b-bit type at bit
(s * b) % 32 of word (s * b) // 32; an f64 in two words, low first), not from fraglab's decoders."""

from __future__ import annotations

import numpy as np

BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "s32": 32, "f64": 64, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8,
        "s4": 4, "u4": 4, "b1": 1}


def unpack(dtype: str, words: np.ndarray, slots: int) -> np.ndarray:
    """(..., words) uint32 -> (..., slots) raw bit fields (uint64)."""
    bits = BITS[dtype]
    w = words.astype(np.uint64)
    if bits == 64:
        return w[..., 0::2] | (w[..., 1::2] << np.uint64(32))
    out = np.zeros(w.shape[:-1] + (slots,), dtype=np.uint64)
    for s in range(slots):
        out[..., s] = (w[..., (s * bits) // 32] >> np.uint64((s * bits) % 32)) & np.uint64((1 << bits) - 1)
    return out


def fp8_value(raw: np.ndarray, man: int) -> np.ndarray:
    """e4m3 (man 3) / e5m2 (man 2) bit patterns (int64) -> float; subnormals included, no NaN or inf decoding."""
    exp_bits = 7 - man
    bias = (1 << (exp_bits - 1)) - 1
    sign = np.where(raw >> 7, -1.0, 1.0)
    e = (raw >> man) & ((1 << exp_bits) - 1)
    f = raw & ((1 << man) - 1)
    return np.where(e == 0, sign * f * 2.0 ** (1 - bias - man),
                    sign * (1 + f / 2**man) * 2.0 ** (e.astype(float) - bias))


def value_of(dtype: str, raw: np.ndarray) -> np.ndarray:
    """Raw bit fields of `dtype` -> float values."""
    raw = raw.astype(np.uint64)
    if dtype == "f16":
        return raw.astype(np.uint16).view(np.float16).astype(float)
    if dtype == "bf16":
        return (raw.astype(np.uint32) << 16).view(np.float32).astype(float)
    if dtype in ("tf32", "f32"):
        return raw.astype(np.uint32).view(np.float32).astype(float)
    if dtype == "f64":
        return raw.view(np.float64)
    if dtype in ("e4m3", "e5m2"):
        return fp8_value(raw.astype(np.int64), 3 if dtype == "e4m3" else 2)
    bits = BITS[dtype]
    v = raw.astype(np.int64)
    return np.where(v >= 1 << (bits - 1), v - (1 << bits), v).astype(float) if dtype[0] == "s" else v.astype(float)


def words_of(dtype: str, values: np.ndarray) -> np.ndarray:
    """An accumulator's (..., slots) values (f32, s32, f64; f16 in pairs) -> (..., words) uint32."""
    if dtype == "f32":
        return values.astype(np.float32).view(np.uint32)
    if dtype == "s32":
        return values.astype(np.int64).astype(np.uint32)
    if dtype == "f64":
        raw = values.astype(np.float64).view(np.uint64)
        return np.stack([raw & 0xFFFFFFFF, raw >> np.uint64(32)], -1).reshape(*values.shape[:-1], -1).astype(np.uint32)
    h = values.astype(np.float16).view(np.uint16).astype(np.uint32)
    return h[..., 0::2] | (h[..., 1::2] << 16)
