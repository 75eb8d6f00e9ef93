"""The second method: Nsight Compute's shared-memory counters for the shipped cases.

`count_cases` runs `ncu` on a child Python (`python -m fraglab.smem.counters CASES.json`) that launches the bank
probe once per case (one warp, one repetition, no fill: the only shared-memory traffic is the case's
instructions, each executed UNROLL times), and reads every l1tex shared-memory wavefront and bank-conflict
metric the installed ncu offers. Wavefronts per instruction = the shared-memory wavefront count / (instructions
x UNROLL); ncu's instruction counts say how many ran (ptxas may merge repeats), and the division uses them.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..errors import GpuUnavailable

TOTAL = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
PREFIXES = ("l1tex__data_pipe_lsu_wavefronts_mem_shared", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared")
# per access kind: (instructions executed, shared wavefronts of that kind); cp.async has no wavefront counter of
# its own, only its bank conflicts (wavefronts = the fewest the bytes need + those conflicts)
KIND_METRICS = {
    "ld": ("sm__sass_inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
    "ldmatrix": ("sm__sass_inst_executed_op_ldsm.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
    "st": ("sm__sass_inst_executed_op_shared_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
    "stmatrix": ("sm__sass_inst_executed_op_shared_stsm.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
    "cp.async": ("sm__sass_inst_executed_op_ldgsts.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"),
}


def ncu_path() -> str:
    found = shutil.which("ncu") or ("/usr/local/cuda/bin/ncu" if Path("/usr/local/cuda/bin/ncu").exists() else None)
    if found is None:
        raise GpuUnavailable("Nsight Compute (ncu) is not installed")
    return found


def shared_metrics(ncu: str) -> list[str]:
    """Every shared-memory wavefront / bank-conflict base metric this ncu knows, as .sum."""
    listing = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120).stdout
    names = sorted({line.split()[0] for line in listing.splitlines()
                    if line.strip() and line.split()[0].startswith(PREFIXES)})
    return [f"{n}.sum" for n in names] or [TOTAL]


def parse_csv(text: str) -> dict[int, dict[str, float]]:
    """ncu --csv: launch ID -> metric -> value."""
    start = text.find('"ID"')
    out: dict[int, dict[str, float]] = {}
    for row in csv.DictReader(io.StringIO(text[start:] if start >= 0 else "")):
        try:
            value = float(str(row["Metric Value"]).replace(",", ""))
        except (KeyError, ValueError):
            continue
        out.setdefault(int(row["ID"]), {})[row["Metric Name"]] = value
    return out


def count_cases(cases) -> dict[str, dict]:
    """case name -> {metric: value, 'wavefronts': total shared wavefronts per case pass (= per instruction
    summed over the case's instructions)}."""
    from . import measure
    from .verify import measurable

    ncu = ncu_path()
    chosen = [c for c in cases if measurable(c)]
    metrics = shared_metrics(ncu)
    metrics += [m for pair in KIND_METRICS.values() for m in pair if m not in metrics]
    with tempfile.TemporaryDirectory() as tmp:
        names = Path(tmp) / "cases.json"
        names.write_text(json.dumps([c.name for c in chosen]))
        log = Path(tmp) / "ncu.csv"
        proc = subprocess.run([ncu, "--csv", "--log-file", str(log), "--metrics", ",".join(metrics),
                               "--kernel-name", "regex:bank_probe", sys.executable, "-m", "fraglab.smem.counters",
                               str(names)], capture_output=True, text=True, timeout=500)
        if proc.returncode != 0 or not log.exists():
            raise GpuUnavailable(f"ncu failed ({proc.returncode}): {(proc.stderr or proc.stdout)[-300:]}")
        by_launch = parse_csv(log.read_text())
    results = {}
    for launch, case in zip(sorted(by_launch), chosen):
        values = by_launch[launch]
        report = case.report("model")
        values = dict(values)
        executed_name, wavefront_name = KIND_METRICS[report.access.kind]
        executed = values.get(executed_name, 0.0)
        values["executed_expected"] = len(report.instructions) * measure.UNROLL
        if executed > 0 and wavefront_name in values:
            per = values[wavefront_name] / executed
            if report.access.kind == "cp.async":   # conflicts only: add the fewest the bytes need
                per += report.minimum / len(report.instructions)
            values["wavefronts_per_instruction"] = per
            values["wavefronts"] = per * len(report.instructions)
        results[case.name] = values
    return results


def _child(names_file: str) -> None:
    """Launch each named case once (what ncu counts), in the order given."""
    from . import measure
    from .verify import CASES

    by_name = {c.name: c for c in CASES}
    for name in json.loads(Path(names_file).read_text()):
        case = by_name[name]
        report = case.report("model")
        measure.launch_once(report.access, report.instructions, report.layout.span_bytes)


if __name__ == "__main__":
    _child(sys.argv[1])
