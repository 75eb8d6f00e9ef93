"""A CPU stand-in for kernels/probes.cu: given a 'true' slot map, produce the outputs the kernels would.

It is written from the kernels' contract (what each launch stores where), independently of the
decoders in fraglab/probes.py, so decoding can be tested without a GPU, duplicates and ignored
slots included.
"""

from __future__ import annotations

import numpy as np

from fraglab.layouts.spec import ELEMENT_BITS, FragmentSpec
from fraglab.layouts.layout import NO_ELEMENT, Layout
from fraglab.probes.codes import POISON
from fraglab.probes.plans import LoadPlan, MmaPlan, OnehotPlan


def _mem_pos(rows, cols, layout, r, c):
    return r * cols + c if layout == "row" else c * rows + r


def _pack(values: np.ndarray, bits: int) -> np.ndarray:
    """(..., slots) -> (..., storage) words, slot s in word s // per at bit (s % per) * bits."""
    if bits >= 8:
        return values
    per = 32 // bits
    slots = values.shape[-1]
    words = np.zeros(values.shape[:-1] + (slots // per,), dtype=np.int64)
    for s in range(slots):
        words[..., s // per] |= (values[..., s].astype(np.int64) & ((1 << bits) - 1)) << ((s % per) * bits)
    return words.astype(np.uint32).view(np.int32)


def simulate_load(truth: Layout) -> tuple[LoadPlan, np.ndarray]:
    spec = truth.spec
    slots = truth.num_elements
    bits = ELEMENT_BITS[spec.dtype]
    storage = slots * bits // 32 if bits < 8 else slots
    plan = LoadPlan(spec, storage, slots)
    if spec.frag == "accumulator":
        codes = plan.inputs().reshape(plan.passes, 32, slots)
        out = np.full((plan.passes, spec.rows * spec.cols), POISON, dtype=np.int64)
        for lane, slot in np.ndindex(32, slots):
            r, c = truth.row[lane, slot], truth.col[lane, slot]
            if r != NO_ELEMENT:
                out[:, _mem_pos(spec.rows, spec.cols, spec.layout, r, c)] = codes[:, lane, slot]
        return plan, out.reshape(-1)
    mem = plan.inputs().reshape(plan.passes, -1)
    values = np.zeros((plan.passes, 32, slots), dtype=np.int64)
    for lane, slot in np.ndindex(32, slots):
        r, c = truth.row[lane, slot], truth.col[lane, slot]
        values[:, lane, slot] = mem[:, _mem_pos(spec.rows, spec.cols, spec.layout, r, c)]
    return plan, _pack(values, bits).reshape(-1)


def _operand_seen_by_mma(truth: Layout, slot_value) -> np.ndarray:
    """(rows, cols) matrix the MMA computes with: each element from the slot the MMA reads (mma_reads == 1)."""
    spec = truth.spec
    mat = np.zeros((spec.rows, spec.cols), dtype=np.int64)
    for lane, slot in np.ndindex(truth.threads, truth.num_elements):
        if truth.mma_reads[lane, slot] == 1:
            mat[truth.row[lane, slot], truth.col[lane, slot]] = slot_value(lane, slot)
    return mat


def _products(spec: FragmentSpec, operand: np.ndarray, selections: int) -> np.ndarray:
    """(selections, M*N) D of operand x partner_j (or partner_j x operand), as the kernel stores it row-major."""
    m, n, k = spec.mnk
    j, dm, dn = np.meshgrid(np.arange(selections), np.arange(m), np.arange(n), indexing="ij")
    r, c = (dm, j * n + dn) if spec.frag == "matrix_a" else (j * m + dm, dn)
    inside = (r < spec.rows) & (c < spec.cols)
    out = np.zeros((selections, m, n), dtype=np.int64)
    out[inside] = operand[r[inside], c[inside]]
    return out.reshape(selections, m * n)


def _stored(spec: FragmentSpec, mat: np.ndarray) -> np.ndarray:
    return (mat.reshape(-1) if spec.layout == "row" else mat.T.reshape(-1)).copy()


def _mma_outputs(truth: Layout, plan, slot_values) -> np.ndarray:
    """What the kernel stores over its experiments, one per (lane, slot) -> value function of `slot_values`:
    the accumulator as loaded, an operand's products with each partner."""
    spec = truth.spec
    _, selections = plan.partners()
    out = []
    for slot_value in slot_values:
        operand = _operand_seen_by_mma(truth, slot_value)
        out.append(_stored(spec, operand)[None] if spec.frag == "accumulator" else _products(spec, operand, selections))
    return np.stack(out).reshape(-1)


def simulate_mma(truth: Layout) -> tuple[MmaPlan, np.ndarray]:
    slots = truth.num_elements
    plan = MmaPlan(truth.spec, 0, slots)
    digits = (lambda lane, slot, p=p: ((lane * slots + slot + 1) // plan.base**p) % plan.base
              for p in range(plan.passes))
    return plan, _mma_outputs(truth, plan, digits)


def simulate_onehot(truth: Layout) -> tuple[OnehotPlan, np.ndarray]:
    slots = truth.num_elements
    plan = OnehotPlan(truth.spec, 0, slots)
    hots = (lambda l, s, lane=lane, slot=slot: int(l == lane and s == slot) for lane, slot in np.ndindex(32, slots))
    return plan, _mma_outputs(truth, plan, hots)
