"""The WMMA family (nvcuda::wmma fragments) as data: its input types, shapes, header slot counts, the model
composed from PTX atoms, and the names of its probe kernels (fraglab/apis/wmma.cu).

The PTX ISA leaves WMMA layouts unspecified; on sm_80+ each WMMA MMA compiles to one or more PTX-level MMAs
(HMMA.16816, IMMA.16816, DMMA.884, ...), so a WMMA fragment is a few PTX fragments side by side. The model
writes those compositions down; the GPU probes check them. Where `mma.h` declares more slots than the PTX
fragments hold (f16 keeps Volta's fragment sizes), the extra slots are modelled as copies of slot
`i % count` and their `mma_reads` is left unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._version import __version__
from ..errors import InputError
from ..layouts.layout import METHODS, Layout, Source
from ..layouts.spec import FragmentSpec
from . import atoms
from .atoms import Coord
from .family import Family

if TYPE_CHECKING:
    from ..runtime.build import KernelBuild

API = "wmma"
THREADS = 32
FRAGS = ("matrix_a", "matrix_b", "accumulator")
LAYOUTS = ("row", "col")
AB_DTYPES = ("f16", "bf16", "tf32", "f64", "u8", "s8", "u4", "s4", "b1")
ACC_DTYPES = ("f16", "f32", "f64", "s32")
MODEL_ARCHITECTURES = ("sm_80", "sm_86", "sm_89", "sm_90")
MODEL_NAME = "PTX mma fragments composed into WMMA tiles"
PROBE_ENTRY = "apis/wmma.cu"


@dataclass(frozen=True)
class WmmaInputType:
    """One input type of WMMA: its shapes, accumulators, and which memory layouts A and B accept."""

    dtype: str
    shapes: tuple[str, ...]
    accumulators: tuple[str, ...]
    min_sm: int
    a_layouts: tuple[str, ...] = LAYOUTS
    b_layouts: tuple[str, ...] = LAYOUTS
    experimental: bool = False  # nvcuda::wmma::experimental::precision


_F16_SHAPES = ("m16n16k16", "m32n8k16", "m8n32k16")

WMMA_INPUT_TYPES: dict[str, WmmaInputType] = {
    "f16": WmmaInputType("f16", _F16_SHAPES, ("f16", "f32"), 70),
    "bf16": WmmaInputType("bf16", _F16_SHAPES, ("f32",), 80),
    "tf32": WmmaInputType("tf32", ("m16n16k8",), ("f32",), 80),
    "f64": WmmaInputType("f64", ("m8n8k4",), ("f64",), 80),
    "u8": WmmaInputType("u8", _F16_SHAPES, ("s32",), 72),
    "s8": WmmaInputType("s8", _F16_SHAPES, ("s32",), 72),
    # Sub-byte WMMA only takes A row-major and B col-major.
    "u4": WmmaInputType("u4", ("m8n8k32",), ("s32",), 75, ("row",), ("col",), True),
    "s4": WmmaInputType("s4", ("m8n8k32",), ("s32",), 75, ("row",), ("col",), True),
    # b1 probes multiply with bmmaBitOpAND, which needs sm_80.
    "b1": WmmaInputType("b1", ("m8n8k128",), ("s32",), 80, ("row",), ("col",), True),
}


def accumulator_input_type(shape: str, acc_dtype: str) -> WmmaInputType:
    """The first input type (in table order) that offers this accumulator; its MMA probes it."""
    for entry in WMMA_INPUT_TYPES.values():
        if shape in entry.shapes and acc_dtype in entry.accumulators:
            return entry
    raise InputError(f"no WMMA accumulator {acc_dtype} for shape {shape}", argument="dtype")


def input_type(spec: FragmentSpec) -> WmmaInputType:
    """The input type whose MMA a probe of this fragment runs."""
    if spec.frag != "accumulator":
        return WMMA_INPUT_TYPES[spec.dtype]
    return accumulator_input_type(spec.shape, spec.dtype)


def wmma_catalogue() -> list[FragmentSpec]:
    """Every WMMA fragment that CUDA offers, in a stable order."""
    specs: list[FragmentSpec] = []
    seen_acc: set[tuple[str, str]] = set()
    for entry in WMMA_INPUT_TYPES.values():
        for shape in entry.shapes:
            for layout in entry.a_layouts:
                specs.append(FragmentSpec(API, "matrix_a", shape, entry.dtype, layout))
            for layout in entry.b_layouts:
                specs.append(FragmentSpec(API, "matrix_b", shape, entry.dtype, layout))
            for acc in entry.accumulators:
                if (shape, acc) in seen_acc:
                    continue
                seen_acc.add((shape, acc))
                for layout in LAYOUTS:
                    specs.append(FragmentSpec(API, "accumulator", shape, acc, layout))
    return specs


def specs_for_arch(sm: int) -> list[FragmentSpec]:
    return [s for s in wmma_catalogue() if s.min_sm <= sm]


def mma_specs(shape: str | None, dtype: str | None, layout: str | None) -> tuple[FragmentSpec, FragmentSpec, FragmentSpec]:
    """A, B and the accumulator of one WMMA MMA (the accumulator f32 where the input type offers it)."""
    from . import make_spec

    if dtype is not None and dtype not in WMMA_INPUT_TYPES:
        raise InputError(f"invalid --dtype {dtype!r} for --mma: give the input type, one of "
                         f"{', '.join(WMMA_INPUT_TYPES)}", argument="dtype")
    entry = WMMA_INPUT_TYPES[dtype or "f16"]
    if layout is not None and layout not in LAYOUTS:
        raise InputError(f"invalid --layout {layout!r}: valid choices are {', '.join(LAYOUTS)}", argument="layout")
    a = make_spec("matrix_a", shape, entry.dtype, layout if layout in entry.a_layouts else entry.a_layouts[0])
    b = make_spec("matrix_b", a.shape, entry.dtype, layout if layout in entry.b_layouts else entry.b_layouts[0])
    acc = "f32" if "f32" in entry.accumulators else entry.accumulators[0]
    c = make_spec("accumulator", a.shape, acc, "row")
    return a, b, c


def mma_triples(specs) -> list[tuple[FragmentSpec, FragmentSpec, FragmentSpec]]:
    """One MMA view per (shape, input type), as `fraglab layout --mma` draws it by default: A and B
    row-major where the input type offers it (sub-byte B: col-major), the accumulator f32 where offered,
    stored row-major; only the triples `specs` holds whole."""
    have = set(specs)
    out = []
    for entry in WMMA_INPUT_TYPES.values():
        acc = "f32" if "f32" in entry.accumulators else entry.accumulators[0]
        a_layout = "row" if "row" in entry.a_layouts else entry.a_layouts[0]
        b_layout = "row" if "row" in entry.b_layouts else entry.b_layouts[0]
        for shape in entry.shapes:
            a = FragmentSpec(API, "matrix_a", shape, entry.dtype, a_layout)
            b = FragmentSpec(API, "matrix_b", shape, entry.dtype, b_layout)
            c = FragmentSpec(API, "accumulator", shape, acc, "row")
            if a in have and b in have and c in have:
                out.append((a, b, c))
    return out


# ---- header slot counts and the model ------------------------------------------------------------

# Slots per lane that mma.h declares (fragment<...>::num_elements), keyed by (frag, shape, dtype).
_HEADER_SLOTS = {
    ("matrix_a", "m16n16k16", "f16"): 16, ("matrix_b", "m16n16k16", "f16"): 16,
    ("matrix_a", "m32n8k16", "f16"): 16, ("matrix_b", "m32n8k16", "f16"): 16,
    ("matrix_a", "m8n32k16", "f16"): 16, ("matrix_b", "m8n32k16", "f16"): 16,
}


def header_slots(spec: FragmentSpec) -> int:
    """num_elements that mma.h declares for this fragment."""
    if spec.frag == "accumulator":
        return 2 if spec.shape.startswith("m8n8") else 8
    if (spec.frag, spec.shape, spec.dtype) in _HEADER_SLOTS:
        return _HEADER_SLOTS[(spec.frag, spec.shape, spec.dtype)]
    return spec.rows * spec.cols // THREADS


def _composition(spec: FragmentSpec) -> tuple[Coord, int] | None:
    """(coordinate function, distinct slots) for a fragment, or None where the model does not say."""
    frag, shape, dt = spec.frag, spec.shape, spec.dtype
    c_m16n16 = atoms.tiles(atoms.c_m16n8, 4, 0, 8)    # two m16n8 C tiles along N
    c_m32n8 = atoms.tiles(atoms.c_m16n8, 4, 16, 0)    # two along M
    # m8n32k16 has no M=8 PTX shape: modelled as the transposed problem D^T = B^T A^T on m32n8k16 tiles.
    c_m8n32 = atoms.transposed(c_m32n8)
    if frag == "accumulator":
        return {
            "m16n16k16": (c_m16n16, 8), "m16n16k8": (c_m16n16, 8), "m32n8k16": (c_m32n8, 8),
            "m8n32k16": (c_m8n32, 8), "m8n8k4": (atoms.c_m8n8, 2), "m8n8k32": (atoms.c_m8n8, 2),
            "m8n8k128": (atoms.c_m8n8, 2),
        }.get(shape)
    if dt in ("f16", "bf16", "u8", "s8"):
        a, b = ((atoms.a_m16n8k16_f16, atoms.b_m16n8k16_f16) if dt in ("f16", "bf16")
                else (atoms.a_m16n8k16_i8, atoms.b_m16n8k16_i8))
        a_tiles = {"m16n16k16": (a, 8), "m32n8k16": (atoms.tiles(a, 8, 16, 0), 16),
                   "m8n32k16": (atoms.transposed(b), 4)}
        b_tiles = {"m16n16k16": (atoms.tiles(b, 4, 0, 8), 8), "m32n8k16": (b, 4),
                   "m8n32k16": (atoms.transposed(atoms.tiles(a, 8, 16, 0)), 16)}
        return (a_tiles if frag == "matrix_a" else b_tiles).get(shape)
    if dt == "tf32":
        return ((atoms.a_m16n8k8_tf32, 4) if frag == "matrix_a"
                else (atoms.tiles(atoms.b_m16n8k8_tf32, 2, 0, 8), 4))
    width = {"f64": 1, "u4": 8, "s4": 8, "b1": 32}[dt]
    return (atoms.a_m8n8(width), width) if frag == "matrix_a" else (atoms.b_m8n8(width), width)


def model_source() -> Source:
    return Source("model", {"model": MODEL_NAME, "architectures": list(MODEL_ARCHITECTURES),
                            "fraglab_version": __version__,
                            "basis": "PTX ISA 'Matrix fragments for mma.m16n8k*' and m8n8k*; not measured"})


def model_layout(spec: FragmentSpec, method: str = "load") -> Layout | None:
    """The modelled slot map of a WMMA fragment on sm_80+, or None where the model does not say."""
    found = _composition(spec)
    if found is None:
        return None
    coord, distinct = found
    return atoms.evaluate(spec, method, model_source(), coord, distinct, header_slots(spec))


def model_claims(arch: int) -> bool:
    return f"sm_{arch}" in MODEL_ARCHITECTURES


# ---- probe kernels (fraglab/apis/wmma.cu) ----------------------------------------------------------

_USE = {"matrix_a": "FL_A", "matrix_b": "FL_B", "accumulator": "FL_C"}
_DTYPE = {"f16": "FL_F16", "bf16": "FL_BF16", "tf32": "FL_TF32", "f64": "FL_F64", "u8": "FL_U8", "s8": "FL_S8",
          "u4": "FL_U4", "s4": "FL_S4", "b1": "FL_B1", "f32": "FL_F32", "s32": "FL_S32"}
_LAYOUT = {"row": "FL_ROW", "col": "FL_COL"}


def kernel_name(kind: str, spec: FragmentSpec) -> str:
    """e.g. probe_load<FL_A, 16, 16, 16, FL_F16, FL_ROW>"""
    m, n, k = spec.mnk
    return f"probe_{kind}<{_USE[spec.frag]}, {m}, {n}, {k}, {_DTYPE[spec.dtype]}, {_LAYOUT[spec.layout]}>"


def build_for(specs: list[FragmentSpec], methods: tuple[str, ...] = METHODS) -> "KernelBuild":
    """One module holding the info kernel and every requested method for every spec (one NVRTC run)."""
    from ..runtime.build import KernelBuild

    names: list[str] = []
    for spec in specs:
        for kind in ("info", *methods):
            names.append(kernel_name(kind, spec))
    return KernelBuild(PROBE_ENTRY, tuple(names))


def kernel_builds() -> list["KernelBuild"]:
    """Every probe kernel the family can request, one build per input type (what the compile test compiles)."""
    groups: dict[str, list[FragmentSpec]] = {}
    for spec in wmma_catalogue():
        groups.setdefault(input_type(spec).dtype, []).append(spec)
    return [build_for(specs) for specs in groups.values()]


def measure(spec: FragmentSpec, methods: tuple[str, ...] = METHODS, **kwargs) -> dict[str, Layout]:
    """Probe one fragment on the present GPU with each method (fraglab.probes.run does the work)."""
    from ..probes.run import run_probes

    build = kwargs.pop("build", None) or build_for([spec], methods)
    return run_probes(spec, methods, build=build, kernel_name=kernel_name, **kwargs)


def capture(specs: list[FragmentSpec], progress=None, source: Source | None = None) -> tuple[dict, dict]:
    """Probe many fragments with one NVRTC compile (falling back to one build per fragment)."""
    from ..probes.run import capture_specs

    return capture_specs(specs, build_for=build_for, kernel_name=kernel_name, methods=METHODS,
                         progress=progress, source=source)


def list_note(spec: FragmentSpec) -> str:
    if spec.frag == "accumulator":
        return "layout = how it is stored"
    return "experimental::precision" if input_type(spec).experimental else ""


FAMILY = Family(
    api=API,
    title="nvcuda::wmma fragments",
    threads=THREADS,
    operands=FRAGS,
    methods=METHODS,
    specs=wmma_catalogue,
    model=model_layout,
    measure=measure,
    kernel_builds=kernel_builds,
    min_sm=70,
    ptx="wmma.load / wmma.mma / wmma.store (layout unspecified by PTX)",
    spec_min_sm=lambda spec: input_type(spec).min_sm,
    slots=header_slots,
    note=list_note,
    defaults={"matrix_a": {"dtype": "f16", "layout": "row"}, "matrix_b": {"dtype": "f16", "layout": "row"},
              "accumulator": {"dtype": "f32", "layout": "row"}},
    model_archs=MODEL_ARCHITECTURES,
    capture=capture,
    mma_views=mma_triples,
    mma_specs=mma_specs,
)
