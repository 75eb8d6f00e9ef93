"""The wgmma family (Hopper, sm_90a, one warpgroup of 128 threads) as data: catalogue, model, GPU probes.

Fragments:
- accumulator of m64nNk* (f32 and f16 from 16-bit inputs, s32 from 8-bit integers): (T128, V(N/2)) -> (M64, N)
- matrix_a from registers (swizzle None): tf32 k8, f16/bf16 k16, e4m3/e5m2/s8/u8 k32: (T128, V) -> (M64, K)
- matrix_a / matrix_b in shared memory (swizzle "none", "32B", "64B", "128B"; major "k", or "mn" for
  16-bit types): here a "thread" is a 16-byte chunk of the tile (byte offset // 16) and a slot is the
  element inside the chunk, so the slot map reads (chunk, element) -> (row, col) of A(m, k) or B(k, n).

`layout` is the operand's place in D = A * B (A "row", B "col", accumulator "row"); how a shared-memory
operand is stored is `major` plus `swizzle`. The numpy model is wgmma_model, the probes wgmma_probe.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._version import __version__
from ..layouts.layout import UNKNOWN, Layout, Source
from ..layouts.spec import FragmentSpec, parse_shape
from ..runtime.build import KernelBuild
from . import wgmma_model as wm
from . import wgmma_probe as wp
from .family import Family
from .wgmma_model import accumulator_map  # noqa: F401  (the GEMM epilogue's entry point, re-exported)

API = "wgmma"
THREADS = wm.THREADS
METHODS = ("mma", "onehot")
MODEL_ARCHITECTURES = ("sm_90",)
MODEL_NAME = "PTX ISA wgmma register fragments and shared-memory matrix layouts"
ACC_INPUT = {"f32": "f16", "f16": "f16", "s32": "s8"}   # input type an accumulator entry is measured with
LAYOUT = {"matrix_a": "row", "matrix_b": "col", "accumulator": "row"}


def _k(dtype: str) -> int:
    return wm.K_BY_TYPE[dtype]


def catalogue() -> list[FragmentSpec]:
    specs = []
    for acc, atype in ACC_INPUT.items():
        for n in wm.VALID_N[atype]:
            specs.append(FragmentSpec(API, "accumulator", f"m64n{n}k{_k(atype)}", acc, "row"))
    for dtype in wp.INPUT_TYPES:
        specs.append(FragmentSpec(API, "matrix_a", f"m64n8k{_k(dtype)}", dtype, "row"))
        for swizzle in wm.SWIZZLES:
            for major in wm.majors_for(dtype):
                specs.append(FragmentSpec(API, "matrix_a", f"m64n8k{_k(dtype)}", dtype, "row",
                                          swizzle=swizzle, major=major))
                specs.append(FragmentSpec(API, "matrix_b", f"m64n{wm.OPERAND_MN['matrix_b']}k{_k(dtype)}", dtype,
                                          "col", swizzle=swizzle, major=major))
    return specs


def is_shared(spec: FragmentSpec) -> bool:
    return spec.swizzle is not None


def smem_tile(spec: FragmentSpec) -> dict:
    return wm.smem_tile(spec.dtype, spec.swizzle, spec.major, spec.frag)


def dims(spec: FragmentSpec) -> tuple[int, int]:
    if is_shared(spec):
        tile = smem_tile(spec)
        return tile["rows"], tile["cols"]
    m, n, k = parse_shape(spec.shape)
    return {"matrix_a": (m, k), "matrix_b": (k, n), "accumulator": (m, n)}[spec.frag]


def slots(spec: FragmentSpec) -> int:
    if is_shared(spec):
        return 16 // wm.element_bytes(spec.dtype)
    if spec.frag == "accumulator":
        return parse_shape(spec.shape)[1] // 2
    return 128 // wm.ELEMENT_BITS[spec.dtype]


def ptx(spec: FragmentSpec) -> str:
    m, n, k = parse_shape(spec.shape)
    atype = ACC_INPUT[spec.dtype] if spec.frag == "accumulator" else spec.dtype
    acc = spec.dtype if spec.frag == "accumulator" else wp.ACC_FOR[spec.dtype]
    trans = int(spec.major == "mn")
    op = wp.Op(n, atype, acc, reg_a=spec.frag == "matrix_a" and not is_shared(spec),
               trans_a=trans if spec.frag == "matrix_a" else 0, trans_b=trans if spec.frag == "matrix_b" else 0)
    return op.ptx


def note(spec: FragmentSpec) -> str:
    if is_shared(spec):
        t = smem_tile(spec)
        steps = f", {t['k_steps']} K-steps of +{t['k_step_bytes']} B" if t["k_steps"] > 1 else ""
        return f"shared memory, LBO {t['lbo']} B, SBO {t['sbo']} B{steps}; thread = 16-byte chunk"
    if spec.frag == "matrix_a":
        return "registers (4 x b32 per thread)"
    return "f16: 2 slots per register" if spec.dtype == "f16" else ""


# ---- model ----------------------------------------------------------------------------------------
def model_source() -> Source:
    return Source("model", {"model": MODEL_NAME, "architectures": list(MODEL_ARCHITECTURES),
                            "fraglab_version": __version__,
                            "basis": "PTX ISA wgmma register fragment figures; matrix descriptor and "
                                     "shared memory matrix layout (swizzle atoms); not measured"})


def _maps(spec: FragmentSpec) -> tuple[np.ndarray, np.ndarray]:
    if is_shared(spec):
        return wm.smem_chunk_map(smem_tile(spec))
    if spec.frag == "accumulator":
        amap = wm.accumulator_map(parse_shape(spec.shape)[1])
    else:
        amap = wm.register_a_map(spec.dtype)
    return amap[..., 0], amap[..., 1]


def model_layout(spec: FragmentSpec, method: str = "mma") -> Layout:
    row, col = _maps(spec)
    return Layout(spec, method, model_source(), row, col, np.full(row.shape, UNKNOWN, dtype=np.int8))


# ---- GPU measurement -------------------------------------------------------------------------------
def plan_for(spec: FragmentSpec, method: str) -> wp.Plan:
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")
    if is_shared(spec):
        build = wp.smem_codes if method == "mma" else wp.smem_onehot
        return build(spec.dtype, spec.swizzle, spec.major, spec.frag)
    if spec.frag == "matrix_a":
        return (wp.register_a_codes if method == "mma" else wp.register_a_onehot)(spec.dtype)
    n = parse_shape(spec.shape)[1]
    build = wp.accumulator_codes if method == "mma" else wp.accumulator_onehot
    return build(n, ACC_INPUT[spec.dtype], spec.dtype)


def layout_from_result(spec: FragmentSpec, method: str, source: Source, result: dict) -> Layout:
    """A decoded probe result as a Layout (shared-memory results turned into the chunk map)."""
    if is_shared(spec):
        tile = smem_tile(spec)
        e = tile["element_bytes"]
        chunks = -(-tile["region"] // 16)
        row = np.full((chunks, 16 // e), -1, dtype=np.int64)
        col = row.copy()
        reads = np.full(row.shape, UNKNOWN, dtype=np.int8)
        if "reads" in result:   # one-hot: element -> positions read (first kept; duplicates are reported)
            reads[:] = 0
            for el, positions in enumerate(result["reads"][: chunks * (16 // e)]):
                c, s = divmod(el, 16 // e)
                if positions:
                    row[c, s], col[c, s] = positions[0]
                    reads[c, s] = 1
        else:                   # codes: (row, col) -> offset read
            off = result["offset"]
            ok = (off >= 0) & (off < chunks * 16)
            r, c = np.nonzero(ok)
            row[off[ok] // 16, (off[ok] % 16) // e] = r
            col[off[ok] // 16, (off[ok] % 16) // e] = c
        return Layout(spec, method, source, row, col, reads)
    row, col = result["row"], result["col"]
    reads = np.where(row >= 0, 1, 0).astype(np.int8) if method == "onehot" else np.full(row.shape, UNKNOWN, np.int8)
    return Layout(spec, method, source, row, col, reads)


def measure(spec: FragmentSpec, methods: tuple[str, ...] = METHODS, source: Source | None = None, **_) -> dict:
    from ..probes.run import gpu_source

    source = source or gpu_source()
    plans = {m: plan_for(spec, m) for m in methods}
    module = wp.compile_module(list({p.op for p in plans.values()}))
    return {m: layout_from_result(spec, m, source, wp.run_plan(module, p)) for m, p in plans.items()}


def capture(specs: list[FragmentSpec], progress=None, source: Source | None = None) -> tuple[dict, dict, float]:
    """Every spec with every method, one NVRTC compile for all of them."""
    import time

    from ..probes.run import gpu_source

    report = progress or (lambda *args: None)
    source = source or gpu_source()
    refused: dict[str, str] = {}
    plans = {(s.key, m): plan_for(s, m) for s in specs for m in METHODS}
    started = time.perf_counter()
    report("compiling probes", 0, len(specs))
    module = wp.compile_module(sorted({p.op for p in plans.values()}, key=lambda o: o.name))
    compile_seconds = time.perf_counter() - started
    entries: dict[str, dict[str, Layout]] = {}
    for done, spec in enumerate(specs):
        report(spec.key, done, len(specs))
        try:
            entries[spec.key] = {m: layout_from_result(spec, m, source, wp.run_plan(module, plans[spec.key, m]))
                                 for m in METHODS}
        except wp.ProbeFailure as exc:
            refused[spec.key] = f"probe output did not decode: {exc}"
    report("done", len(specs), len(specs))
    return entries, refused, compile_seconds


@dataclass(frozen=True)
class WgmmaBuild(KernelBuild):
    """wgmma.cu plus the generated instruction wrappers, for the sm_90a target."""
    wrappers: str = ""

    def source_text(self) -> str:
        return super().source_text() + "namespace fraglab_wgmma {\n" + self.wrappers + "}\n"


def kernel_builds() -> list[KernelBuild]:
    ops = wp.all_ops()
    return [WgmmaBuild("apis/wgmma.cu", tuple(op.kernel for op in ops), (f"-arch={wp.ARCH}",),
                       wrappers="".join(op.cpp() for op in ops))]


# ---- the shared-memory grid view (byte offsets and 16-byte chunks) -----------------------------------
def smem_grid_text(spec: FragmentSpec, offsets: np.ndarray | None = None, max_cols: int = 16) -> str:
    """Rows of the operand with, per element, its byte offset; then each 16-byte chunk's place as
    (line, chunk) of 128-byte shared-memory lines, which is where swizzle bugs show."""
    off = smem_tile_offsets(spec) if offsets is None else offsets
    e = wm.element_bytes(spec.dtype)
    per_chunk = 16 // e
    lines = [f"# {spec.describe()}: byte offset of each element (first {max_cols} columns)"]
    for r in range(off.shape[0]):
        lines.append(f"{r:4d} | " + " ".join(f"{v:5d}" for v in off[r, :max_cols]))
    lines.append("# 16-byte chunks: (128-byte line, chunk 0..7) of each group of 16 contiguous bytes")
    # the axis along which elements are contiguous: K for K-major, M or N for MN-major
    along_rows = (spec.frag == "matrix_a") == (spec.major == "mn")
    grid = off[::per_chunk, :] if along_rows else off[:, ::per_chunk]
    for r in range(grid.shape[0]):
        cells = [f"({o // 128},{(o % 128) // 16})" for o in grid[r, :max_cols]]
        lines.append(f"{r * (per_chunk if along_rows else 1):4d} | " + " ".join(cells))
    return "\n".join(lines)


def smem_tile_offsets(spec: FragmentSpec) -> np.ndarray:
    return wm.smem_offsets(smem_tile(spec))


FAMILY = Family(
    api=API,
    title="Hopper wgmma (warpgroup of 128 threads; accumulators, register A, shared-memory operands)",
    threads=THREADS,
    operands=("matrix_a", "matrix_b", "accumulator"),
    methods=METHODS,
    specs=catalogue,
    model=model_layout,
    measure=measure,
    kernel_builds=kernel_builds,
    min_sm=90,
    ptx="wgmma.mma_async.sync.aligned.m64nNkK.<dtype>.<atype>.<btype>",
    dims=dims,
    slots=slots,
    note=note,
    defaults={"matrix_a": {"shape": "m64n8k16", "dtype": "f16"},
              "matrix_b": {"shape": "m64n128k16", "dtype": "f16", "swizzle": "128B", "major": "k"},
              "accumulator": {"shape": "m64n128k16", "dtype": "f32"}},
    model_archs=MODEL_ARCHITECTURES,
    capture=capture,
)


__all__ = ["FAMILY", "accumulator_map", "catalogue", "model_layout", "measure", "capture", "kernel_builds",
           "layout_from_result", "plan_for", "smem_grid_text"]
