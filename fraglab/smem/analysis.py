"""One shared-memory question answered: a layout, an access, the model of every instruction and, from the GPU,
what it measured. `fraglab.smem(...)` and `fraglab smem` both come here.

    >>> r = fraglab.smem("Sw<3,3,3> o (64,64):(64,1)", dtype="f16", access="ldmatrix.x4", source="model")
    >>> r.predicted, r.minimum          # wavefronts of all instructions, and the fewest their bytes need
    >>> r.to_dict()["instructions"][0]  # per thread: byte offsets and banks; per instruction: wavefronts
    >>> print(r.table(0)); r.figure(0)  # the bank map of instruction 0, as text and as a Figure
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..errors import CompileError, GpuUnavailable, InputError, check_choice
from .access import (AccessSpec, Instruction, fragment_instructions, matrix_instructions, parse_access,
                     sweep_instructions, wgmma_instructions)
from .layout import CANONICAL_SWIZZLES, SmemLayout, parse_layout, wgmma_canonical
from .model import InstructionModel, model_instruction

SOURCES = ("auto", "gpu", "model")


def parse_tile(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    parts = str(text).lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise InputError(f"invalid --tile {text!r}: expected ROWSxCOLS, e.g. 64x64", argument="tile")
    return int(parts[0]), int(parts[1])


def resolve_smem_layout(text: str | SmemLayout, dtype: str, tile: str | None = None) -> SmemLayout:
    """A CuTe spelling, or wgmma.<interleave|32B|64B|128B>.<k|mn> (the canonical (MN, K) tile, --tile RxC)."""
    if isinstance(text, SmemLayout):
        return text
    if isinstance(text, str) and text.strip().lower().startswith("wgmma."):
        parts = text.strip().split(".")
        if len(parts) != 3:
            raise InputError(f"invalid --layout {text!r}: expected wgmma.<{'|'.join(CANONICAL_SWIZZLES)}>.<k|mn>",
                             argument="layout")
        swizzle = {s.lower(): s for s in CANONICAL_SWIZZLES}.get(parts[1].lower(), parts[1])
        rows_cols = parse_tile(tile) or (None, None)
        return wgmma_canonical(dtype, swizzle, parts[2].lower(), *rows_cols)
    if tile is not None:
        raise InputError("--tile sizes a wgmma.<swizzle>.<major> layout; a CuTe spelling carries its own shape",
                         argument="tile")
    return parse_layout(text, dtype)


@lru_cache(maxsize=32)
def fragment_map(name: str) -> tuple[np.ndarray, np.ndarray]:
    """<api>.<shape>.<frag>[.<dtype>] (e.g. mma.m16n8k16.accumulator.f32) -> the model's (row, col) per slot."""
    from ..apis import make_spec
    from ..layouts.resolve import from_model

    parts = (name or "").split(".")
    if len(parts) not in (3, 4):
        raise InputError(f"invalid --fragment {name!r}: expected <api>.<shape>.<frag>[.<dtype>], e.g. "
                         "mma.m16n8k16.accumulator.f32", argument="fragment")
    api, shape, frag = parts[:3]
    spec = make_spec(frag, shape, parts[3] if len(parts) == 4 else None, None, api=api)
    lay = from_model(spec, spec.family.methods[0])
    if (lay.row < 0).any():
        raise InputError(f"invalid --fragment {name!r}: some slots hold no element", argument="fragment")
    return lay.row, lay.col


def build_instructions(spec: AccessSpec, layout: SmemLayout, fragment: str | None) -> list[Instruction]:
    if fragment is not None and spec.kind not in ("ld", "st", "cp.async"):
        raise InputError(f"--fragment gives each thread's elements to ld/st/cp.async; {spec.spelling} has its own",
                         argument="fragment")
    if spec.kind in ("ldmatrix", "stmatrix"):
        return matrix_instructions(spec, layout)
    if spec.kind == "wgmma":
        return wgmma_instructions(layout)
    if fragment is not None:
        rows, cols = fragment_map(fragment)
        return fragment_instructions(spec, layout, rows, cols, fragment)
    return sweep_instructions(spec, layout)


@dataclass
class SmemReport:
    layout: SmemLayout
    access: AccessSpec
    fragment: str | None
    instructions: list[Instruction]
    models: list[InstructionModel]
    measurement: object = None        # measure.Measurement when the GPU measured
    counters: dict | None = None       # Nsight Compute's, when it counted
    note: str = ""
    source: str = "model"
    extra: dict = field(default_factory=dict)

    @property
    def predicted(self) -> int:
        return sum(m.wavefronts for m in self.models)

    @property
    def minimum(self) -> int:
        return sum(m.minimum for m in self.models)

    @property
    def measured(self) -> int | None:
        if self.measurement is None:
            return None
        return int(np.rint(self.measurement.wavefronts).sum())

    def measured_per_instruction(self) -> list[int] | None:
        if self.measurement is None:
            return None
        return [int(x) for x in np.rint(self.measurement.wavefronts)]

    def differing(self) -> list[int]:
        """Instructions whose measured wavefronts differ from the model's."""
        got = self.measured_per_instruction()
        return [] if got is None else [i for i, (g, m) in enumerate(zip(got, self.models)) if g != m.wavefronts]

    def table(self, index: int = 0) -> str:
        """The bank map of instruction `index` as 80-column text (what `fraglab smem` prints)."""
        from .view import bank_map_text

        return bank_map_text(self, index)

    def figure(self, index: int = 0):
        """The bank map of instruction `index` as a matplotlib Figure (`fraglab smem --format png`)."""
        from .view import bank_map_figure

        return bank_map_figure(self, index)

    def to_dict(self) -> dict:
        meas = self.measurement
        instructions = []
        for i, (ins, mod) in enumerate(zip(self.instructions, self.models)):
            wf = {"predicted": mod.wavefronts, "minimum": mod.minimum}
            if meas is not None:
                wf["measured"] = int(np.rint(meas.wavefronts[i]))
                wf["measured_raw"] = round(float(meas.wavefronts[i]), 3)
                wf["cycles"] = round(float(meas.cycles[i]), 3)
            threads = []
            for t, a in enumerate(ins.addresses):
                if a < 0:
                    continue
                threads.append({"thread": t, "byte_offsets": [int(a) + k for k in range(0, ins.width, 4)]
                                if ins.width >= 4 else [int(a)], "bytes": ins.width,
                                "banks": mod.banks(t), "elements": [list(e) for e in ins.elements(t)]})
            instructions.append({"index": i, "wavefronts": wf,
                                 "phases": [{"threads": p.threads.tolist(), "wavefronts": p.wavefronts}
                                            for p in mod.phases], "threads": threads})
        doc = {"layout": self.layout.spelling, "dtype": self.layout.dtype, "tile": [self.layout.rows, self.layout.cols],
               "access": self.access.spelling, "ptx": self.access.ptx, "fragment": self.fragment,
               "source": self.source, "wavefronts": {"predicted": self.predicted, "minimum": self.minimum},
               "instructions": instructions}
        if meas is not None:
            doc["wavefronts"]["measured"] = self.measured
            doc["measurement"] = meas.to_dict()
        if self.counters is not None:
            doc["counters"] = self.counters
        if self.note:
            doc["note"] = self.note
        return doc


def analyze(layout: str | SmemLayout, dtype: str = "f16", access: str = "ldmatrix.x4", *,
            fragment: str | None = None, tile: str | None = None, source: str = "auto") -> SmemReport:
    """The model of every instruction, and the GPU's measurement when `source` asks for it (auto: when usable)."""
    check_choice(source, SOURCES, "source", name="--source")
    lay = resolve_smem_layout(layout, dtype, tile)
    spec = parse_access(access)
    instructions = build_instructions(spec, lay, fragment)
    report = SmemReport(lay, spec, fragment, instructions, [model_instruction(i) for i in instructions])
    if source == "model":
        return report
    from . import measure
    from ..runtime import gpu

    if spec.kind == "wgmma":
        if source == "gpu":
            measure.kernel_name(spec)   # the one-line refusal
        report.note = "wgmma reads shared memory through its descriptor; answered from the model, unmeasured"
        return report
    if source == "auto":
        usable, why = gpu.available()
        if not usable:
            report.note = f"no usable GPU ({why}); answered from the model"
            return report
    try:
        report.measurement = measure.measure(spec, instructions, lay.span_bytes)
        report.source = "gpu"
    except (GpuUnavailable, CompileError) as exc:
        if source == "gpu":
            raise
        report.note = f"the GPU probe failed ({str(exc).splitlines()[0]}); answered from the model"
    return report


__all__ = ["SmemReport", "analyze", "resolve_smem_layout", "build_instructions", "fragment_map", "parse_tile",
           "SOURCES"]
