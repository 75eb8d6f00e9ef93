"""The shipped shared-memory cases as plain data for the interactive page (`fraglab html`): per case its
spelling, the model's wavefronts, the H100's where they differ, and the bank map of its first instruction
(rows p<phase> w<wavefront>, 32 cells of thread numbers and marks, as the terminal view draws them)."""

from __future__ import annotations

from .verify import CASES
from .view import _rows, header_lines


def page_cases(cases=CASES) -> list[dict]:
    out = []
    for case in cases:
        report = case.report("model")
        out.append({"name": case.name, "layout": report.layout.spelling, "dtype": report.layout.dtype,
                    "access": report.access.spelling, "fragment": case.fragment,
                    "instructions": len(report.instructions), "predicted": report.predicted,
                    "minimum": report.minimum, "h100": case.hardware, "why": case.why,
                    "header": header_lines(report, 0)[:4],
                    "map": [[label, cells] for label, cells in _rows(report, 0)]})
    return out


__all__ = ["page_cases"]
