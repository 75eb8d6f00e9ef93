"""Benchmark reports: rich tables with named column sets, JSON rows (written through fraglab.files), the TFLOP/s chart."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..files import check_suffix, write_output

JSON_NAME = "results.json"   # what --json writes inside a folder


def _json_default(value: Any) -> Any:
    try:
        import numpy as np
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            return value.tolist()
    except ImportError:
        pass
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "as_dict"):
        return value.as_dict()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _json_safe(value: Any) -> Any:
    """NaN/inf become null: strict JSON has no NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def check_json_path(path: Path | None) -> None:
    """save_json's rules for `path` (a target it may write, a suffix that is not another format's): asked before
    minutes of timing, so that a bad --json is refused then and not after."""
    check_suffix(path, "json", "--json")


def save_json(obj: Any, path: Path) -> None:
    """Write `obj` as indented JSON, whole or not at all."""
    text = json.dumps(_json_safe(json.loads(json.dumps(obj, default=_json_default))), indent=2) + "\n"
    write_output(path, text, default_name=JSON_NAME, argument="--json", fmt="json")


def size_label(row: dict) -> str:
    m, n, k = row["m"], row["n"], row["k"]
    return f"{m}^3" if m == n == k else f"{m}x{n}x{k}"


def tflops_figure(rows: Iterable[dict], title: str, ceilings: dict[str, float] | None = None):
    """A Figure of TFLOP/s per problem size, one line per kernel (rows: kernel, m, n, k, tflops; a row's "label",
    where it has one, names its line), and each measured ceiling ({label: TFLOP/s}) as a dashed horizontal line."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    rows = [r for r in rows if r.get("tflops") is not None and math.isfinite(r["tflops"])]
    sizes = sorted({(r["m"], r["n"], r["k"]) for r in rows}, key=lambda s: (s[0] * s[1] * s[2], s))
    labels = [size_label({"m": m, "n": n, "k": k}) for m, n, k in sizes]
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    legend = {r["kernel"]: r.get("label", r["kernel"]) for r in rows}
    fig = Figure(figsize=(max(6.0, 1.1 * len(sizes) + 3) + 3.0, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for name in kernels:
        pts = {(r["m"], r["n"], r["k"]): r["tflops"] for r in rows if r["kernel"] == name}
        xs = [i for i, s in enumerate(sizes) if s in pts]
        ax.plot(xs, [pts[sizes[i]] for i in xs], marker="o", label=legend[name])
    for (label, value), style in zip((ceilings or {}).items(), ("--", ":", "-.")):
        if value is not None and math.isfinite(value):
            ax.axhline(value, color="0.35", linestyle=style, linewidth=1.2, label=f"{label}: {value:.0f}")
    ax.set_xticks(range(len(sizes)), labels, rotation=30 if len(sizes) > 6 else 0)
    ax.set_xlabel("problem size (M x N x K)")
    ax.set_ylabel("TFLOP/s (2MNK / median time)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if kernels or ceilings:  # beside the axes: inside, the legend hid the lines it names
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return fig


def plot_tflops(rows: Iterable[dict], path: Path, title: str, ceilings: dict[str, float] | None = None) -> Path:
    """Save tflops_figure(rows, title, ceilings) to `path` (format from the suffix), whole or not at all."""
    return save_figure(tflops_figure(rows, title, ceilings), path, "tflops")


def read_rate_figure(rows: Iterable[dict], title: str, peak_tbs: float | None = None):
    """A Figure of `peak --memory`'s rows: TB/s against the bytes read per launch (log scale), one line per reader,
    DRAM's peak as a dashed line: where the ramp of one launch stops showing."""
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    rows = [r for r in rows if r.get("tbs") is not None and math.isfinite(r["tbs"])]
    fig = Figure(figsize=(8.5, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for reader in dict.fromkeys(r["reader"] for r in rows):
        pts = sorted((r["mib"], r["tbs"]) for r in rows if r["reader"] == reader)
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=reader)
    if peak_tbs:
        ax.axhline(peak_tbs, color="0.35", linestyle="--", linewidth=1.2, label=f"DRAM peak: {peak_tbs:.2f}")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))   # 32, not 2^5
    ax.set_xlabel("bytes read per launch (MiB)")
    ax.set_ylabel("TB/s (bytes / median launch)")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if rows:
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return fig


def save_figure(fig, path: Path, default_name: str) -> Path:
    """Save a Figure to `path` (format from the suffix), whole or not at all."""
    import io

    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=130)
    return write_output(path, buf.getvalue(), default_name=f"{default_name}.{fmt}", argument="--plot")


def format_value(value: Any, fmt: str = "") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if fmt:
        return format(value, fmt)
    return str(value)


def rows_table(rows: Sequence[dict], columns: Sequence[tuple[str, str, str]], title: str = ""):
    """A rich Table of `rows`; columns are (key, header, format spec); missing values show as '-'."""
    from rich.table import Table

    table = Table(title=title or None)
    for _, header, fmt in columns:
        table.add_column(header, justify="left" if not fmt else "right")
    for row in rows:
        cells = []
        for key, _, fmt in columns:
            text = format_value(row.get(key), fmt)
            if key == "status" and text in ("PASSED", "FAILED"):
                text = f"[green]{text}[/]" if text == "PASSED" else f"[red]{text}[/]"
            cells.append(text)
        table.add_row(*cells)
    return table
