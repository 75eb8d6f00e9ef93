"""WMMA layout probes: what to feed the kernels in kernels/probes.cu and how to read their output.

Three independent methods, each decoded into logical (row, col) coordinates:
- load:   A/B: load a matrix whose entries are their own index, dump each lane's x[i]; every holder shows.
          Accumulator: fill slot i of lane l with a (lane, slot) code and store it.
- mma:    fill the slots with (lane, slot) codes, multiply by an identity-like partner, store D.
- onehot: one slot of one lane is 1, all else 0; D shows the element the MMA reads it as, or
          nothing when the MMA ignores that slot.
Codes wider than the element type holds exactly go in several passes (base-`CODE_BASE` digits).

Everything here except `run_probes` is numpy; `run_probes` drives the GPU through fraglab.gpu.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass

import numpy as np

from . import __version__
from .catalogue import CODE_BASE, ELEMENT_BITS, FragmentSpec, wmma_catalogue
from .layout import NO_ELEMENT, UNKNOWN, Layout, Source
from .sources import KernelBuild

METHODS = ("load", "mma", "onehot")
POISON = -123456789  # written into every output before a launch; left over means never written

_USE = {"matrix_a": "FL_A", "matrix_b": "FL_B", "accumulator": "FL_C"}
_DTYPE = {"f16": "FL_F16", "bf16": "FL_BF16", "tf32": "FL_TF32", "f64": "FL_F64", "u8": "FL_U8", "s8": "FL_S8",
          "u4": "FL_U4", "s4": "FL_S4", "b1": "FL_B1", "f32": "FL_F32", "s32": "FL_S32"}
_LAYOUT = {"row": "FL_ROW", "col": "FL_COL"}


class ProbeError(RuntimeError):
    """A probe's output does not decode into a consistent slot map (or the GPU refused the probe)."""


class ProbeUnsupported(ProbeError):
    """The present GPU cannot run this fragment (too old an architecture)."""


# ---- kernel names and builds ---------------------------------------------------------------------

def kernel_name(kind: str, spec: FragmentSpec) -> str:
    """e.g. probe_load<FL_A, 16, 16, 16, FL_F16, FL_ROW>"""
    m, n, k = spec.mnk
    return f"probe_{kind}<{_USE[spec.frag]}, {m}, {n}, {k}, {_DTYPE[spec.dtype]}, {_LAYOUT[spec.layout]}>"


def build_for(specs: list[FragmentSpec], methods: tuple[str, ...] = METHODS) -> KernelBuild:
    """One module holding the info kernel and every requested method for every spec (one NVRTC run)."""
    names: list[str] = []
    for spec in specs:
        for kind in ("info", *methods):
            names.append(kernel_name(kind, spec))
    return KernelBuild("probes.cu", tuple(names))


def specs_for_arch(sm: int) -> list[FragmentSpec]:
    return [s for s in wmma_catalogue() if s.min_sm <= sm]


# ---- code arithmetic -----------------------------------------------------------------------------

def passes_needed(count: int, base: int) -> int:
    """Digits in `base` needed to write every code 0..count-1."""
    return max(1, math.ceil(math.log(count, base) - 1e-12)) if count > 1 else 1


def digits(codes: np.ndarray, base: int, passes: int) -> np.ndarray:
    """(passes, *codes.shape): digit p of every code, least significant first."""
    return np.stack([(codes // base**p) % base for p in range(passes)]).astype(np.int32)


def undigits(parts: np.ndarray, base: int) -> np.ndarray:
    """Inverse of digits along axis 0."""
    total = np.zeros(parts.shape[1:], dtype=np.int64)
    for p in range(parts.shape[0]):
        total += parts[p].astype(np.int64) * base**p
    return total


def memory_positions(rows: int, cols: int, layout: str) -> np.ndarray:
    """(rows, cols) array: where logical element (r, c) sits in memory with the given layout (ld = the minor extent)."""
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    return (r * cols + c) if layout == "row" else (c * rows + r)


def unpack_slots(raw: np.ndarray, bits: int, slots: int) -> np.ndarray:
    """(..., storage) raw words -> (..., slots) logical values; packed types keep slot s in word s//per, low bits first."""
    if bits >= 8:
        return raw
    per = 32 // bits
    words = raw.astype(np.int64) & 0xFFFFFFFF
    s = np.arange(slots)
    return ((words[..., s // per] >> ((s % per) * bits)) & ((1 << bits) - 1)).astype(np.int32)


def _partner_inputs(spec: FragmentSpec) -> tuple[np.ndarray, int]:
    """Identity-like partner matrices in memory order, (selections, elements), int 0/1.

    Probing A (M x K): partner B (K x N, col-major), S_j[k, n] = 1 iff k == j*N + n, so D[m, n] = A[m, j*N + n].
    Probing B (K x N): partner A (M x K, row-major), S_j[m, k] = 1 iff k == j*M + m, so D[m, n] = B[j*M + m, n].
    """
    m, n, k = spec.mnk
    if spec.frag == "matrix_a":
        selections = math.ceil(k / n)
        pos = memory_positions(k, n, "col")
        out = np.zeros((selections, k * n), dtype=np.int32)
        for j in range(selections):
            for nn in range(n):
                if j * n + nn < k:
                    out[j, pos[j * n + nn, nn]] = 1
    elif spec.frag == "matrix_b":
        selections = math.ceil(k / m)
        pos = memory_positions(m, k, "row")
        out = np.zeros((selections, m * k), dtype=np.int32)
        for j in range(selections):
            for mm in range(m):
                if j * m + mm < k:
                    out[j, pos[mm, j * m + mm]] = 1
    else:
        return np.zeros((1, 1), dtype=np.int32), 1
    return out, selections


# ---- per-method plans: inputs to build, outputs to decode ----------------------------------------

@dataclass
class LoadPlan:
    spec: FragmentSpec
    storage: int  # storage elements per lane (x[] length)
    slots: int    # logical slots per lane

    @property
    def base(self) -> int:
        return CODE_BASE[self.spec.dtype]

    @property
    def passes(self) -> int:
        if self.spec.frag == "accumulator":
            return passes_needed(32 * self.slots + 1, self.base)
        return passes_needed(self.spec.rows * self.spec.cols, self.base)

    def inputs(self) -> np.ndarray:
        s = self.spec
        if s.frag == "accumulator":  # slot codes, 1-based so that 0 means 'no slot'
            codes = np.arange(32 * self.slots).reshape(32, self.slots) + 1
            return digits(codes, self.base, self.passes).reshape(-1)
        index = np.arange(s.rows * s.cols).reshape(s.rows, s.cols)  # logical row-major index
        mem = np.zeros((self.passes, s.rows * s.cols), dtype=np.int32)
        mem[:, memory_positions(s.rows, s.cols, s.layout).reshape(-1)] = digits(index, self.base, self.passes).reshape(self.passes, -1)
        return mem.reshape(-1)

    def output_size(self) -> int:
        s = self.spec
        per_pass = s.rows * s.cols if s.frag == "accumulator" else 32 * self.storage
        return self.passes * per_pass

    def decode(self, out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = self.spec
        out = np.asarray(out).reshape(self.passes, -1)
        _check_written(out, "load")
        if s.frag == "accumulator":
            row, col = _decode_stored(s, self.slots, undigits(out, self.base), "load")
            return row, col, np.full_like(row, UNKNOWN, dtype=np.int8)
        values = unpack_slots(out.reshape(self.passes, 32, self.storage), ELEMENT_BITS[s.dtype], self.slots)
        index = undigits(values, self.base)  # (32, slots)
        valid = (index >= 0) & (index < s.rows * s.cols)
        row = np.where(valid, index // s.cols, NO_ELEMENT)
        col = np.where(valid, index % s.cols, NO_ELEMENT)
        return row, col, np.full(row.shape, UNKNOWN, dtype=np.int8)


@dataclass
class MmaPlan:
    spec: FragmentSpec
    storage: int
    slots: int

    @property
    def base(self) -> int:
        return CODE_BASE[self.spec.dtype]

    @property
    def passes(self) -> int:
        return passes_needed(32 * self.slots + 1, self.base)

    def slot_codes(self) -> np.ndarray:
        return (np.arange(32 * self.slots) + 1).astype(np.int32)  # 1-based: 0 in D means no slot

    def partners(self) -> tuple[np.ndarray, int]:
        return _partner_inputs(self.spec)

    def output_size(self) -> int:
        m, n, k = self.spec.mnk
        return self.passes * self.partners()[1] * m * n

    def decode(self, out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = self.spec
        m, n, k = s.mnk
        selections = self.partners()[1]
        out = np.asarray(out).reshape(self.passes, selections, m * n)
        _check_written(out, "mma")
        codes = undigits(out, self.base)  # (selections, m*n)
        if s.frag == "accumulator":
            row, col = _decode_stored(s, self.slots, codes[0], "mma")
        else:
            element_codes = _place_products(s, codes.reshape(selections, m, n))
            row, col = _codes_to_slots(s, self.slots, element_codes, "mma")
        reads = np.where(row != NO_ELEMENT, 1, 0).astype(np.int8)
        return row, col, reads


@dataclass
class OnehotPlan:
    spec: FragmentSpec
    storage: int
    slots: int

    def partners(self) -> tuple[np.ndarray, int]:
        return _partner_inputs(self.spec)

    def blocks(self) -> int:
        return 32 * self.slots * self.partners()[1]

    def output_size(self) -> int:
        m, n, k = self.spec.mnk
        return self.blocks() * m * n

    def decode(self, out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = self.spec
        m, n, k = s.mnk
        selections = self.partners()[1]
        out = np.asarray(out).reshape(32, self.slots, selections, m * n)
        _check_written(out, "onehot")
        row = np.full((32, self.slots), NO_ELEMENT, dtype=np.int32)
        col = row.copy()
        for lane, slot in np.ndindex(32, self.slots):
            d = out[lane, slot]
            hits = np.argwhere(d != 0)
            if len(hits) == 0:
                continue  # the MMA ignores this slot
            if len(hits) > 1 or d[tuple(hits[0])] != 1:
                raise ProbeError(f"onehot {s.key}: lane {lane} slot {slot} shows up {len(hits)} times "
                                 f"(values {sorted(set(d[d != 0].tolist()))}); expected one element")
            j, pos = (int(v) for v in hits[0])
            if s.frag == "accumulator":
                r, c = _stored_element(s, pos)
            else:
                r, c = _product_element(s, j, pos // n, pos % n)
            row[lane, slot], col[lane, slot] = r, c
        reads = np.where(row != NO_ELEMENT, 1, 0).astype(np.int8)
        return row, col, reads


PLANS = {"load": LoadPlan, "mma": MmaPlan, "onehot": OnehotPlan}


def _check_written(out: np.ndarray, method: str) -> None:
    if np.any(out == POISON):
        raise ProbeError(f"{method} probe left {int(np.sum(out == POISON))} outputs unwritten")


def _stored_element(spec: FragmentSpec, pos: int) -> tuple[int, int]:
    """Logical (row, col) of memory position `pos` of an M x N matrix stored with spec.layout."""
    m, n, k = spec.mnk
    return (pos // n, pos % n) if spec.layout == "row" else (pos % m, pos // m)


def _product_element(spec: FragmentSpec, j: int, dm: int, dn: int) -> tuple[int, int]:
    """The probed operand's element that D[dm, dn] of selection j shows."""
    m, n, k = spec.mnk
    if spec.frag == "matrix_a":
        return dm, j * n + dn
    return j * m + dm, dn


def _place_products(spec: FragmentSpec, codes: np.ndarray) -> np.ndarray:
    """(selections, M, N) codes of D -> (rows, cols) codes of the probed operand (0 where no selection covers)."""
    grid = np.zeros((spec.rows, spec.cols), dtype=np.int64)
    sel, m, n = codes.shape
    for j in range(sel):
        for dm in range(m):
            for dn in range(n):
                r, c = _product_element(spec, j, dm, dn)
                if r < spec.rows and c < spec.cols:
                    grid[r, c] = codes[j, dm, dn]
    return grid


def _decode_stored(spec: FragmentSpec, slots: int, codes: np.ndarray, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Codes of a stored M x N accumulator (memory order) -> slot map."""
    m, n, k = spec.mnk
    grid = np.zeros((m, n), dtype=np.int64)
    for pos in range(m * n):
        r, c = _stored_element(spec, pos)
        grid[r, c] = codes[pos]
    return _codes_to_slots(spec, slots, grid, method)


def _codes_to_slots(spec: FragmentSpec, slots: int, grid: np.ndarray, method: str) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) grid of 1-based (lane*slots + slot + 1) codes -> row/col per slot; each slot may appear once."""
    row = np.full((32, slots), NO_ELEMENT, dtype=np.int32)
    col = row.copy()
    for (r, c), code in np.ndenumerate(grid):
        if code == 0:
            continue
        if not 1 <= code <= 32 * slots:
            raise ProbeError(f"{method} {spec.key}: element ({r}, {c}) holds code {code}, outside 1..{32 * slots}")
        lane, slot = divmod(int(code) - 1, slots)
        if row[lane, slot] != NO_ELEMENT:
            raise ProbeError(f"{method} {spec.key}: lane {lane} slot {slot} appears at ({row[lane, slot]}, "
                             f"{col[lane, slot]}) and ({r}, {c})")
        row[lane, slot], col[lane, slot] = r, c
    return row, col


# ---- running on the GPU --------------------------------------------------------------------------

def gpu_source() -> Source:
    from . import gpu

    info = gpu.device_info()
    info["fraglab_version"] = __version__
    info["date"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Source("gpu", info)


def run_probes(spec: FragmentSpec, methods: tuple[str, ...] = METHODS, *, build: KernelBuild | None = None,
               source: Source | None = None) -> dict[str, Layout]:
    """Probe one fragment on the present GPU with each method; one launch per method."""
    from . import gpu

    cp = gpu.cupy()
    sm = gpu.compute_capability()
    if spec.min_sm > sm:
        raise ProbeUnsupported(f"{spec.describe()} needs sm_{spec.min_sm} or newer; this GPU is sm_{sm}")
    build = build or build_for([spec], methods)
    source = source or gpu_source()

    info = cp.full(2, POISON, dtype=cp.int32)
    gpu.function(build, kernel_name("info", spec))((1,), (1,), (info,))
    storage, slots = (int(v) for v in info.get())

    results: dict[str, Layout] = {}
    for method in methods:
        plan = PLANS[method](spec, storage, slots)
        out = cp.full(plan.output_size(), POISON, dtype=cp.int32)
        kernel = gpu.function(build, kernel_name(method, spec))
        if method == "load":
            codes = cp.asarray(plan.inputs())
            kernel((plan.passes,), (32,), (codes, out, info))
        elif method == "mma":
            partners, selections = plan.partners()
            kernel((plan.passes * selections,), (32,),
                   (cp.asarray(plan.slot_codes()), cp.asarray(partners.reshape(-1)), out, info,
                    np.int32(selections), np.int32(plan.base)))
        else:
            partners, selections = plan.partners()
            kernel((plan.blocks(),), (32,), (cp.asarray(partners.reshape(-1)), out, info, np.int32(selections)))
        cp.cuda.runtime.deviceSynchronize()
        row, col, reads = plan.decode(out.get())
        results[method] = Layout(spec, method, source, row, col, reads)
    return results


def capture_atlas(progress=None) -> "Atlas":
    """Probe every fragment the present GPU offers with every method (one NVRTC compile for all of them).

    `progress(description, done, total)` is called as it goes. Fragments the GPU cannot run are
    recorded as refused, with the reason, not left out silently.
    """
    import time

    from . import gpu
    from .atlas import Atlas

    report = progress or (lambda *args: None)
    sm = gpu.compute_capability()
    source = gpu_source()
    started = time.perf_counter()
    catalogue = wmma_catalogue()
    supported = [s for s in catalogue if s.min_sm <= sm]
    refused = {s.key: f"needs sm_{s.min_sm} or newer; this GPU is sm_{sm}" for s in catalogue if s.min_sm > sm}
    report("compiling probes", 0, len(supported))
    build = build_for(supported)
    try:
        gpu.module(build)
        builds = {s.key: build for s in supported}
    except gpu.CompileError:
        # Compile fragment by fragment so one refused type does not sink the rest; record why.
        builds = {}
        for spec in supported:
            single = build_for([spec])
            try:
                gpu.module(single)
                builds[spec.key] = single
            except gpu.CompileError as exc:
                refused[spec.key] = f"NVRTC refused it: {exc.log.strip().splitlines()[0] if exc.log else exc}"
    compile_seconds = time.perf_counter() - started
    entries: dict[str, dict[str, Layout]] = {}
    for done, spec in enumerate(s for s in supported if s.key in builds):
        report(spec.key, done, len(supported))
        try:
            entries[spec.key] = run_probes(spec, build=builds[spec.key], source=source)
        except ProbeError as exc:
            refused[spec.key] = f"probe output did not decode: {exc}"
    report("done", len(supported), len(supported))
    prov = dict(source.provenance)
    prov["captured"] = prov.pop("date")
    prov["compile_seconds"] = round(compile_seconds, 2)
    prov["capture_seconds"] = round(time.perf_counter() - started, 2)
    return Atlas(prov, entries, refused)
