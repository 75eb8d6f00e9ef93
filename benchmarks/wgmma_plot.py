"""TFLOP/s against size from a wgmma suite JSON (benchmarks/wgmma_suite.py --json): the fused wgmma GEMM (the
launcher's tile), its plain store, cuBLAS and torch's fused bias + ReLU, square f16 and bf16 sizes.

Usage: python3 benchmarks/wgmma_plot.py SUITE.json OUT.png
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab.gemm import wgmma  # noqa: E402


def series(bench: dict, dtype: str) -> dict[str, list[tuple[int, float]]]:
    out: dict[str, list[tuple[int, float]]] = {}
    for key, rows in bench.items():
        dt, size = key.split()
        m, n, k = map(int, size.split("x"))
        if dt != dtype or not (m == n == k):
            continue
        tile = wgmma.choose_tile(m, n)
        picks = {"wgmma fused (bias + ReLU)": f"wgmma_fused[{tile}]", "wgmma plain store": f"wgmma_plain[{tile}]",
                 "cuBLAS (GEMM only)": "cupy_matmul" if "cupy_matmul" in rows else "torch_mm",
                 "torch _addmm_activation (fused)": "torch_addmm_act"}
        for label, name in picks.items():
            if name in rows:
                out.setdefault(label, []).append((m, rows[name]["tflops"]))
    return {label: sorted(points) for label, points in out.items()}


def main(argv) -> int:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = json.loads(Path(argv[0]).read_text())
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, dtype in zip(axes, ("f16", "bf16")):
        for label, points in series(data["bench"], dtype).items():
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("M = N = K")
        ax.set_title(f"{dtype} in, f32 accumulate ({data['device']})", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("TFLOP/s (2MNK / median time)")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"wgmma GEMM with fused epilogue, {data['date']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(argv[1], dpi=120)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
