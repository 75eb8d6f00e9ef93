"""The shipped shared-memory cases: textbook layouts and accesses, and hand-made patterns (broadcasts, words
shared across phases) where a simple model may part from the hardware. `fraglab verify` measures each on the
GPU and sets it beside the model; a documented difference (`hardware`) is shown as such, never hidden."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .access import parse_access, raw_instruction
from .analysis import SmemReport, analyze
from .model import model_instruction

LANES = np.arange(32)


@dataclass(frozen=True)
class SmemCase:
    name: str
    dtype: str
    access: str
    layout: str | None = None
    fragment: str | None = None
    tile: str | None = None
    addresses: tuple[int, ...] | None = None   # a raw pattern: one instruction, these byte addresses
    hardware: int | None = None                # wavefronts the H100 measured where they differ from the model
    why: str = ""
    # wavefronts per instruction the clock method may be off by: cp.async's global-memory side makes its loop
    # time noisy (the H100 gave 33.15 and 32.12 for one 32-wavefront pattern); ncu counts it exactly
    tolerance: float = 0.0

    def report(self, source: str) -> SmemReport:
        if self.addresses is None:
            return analyze(self.layout, self.dtype, self.access, fragment=self.fragment, tile=self.tile,
                           source=source)
        from .layout import row_major

        spec = parse_access(self.access)
        ins = [raw_instruction(spec, self.addresses)]
        lay = row_major(1, max(self.addresses) // 2 + spec.width // 2, "f16")   # spans every address
        report = SmemReport(lay, spec, None, ins, [model_instruction(i) for i in ins])
        if source != "model":
            from . import measure

            report.measurement = measure.measure(spec, ins, lay.span_bytes)
            report.source = "gpu"
        return report


def _raw(values) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


ACC = "mma.m16n8k16.accumulator.f32"
CP_ASYNC_TOLERANCE = 1.0
CASES: tuple[SmemCase, ...] = (
    SmemCase("ldmatrix.x4 row-major 64x64", "f16", "ldmatrix.x4", "(64,64):(64,1)",
             why="8 rows 128 B apart fall in the same 4 banks: 8-way in every phase"),
    SmemCase("ldmatrix.x4 Sw<3,3,3> 64x64", "f16", "ldmatrix.x4", "Sw<3,3,3> o (64,64):(64,1)",
             why="the 128-byte swizzle spreads the 8 rows over all 32 banks"),
    SmemCase("ldmatrix.x4 padded 64x72", "f16", "ldmatrix.x4", "(64,64):(72,1)",
             why="16 bytes of padding per row shift each row by 4 banks"),
    SmemCase("ldmatrix.x4.trans row-major 64x64", "f16", "ldmatrix.x4.trans", "(64,64):(64,1)",
             why=".trans moves the same rows: the same conflicts"),
    SmemCase("ldmatrix.x4.trans Sw<3,3,3> 64x64", "f16", "ldmatrix.x4.trans", "Sw<3,3,3> o (64,64):(64,1)"),
    SmemCase("ldmatrix.x2 Sw<3,3,3> 64x64", "f16", "ldmatrix.x2", "Sw<3,3,3> o (64,64):(64,1)"),
    SmemCase("ldmatrix.x1 row-major 64x64", "f16", "ldmatrix.x1", "(64,64):(64,1)",
             why="one 8-address phase, 8-way"),
    SmemCase("ldmatrix.x4 row-major 128x32", "f16", "ldmatrix.x4", "(128,32):(32,1)",
             why="64-byte rows: two rows share a 128-byte line, 4-way"),
    SmemCase("stmatrix.x4 row-major 64x64", "f16", "stmatrix.x4", "(64,64):(64,1)"),
    SmemCase("stmatrix.x4 Sw<3,3,3> 64x64", "f16", "stmatrix.x4", "Sw<3,3,3> o (64,64):(64,1)"),
    SmemCase("epilogue st.b32 row-major 64x128", "f16", "st.b32", "(64,128):(128,1)", ACC,
             why="the m16n8 accumulator, 2 halves a store: 8 rows 256 B apart, 8-way"),
    SmemCase("epilogue st.b32 Sw<3,3,3> 64x128", "f16", "st.b32", "Sw<3,3,3> o (64,128):(128,1)", ACC,
             why="the 64-column swizzle on 128-column rows only halves it"),
    SmemCase("epilogue st.b32 Sw<3,3,4> 64x128", "f16", "st.b32", "Sw<3,3,4> o (64,128):(128,1)", ACC,
             why="the swizzle matched to 256-byte rows: conflict-free"),
    SmemCase("epilogue st.b32 padded 64x136", "f16", "st.b32", "(64,128):(136,1)", ACC),
    SmemCase("epilogue st.b64 f32 row-major 64x64", "f32", "st.b64", "(64,64):(64,1)", ACC,
             why="f32 pairs by half warps: 8-way"),
    SmemCase("epilogue st.b64 f32 padded 64x72", "f32", "st.b64", "(64,64):(72,1)", ACC),
    SmemCase("ld.b128 row-major sweep 64x64", "f16", "ld.b128", "(64,64):(64,1)",
             why="consecutive 16-byte vectors: 4 quarter-warp phases, conflict-free"),
    SmemCase("ld.b128 a row per thread 32x8 of 64", "f16", "ld.b128", "(32,8):(64,1)",
             why="each thread 16 B of its own 128-byte row: 8-way per quarter warp"),
    SmemCase("ld.b128 a row per thread 32x8 of 72", "f16", "ld.b128", "(32,8):(72,1)"),
    SmemCase("st.b128 row-major sweep 64x64", "f16", "st.b128", "(64,64):(64,1)"),
    SmemCase("ld.b64 a row per thread 32x4 of 64", "f16", "ld.b64", "(32,4):(64,1)",
             why="8 bytes each, rows 128 B apart: 16-way per half warp"),
    SmemCase("ld.b32 a column 32x2 of 64 (32-way)", "f16", "ld.b32", "(32,2):(64,1)",
             why="32 words in one bank: the 32-way conflict"),
    SmemCase("ld.b16 row-major sweep 16x64", "f16", "ld.b16", "(16,64):(64,1)",
             why="two threads per word: shared, 1 wavefront"),
    SmemCase("cp.async.16 row-major sweep 64x64", "f16", "cp.async.16", "(64,64):(64,1)", tolerance=CP_ASYNC_TOLERANCE),
    SmemCase("cp.async.16 a row per thread 32x8 of 64", "f16", "cp.async.16", "(32,8):(64,1)", tolerance=CP_ASYNC_TOLERANCE),
    SmemCase("cp.async.4 a column 32x2 of 64", "f16", "cp.async.4", "(32,2):(64,1)", tolerance=CP_ASYNC_TOLERANCE),
    SmemCase("broadcast ld.b32, one word", "f16", "ld.b32", addresses=_raw(np.zeros(32)),
             why="all threads one word: one wavefront"),
    SmemCase("broadcast ld.b128, one vector", "f16", "ld.b128", addresses=_raw(np.zeros(32)), hardware=2,
             why="the model serves each quarter warp in its own phase (4); the H100 takes 2"),
    SmemCase("ld.b128, 8 vectors twice over", "f16", "ld.b128", addresses=_raw((LANES % 8) * 16),
             why="quarter warps repeat the same 128 bytes"),
    SmemCase("ld.b64, half warps share", "f16", "ld.b64", addresses=_raw((LANES % 16) * 8),
             why="the two half warps read the same 128 bytes"),
    SmemCase("st.b32 two threads one word", "f16", "st.b32", addresses=_raw((LANES // 2) * 4),
             why="two threads write one word: which one lands is undefined, the bank is asked once"),
    SmemCase("wgmma 128B K-major 64x64", "f16", "wgmma", "wgmma.128B.k", tile="64x64",
             why="model only: wgmma reads through its descriptor"),
    SmemCase("wgmma interleave MN-major 64x64", "f16", "wgmma", "wgmma.interleave.mn", tile="64x64"),
)


def measurable(case: SmemCase) -> bool:
    return parse_access(case.access).kind != "wgmma"


@dataclass
class CaseRow:
    case: SmemCase
    predicted: int
    minimum: int
    measured: int | None
    instructions: int
    measured_raw: float | None = None
    counted: float | None = None     # Nsight Compute's wavefronts per instruction x instructions, when run

    @property
    def verdict(self) -> str:
        if self.measured is None:
            return "model only"
        if self.measured == self.predicted:
            return "agrees"
        if self.case.hardware is not None and self.measured == self.case.hardware:
            return "differs (documented)"
        if self.case.hardware is None and within_tolerance(self.case, self.measured_raw, self.predicted,
                                                           self.instructions):
            return "agrees (cp.async: within 1/instr)"
        return "DIFFERS"

    @property
    def ok(self) -> bool:
        return self.verdict != "DIFFERS"


def within_tolerance(case: SmemCase, measured: float | None, predicted: int, instructions: int) -> bool:
    return measured is not None and abs(measured - predicted) <= case.tolerance * instructions


def run_cases(source: str = "gpu", cases=CASES) -> list[CaseRow]:
    rows = []
    for case in cases:
        report = case.report(source if measurable(case) else "model")
        raw = None if report.measurement is None else float(np.sum(report.measurement.wavefronts))
        rows.append(CaseRow(case, report.predicted, report.minimum, report.measured, len(report.instructions), raw))
    return rows


def rows_text(rows: list[CaseRow]) -> str:
    lines = [f"{'case':<42} {'pred':>5} {'meas':>5} {'fewest':>6}  verdict"]
    for r in rows:
        measured = "-" if r.measured is None else str(r.measured)
        lines.append(f"{r.case.name[:42]:<42} {r.predicted:>5} {measured:>5} {r.minimum:>6}  {r.verdict}")
    return "\n".join(lines) + "\n"


def verify_smem(echo=print) -> bool:
    """Measure every shipped case; print the table; True when each agrees with the model (or its documented
    hardware value)."""
    rows = run_cases("gpu")
    echo(rows_text(rows).rstrip("\n"))
    bad = [r for r in rows if not r.ok]
    echo(f"{len(rows) - len(bad)} of {len(rows)} shared-memory cases agree with the model or their documented "
         "hardware value")
    return not bad


__all__ = ["within_tolerance", "SmemCase", "CASES", "CaseRow", "run_cases", "rows_text", "verify_smem", "measurable"]
