"""PTX `mma.sp` (2:4 sparse A) fragments: the instruction table, the PTX ISA model as data, and the probes.

Numpy except `gpu_launch`/`measure`. A map is an int array (32, slots, 2) of (row, col) per (lane, slot),
-1 where a slot holds nothing. Four operands:
- matrix_a:    the compressed A values, (lane, slot) -> (m, kc) in the M x K/2 packed matrix; kc = 2c + w is
               the w-th kept element of chunk c (logical columns 4c..4c+3).
- metadata:    one layout per sparsity selector (layout "sel0".."sel3"): slot f = bits 2f+1..2f of the lane's
               metadata word, -> the packed element (m, kc) whose position in its chunk that field gives,
               so A[m, 4 * (kc // 2) + field] = packed[m, kc]. Lanes the selector does not pick are ignored.
- matrix_b, accumulator: as for the dense mma (K x N, M x N).

Gauge and anchors (an MMA alone is invariant under relabelling m, n and k):
- matrix_a "mma":    codes in A, metadata 0x4 in every nibble (positions 0, 1) in every lane, an identity-like
                     B placed through its model, D read through the C model. Uniform metadata needs no model.
- matrix_a "onehot": one A slot is 1, metadata 0xE everywhere (positions 2, 3), B binary-coded bits of k.
- matrix_b, accumulator: as in fraglab.apis.mma, the sparse partner A placed through the A model under
                     uniform metadata (anchors: A and C models, or A and B models at k = 0).
- metadata "onehot": every nibble 0x8 (positions 0, 2); one field moves one packed element by one column
                     (0 -> 1 or 2 -> 3); A all ones (no model), B codes the moved column, D via the C model.
- metadata "mma":    every field carries one bit of its own index (9 passes) on top of 0x8; a one-column A
                     (through the A model) shows, for each packed element, the field that placed it.
- `product_check`:   random 2:4 A, B and C and random ordered metadata (also in the lanes the selector
                     skips), everything through the model; D against float64 A @ B + C.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .mma import ELEMENT_BITS, NO_ELEMENT, _a_coord, _b_coord, _c_coord, decode, elements_per_register, encode, \
    pack, unpack
from .mma_probe_io import launch_d_words, map_layout, measure_layouts, reads_of

METHODS = ("mma", "onehot")  # the experiments of each are in fraglab/apis/mma_sp_probe.py
FIELDS = 16                     # 2-bit fields in a metadata word
POSITIONS_LOW, POSITIONS_HIGH, POSITIONS_SPREAD = 0x4, 0xE, 0x8  # nibbles: kept positions (0,1), (2,3), (0,2)


@dataclass(frozen=True)
class SparseInstruction:
    """One `mma.sp::ordered_metadata.sync.aligned` variant; `name` is its struct in mma_sp.cu."""

    shape: str
    ab: str
    acc: str

    @property
    def mnk(self) -> tuple[int, int, int]:
        return tuple(int(x) for x in self.shape[1:].replace("n", " ").replace("k", " ").split())

    @property
    def name(self) -> str:
        return f"{self.shape}_{self.acc}_{self.ab}"

    def ptx(self, ordered: bool = True) -> str:
        return (f"mma.sp{'::ordered_metadata' if ordered else ''}.sync.aligned.{self.shape}.row.col."
                f"{self.acc}.{self.ab}.{self.ab}.{self.acc}")

    @property
    def metadata_lanes(self) -> int:
        """Lanes of each group of four whose metadata the instruction reads: K/2 packed elements per row,
        two rows (g, g + 8) per group, 2 bits each, 32 bits a lane."""
        return self.mnk[2] // 16

    @property
    def selectors(self) -> int:
        return 4 // self.metadata_lanes

    @property
    def orderings(self) -> tuple[bool, ...]:
        """Metadata forms that assemble: fp8 has only ::ordered_metadata."""
        return (True,) if self.ab in ("e4m3", "e5m2") else (True, False)

    def kernel(self, selector: int = 0, ordered: bool = True) -> str:
        return f"mma_sp_probe<fl_mma_sp::{self.name}{'' if ordered else '_unordered'}, {selector}>"

    def dims(self, frag: str) -> tuple[int, int]:
        m, n, k = self.mnk
        return {"matrix_a": (m, k // 2), "metadata": (m, k // 2), "matrix_b": (k, n), "accumulator": (m, n)}[frag]

    def slots(self, frag: str) -> int:
        if frag == "metadata":
            return FIELDS
        rows, cols = self.dims(frag)
        return rows * cols // 32

    def dtype(self, frag: str) -> str:
        return {"accumulator": self.acc, "metadata": "b2"}.get(frag, self.ab)

    def words(self, frag: str) -> int:
        return self.slots(frag) * ELEMENT_BITS[self.dtype(frag)] // 32 if frag != "metadata" else 1


INSTRUCTIONS = tuple(
    [SparseInstruction(s, "f16", acc) for s in ("m16n8k16", "m16n8k32") for acc in ("f32", "f16")]
    + [SparseInstruction(s, "bf16", "f32") for s in ("m16n8k16", "m16n8k32")]
    + [SparseInstruction(s, t, "s32") for t in ("s8", "u8") for s in ("m16n8k32", "m16n8k64")]
    + [SparseInstruction("m16n8k64", t, "f32") for t in ("e4m3", "e5m2")])
# Left out: fp8 with an f16 accumulator and fp8 without ::ordered_metadata (ptxas refuses both for sm_90).


def catalogue() -> list[tuple[str, str, str, str]]:
    """Every (frag, shape, dtype, layout) fraglab measures for mma.sp, in a stable order."""
    seen: list[tuple[str, str, str, str]] = []
    for inst in INSTRUCTIONS:
        entries = [("matrix_a", inst.shape, inst.ab, "row"), ("matrix_b", inst.shape, inst.ab, "col"),
                   ("accumulator", inst.shape, inst.acc, "row")]
        entries += [("metadata", inst.shape, inst.ab, f"sel{s}") for s in range(inst.selectors)]
        seen += [e for e in entries if e not in seen]
    return seen


def selector_of(layout: str) -> int:
    return int(layout[3:]) if layout.startswith("sel") else 0


def instruction_for(frag: str, shape: str, dtype: str, layout: str) -> SparseInstruction:
    """The instruction that probes a fragment: the first in INSTRUCTIONS that has it."""
    for inst in INSTRUCTIONS:
        wanted = inst.acc if frag == "accumulator" else inst.ab
        if inst.shape == shape and wanted == dtype:
            if frag != "metadata" or selector_of(layout) < inst.selectors:
                return inst
    raise KeyError((frag, shape, dtype, layout))


# ---- the model: PTX ISA "Matrix fragments for sparse mma.m16n8k*" as coordinate functions ----------
# g = lane >> 2, t = lane % 4; the packed A of m16n8kK is laid out as the dense A of m16n8k(K/2); B and C
# as the dense mma's. Metadata: lanes 4g + L*sel + j (L = metadata_lanes, j < L) of each group, two bits a
# packed element, the first kept position low:
# - .f16/.bf16: lane j holds chunks 4j..4j+3 of row g in bits 15..0 and of row g+8 in bits 31..16;
# - 8-bit (.s8/.u8/.e4m3/.e5m2): a lane's whole word is one row, g for even j and g+8 for odd j, packed
#   columns 16 * (j // 2) on. fraglab first read the 8-bit figures like the 16-bit ones; the H100 refuted it.

def _metadata_coord(inst: SparseInstruction, selector: int, lane: int, field: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    j = t - inst.metadata_lanes * selector
    if not 0 <= j < inst.metadata_lanes:
        return NO_ELEMENT, NO_ELEMENT
    if ELEMENT_BITS[inst.ab] == 8:
        return g + 8 * (j % 2), FIELDS * (j // 2) + field
    chunk = 4 * j + (field % 8) // 2
    return g + 8 * (field >= 8), 2 * chunk + field % 2


@lru_cache(maxsize=None)
def model_coords(inst: SparseInstruction, frag: str, selector: int = 0) -> np.ndarray:
    slots = inst.slots(frag)
    out = np.empty((32, slots, 2), dtype=np.int32)
    w = elements_per_register(inst.ab)
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i in range(slots):
            if frag == "matrix_a":
                out[lane, i] = _a_coord(16, w, g, t, i)
            elif frag == "matrix_b":
                out[lane, i] = _b_coord(w, g, t, i)
            elif frag == "accumulator":
                out[lane, i] = _c_coord(16, g, t, i)
            else:
                out[lane, i] = _metadata_coord(inst, selector, lane, i)
    out.setflags(write=False)
    return out


def model_map(frag: str, shape: str, dtype: str, layout: str) -> np.ndarray:
    """(32, slots, 2) documented (row, col) of each (lane, slot); a copy the caller may keep."""
    return model_coords(instruction_for(frag, shape, dtype, layout), frag, selector_of(layout)).copy()


# ---- register values -------------------------------------------------------------------------------

def place(inst: SparseInstruction, frag: str, matrices: np.ndarray) -> np.ndarray:
    """(E, rows, cols) numbers (A packed: M x K/2) -> (E, 32, words) register words, through the model."""
    coords = model_coords(inst, frag)
    values = matrices[:, coords[..., 0], coords[..., 1]]
    return pack(inst.dtype(frag), encode(inst.dtype(frag), values))


def metadata_words(inst: SparseInstruction, fields: np.ndarray) -> np.ndarray:
    """(E, 32, 16) 2-bit field values -> (E, 32) metadata words (field f at bits 2f+1..2f)."""
    shifts = (2 * np.arange(FIELDS)).astype(np.uint64)
    return (np.asarray(fields, dtype=np.uint64) << shifts).sum(axis=-1).astype(np.uint32)


def uniform_metadata(count: int, nibble: int) -> np.ndarray:
    """(count, 32) words with every nibble equal: every chunk keeps the same two positions."""
    return np.full((count, 32), nibble * 0x11111111, dtype=np.uint32)


def nibble_positions(nibble: int) -> tuple[int, int]:
    return nibble & 3, nibble >> 2


def metadata_from_positions(inst: SparseInstruction, selector: int, positions: np.ndarray,
                            filler: np.ndarray) -> np.ndarray:
    """(E, M, K/2) positions of the packed elements -> (E, 32) words through the metadata model; fields no
    element maps to keep `filler` (E, 32, 16)."""
    coords = model_coords(inst, "metadata", selector)
    held = coords[..., 0] != NO_ELEMENT
    fields = np.where(held, positions[:, np.maximum(coords[..., 0], 0), np.maximum(coords[..., 1], 0)], filler)
    return metadata_words(inst, fields)


def read_d(inst: SparseInstruction, words: np.ndarray) -> np.ndarray:
    return decode(inst.acc, unpack(inst.acc, words, inst.slots("accumulator")))


def gather_d(inst: SparseInstruction, values: np.ndarray) -> np.ndarray:
    """(E, 32, slots) D numbers -> (E, M, N) through the model accumulator layout."""
    m, n, _ = inst.mnk
    coords = model_coords(inst, "accumulator")
    out = np.zeros((values.shape[0], m, n))
    out[:, coords[..., 0], coords[..., 1]] = values
    return out


# ---- running on the GPU --------------------------------------------------------------------------

def kernel_names() -> tuple[str, ...]:
    return tuple(inst.kernel(s, ordered) for inst in INSTRUCTIONS for s in range(inst.selectors)
                 for ordered in inst.orderings)


# ---- the Family entry ------------------------------------------------------------------------------

API = "mma_sp"
MODEL_ARCHITECTURES = ("sm_90",)
_FP8 = ("e4m3", "e5m2")


def spec_min_sm(spec) -> int:
    return 89 if spec.dtype in _FP8 else 80


def specs() -> list:
    from ..layouts.spec import FragmentSpec

    return [FragmentSpec(API, *entry) for entry in catalogue()]


def _inst_of(spec) -> SparseInstruction:
    return instruction_for(spec.frag, spec.shape, spec.dtype, spec.layout)


def model_layout(spec, method: str = "mma"):
    from ..layouts.layout import Source

    try:
        found = model_map(spec.frag, spec.shape, spec.dtype, spec.layout)
    except KeyError:
        return None
    inst = _inst_of(spec)
    source = Source("model", {"model": f"PTX ISA sparse fragments of {inst.ptx()}",
                              "architectures": [f"sm_{spec_min_sm(spec)}+"],
                              "basis": "PTX ISA 'Matrix fragments for sparse mma.m16n8k*' and its metadata "
                                       "figures; not measured"})
    return map_layout(spec, method, source, found, reads_of(found))


def kernel_builds() -> list:
    from ..runtime.build import KernelBuild

    return [KernelBuild("apis/mma_sp.cu", kernel_names())]


def gpu_launch():
    """A launch(kernel, a, b, c, e, d_words) on the present GPU (mma_sp.cu compiled once); D is poisoned first."""
    build = kernel_builds()[0]

    def launch(name, a, b, c, e, d_words):
        return launch_d_words(build, name, [np.asarray(x, dtype=np.uint32) for x in (a, b, c, e)], d_words)

    return launch


def measure(spec, methods: tuple[str, ...] = METHODS, source=None, **_) -> dict:
    from .mma_sp_probe import measure_maps

    return measure_layouts(spec, methods, source, measure_maps, gpu_launch)


def _note(spec) -> str:
    inst = _inst_of(spec)
    if spec.frag == "metadata":
        return f"{inst.ptx()} metadata, selector {selector_of(spec.layout)}"
    return inst.ptx() + (" (packed K/2)" if spec.frag == "matrix_a" else "")


def _family():
    from .family import Family

    return Family(
        api=API, title="PTX mma.sp fragments (2:4 sparse A packed, metadata per selector)", threads=32,
        operands=("matrix_a", "matrix_b", "accumulator", "metadata"), methods=METHODS, specs=specs,
        model=model_layout, measure=measure, kernel_builds=kernel_builds, min_sm=80,
        ptx="mma.sp::ordered_metadata.sync.aligned.<shape>.row.col...", spec_min_sm=spec_min_sm,
        dims=lambda spec: _inst_of(spec).dims(spec.frag),
        slots=lambda spec: _inst_of(spec).slots(spec.frag), note=_note,
        defaults={"matrix_a": {"shape": "m16n8k16", "dtype": "f16", "layout": "row"},
                  "matrix_b": {"shape": "m16n8k16", "dtype": "f16", "layout": "col"},
                  "accumulator": {"shape": "m16n8k16", "dtype": "f32", "layout": "row"},
                  "metadata": {"shape": "m16n8k16", "dtype": "f16", "layout": "sel0"}},
        model_archs=MODEL_ARCHITECTURES)


def __getattr__(name: str):
    if name == "FAMILY":  # built on first use, so the numpy part imports without the package's other wings
        return _family()
    raise AttributeError(name)
