"""Layouts the export tests check, written down here from the PTX ISA (not from fraglab's models).

Each case is a stand-in with the attributes the exports read (row/col arrays, spec, threads,
num_elements, source). fraglab's own layouts join them: the bundled atlas (WMMA, measured on an H200)
and, once their family modules exist, the mma / ldmatrix / wgmma models.

Notation: lane l, g = l >> 2 (groupID), t = l % 4 (threadID_in_group), i = slot, w = warp.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from fraglab.check.given import GivenTile
from fraglab.layouts.layout import SlotShape

BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f64": 64, "f32": 32, "s32": 32, "s8": 8, "u8": 8, "b16": 16}


@dataclass(frozen=True)
class Spec(GivenTile):
    """What the exports read of a spec (api, frag, shape, dtype, layout, rows, cols), ldmatrix's num/trans too."""

    num: int | None = None
    trans: bool | None = None

    @property
    def element_bits(self) -> int:
        return BITS[self.dtype]


@dataclass
class Source:
    kind: str = "model"
    provenance: dict[str, Any] = field(default_factory=lambda: {"model": "PTX ISA formulas in the test"})

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.provenance}


@dataclass
class Case(SlotShape):
    spec: Spec
    row: np.ndarray
    col: np.ndarray
    source: Source = field(default_factory=Source)

    @property
    def name(self) -> str:
        s = self.spec
        extra = "".join(f".{k}{getattr(s, k)}" for k in ("num", "trans") if getattr(s, k) is not None)
        return f"{s.api}.{s.frag}.{s.shape}.{s.dtype}{extra}"


def build(spec: Spec, threads: int, slots: int, coord: Callable[[int, int, int, int], tuple[int, int]]) -> Case:
    """coord(w, g, t, i) -> (row, col) for every thread and slot."""
    row = np.zeros((threads, slots), dtype=np.int64)
    col = np.zeros((threads, slots), dtype=np.int64)
    for thread in range(threads):
        w, lane = divmod(thread, 32)
        for i in range(slots):
            row[thread, i], col[thread, i] = coord(w, lane >> 2, lane & 3, i)
    return Case(spec, row, col)


def mma_cases() -> list[Case]:
    """mma.sync fragments (PTX ISA 'Matrix fragments for mma.m16n8k*' and m8n8k4)."""
    out = [
        # m16n8k16 .f16 A (T32,V8) -> (M16,K16): a0..a7
        build(Spec("mma", "matrix_a", "m16n8k16", "f16", "row", 16, 16), 32, 8,
              lambda w, g, t, i: (g + 8 * (i in (2, 3, 6, 7)), 2 * t + (i & 1) + 8 * (i >= 4))),
        # m16n8k16 .f16 B (T32,V4) -> (K16,N8)
        build(Spec("mma", "matrix_b", "m16n8k16", "f16", "col", 16, 8), 32, 4,
              lambda w, g, t, i: (2 * t + (i & 1) + 8 * (i >= 2), g)),
        # m16n8k16 C/D (T32,V4) -> (M16,N8)
        build(Spec("mma", "accumulator", "m16n8k16", "f32", "row", 16, 8), 32, 4,
              lambda w, g, t, i: (g + 8 * (i >= 2), 2 * t + (i & 1))),
        # m16n8k8 .tf32 A (T32,V4) -> (M16,K8): a0,a2 rows g; a1,a3 rows g+8; a0,a1 col t; a2,a3 col t+4
        build(Spec("mma", "matrix_a", "m16n8k8", "tf32", "row", 16, 8), 32, 4,
              lambda w, g, t, i: (g + 8 * (i in (1, 3)), t + 4 * (i >= 2))),
        # m16n8k32 .s8 A (T32,V16) -> (M16,K32)
        build(Spec("mma", "matrix_a", "m16n8k32", "s8", "row", 16, 32), 32, 16,
              lambda w, g, t, i: (g + 8 * (i in range(4, 8) or i in range(12, 16)), 4 * t + (i & 3) + 16 * (i >= 8))),
        # m8n8k4 .f64 A (T32,V1) -> (M8,K4) and C (T32,V2) -> (M8,N8)
        build(Spec("mma", "matrix_a", "m8n8k4", "f64", "row", 8, 4), 32, 1, lambda w, g, t, i: (g, t)),
        build(Spec("mma", "accumulator", "m8n8k4", "f64", "row", 8, 8), 32, 2, lambda w, g, t, i: (g, 2 * t + i)),
    ]
    return out


def wgmma_cases() -> list[Case]:
    """wgmma m64nNk16 accumulators: 4 warps, warp w owns rows 16w..16w+15, the m16n8 C atom per 8 columns."""
    out = []
    for n in (8, 16, 64):
        out.append(build(Spec("wgmma", "accumulator", f"m64n{n}k16", "f32", "row", 64, n), 128, n // 2,
                         lambda w, g, t, i: (16 * w + g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2))))
    return out


def ldmatrix_cases() -> list[Case]:
    """ldmatrix.m8n8.x{1,2,4}[.trans].b16: lane l holds row l>>2, cols 2(l%4), 2(l%4)+1 of each 8x8 matrix j.

    The matrices are placed as the m16n8k16 operands use them: x2 stacks matrix 1 below matrix 0 (16x8),
    x4 puts matrix j at rows 8*(j&1), cols 8*(j>>1) (16x16); slot = 2 * j + element.
    """
    out = []
    tiles = {1: (8, 8), 2: (16, 8), 4: (16, 16)}
    for num, (rows, cols) in tiles.items():
        for trans in (False, True):
            def coord(w, g, t, i, trans=trans):
                j, e = divmod(i, 2)
                r, c = (2 * t + e, g) if trans else (g, 2 * t + e)
                return 8 * (j & 1) + r, 8 * (j >> 1) + c
            out.append(build(Spec("ldmatrix", "matrix", "m8n8", "b16", "row", rows, cols, num=num, trans=trans),
                             32, 2 * num, coord))
    return out


def wmma_f16_a_formula() -> Case:
    """WMMA m16n16k16 f16 matrix_a on sm_80+: 16 slots, slot i + 8 repeats slot i (reported publicly)."""
    return build(Spec("wmma", "matrix_a", "m16n16k16", "f16", "row", 16, 16), 32, 16,
                 lambda w, g, t, i: (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * ((i >> 2) & 1)))


def swizzled_case() -> Case:
    """Linear over GF(2) but not a CuTe layout: col = (2t + i) XOR g on an 8x8 tile."""
    return build(Spec("test", "accumulator", "m8n8k4", "f32", "row", 8, 8), 32, 2,
                 lambda w, g, t, i: (g, (2 * t + i) ^ g))


def empty_slot_case() -> Case:
    """Slot 2 of every thread holds nothing: no CuTe or linear form; the nearest form is slots 0-1."""
    base = build(Spec("test", "accumulator", "m8n8k4", "f32", "row", 8, 8), 32, 3,
                 lambda w, g, t, i: (g, 2 * t + i) if i < 2 else (-1, -1))
    return base


def scrambled_case() -> Case:
    """A fixed pseudo-random permutation of an 8x8 tile over (T32, V2), (0, 0) kept first: neither form exists."""
    perm = np.concatenate([[0], 1 + np.random.default_rng(7).permutation(63)])
    row, col = perm.reshape(32, 2) // 8, perm.reshape(32, 2) % 8
    return Case(Spec("test", "accumulator", "m8n8k4", "f32", "row", 8, 8), row, col)


def formula_cases() -> list[Case]:
    return mma_cases() + wgmma_cases() + ldmatrix_cases() + [wmma_f16_a_formula()]


def atlas_layouts() -> list:
    """fraglab's own layouts from the bundled atlas (WMMA measured on an H200, the PTX families on an H100), each
    by the method the page shows it by."""
    from fraglab.export.select import measured_layouts
    from fraglab.layouts import atlas

    return measured_layouts(atlas.load_bundled())


def family_layouts() -> list:
    """fraglab's own model layouts of the PTX families, once their modules are registered (else none)."""
    try:
        from fraglab.apis import FAMILIES
    except ImportError:
        return []
    out = []
    for api, family in FAMILIES.items():
        if api == "wmma":
            continue
        for spec in family.specs():
            try:
                found = family.model(spec, "load")
            except Exception:  # a family still being written must not break the export tests
                continue
            if found is not None:
                out.append(found)
    return out


def layout_name(layout) -> str:
    s = layout.spec
    return getattr(layout, "name", None) or getattr(s, "key", None) or ".".join(
        str(x) for x in (s.api, s.frag, s.shape, s.dtype, s.layout))
