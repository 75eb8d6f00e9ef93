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


def _cases(access: str, *rows: tuple[str, str, str], dtype: str = "f16", fragment: str | None = None,
           prefix: str = "", tolerance: float = 0.0) -> tuple[SmemCase, ...]:
    """The cases of one access on laid-out tiles: each row (label, layout, why) is named
    '<prefix><access> <label>'."""
    return tuple(SmemCase(f"{prefix}{access} {label}", dtype, access, layout, fragment, why=why, tolerance=tolerance)
                 for label, layout, why in rows)


def _raw_case(name: str, access: str, addresses, why: str, hardware: int | None = None) -> SmemCase:
    """A hand-made pattern of f16 words: one `access` instruction at these byte addresses."""
    return SmemCase(name, "f16", access, addresses=tuple(int(v) for v in addresses), hardware=hardware, why=why)


ACC = "mma.m16n8k16.accumulator.f32"
CP_ASYNC_TOLERANCE = 1.0
ROW_64, SWIZZLED_64 = "(64,64):(64,1)", "Sw<3,3,3> o (64,64):(64,1)"   # 64x64 f16: 128-byte rows
CASES: tuple[SmemCase, ...] = (
    *_cases("ldmatrix.x4",
            ("row-major 64x64", ROW_64, "8 rows 128 B apart fall in the same 4 banks: 8-way in every phase"),
            ("Sw<3,3,3> 64x64", SWIZZLED_64, "the 128-byte swizzle spreads the 8 rows over all 32 banks"),
            ("padded 64x72", "(64,64):(72,1)", "16 bytes of padding per row shift each row by 4 banks")),
    *_cases("ldmatrix.x4.trans", ("row-major 64x64", ROW_64, ".trans moves the same rows: the same conflicts"),
            ("Sw<3,3,3> 64x64", SWIZZLED_64, "")),
    *_cases("ldmatrix.x2", ("Sw<3,3,3> 64x64", SWIZZLED_64, "")),
    *_cases("ldmatrix.x1", ("row-major 64x64", ROW_64, "one 8-address phase, 8-way")),
    *_cases("ldmatrix.x4",
            ("row-major 128x32", "(128,32):(32,1)", "64-byte rows: two rows share a 128-byte line, 4-way")),
    *_cases("stmatrix.x4", ("row-major 64x64", ROW_64, ""), ("Sw<3,3,3> 64x64", SWIZZLED_64, "")),
    *_cases("st.b32",
            ("row-major 64x128", "(64,128):(128,1)",
             "the m16n8 accumulator, 2 halves a store: 8 rows 256 B apart, 8-way"),
            ("Sw<3,3,3> 64x128", "Sw<3,3,3> o (64,128):(128,1)",
             "the 64-column swizzle on 128-column rows only halves it"),
            ("Sw<3,3,4> 64x128", "Sw<3,3,4> o (64,128):(128,1)", "the swizzle matched to 256-byte rows: conflict-free"),
            ("padded 64x136", "(64,128):(136,1)", ""), fragment=ACC, prefix="epilogue "),
    *_cases("st.b64", ("f32 row-major 64x64", ROW_64, "f32 pairs by half warps: 8-way"),
            ("f32 padded 64x72", "(64,64):(72,1)", ""), dtype="f32", fragment=ACC, prefix="epilogue "),
    *_cases("ld.b128",
            ("row-major sweep 64x64", ROW_64, "consecutive 16-byte vectors: 4 quarter-warp phases, conflict-free"),
            ("a row per thread 32x8 of 64", "(32,8):(64,1)",
             "each thread 16 B of its own 128-byte row: 8-way per quarter warp"),
            ("a row per thread 32x8 of 72", "(32,8):(72,1)", "")),
    *_cases("st.b128", ("row-major sweep 64x64", ROW_64, "")),
    *_cases("ld.b64",
            ("a row per thread 32x4 of 64", "(32,4):(64,1)", "8 bytes each, rows 128 B apart: 16-way per half warp")),
    *_cases("ld.b32", ("a column 32x2 of 64 (32-way)", "(32,2):(64,1)", "32 words in one bank: the 32-way conflict")),
    *_cases("ld.b16", ("row-major sweep 16x64", "(16,64):(64,1)", "two threads per word: shared, 1 wavefront")),
    *_cases("cp.async.16", ("row-major sweep 64x64", ROW_64, ""), ("a row per thread 32x8 of 64", "(32,8):(64,1)", ""),
            tolerance=CP_ASYNC_TOLERANCE),
    *_cases("cp.async.4", ("a column 32x2 of 64", "(32,2):(64,1)", ""), tolerance=CP_ASYNC_TOLERANCE),
    _raw_case("broadcast ld.b32, one word", "ld.b32", np.zeros(32), "all threads one word: one wavefront"),
    _raw_case("broadcast ld.b128, one vector", "ld.b128", np.zeros(32),
              "the model serves each quarter warp in its own phase (4); the H100 takes 2", hardware=2),
    _raw_case("ld.b128, 8 vectors twice over", "ld.b128", (LANES % 8) * 16, "quarter warps repeat the same 128 bytes"),
    _raw_case("ld.b64, half warps share", "ld.b64", (LANES % 16) * 8, "the two half warps read the same 128 bytes"),
    _raw_case("st.b32 two threads one word", "st.b32", (LANES // 2) * 4,
              "two threads write one word: which one lands is undefined, the bank is asked once"),
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
