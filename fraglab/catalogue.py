"""The catalogue of fragments fraglab knows: which (api, frag, shape, dtype, layout) exist.

Pure data, no GPU. Every other module asks here whether a combination is valid, so that the CLI,
the probes, the model and the atlas agree on one list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FRAGS = ("matrix_a", "matrix_b", "accumulator")
LAYOUTS = ("row", "col")
AB_DTYPES = ("f16", "bf16", "tf32", "f64", "u8", "s8", "u4", "s4", "b1")
ACC_DTYPES = ("f16", "f32", "f64", "s32")

# Bits one logical element takes in a register; sub-byte types pack 8 (4-bit) or 32 (1-bit) per word.
ELEMENT_BITS = {
    "f16": 16, "bf16": 16, "tf32": 32, "f64": 64, "u8": 8, "s8": 8, "u4": 4, "s4": 4, "b1": 1,
    "f32": 32, "s32": 32,
}

# Largest integer n such that every code 0..n-1 is exact in the type (how far one probe pass reaches).
CODE_BASE = {
    "f16": 2048, "bf16": 256, "tf32": 2048, "f64": 1 << 30, "u8": 256, "s8": 128,
    "u4": 16, "s4": 8, "b1": 2, "f32": 1 << 24, "s32": 1 << 30,
}


class CatalogueError(ValueError):
    """An invalid combination; the message names the argument and the valid choices."""

    def __init__(self, argument: str, message: str):
        super().__init__(message)
        self.argument = argument


@dataclass(frozen=True)
class WmmaFamily:
    """One input type of WMMA: its shapes, accumulators, and which memory layouts A and B accept."""

    dtype: str
    shapes: tuple[str, ...]
    accumulators: tuple[str, ...]
    min_sm: int
    a_layouts: tuple[str, ...] = LAYOUTS
    b_layouts: tuple[str, ...] = LAYOUTS
    experimental: bool = False  # nvcuda::wmma::experimental::precision


_F16_SHAPES = ("m16n16k16", "m32n8k16", "m8n32k16")

WMMA_FAMILIES: dict[str, WmmaFamily] = {
    "f16": WmmaFamily("f16", _F16_SHAPES, ("f16", "f32"), 70),
    "bf16": WmmaFamily("bf16", _F16_SHAPES, ("f32",), 80),
    "tf32": WmmaFamily("tf32", ("m16n16k8",), ("f32",), 80),
    "f64": WmmaFamily("f64", ("m8n8k4",), ("f64",), 80),
    "u8": WmmaFamily("u8", _F16_SHAPES, ("s32",), 72),
    "s8": WmmaFamily("s8", _F16_SHAPES, ("s32",), 72),
    # Sub-byte WMMA only takes A row-major and B col-major.
    "u4": WmmaFamily("u4", ("m8n8k32",), ("s32",), 75, ("row",), ("col",), True),
    "s4": WmmaFamily("s4", ("m8n8k32",), ("s32",), 75, ("row",), ("col",), True),
    # b1 probes multiply with bmmaBitOpAND, which needs sm_80.
    "b1": WmmaFamily("b1", ("m8n8k128",), ("s32",), 80, ("row",), ("col",), True),
}

_SHAPE_RE = re.compile(r"^m(\d+)n(\d+)k(\d+)$")


def parse_shape(shape: str) -> tuple[int, int, int]:
    match = _SHAPE_RE.match(shape)
    if not match:
        raise CatalogueError("shape", f"invalid --shape {shape!r}: expected the form m16n16k16")
    m, n, k = (int(g) for g in match.groups())
    return m, n, k


@dataclass(frozen=True, order=True)
class FragmentSpec:
    """One fragment type: which operand, its MMA shape, element type and memory layout.

    For the accumulator `layout` is the memory layout it is stored (and loaded) with.
    """

    api: str
    frag: str
    shape: str
    dtype: str
    layout: str

    @property
    def mnk(self) -> tuple[int, int, int]:
        return parse_shape(self.shape)

    @property
    def rows(self) -> int:
        m, n, k = self.mnk
        return k if self.frag == "matrix_b" else m

    @property
    def cols(self) -> int:
        m, n, k = self.mnk
        return k if self.frag == "matrix_a" else n

    @property
    def threads(self) -> int:
        return 32

    @property
    def element_bits(self) -> int:
        return ELEMENT_BITS[self.dtype]

    @property
    def family(self) -> WmmaFamily:
        """The input family whose MMA a probe of this fragment runs."""
        if self.frag != "accumulator":
            return WMMA_FAMILIES[self.dtype]
        return accumulator_family(self.shape, self.dtype)

    @property
    def min_sm(self) -> int:
        return self.family.min_sm

    @property
    def key(self) -> str:
        """A stable identifier, also used in file names: wmma.matrix_a.m16n16k16.f16.row"""
        return ".".join((self.api, self.frag, self.shape, self.dtype, self.layout))

    @classmethod
    def from_key(cls, key: str) -> "FragmentSpec":
        parts = key.split(".")
        if len(parts) != 5:
            raise CatalogueError("key", f"invalid fragment key {key!r}: expected api.frag.shape.dtype.layout")
        return cls(*parts)

    def describe(self) -> str:
        what = {"matrix_a": "A", "matrix_b": "B", "accumulator": "accumulator"}[self.frag]
        major = f"{self.layout}_major" if self.frag != "accumulator" else f"stored {self.layout}_major"
        return f"{self.api} {what} {self.shape} {self.dtype} ({major}, {self.rows}x{self.cols})"


def accumulator_family(shape: str, acc_dtype: str) -> WmmaFamily:
    """The first input family (in catalogue order) that offers this accumulator; its MMA probes it."""
    for family in WMMA_FAMILIES.values():
        if shape in family.shapes and acc_dtype in family.accumulators:
            return family
    raise CatalogueError("dtype", f"no WMMA accumulator {acc_dtype} for shape {shape}")


def wmma_catalogue() -> list[FragmentSpec]:
    """Every WMMA fragment that CUDA offers, in a stable order."""
    specs: list[FragmentSpec] = []
    seen_acc: set[tuple[str, str]] = set()
    for family in WMMA_FAMILIES.values():
        for shape in family.shapes:
            for layout in family.a_layouts:
                specs.append(FragmentSpec("wmma", "matrix_a", shape, family.dtype, layout))
            for layout in family.b_layouts:
                specs.append(FragmentSpec("wmma", "matrix_b", shape, family.dtype, layout))
            for acc in family.accumulators:
                if (shape, acc) in seen_acc:
                    continue
                seen_acc.add((shape, acc))
                for layout in LAYOUTS:
                    specs.append(FragmentSpec("wmma", "accumulator", shape, acc, layout))
    return specs


def _choices(values) -> str:
    return ", ".join(sorted(set(values), key=list(values).index))


def make_spec(frag: str, shape: str = "m16n16k16", dtype: str | None = None, layout: str = "row",
              api: str = "wmma") -> FragmentSpec:
    """Validate user input and return the spec; raises CatalogueError naming the bad argument."""
    if api != "wmma":
        raise CatalogueError("api", f"invalid api {api!r}: valid choices are wmma")
    if frag not in FRAGS:
        raise CatalogueError("frag", f"invalid --frag {frag!r}: valid choices are {', '.join(FRAGS)}")
    if layout not in LAYOUTS:
        raise CatalogueError("layout", f"invalid --layout {layout!r}: valid choices are {', '.join(LAYOUTS)}")
    if dtype is None:
        dtype = "f32" if frag == "accumulator" else "f16"
    all_specs = wmma_catalogue()
    frag_specs = [s for s in all_specs if s.frag == frag]
    dtypes = ACC_DTYPES if frag == "accumulator" else AB_DTYPES
    if dtype not in dtypes:
        raise CatalogueError("dtype", f"invalid --dtype {dtype!r} for {frag}: valid choices are {', '.join(dtypes)}")
    shapes = [s.shape for s in frag_specs]
    if shape not in shapes:
        parse_shape(shape)  # a malformed shape gets the format message
        raise CatalogueError("shape", f"invalid --shape {shape!r}: WMMA offers {_choices(shapes)}")
    with_shape = [s for s in frag_specs if s.shape == shape]
    if dtype not in {s.dtype for s in with_shape}:
        raise CatalogueError(
            "dtype",
            f"--dtype {dtype} is not offered with --shape {shape} for {frag}: "
            f"valid choices are {_choices([s.dtype for s in with_shape])}",
        )
    spec = FragmentSpec(api, frag, shape, dtype, layout)
    if spec not in all_specs:
        ok = [s.layout for s in with_shape if s.dtype == dtype]
        raise CatalogueError("layout", f"--layout {layout} is not offered for {frag} {shape} {dtype}: valid choices are {_choices(ok)}")
    return spec


def check_lane(lane: int | None, threads: int = 32) -> None:
    if lane is not None and not 0 <= lane < threads:
        raise CatalogueError("lane", f"invalid --lane {lane}: valid lanes are 0..{threads - 1}")
