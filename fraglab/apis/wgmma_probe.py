"""Measuring wgmma layouts on the GPU: instruction wrappers, experiment plans, decoding (numpy; CuPy lazily).

Every experiment is a grid of one-warpgroup blocks running the kernel in wgmma.cu once each. A plan
builds its inputs on the CPU, the runner launches it, and the plan's decoder turns the raw registers
(or the one-hot hit lists) back into maps. Values written into matrices are small integers (digits in
base 8, or a single 1), exact in every input type including e5m2, and sums stay exact in f16.

Anchors (an MMA alone cannot tell a joint relabelling of m, n or k): the canonical no-swizzle
K-major tile of the PTX ISA defines (m, k) and (k, n) by shared-memory address. The "mma" method
(codes through an identity MMA; its plans are the *_codes functions)
place partners in that tile; the "onehot" methods place them in the 128B-swizzle K-major tile instead,
so the two methods share no shared-memory placement, and a wrong swizzle model makes them disagree.
Register maps (accumulator, register-sourced A) are read through those anchored operands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..runtime.build import SM90A, kernels_dir
from . import wgmma_model as wm

THREADS = wm.THREADS
BASE = 8            # digit base: 0..7 is exact in every input type (e5m2 has 2 mantissa bits)
MAX_HITS = 4        # as in wgmma.cu
POISON = 0xDEADBEEF  # written into every output word before a launch; left over means never written
ACC_FOR = {"f16": "f32", "bf16": "f32", "tf32": "f32", "e4m3": "f32", "e5m2": "f32", "s8": "s32", "u8": "s32"}
INPUT_TYPES = tuple(ACC_FOR)


class ProbeFailure(RuntimeError):
    """A probe produced something a decoder cannot read (unwritten output, a non-integer value)."""


# ---- instruction wrappers (generated C++) ---------------------------------------------------------
@dataclass(frozen=True)
class Op:
    n: int
    atype: str
    acc: str
    reg_a: bool = False
    trans_a: int = 0
    trans_b: int = 0

    @property
    def k(self) -> int:
        return wm.K_BY_TYPE[self.atype]

    @property
    def regs(self) -> int:
        return self.n // 4 if self.acc == "f16" else self.n // 2

    @property
    def name(self) -> str:
        src = "rs" if self.reg_a else "ss"
        return f"Op_{src}_m64n{self.n}k{self.k}_{self.acc}_{self.atype}_t{self.trans_a}{self.trans_b}"

    @property
    def ptx(self) -> str:
        ab = f"{self.atype}.{self.atype}"
        if self.acc == "s32":
            return f"wgmma.mma_async.sync.aligned.m64n{self.n}k{self.k}.s32.{ab}"
        return f"wgmma.mma_async.sync.aligned.m64n{self.n}k{self.k}.{self.acc}.{ab}"

    def tail(self) -> str:
        """Immediates after scale-d: scale-a/b for floating types, transposes only for 16-bit types."""
        if self.acc == "s32":
            return ""
        if self.atype in wm.MN_MAJOR_TYPES:
            return ", 1, 1" + ("" if self.reg_a else f", {self.trans_a}") + f", {self.trans_b}"
        return ", 1, 1"

    def cpp(self) -> str:
        r = self.regs
        acc_t, con = ("float", "+f") if self.acc == "f32" else ("unsigned", "+r")
        d_list = ", ".join(f"%{i}" for i in range(r))
        if self.reg_a:
            a_ops, b_at, scale_at = "{" + ", ".join(f"%{r + i}" for i in range(4)) + "}", r + 4, r + 5
            ins = '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(0)'
        else:
            a_ops, b_at, scale_at = f"%{r}", r + 1, r + 2
            ins = '"l"(desc_a), "l"(desc_b), "r"(0)'
        outs = ", ".join(f'"{con}"(d[{i}])' for i in range(r))
        return (
            f"struct {self.name} {{\n"
            f"    using Acc = {acc_t};\n"
            f"    static constexpr int REGS = {r};\n"
            f"    static constexpr bool REG_A = {'true' if self.reg_a else 'false'};\n"
            f"    __device__ __forceinline__ static void run(Acc (&d)[{r}], const unsigned (&a)[4],\n"
            f"                                               unsigned long long desc_a, unsigned long long desc_b) {{\n"
            f"        (void)a; (void)desc_a;\n"
            f'        asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{scale_at}, 0;\\n"\n'
            f'            "{self.ptx} {{{d_list}}}, {a_ops}, %{b_at}, p{self.tail()};\\n}}\\n"\n'
            f"            : {outs}\n"
            f"            : {ins});\n"
            f"    }}\n}};\n"
        )

    @property
    def kernel(self) -> str:
        return f"fraglab_wgmma::wgmma_probe<fraglab_wgmma::{self.name}>"


def source_text(ops: list[Op]) -> str:
    """wgmma.cu followed by the instruction wrappers the ops need (NVRTC source, no includes)."""
    body = (kernels_dir() / "apis" / "wgmma.cu").read_text()
    wrappers = "".join(op.cpp() for op in dict.fromkeys(ops))
    return body + "\nnamespace fraglab_wgmma {\n" + wrappers + "}  // namespace fraglab_wgmma\n"


COMPILE_OPTIONS = ("-std=c++17",)
ARCH = SM90A   # wgmma exists only on the arch-specific target


# ---- values in input types ------------------------------------------------------------------------
def encode(values: np.ndarray, dtype: str) -> np.ndarray:
    """Small non-negative integers as the bytes of `dtype`: shape (..., element_bytes) uint8."""
    v = np.asarray(values)
    if np.any(v > 16) or np.any(v < (-16 if dtype in ("f16", "bf16", "tf32", "s8") else 0)):
        raise ValueError(f"encode takes integers 0..16 (-16..16 for f16, bf16, tf32, s8), got {dtype} values")
    if dtype == "f16":
        raw = v.astype(np.float16).view(np.uint16)
    elif dtype == "bf16":
        raw = (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    elif dtype == "tf32":
        raw = v.astype(np.float32).view(np.uint32)
    elif dtype in ("e4m3", "e5m2"):
        mbits, bias = (3, 7) if dtype == "e4m3" else (2, 15)
        f = v.astype(np.float64)
        ex = np.floor(np.log2(np.where(f > 0, f, 1))).astype(np.int64)
        mant = np.rint((f / 2.0 ** ex - 1) * (1 << mbits)).astype(np.int64)
        if np.any((f > 0) & ((1 + mant / (1 << mbits)) * 2.0 ** ex != f)):
            raise ValueError(f"a value is not exact in {dtype}")
        raw = np.where(f > 0, ((ex + bias) << mbits) | mant, 0).astype(np.uint8)
    elif dtype in ("s8", "u8"):
        raw = v.astype(np.int16).astype(np.uint8)
    else:
        raise ValueError(f"dtype must be one of {list(INPUT_TYPES)}, got {dtype!r}")
    raw = np.ascontiguousarray(raw)
    return raw.view(np.uint8).reshape(*v.shape, raw.itemsize)


def hot_bits(dtype: str) -> int:
    return int.from_bytes(encode(np.array(1), dtype).tobytes(), "little")


def digits(values: np.ndarray, passes: int) -> np.ndarray:
    """(passes, ...) base-8 digits, least significant first."""
    return np.stack([(np.asarray(values) // BASE ** p) % BASE for p in range(passes)])


def passes_for(count: int) -> int:
    p = 1
    while BASE ** p < count:
        p += 1
    return p


def image(tile: dict, values: np.ndarray, region: int) -> np.ndarray:
    """A tile's shared-memory bytes with values placed at the model's offsets (values may cover only
    the first rows/columns of the tile, e.g. one instruction's K of a swizzle row)."""
    img = np.zeros(region, dtype=np.uint8)
    values = np.asarray(values)
    off = wm.smem_offsets(tile)[: values.shape[0], : values.shape[1]]
    e = tile["element_bytes"]
    img[(off[..., None] + np.arange(e)).reshape(-1)] = encode(values, tile["dtype"]).reshape(-1)
    return img


def acc_values(words: np.ndarray, acc: str) -> np.ndarray:
    """Raw 32-bit registers (..., regs) -> element values (..., slots) as exact integers."""
    w = np.ascontiguousarray(words, dtype=np.uint32)
    if acc == "f32":
        v = w.view(np.float32).astype(np.float64)
    elif acc == "s32":
        v = w.view(np.int32).astype(np.float64)
    else:
        v = w.view(np.float16).astype(np.float64)   # low half first = slot 2r, high half = 2r + 1
    if not np.all(np.isfinite(v)) or np.any(v != np.rint(v)):
        raise ProbeFailure("an accumulator value is not an integer: the probe read something unexpected")
    return np.rint(v).astype(np.int64)


def _round_up(x: int, to: int = 1024) -> int:
    return -(-x // to) * to


# ---- plans ----------------------------------------------------------------------------------------
@dataclass
class Plan:
    """One launch: per-block inputs and how to read the outputs."""
    op: Op
    blocks: int
    a_bytes: int
    b_bytes: int
    decode: Callable[[dict], dict]
    elem_bytes: int
    a_img: np.ndarray | None = None      # (blocks or 1, a_bytes) uint8
    b_img: np.ndarray | None = None
    a_hot: np.ndarray | None = None      # (blocks,) byte offsets, -1 none
    b_hot: np.ndarray | None = None
    a_regs: np.ndarray | None = None     # (blocks, 128, 4) uint32
    a_start: np.ndarray | None = None
    b_start: np.ndarray | None = None
    desc_a: int = 0
    desc_b: int = 0
    dump: bool = False
    hits: bool = False
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        z = np.zeros(self.blocks, dtype=np.int32)
        none = np.full(self.blocks, -1, dtype=np.int32)
        self.a_hot = none if self.a_hot is None else self.a_hot.astype(np.int32)
        self.b_hot = none if self.b_hot is None else self.b_hot.astype(np.int32)
        self.a_start = z if self.a_start is None else self.a_start.astype(np.int32)
        self.b_start = z if self.b_start is None else self.b_start.astype(np.int32)

    @property
    def shared_bytes(self) -> int:
        return _round_up(self.a_bytes) + self.b_bytes + 1024


def _hit_slots(out: dict, op: Op) -> list[list[tuple[int, int]]]:
    """Per block: the (thread, accumulator slot) of every nonzero element."""
    count, where, word = out["hit_count"], out["hit_where"], out["hit_word"]
    if np.any(count > MAX_HITS):
        raise ProbeFailure(f"a one-hot block lit {int(count.max())} registers (at most {MAX_HITS} recorded)")
    result = []
    for b in range(len(count)):
        slots = []
        for j in range(int(count[b])):
            t, r = divmod(int(where[b, j]), op.regs)
            w = int(word[b, j])
            if op.acc == "f16":
                slots += [(t, 2 * r + h) for h in range(2) if (w >> (16 * h)) & 0xFFFF]
            else:
                slots.append((t, r))
        result.append(slots)
    return result


def _identity(rows: int, cols: int) -> np.ndarray:
    return np.eye(rows, cols, dtype=np.int64)


# Accumulator: codes (digits of m in A, of n in B, no-swizzle K-major) and one-hot (128B K-major).
def accumulator_codes(n: int, atype: str, acc: str) -> Plan:
    op = Op(n, atype, acc)
    ta = wm.smem_tile(atype, "none", "k", "matrix_a")
    tb = wm.smem_tile(atype, "none", "k", "matrix_b", mn=n)
    rp, cp_ = 2, passes_for(n)
    a_imgs, b_imgs = [], []
    for p in range(rp + cp_):
        a = np.zeros((64, op.k), dtype=np.int64)
        b = np.zeros((op.k, n), dtype=np.int64)
        if p < rp:
            a[:, 0], b[0, :] = digits(np.arange(64), rp)[p], 1
        else:
            a[:, 0], b[0, :] = 1, digits(np.arange(n), cp_)[p - rp]
        a_imgs.append(image(ta, a, ta["region"]))
        b_imgs.append(image(tb, b, tb["region"]))

    def decode(out: dict) -> dict:
        v = acc_values(out["dump"], acc).reshape(rp + cp_, THREADS, n // 2)
        w = BASE ** np.arange(max(rp, cp_))
        row = np.tensordot(w[:rp], v[:rp], axes=1)
        col = np.tensordot(w[:cp_], v[rp:], axes=1)
        return {"row": row, "col": col}

    return Plan(op, rp + cp_, ta["region"], tb["region"], decode, wm.element_bytes(atype),
                a_img=np.stack(a_imgs), b_img=np.stack(b_imgs), desc_a=wm.descriptor_fields(ta),
                desc_b=wm.descriptor_fields(tb), dump=True)


def accumulator_onehot(n: int, atype: str, acc: str) -> Plan:
    op = Op(n, atype, acc)
    ta = wm.smem_tile(atype, "128B", "k", "matrix_a")
    tb = wm.smem_tile(atype, "128B", "k", "matrix_b", mn=n)
    m0, n0 = np.divmod(np.arange(64 * n), n)
    a_hot = wm.smem_offsets(ta)[m0, 0]
    b_hot = wm.smem_offsets(tb)[0, n0]

    def decode(out: dict) -> dict:
        row = np.full((THREADS, n // 2), -1, dtype=np.int64)
        col = row.copy()
        lit = _hit_slots(out, op)
        for b, slots in enumerate(lit):
            for t, s in slots:
                row[t, s], col[t, s] = m0[b], n0[b]
        unlit = [(int(m0[b]), int(n0[b])) for b, s in enumerate(lit) if len(s) != 1]
        return {"row": row, "col": col, "anomalies": unlit[:16], "anomaly_count": len(unlit)}

    return Plan(op, 64 * n, ta["region"], tb["region"], decode, wm.element_bytes(atype), a_hot=a_hot,
                b_hot=b_hot, desc_a=wm.descriptor_fields(ta), desc_b=wm.descriptor_fields(tb), hits=True)


# Register-sourced A: codes (digits of thread*slots+slot, B identity no-swizzle) and one-hot (B identity 128B).
def _pack_regs(values: np.ndarray, dtype: str) -> np.ndarray:
    """(blocks, 128, slots) small ints -> (blocks, 128, 4) uint32, lowest bits first."""
    raw = encode(values, dtype)                       # (blocks, 128, slots, E)
    return np.ascontiguousarray(raw.reshape(*values.shape[:2], -1)).view(np.uint32)


def register_a_codes(atype: str) -> Plan:
    k = wm.K_BY_TYPE[atype]
    op = Op(k, atype, ACC_FOR[atype], reg_a=True)
    slots = 128 // wm.ELEMENT_BITS[atype]
    tb = wm.smem_tile(atype, "none", "k", "matrix_b", mn=k)
    passes = passes_for(THREADS * slots)
    codes = np.arange(THREADS * slots).reshape(THREADS, slots)
    regs = _pack_regs(digits(codes, passes), atype)

    def decode(out: dict) -> dict:
        v = acc_values(out["dump"], op.acc).reshape(passes, THREADS, op.regs)
        amap = wm.accumulator_map(k)
        grid = np.zeros((64, k), dtype=np.int64)
        for p in range(passes):
            g = np.zeros((64, k), dtype=np.int64)
            g[amap[..., 0], amap[..., 1]] = v[p]
            grid += g * BASE ** p
        return _codes_to_slots(grid, slots)

    return Plan(op, passes, 1024, tb["region"], decode, wm.element_bytes(atype), a_regs=regs,
                b_img=image(tb, _identity(k, k), tb["region"])[None].repeat(passes, 0),
                desc_b=wm.descriptor_fields(tb), dump=True)


def _codes_to_slots(grid: np.ndarray, slots: int) -> dict:
    """A grid of read codes (rows, cols) -> per-(thread, slot) row/col; codes read twice are reported."""
    row = np.full((THREADS, slots), -1, dtype=np.int64)
    col = row.copy()
    seen = np.zeros(THREADS * slots, dtype=np.int64)
    for (r, c), code in np.ndenumerate(grid):
        if 0 <= code < THREADS * slots:
            t, s = divmod(int(code), slots)
            seen[code] += 1
            if seen[code] == 1:
                row[t, s], col[t, s] = r, c
    return {"row": row, "col": col, "anomaly_count": int(np.sum(seen > 1))}


def register_a_onehot(atype: str) -> Plan:
    k = wm.K_BY_TYPE[atype]
    op = Op(k, atype, ACC_FOR[atype], reg_a=True)
    slots = 128 // wm.ELEMENT_BITS[atype]
    tb = wm.smem_tile(atype, "128B", "k", "matrix_b", mn=k)
    blocks = THREADS * slots
    vals = np.zeros((blocks, THREADS, slots), dtype=np.int64)
    vals[np.arange(blocks), np.arange(blocks) // slots, np.arange(blocks) % slots] = 1
    regs = _pack_regs(vals, atype)

    def decode(out: dict) -> dict:
        amap = wm.accumulator_map(k)
        row = np.full((THREADS, slots), -1, dtype=np.int64)
        col = row.copy()
        lit = _hit_slots(out, op)
        for b, hit in enumerate(lit):
            if len(hit) == 1:
                t, s = hit[0]
                row[b // slots, b % slots], col[b // slots, b % slots] = amap[t, s]
        return {"row": row, "col": col, "anomaly_count": sum(len(h) != 1 for h in lit)}

    return Plan(op, blocks, 1024, tb["region"], decode, wm.element_bytes(atype), a_regs=regs,
                b_img=image(tb, _identity(k, k), tb["region"])[None], desc_b=wm.descriptor_fields(tb),
                hits=True)


# Shared-memory operands: which byte offset is read as A(m, k) / B(k, n).
def _operand_setup(dtype: str, swizzle: str, major: str, operand: str, partner_swizzle: str):
    tile = wm.smem_tile(dtype, swizzle, major, operand)
    k = tile["k_instr"]
    trans = int(major == "mn")
    if operand == "matrix_a":
        # B = identity (k x n, n = K): D(m, n) = A(m, n).
        op = Op(k, dtype, ACC_FOR[dtype], trans_a=trans)
        partner = wm.smem_tile(dtype, partner_swizzle, "k", "matrix_b", mn=k)
        partner_img = image(partner, _identity(k, k), partner["region"])
    else:
        # A = identity on its first K rows: D(k, n) = B(k, n) for k < K, rows below stay zero.
        op = Op(tile["mn"], dtype, ACC_FOR[dtype], trans_b=trans)
        partner = wm.smem_tile(dtype, partner_swizzle, "k", "matrix_a")
        partner_img = image(partner, _identity(64, k), partner["region"])
    return tile, op, partner, partner_img


def _read_positions(tile: dict, op: Op, step: int, t: int, s: int) -> tuple[int, int] | None:
    """Operand element (row, col) that accumulator slot (t, s) shows in k-step `step` of an identity probe."""
    m, n = wm.accumulator_map(op.n)[t, s]
    k = tile["k_instr"]
    if tile["operand"] == "matrix_a":
        return int(m), int(step * k + n)
    return (int(step * k + m), int(n)) if m < k else None


def _partner_side(partner: dict, partner_img: np.ndarray) -> dict:
    """The identity partner's side of a shared-memory operand probe: its region, image and descriptor."""
    return dict(bytes=partner["region"], img=partner_img[None], desc=wm.descriptor_fields(partner))


def _operand_plan(op: Op, blocks: int, operand: str, decode, elem_bytes: int, own: dict, partner: dict,
                  **flags) -> Plan:
    """A Plan probing `operand` (A or B) in shared memory: its side (bytes, img, hot, start, desc) and the
    partner's go to A and B in that order, or swapped."""
    a, b = (own, partner) if operand == "matrix_a" else (partner, own)
    return Plan(op, blocks, a["bytes"], b["bytes"], decode, elem_bytes, a_img=a.get("img"), b_img=b.get("img"),
                a_hot=a.get("hot"), b_hot=b.get("hot"), a_start=a.get("start"), b_start=b.get("start"),
                desc_a=a["desc"], desc_b=b["desc"], **flags)


def smem_codes(dtype: str, swizzle: str, major: str, operand: str, *, shift: int = 0, base_offset: int = 0,
               lbo: int | None = None) -> Plan:
    """Codes plan; `shift` places the tile `shift` bytes past the 1024-byte boundary, `base_offset` sets the
    descriptor's base-offset bits and `lbo` overrides its LBO (the experiments behind docs/wgmma.md)."""
    tile, op, partner, partner_img = _operand_setup(dtype, swizzle, major, operand, "none")
    e, region = tile["element_bytes"], _round_up(tile["region"] + shift)
    count = region // e
    passes = passes_for(count)
    imgs = encode(digits(np.arange(count), passes), dtype).reshape(passes, region)
    steps = tile["k_steps"]
    blocks = steps * passes
    # block = step * passes + pass
    own_img = np.tile(imgs, (steps, 1))
    own_start = np.repeat(np.arange(steps) * tile["k_step_bytes"], passes) + shift
    fields = wm.descriptor_fields(dict(tile, lbo=tile["lbo"] if lbo is None else lbo)) | (base_offset << 49)

    def decode(out: dict) -> dict:
        v = acc_values(out["dump"], op.acc).reshape(steps, passes, THREADS, op.regs)
        offset = np.full((tile["rows"], tile["cols"]), -1, dtype=np.int64)
        stray = 0
        for st in range(steps):
            code = np.tensordot(BASE ** np.arange(passes), v[st], axes=1)   # (128, slots)
            for (t, s), c in np.ndenumerate(code):
                pos = _read_positions(tile, op, st, t, s)
                if pos is None:
                    stray += int(c != 0)
                else:
                    offset[pos] = c * e - shift
        return {"offset": offset, "anomaly_count": stray}

    return _operand_plan(op, blocks, operand, decode, e, dict(bytes=region, img=own_img, start=own_start, desc=fields),
                         _partner_side(partner, partner_img), dump=True)


def smem_onehot(dtype: str, swizzle: str, major: str, operand: str) -> Plan:
    tile, op, partner, partner_img = _operand_setup(dtype, swizzle, major, operand, "128B")
    e, region = tile["element_bytes"], _round_up(tile["region"])
    count = region // e
    steps = tile["k_steps"]
    blocks = steps * count
    # block = step * count + element
    hot = np.tile(np.arange(count) * e, steps)
    start = np.repeat(np.arange(steps) * tile["k_step_bytes"], count)

    def decode(out: dict) -> dict:
        reads: list[list[tuple[int, int]]] = [[] for _ in range(count)]
        stray = 0
        for b, slots in enumerate(_hit_slots(out, op)):
            st, el = divmod(b, count)
            for t, s in slots:
                pos = _read_positions(tile, op, st, t, s)
                if pos is None:
                    stray += 1
                else:
                    reads[el].append(pos)
        return {"reads": reads, "anomaly_count": stray}

    return _operand_plan(op, blocks, operand, decode, e,
                         dict(bytes=region, hot=hot, start=start, desc=wm.descriptor_fields(tile)),
                         _partner_side(partner, partner_img), hits=True)


# ---- the catalogue of experiments -----------------------------------------------------------------
ACC_CONFIGS = (("f32", "f16"), ("f16", "f16"), ("s32", "s8"))   # (accumulator, input type measured with)
GPU_N = (8, 16, 32, 64, 96, 128, 192, 256)


def all_plans() -> dict[tuple, Callable[[], Plan]]:
    """Every experiment the GPU run performs, keyed by (entry kind, ..., method); built lazily."""
    plans: dict[tuple, Callable[[], Plan]] = {}
    for acc, atype in ACC_CONFIGS:
        for n in GPU_N:
            plans[("accumulator", n, acc, atype, "mma")] = lambda n=n, a=atype, c=acc: accumulator_codes(n, a, c)
            plans[("accumulator", n, acc, atype, "onehot")] = lambda n=n, a=atype, c=acc: accumulator_onehot(n, a, c)
    for atype in INPUT_TYPES:
        plans[("register_a", atype, "mma")] = lambda a=atype: register_a_codes(a)
        plans[("register_a", atype, "onehot")] = lambda a=atype: register_a_onehot(a)
    for atype in INPUT_TYPES:
        for sw in wm.SWIZZLES:
            for major in wm.majors_for(atype):
                for operand in ("matrix_a", "matrix_b"):
                    key = ("smem", operand, atype, sw, major)
                    plans[key + ("mma",)] = lambda k=key: smem_codes(k[2], k[3], k[4], k[1])
                    plans[key + ("onehot",)] = lambda k=key: smem_onehot(k[2], k[3], k[4], k[1])
    return plans


def all_ops() -> list[Op]:
    """Every instruction wrapper the plans can request (the compile test instantiates them all)."""
    ops = [Op(n, a, c) for c, a in ACC_CONFIGS for n in GPU_N]
    ops += [Op(wm.K_BY_TYPE[a], a, ACC_FOR[a], reg_a=True) for a in INPUT_TYPES]
    for a in INPUT_TYPES:
        for trans in ((0, 1) if a in wm.MN_MAJOR_TYPES else (0,)):
            ops.append(Op(wm.K_BY_TYPE[a], a, ACC_FOR[a], trans_a=trans))
            ops.append(Op(wm.OPERAND_MN["matrix_b"], a, ACC_FOR[a], trans_b=trans))
    return list(dict.fromkeys(ops))


# ---- running on the GPU (CuPy imported here only) --------------------------------------------------
def compile_module(ops: list[Op]):
    import cupy as cp
    return cp.RawModule(code=source_text(ops), options=COMPILE_OPTIONS + (f"-arch={ARCH}",),
                        name_expressions=[op.kernel for op in ops])


def run_plan(module, plan: Plan, *, sync: bool = True) -> dict:
    """Launch one plan and return its decoded result (raises ProbeFailure on unwritten outputs)."""
    import cupy as cp
    blocks = plan.blocks

    def dev_img(img, size):
        if img is None:
            return cp.zeros(16, dtype=cp.uint8), 0, 0
        if img.shape[1] != size:
            raise ValueError("image size does not match its region")
        return cp.asarray(np.ascontiguousarray(img)), (size if img.shape[0] > 1 else 0), 1

    a_img, a_stride, a_has = dev_img(plan.a_img, plan.a_bytes)
    b_img, b_stride, b_has = dev_img(plan.b_img, plan.b_bytes)
    regs = cp.asarray(plan.a_regs.reshape(-1)) if plan.a_regs is not None else cp.zeros(4, dtype=cp.uint32)
    dump = cp.full(blocks * THREADS * plan.op.regs if plan.dump else 1, POISON, dtype=cp.uint32)
    count = cp.zeros(blocks if plan.hits else 1, dtype=cp.int32)
    where = cp.full((blocks if plan.hits else 1) * MAX_HITS, -1, dtype=cp.int32)
    word = cp.zeros_like(where).view(cp.uint32)
    fn = module.get_function(plan.op.kernel)
    args = (a_img, np.int64(a_stride), np.int32(a_has), b_img, np.int64(b_stride), np.int32(b_has),
            np.int32(plan.a_bytes), np.int32(plan.b_bytes), cp.asarray(plan.a_hot), cp.asarray(plan.b_hot),
            np.uint32(hot_bits(plan.op.atype)), np.int32(plan.elem_bytes), regs, np.int32(plan.a_regs is not None),
            cp.asarray(plan.a_start), cp.asarray(plan.b_start), np.uint64(plan.desc_a), np.uint64(plan.desc_b),
            dump, np.int32(plan.dump), count, where, word, np.int32(plan.hits))
    fn((blocks,), (THREADS,), args, shared_mem=plan.shared_bytes)
    if sync:
        cp.cuda.runtime.deviceSynchronize()
    out = {}
    if plan.dump:
        raw = cp.asnumpy(dump)
        if np.any(raw == POISON):
            raise ProbeFailure(f"{int(np.sum(raw == POISON))} accumulator words were never written")
        out["dump"] = raw.reshape(blocks, THREADS, plan.op.regs)
    if plan.hits:
        out["hit_count"] = cp.asnumpy(count)
        out["hit_where"] = cp.asnumpy(where).reshape(blocks, MAX_HITS)
        out["hit_word"] = cp.asnumpy(word).reshape(blocks, MAX_HITS)
    return plan.decode(out)


def accumulator_product(n: int, atype: str, acc: str, seed: int = 0) -> Plan:
    """Random small integers in A and B (128B K-major), every K used: D must equal the float64 product
    read through the accumulator model, register by register (a check with no codes at all)."""
    op = Op(n, atype, acc)
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, size=(64, op.k))
    b = rng.integers(-3, 4, size=(op.k, n))
    ta = wm.smem_tile(atype, "128B", "k", "matrix_a")
    tb = wm.smem_tile(atype, "128B", "k", "matrix_b", mn=n)
    want = (a.astype(np.float64) @ b)[tuple(np.moveaxis(wm.accumulator_map(n), -1, 0))]

    def decode(out: dict) -> dict:
        got = acc_values(out["dump"][0], acc)
        return {"mismatches": int(np.sum(got != want)), "max_abs_error": float(np.max(np.abs(got - want)))}

    return Plan(op, 1, ta["region"], tb["region"], decode, wm.element_bytes(atype),
                a_img=image(ta, a, ta["region"])[None], b_img=image(tb, b, tb["region"])[None],
                desc_a=wm.descriptor_fields(ta), desc_b=wm.descriptor_fields(tb), dump=True)
