"""A numpy stand-in for the wgmma probe kernel, so the plans and decoders run end to end on the CPU.

It executes a Plan the way wgmma.cu does (stage, one-hot patch, descriptor addressing, D = A * B,
register dump / hit lists), with the hardware's addressing taken from the model: it tests the
plumbing (images, digits, packing, decoding), not the model. The model is tested against tables.
"""

from __future__ import annotations

import numpy as np

from fraglab.apis import wgmma_model as wm
from fraglab.apis import wgmma_probe as wp


def decode_values(raw: np.ndarray, dtype: str) -> np.ndarray:
    """(..., E) bytes -> float values (independent of wp.encode: decodes the bit fields)."""
    b = np.ascontiguousarray(raw)
    if dtype == "f16":
        return b.view(np.float16)[..., 0].astype(np.float64)
    if dtype == "bf16":
        return (b.view(np.uint16)[..., 0].astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dtype == "tf32":
        return b.view(np.float32)[..., 0].astype(np.float64)
    if dtype in ("s8",):
        return b.view(np.int8)[..., 0].astype(np.float64)
    if dtype == "u8":
        return b[..., 0].astype(np.float64)
    mbits, bias = (3, 7) if dtype == "e4m3" else (2, 15)
    x = b[..., 0].astype(np.int64)
    ex, mant = (x >> mbits) & ((1 << (7 - mbits)) - 1), x & ((1 << mbits) - 1)
    return np.where(ex == 0, 0.0, (1 + mant / (1 << mbits)) * 2.0 ** (ex - bias))


def _fields(desc: int) -> tuple[int, int, str]:
    code = desc >> 62
    swizzle = {v: k for k, v in wm.SWIZZLE_CODE.items()}[code]
    return ((desc >> 16) & 0x3FFF) << 4, ((desc >> 32) & 0x3FFF) << 4, swizzle


def _read(region: np.ndarray, desc: int, start: int, dtype: str, major: str, operand: str, mn: int, k: int):
    lbo, sbo, swizzle = _fields(desc)
    tile = dict(element_bytes=wm.element_bytes(dtype), swizzle=swizzle, mn=mn, k_extent=k, lbo=lbo, sbo=sbo,
                major=major, operand=operand)
    off = wm.smem_offsets(tile, start)
    e = tile["element_bytes"]
    return decode_values(region[off[..., None] + np.arange(e)], dtype)


def simulate(plan: wp.Plan) -> dict:
    op, e = plan.op, plan.elem_bytes
    amap = wm.accumulator_map(op.n)
    dump = np.zeros((plan.blocks, wp.THREADS, op.regs), dtype=np.uint32)
    counts = np.zeros(plan.blocks, dtype=np.int32)
    where = np.full((plan.blocks, wp.MAX_HITS), -1, dtype=np.int32)
    word = np.zeros((plan.blocks, wp.MAX_HITS), dtype=np.uint32)
    hot = wp.encode(np.array(1), op.atype)
    for blk in range(plan.blocks):
        regions = []
        for img, size, hot_at in ((plan.a_img, plan.a_bytes, plan.a_hot), (plan.b_img, plan.b_bytes, plan.b_hot)):
            r = np.zeros(size + 64, dtype=np.uint8)
            if img is not None:
                r[:size] = img[blk if img.shape[0] > 1 else 0]
            if hot_at[blk] >= 0:
                r[hot_at[blk]:hot_at[blk] + e] = hot
            regions.append(r)
        if op.reg_a:
            vals = decode_values(plan.a_regs[blk].view(np.uint8).reshape(wp.THREADS, -1, e), op.atype)
            a = np.zeros((64, op.k))
            rmap = wm.register_a_map(op.atype)
            a[rmap[..., 0], rmap[..., 1]] = vals
        else:
            a = _read(regions[0], plan.desc_a, int(plan.a_start[blk]), op.atype, "mn" if op.trans_a else "k",
                      "matrix_a", 64, op.k)
        b = _read(regions[1], plan.desc_b, int(plan.b_start[blk]), op.atype, "mn" if op.trans_b else "k",
                  "matrix_b", op.n, op.k)
        d = (a @ b)[amap[..., 0], amap[..., 1]]          # (128, n/2)
        if op.acc == "f32":
            words = d.astype(np.float32).view(np.uint32)
        elif op.acc == "s32":
            words = d.astype(np.int32).view(np.uint32)
        else:
            words = np.ascontiguousarray(d.astype(np.float16)).view(np.uint32)
        dump[blk] = words
        for t, r in zip(*np.nonzero(words)):
            if counts[blk] < wp.MAX_HITS:
                where[blk, counts[blk]] = t * op.regs + r
                word[blk, counts[blk]] = words[t, r]
            counts[blk] += 1
    out = {}
    if plan.dump:
        out["dump"] = dump
    if plan.hits:
        out.update(hit_count=counts, hit_where=where, hit_word=word)
    return out
