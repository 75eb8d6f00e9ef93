"""PTX `mma.sync` fragments: the instruction table, the PTX ISA model as data, and the probes.

Numpy except `gpu_launch`/`measure`. A map is an int array (32, slots, 2) of (row, col) per (lane, slot),
-1 where a slot holds nothing; slot = index in the thread's registers, lowest register and bits first.

Gauge: an MMA alone is invariant under a joint relabelling of m (A, D), n (B, D) and k (A, B), so a
register-only measurement needs an anchor. Every method here states its anchor:
- operand "mma":    codes in the probed operand, an identity-like partner placed through the partner's
                    model layout, D read through the model accumulator layout (anchors: partner + C model).
- operand "onehot": one slot of one lane is 1, the partner is a binary-coded matrix placed through its
                    model layout (bit f of k), D read through the model accumulator (same anchors, another
                    code path; it also shows slots the MMA ignores).
- accumulator "mma":    A[m, 0] and B[0, n] carry base-b digits of m+1 and n+1 in separate passes; each D
                        slot shows its own (m, n) with no C model at all (anchors: A and B models at k = 0).
- accumulator "onehot": A[m, 0] = B[0, n] = 1 for one (m, n); the one D slot that lights up holds it.
- `product_check`:  random small-integer A, B, C placed through the model, D compared with float64
                    A @ B + C; gauge-free consistency of the whole model triple.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

from ..probes.codes import passes_needed, undigits  # noqa: F401 (passes_needed: kept importable from here)
from .mma_probe_io import NO_ELEMENT, DecodeError, accumulator_inputs, decode_accumulator, launch_d_words, \
    map_layout, measure_layouts, reads_of, slot_code_digits, slot_onehots

METHODS = ("mma", "onehot")

# Bits of one element in a register (fp8 and the accumulators included).
ELEMENT_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f64": 64, "u8": 8, "s8": 8, "u4": 4, "s4": 4, "b1": 1,
                "e4m3": 8, "e5m2": 8, "f32": 32, "s32": 32}
# Codes 0..base-1 are exact in the type (fp8: e4m3 holds 0..16 exactly, e5m2 0..8).
CODE_BASE = {"f16": 2048, "bf16": 256, "tf32": 2048, "f64": 1 << 30, "u8": 256, "s8": 128, "u4": 16, "s4": 8,
             "b1": 2, "e4m3": 17, "e5m2": 9, "f32": 1 << 24, "s32": 1 << 30}
# Random-product ranges: small integers whose products and sums are exact in every accumulator.
_RANDOM_RANGE = {"u8": (0, 3), "u4": (0, 3), "b1": (0, 1)}


@dataclass(frozen=True)
class MmaInstruction:
    """One `mma.sync.aligned` variant; `name` is its struct in mma.cu."""

    shape: str
    ab: str          # A and B element type
    acc: str         # C and D element type
    a_layout: str = "row"
    b_layout: str = "col"

    @property
    def mnk(self) -> tuple[int, int, int]:
        return tuple(int(x) for x in self.shape[1:].replace("n", " ").replace("k", " ").split())

    @property
    def quadpair(self) -> bool:
        """m8n8k4 .f16: four independent 8x8x4 MMAs, one per quad pair (lanes 4q..4q+3 and 4q+16..4q+19)."""
        return self.shape == "m8n8k4" and self.ab == "f16"

    groups = property(lambda self: 4 if self.quadpair else 1)

    @property
    def name(self) -> str:
        tail = f"_{self.a_layout}_{self.b_layout}" if self.quadpair else ""
        return f"{self.shape}_{self.acc}_{self.ab}{tail}"

    @property
    def ptx(self) -> str:
        op = ".and.popc" if self.ab == "b1" else ""
        return (f"mma.sync.aligned.{self.shape}.{self.a_layout}.{self.b_layout}."
                f"{self.acc}.{self.ab}.{self.ab}.{self.acc}{op}")

    kernel = property(lambda self: f"mma_probe<fl_mma::{self.name}>")

    def slots(self, frag: str) -> int:
        m, n, k = self.mnk
        elements = {"matrix_a": m * k, "matrix_b": k * n, "accumulator": m * n}[frag]
        return elements * self.groups // 32

    def dtype(self, frag: str) -> str:
        return self.acc if frag == "accumulator" else self.ab

    def words(self, frag: str) -> int:
        """32-bit words per lane for this operand (the kernel's register count times words per register)."""
        return self.slots(frag) * ELEMENT_BITS[self.dtype(frag)] // 32


def _build_instructions() -> tuple[MmaInstruction, ...]:
    out: list[MmaInstruction] = []
    for ab in ("f16", "bf16"):
        for acc in ("f32", "f16") if ab == "f16" else ("f32",):
            out += [MmaInstruction("m16n8k8", ab, acc), MmaInstruction("m16n8k16", ab, acc)]
    for acc in ("f32", "f16"):
        out += [MmaInstruction("m8n8k4", "f16", acc, al, bl) for al in ("row", "col") for bl in ("col", "row")]
    out += [MmaInstruction("m16n8k4", "tf32", "f32"), MmaInstruction("m16n8k8", "tf32", "f32")]
    out += [MmaInstruction(s, "f64", "f64") for s in ("m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16")]
    out += [MmaInstruction(s, t, "s32") for t in ("s8", "u8") for s in ("m8n8k16", "m16n8k16", "m16n8k32")]
    out += [MmaInstruction(s, t, "s32") for t in ("s4", "u4") for s in ("m8n8k32", "m16n8k32", "m16n8k64")]
    out += [MmaInstruction(s, "b1", "s32") for s in ("m8n8k128", "m16n8k128", "m16n8k256")]
    out += [MmaInstruction("m16n8k32", t, acc) for t in ("e4m3", "e5m2") for acc in ("f32", "f16")]
    return tuple(out)


INSTRUCTIONS = _build_instructions()

# Also accepted by NVRTC 13.5 for sm_90 but outside issue 11's list (left out): m8n8k4 .bf16, fp8 m16n8k16.


def catalogue() -> list[tuple[str, str, str, str]]:
    """Every (frag, shape, dtype, layout) fraglab measures for mma.sync, in a stable order."""
    seen: list[tuple[str, str, str, str]] = []
    for inst in INSTRUCTIONS:
        for entry in (("matrix_a", inst.shape, inst.ab, inst.a_layout), ("matrix_b", inst.shape, inst.ab, inst.b_layout),
                      ("accumulator", inst.shape, inst.acc, "row")):
            if entry not in seen:
                seen.append(entry)
    return seen


def instruction_for(frag: str, shape: str, dtype: str, layout: str) -> MmaInstruction:
    """The instruction that probes a fragment: the first in INSTRUCTIONS that has it."""
    for inst in INSTRUCTIONS:
        if inst.shape != shape or inst.dtype(frag) != dtype:
            continue
        if frag == "accumulator" or layout == (inst.a_layout if frag == "matrix_a" else inst.b_layout):
            return inst
    raise KeyError((frag, shape, dtype, layout))


# ---- the model: PTX ISA "Matrix fragments for mma.m*n*k*" as coordinate functions ----------------
# g = lane >> 2 (groupID), t = lane % 4 (threadID_in_group), i = slot, w = elements per 32-bit register
# (2 for 16-bit, 4 for 8-bit, 8 for 4-bit, 32 for b1; tf32 and f64 take a whole register: w = 1),
# r = i // w the register, e = i % w the element inside it.

def _a_coord(m: int, w: int, g: int, t: int, i: int) -> tuple[int, int]:
    # (T32, V) -> (M16, K): registers alternate rows g / g+8, then step K by 4w; M8: row g only.
    r, e = divmod(i, w)
    if m == 8:
        return g, w * t + e + 4 * w * r
    return g + 8 * (r & 1), w * t + e + 4 * w * (r >> 1)


def _b_coord(w: int, g: int, t: int, i: int) -> tuple[int, int]:
    # (T32, V) -> (K, N8): each register steps K by 4w; column g.
    r, e = divmod(i, w)
    return w * t + e + 4 * w * r, g


def _c_coord(m: int, g: int, t: int, i: int) -> tuple[int, int]:
    # (T32, V4) -> (M16, N8): rows g, g, g+8, g+8; cols 2t, 2t+1.  M8: (T32, V2) -> (M8, N8).
    if m == 8:
        return g, 2 * t + i
    return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1)


def _quadpair_coord(frag: str, layout: str, acc: str, lane: int, i: int) -> tuple[int, int]:
    # m8n8k4 .f16, per quad pair (T8, V) -> (M8, K4) / (K4, N8) / (M8, N8); upper = lanes 16..31.
    t, upper = lane % 4, 4 * (lane >= 16)
    if frag == "matrix_a":
        return (t + upper, i) if layout == "row" else (i + upper, t)
    if frag == "matrix_b":
        return (t, i + upper) if layout == "row" else (i, t + upper)
    if acc == "f16":
        return t + upper, i
    return (t % 2) + (i & 2) + upper, (i & 4) + (t & 2) + (i & 1)


def elements_per_register(dtype: str) -> int:
    return 32 // ELEMENT_BITS[dtype] if ELEMENT_BITS[dtype] < 32 else 1


def lane_groups(inst: MmaInstruction) -> np.ndarray:
    """(32,) which independent MMA each lane takes part in (quad pair for m8n8k4 .f16, else 0)."""
    lanes = np.arange(32)
    return (lanes >> 2) & 3 if inst.quadpair else np.zeros(32, dtype=np.int64)


@lru_cache(maxsize=None)
def _model(inst: MmaInstruction, frag: str) -> np.ndarray:
    m, n, k = inst.mnk
    slots = inst.slots(frag)
    out = np.empty((32, slots, 2), dtype=np.int32)
    w = elements_per_register(inst.dtype(frag))
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i in range(slots):
            if inst.quadpair:
                layout = inst.a_layout if frag == "matrix_a" else inst.b_layout
                out[lane, i] = _quadpair_coord(frag, layout, inst.acc, lane, i)
            elif frag == "matrix_a":
                out[lane, i] = _a_coord(m, w, g, t, i)
            elif frag == "matrix_b":
                out[lane, i] = _b_coord(w, g, t, i)
            else:
                out[lane, i] = _c_coord(m, g, t, i)
    out.setflags(write=False)
    return out


def model_map(frag: str, shape: str, dtype: str, layout: str) -> np.ndarray:
    """(32, slots, 2) documented (row, col) of each (lane, slot); a copy the caller may keep."""
    return _model(instruction_for(frag, shape, dtype, layout), frag).copy()


# ---- register values: encode numbers into element bits, pack slots into 32-bit words --------------

def _encode_fp8(values: np.ndarray, man_bits: int, bias: int) -> np.ndarray:
    """Exact small values (normals and zero) into e4m3 / e5m2 bytes."""
    v = np.asarray(values, dtype=np.float64)
    a = np.abs(v)
    exp = np.floor(np.log2(np.where(a > 0, a, 1.0))).astype(np.int64)
    mant = (a / np.exp2(exp) - 1.0) * (1 << man_bits)
    if np.any((a > 0) & ((mant != np.round(mant)) | (exp + bias < 1))):
        raise ValueError("value not exact in this fp8 type")
    code = ((exp + bias) << man_bits) | np.round(mant).astype(np.int64)
    return np.where(a > 0, code | ((v < 0).astype(np.int64) << 7), 0).astype(np.uint64)


def encode(dtype: str, values: np.ndarray) -> np.ndarray:
    """Numbers -> raw element bits (uint64), exact for the codes and small integers used here."""
    v = np.asarray(values)
    if dtype == "f16":
        return v.astype(np.float16).view(np.uint16).astype(np.uint64)
    if dtype == "bf16":
        return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint64)
    if dtype in ("tf32", "f32"):
        return v.astype(np.float32).view(np.uint32).astype(np.uint64)
    if dtype == "f64":
        return v.astype(np.float64).view(np.uint64)
    if dtype == "e4m3":
        return _encode_fp8(v, 3, 7)
    if dtype == "e5m2":
        return _encode_fp8(v, 2, 15)
    mask = (1 << ELEMENT_BITS[dtype]) - 1
    return (v.astype(np.int64) & mask).astype(np.uint64)


def decode(dtype: str, raw: np.ndarray) -> np.ndarray:
    """Raw accumulator bits -> float64 numbers."""
    raw = np.asarray(raw, dtype=np.uint64)
    if dtype == "f16":
        return raw.astype(np.uint16).view(np.float16).astype(np.float64)
    if dtype == "f32":
        return raw.astype(np.uint32).view(np.float32).astype(np.float64)
    if dtype == "f64":
        return raw.view(np.float64).copy()
    if dtype == "s32":
        return raw.astype(np.uint32).view(np.int32).astype(np.float64)
    raise ValueError(f"no decoder for accumulator type {dtype}")


def pack(dtype: str, raw: np.ndarray) -> np.ndarray:
    """(..., slots) raw bits -> (..., words) uint32; slot s sits at bit (s % per) * bits of word s // per."""
    bits = ELEMENT_BITS[dtype]
    raw = np.asarray(raw, dtype=np.uint64)
    if bits == 64:
        return np.stack([raw & 0xFFFFFFFF, raw >> 32], axis=-1).reshape(*raw.shape[:-1], -1).astype(np.uint32)
    per = 32 // bits
    slots = raw.shape[-1]
    shifted = raw << ((np.arange(slots) % per) * bits).astype(np.uint64)
    return shifted.reshape(*raw.shape[:-1], slots // per, per).sum(axis=-1).astype(np.uint32)


def unpack(dtype: str, words: np.ndarray, slots: int) -> np.ndarray:
    """Inverse of pack."""
    bits = ELEMENT_BITS[dtype]
    w = np.asarray(words, dtype=np.uint64)
    if bits == 64:
        pairs = w.reshape(*w.shape[:-1], slots, 2)
        return pairs[..., 0] | (pairs[..., 1] << np.uint64(32))
    per = 32 // bits
    s = np.arange(slots)
    return (w[..., s // per] >> ((s % per) * bits).astype(np.uint64)) & np.uint64((1 << bits) - 1)


def place(inst: MmaInstruction, frag: str, matrices: np.ndarray) -> np.ndarray:
    """(E, groups, rows, cols) numbers -> (E, 32, words) register words, through the model layout."""
    coords = _model(inst, frag)
    grp = lane_groups(inst)[:, None]
    values = matrices[:, grp, coords[..., 0], coords[..., 1]]          # (E, 32, slots)
    return pack(inst.dtype(frag), encode(inst.dtype(frag), values))


def read_d(inst: MmaInstruction, words: np.ndarray) -> np.ndarray:
    """(E, 32, words) D words -> (E, 32, slots) numbers."""
    return decode(inst.acc, unpack(inst.acc, words, inst.slots("accumulator")))


def gather_d(inst: MmaInstruction, values: np.ndarray) -> np.ndarray:
    """(E, 32, slots) D numbers -> (E, groups, M, N) through the model accumulator layout."""
    m, n, _ = inst.mnk
    coords = _model(inst, "accumulator")
    out = np.zeros((values.shape[0], inst.groups, m, n))
    out[:, lane_groups(inst)[:, None], coords[..., 0], coords[..., 1]] = values
    return out


# ---- experiments and decoders --------------------------------------------------------------------

@dataclass
class Experiment:
    """Register words for a batch of experiments (E blocks) and how to read what comes back."""

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    decode: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]  # D words -> (map, reads)


def _operand_mma(inst: MmaInstruction, frag: str) -> Experiment:
    m, n, k = inst.mnk
    slots, dtype = inst.slots(frag), inst.ab
    base = CODE_BASE[dtype]
    free = n if frag == "matrix_a" else m                 # the partner dimension that selects k
    selections = math.ceil(k / free)
    probe = slot_code_digits(slots, base)
    passes = len(probe)
    probe_words = pack(dtype, encode(dtype, probe))                          # (passes, 32, words)
    partner = np.zeros((selections, inst.groups, k, n) if frag == "matrix_a" else (selections, inst.groups, m, k))
    for j in range(selections):
        for f in range(min(free, k - j * free)):
            if frag == "matrix_a":
                partner[j, :, j * free + f, f] = 1                           # D[m, f] = A[m, j*N + f]
            else:
                partner[j, :, f, j * free + f] = 1                           # D[f, n] = B[j*M + f, n]
    other = "matrix_b" if frag == "matrix_a" else "matrix_a"
    partner_words = place(inst, other, partner)
    probe_all = np.repeat(probe_words, selections, axis=0)                   # block = pass * selections + j
    partner_all = np.tile(partner_words, (passes, 1, 1))
    a, b = (probe_all, partner_all) if frag == "matrix_a" else (partner_all, probe_all)

    def decode_out(d_words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = np.rint(gather_d(inst, read_d(inst, d_words))).astype(np.int64)
        d = d.reshape(passes, selections, inst.groups, m, n)
        total = undigits(d, base)                                            # (selections, groups, m, n)
        out = np.full((32, slots, 2), NO_ELEMENT, dtype=np.int32)
        for j, grp, dm, dn in zip(*np.nonzero(total)):
            code = int(total[j, grp, dm, dn])
            if not 1 <= code <= 32 * slots:
                raise DecodeError(f"mma {inst.name} {frag}: D shows code {code}, outside 1..{32 * slots}")
            lane, slot = divmod(code - 1, slots)
            rc = (dm, j * free + dn) if frag == "matrix_a" else (j * free + dm, dn)
            if out[lane, slot, 0] != NO_ELEMENT and tuple(out[lane, slot]) != rc:
                raise DecodeError(f"mma {inst.name} {frag}: lane {lane} slot {slot} shows at "
                                  f"{tuple(out[lane, slot])} and {rc}")
            out[lane, slot] = rc
        return out, reads_of(out)

    return Experiment(a, b, np.zeros((len(a), 32, inst.words("accumulator")), np.uint32), decode_out)


def _operand_onehot(inst: MmaInstruction, frag: str) -> Experiment:
    m, n, k = inst.mnk
    slots, dtype = inst.slots(frag), inst.ab
    free = n if frag == "matrix_a" else m
    full = (1 << free) - 1
    kk = np.arange(k)[:, None]
    bit = np.arange(free)[None, :]
    coded = np.stack([(kk >> bit) & 1, ((full - kk) >> bit) & 1]).astype(np.float64)  # (2, k, free): bits of k, of ~k
    if frag == "matrix_b":
        coded = coded.transpose(0, 2, 1)                                          # partner A (free=M, k)
    partner = np.broadcast_to(coded[:, None], (2, inst.groups, *coded.shape[1:]))
    other = "matrix_b" if frag == "matrix_a" else "matrix_a"
    partner_words = place(inst, other, np.ascontiguousarray(partner))
    probe_words = pack(dtype, encode(dtype, slot_onehots(slots)))                 # (32*slots, 32, words)
    probe_all = np.repeat(probe_words, 2, axis=0)                                 # block = target * 2 + half
    partner_all = np.tile(partner_words, (32 * slots, 1, 1))
    a, b = (probe_all, partner_all) if frag == "matrix_a" else (partner_all, probe_all)
    weights = 1 << np.arange(free)

    def decode_out(d_words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = np.rint(gather_d(inst, read_d(inst, d_words))).astype(np.int64).reshape(-1, 2, inst.groups, m, n)
        out = np.full((32, slots, 2), NO_ELEMENT, dtype=np.int32)
        for target in range(32 * slots):
            lane, slot = divmod(target, slots)
            hit = d[target]                                   # (2, groups, m, n)
            if not hit.any():
                continue                                      # the MMA ignores this slot
            if np.any((hit != 0) & (hit != 1)):
                raise DecodeError(f"onehot {inst.name} {frag}: lane {lane} slot {slot} gives values "
                                  f"{sorted(set(hit[hit != 0].tolist()))}, expected 0/1")
            groups = np.nonzero(hit.any(axis=(0, 2, 3)))[0]
            lines = np.nonzero(hit.any(axis=(0, 1, 3 if frag == "matrix_a" else 2)))[0]
            if len(groups) != 1 or len(lines) != 1:
                raise DecodeError(f"onehot {inst.name} {frag}: lane {lane} slot {slot} lights "
                                  f"{len(groups)} groups and {len(lines)} lines; expected one element")
            grp, line = int(groups[0]), int(lines[0])
            bits = hit[:, grp, line, :] if frag == "matrix_a" else hit[:, grp, :, line]
            kval, kneg = int(bits[0] @ weights), full - int(bits[1] @ weights)
            if kval != kneg:
                raise DecodeError(f"onehot {inst.name} {frag}: lane {lane} slot {slot}: k {kval} vs ~k {kneg}")
            out[lane, slot] = (line, kval) if frag == "matrix_a" else (kval, line)
        return out, reads_of(out)

    return Experiment(a, b, np.zeros((len(a), 32, inst.words("accumulator")), np.uint32), decode_out)


def _accumulator(inst: MmaInstruction, method: str) -> Experiment:
    m, n, k = inst.mnk
    base = CODE_BASE[inst.ab]
    rows, cols = accumulator_inputs(method, m, n, base)         # A[:, 0] and B[0, :] of each experiment
    a = np.zeros((len(rows), inst.groups, m, k))
    b = np.zeros((len(rows), inst.groups, k, n))
    a[..., 0] = rows[:, None, :]
    b[:, :, 0, :] = cols[:, None, :]

    def decode_out(d_words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = np.rint(read_d(inst, d_words)).astype(np.int64)       # (E, 32, slots)
        return decode_accumulator(method, d, m, n, base, f"{method} {inst.name} accumulator")

    return Experiment(place(inst, "matrix_a", a), place(inst, "matrix_b", b),
                      np.zeros((len(rows), 32, inst.words("accumulator")), np.uint32), decode_out)


def experiment(inst: MmaInstruction, frag: str, method: str) -> Experiment:
    if method not in METHODS:
        raise ValueError(f"unknown mma method {method!r}: valid choices are {', '.join(METHODS)}")
    if frag == "accumulator":
        return _accumulator(inst, method)
    return _operand_mma(inst, frag) if method == "mma" else _operand_onehot(inst, frag)


def random_operands(inst: MmaInstruction, trials: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """(A, B, C) float64 matrices (trials, groups, ...) of small integers, exact in every type here."""
    rng = np.random.default_rng(seed)
    m, n, k = inst.mnk
    lo, hi = _RANDOM_RANGE.get(inst.ab, (-2, 2))
    shapes = ((m, k, lo, hi), (k, n, lo, hi), (m, n, -8, 8))
    return tuple(rng.integers(low, high + 1, (trials, inst.groups, r, c)).astype(np.float64) for r, c, low, high in shapes)


def product_error(inst: MmaInstruction, d_words: np.ndarray, trials: int = 4, seed: int = 0) -> float:
    """Largest |D - (A @ B + C)| over the trials, D read through the model (0.0: the model triple holds)."""
    a, b, c = random_operands(inst, trials, seed)
    return float(np.max(np.abs(gather_d(inst, read_d(inst, d_words)) - (a @ b + c))))


# ---- running on the GPU --------------------------------------------------------------------------

Launch = Callable[[str, np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]
"""launch(kernel_name, a_words, b_words, c_words, d_words_per_lane) -> (E, 32, d_words) uint32"""


def measure_maps(frag: str, shape: str, dtype: str, layout: str, methods: tuple[str, ...],
                 launch: Launch) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{method: (map, reads)} for one fragment, each method one launch through `launch`."""
    inst = instruction_for(frag, shape, dtype, layout)
    runs = {method: experiment(inst, frag, method) for method in methods}
    return {method: e.decode(launch(inst.kernel, e.a, e.b, e.c, inst.words("accumulator"))) for method, e in runs.items()}


def product_check(inst: MmaInstruction, launch: Launch, trials: int = 4) -> float:
    a, b, c = random_operands(inst, trials)
    words = place(inst, "matrix_a", a), place(inst, "matrix_b", b), place(inst, "accumulator", c)
    return product_error(inst, launch(inst.kernel, *words, inst.words("accumulator")), trials)


def kernel_names() -> tuple[str, ...]:
    return tuple(inst.kernel for inst in INSTRUCTIONS)


# ---- the Family entry: specs, model and GPU measurement as Layouts --------------------------------

API = "mma"
MODEL_ARCHITECTURES = ("sm_90",)  # what the atlas was measured on; the PTX formulas hold from each min_sm
_MIN_SM = {("m8n8k4", "f16"): 70, ("m16n8k8", "f16"): 75, ("m8n8k16", "s8"): 75, ("m8n8k16", "u8"): 75,
           ("m8n8k32", "s4"): 75, ("m8n8k32", "u4"): 75, ("m16n8k4", "f64"): 90, ("m16n8k8", "f64"): 90,
           ("m16n8k16", "f64"): 90, ("m16n8k32", "e4m3"): 89, ("m16n8k32", "e5m2"): 89}


def spec_min_sm(spec) -> int:
    return _MIN_SM.get((spec.shape, instruction_for(spec.frag, spec.shape, spec.dtype, spec.layout).ab), 80)


def specs() -> list:
    from ..layouts.spec import FragmentSpec

    return [FragmentSpec(API, *entry) for entry in catalogue()]


def model_layout(spec, method: str = "mma"):
    from ..layouts.layout import Source

    try:
        found = model_map(spec.frag, spec.shape, spec.dtype, spec.layout)
    except KeyError:
        return None
    inst = instruction_for(spec.frag, spec.shape, spec.dtype, spec.layout)
    source = Source("model", {"model": f"PTX ISA fragments of {inst.ptx}", "architectures": [f"sm_{spec_min_sm(spec)}+"],
                              "basis": "PTX ISA 'Matrix fragments for mma.m*n*k*'; not measured"})
    return map_layout(spec, method, source, found, np.ones(found.shape[:2], dtype=np.int8))


def kernel_builds() -> list:
    from ..runtime.build import KernelBuild

    return [KernelBuild("apis/mma.cu", kernel_names())]


def gpu_launch() -> Launch:
    """A launch() on the present GPU (fraglab.runtime.gpu compiles mma.cu once); D is poisoned first."""
    build = kernel_builds()[0]

    def launch(name, a, b, c, d_words):
        return launch_d_words(build, name, [np.asarray(x, dtype=np.uint32) for x in (a, b, c)], d_words)

    return launch


def measure(spec, methods: tuple[str, ...] = METHODS, source=None, **_) -> dict:
    return measure_layouts(spec, methods, source, measure_maps, gpu_launch)


def _family():
    from .family import Family

    return Family(
        api=API, title="PTX mma.sync fragments (registers; A row, B col)", threads=32,
        operands=("matrix_a", "matrix_b", "accumulator"), methods=METHODS, specs=specs, model=model_layout,
        measure=measure, kernel_builds=kernel_builds, min_sm=70, ptx="mma.sync.aligned.<shape>.<alayout>.<blayout>...",
        spec_min_sm=spec_min_sm,
        slots=lambda spec: instruction_for(spec.frag, spec.shape, spec.dtype, spec.layout).slots(spec.frag),
        note=lambda spec: instruction_for(spec.frag, spec.shape, spec.dtype, spec.layout).ptx,
        defaults={"matrix_a": {"shape": "m16n8k16", "dtype": "f16", "layout": "row"},
                  "matrix_b": {"shape": "m16n8k16", "dtype": "f16", "layout": "col"},
                  "accumulator": {"shape": "m16n8k16", "dtype": "f32", "layout": "row"}},
        model_archs=MODEL_ARCHITECTURES)


def __getattr__(name: str):
    if name == "FAMILY":  # built on first use, so the numpy part imports without the package's other wings
        return _family()
    raise AttributeError(name)
