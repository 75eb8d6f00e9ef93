"""The device run behind docs/smem.md: every shipped case measured (clock64 probe, calibrated) and counted
(Nsight Compute, where installed), with the GPU and the calibration, as one JSON file.

    python -m fraglab.smem.results OUT_DIR            measure and count; OUT_DIR/smem_results.json
    python -m fraglab.smem.results --sanitize         every probe form once, small (under compute-sanitizer)
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from ..files import write_output
from .access import raw_instruction
from .verify import CASES, measurable


def measure_cases(cases=CASES) -> list[dict]:
    rows = []
    for case in cases:
        source = "gpu" if measurable(case) else "model"
        started = time.perf_counter()
        report = case.report(source)
        row = {"name": case.name, "layout": report.layout.spelling, "dtype": case.dtype, "access": case.access,
               "fragment": case.fragment, "why": case.why, "instructions": len(report.instructions),
               "predicted": report.predicted, "minimum": report.minimum,
               "predicted_per_instruction": [m.wavefronts for m in report.models]}
        if report.measurement is not None:
            m = report.measurement
            row.update(measured=report.measured, measured_raw=round(float(np.sum(m.wavefronts)), 2),
                       measured_per_instruction=[round(float(x), 2) for x in m.wavefronts],
                       cycles_per_instruction=[round(float(x), 3) for x in m.cycles],
                       differs=report.differing(), probe=m.to_dict())
        row["seconds"] = round(time.perf_counter() - started, 3)
        print(f"{case.name:<44} pred {report.predicted:>5} meas {row.get('measured', '-')!s:>5} "
              f"raw {row.get('measured_raw', '-')}", flush=True)
        rows.append(row)
    return rows


def sanitize_pass() -> None:
    """Every instantiation of the probe once, with small reps, to run under memcheck and racecheck."""
    from . import measure

    measure.REPS = 1
    lane = np.arange(32)
    for spec in measure._all_specs():
        addr = (lane % (8 * spec.num if spec.kind.endswith("matrix") else 32)) * max(spec.width, 4) * 4
        addr = addr - addr % 16 if spec.width == 16 else addr
        ins = [raw_instruction(spec, addr)]
        got = measure.measure(spec, ins, int(addr.max()) + spec.width)
        print(f"{measure.kernel_name(spec):<40} cycles {got.cycles[0]:.2f}", flush=True)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--sanitize"]:
        sanitize_pass()
        return
    out = argv[0] if argv else "-"
    from ..runtime import gpu

    doc = {"device": gpu.device_info(), "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
           "command": "python -m fraglab.smem.results " + " ".join(argv), "cases": measure_cases()}
    try:
        from .counters import count_cases

        doc["counters"] = count_cases(CASES)
    except Exception as exc:   # report the second method's absence, keep the first
        doc["counters_error"] = f"{exc.__class__.__name__}: {exc}"
    print(json.dumps(doc.get("counters", doc.get("counters_error")), indent=1)[:6000], flush=True)
    write_output(out if out == "-" else f"{out}/smem_results.json", json.dumps(doc, indent=1) + "\n",
                 default_name="smem_results.json")


if __name__ == "__main__":
    main(sys.argv[1:])
