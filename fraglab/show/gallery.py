"""Figures as files: encoding (deterministic SVG/PDF bytes), default names, and every figure of an atlas
with its manifest (docs/figures). Files are written through fraglab.files (whole, or not at all).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from .._version import __version__
from ..files import write_many, write_output
from ..layouts.layout import Layout
from .figure import plot_layout, plot_mma
from .palette import FigureError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

FORMATS = ("png", "svg", "pdf")
PNG_DPI = 150
# A large figure (the MMA view, 128-thread grids) is drawn at fewer dots per inch so its longer side stays
# within this many pixels; never below PNG_MIN_DPI, where 5.5 pt labels are still 9 px tall.
PNG_MAX_SIDE_PX = 2200
PNG_MIN_DPI = 120
PNG_COLORS = 256
MANIFEST_NAME = "figures.json"

_SAVE_RC = {
    "svg.hashsalt": "fraglab",          # fixed ids: same figure, same bytes
    "svg.fonttype": "none",             # text stays text: searchable, small, and testable
    "font.sans-serif": ["DejaVu Sans"],  # one font (bundled with matplotlib) named in the SVG, not ten
    "pdf.fonttype": 42,                  # TrueType in PDFs: selectable text
}


# ---- files ---------------------------------------------------------------------------------------------------

def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise FigureError("format", f"invalid --format {fmt!r} for a figure: valid choices are {', '.join(FORMATS)}")
    return fmt


def figure_bytes(fig: "Figure", fmt: str) -> bytes:
    """`fig` encoded as png|svg|pdf; SVG and PDF bytes are deterministic (fixed ids, no dates)."""
    import matplotlib

    check_format(fmt)
    metadata: dict[str, Any] = {
        "svg": {"Date": None},
        "pdf": {"CreationDate": None, "ModDate": None},
        "png": {},
    }[fmt]
    # SVG into a text buffer: matplotlib writes its thousands of small strings straight in, not through a UTF-8
    # encoder each (the same bytes, once encoded)
    buf: io.StringIO | io.BytesIO = io.StringIO() if fmt == "svg" else io.BytesIO()
    with matplotlib.rc_context(_SAVE_RC):
        if fmt == "png":  # quickly encoded here, re-encoded small below
            fig.savefig(buf, format="png", dpi=png_dpi(fig), pil_kwargs={"compress_level": 1})
        else:
            fig.savefig(buf, format=fmt, metadata=metadata)
    if fmt == "png":
        return _small_png(buf.getvalue())
    return _compact_svg(buf.getvalue().encode("utf-8")) if fmt == "svg" else buf.getvalue()


# only the attributes holding a number with 3 or more decimals: the others are left as they are anyway
_SVG_NUMBER_ATTR = re.compile(rb'( (?:d|x|y|transform|width|height)=")([^"]*?\d\.\d{3}[^"]*)"')
_LONG_FLOAT = re.compile(rb"-?\d+\.\d{3,}")
_NO_ROTATION = re.compile(rb' transform="rotate\(-?0 [-\d.]+ [-\d.]+\)"')


def _compact_svg(data: bytes) -> bytes:
    """matplotlib's SVG with what no reader sees left out: coordinates to 1/100 pt (it writes 1e-6), and the
    rotate(0) transform it puts on every unrotated label. Text stays text, ids and styles stay as they are."""
    def short(number: re.Match) -> bytes:
        text = b"%.2f" % float(number.group(0))
        text = text.rstrip(b"0").rstrip(b".")
        return b"0" if text in (b"-0", b"") else text

    def attribute(match: re.Match) -> bytes:
        value = match.group(2)
        if value.startswith(b"matrix("):  # an image's scale: rounded, 256 cells would drift by a third of a point
            return match.group(0)
        return match.group(1) + _LONG_FLOAT.sub(short, value) + b'"'

    return _SVG_NUMBER_ATTR.sub(attribute, _NO_ROTATION.sub(b"", data))


def png_dpi(fig: "Figure") -> float:
    """PNG_DPI, lowered for a large figure so that its longer side is at most PNG_MAX_SIDE_PX (not below
    PNG_MIN_DPI)."""
    longer = max(fig.get_size_inches())
    return float(max(PNG_MIN_DPI, min(PNG_DPI, PNG_MAX_SIDE_PX / longer)))


def _small_png(data: bytes) -> bytes:
    """The PNG as an indexed image of its PNG_COLORS most used colours (every flat fill is one of them, so
    lanes keep their exact colours; only anti-aliased edge pixels move to the nearest kept colour)."""
    from PIL import Image

    rgb = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=np.int64)
    packed = (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]
    colors, inverse, counts = np.unique(packed.ravel(), return_inverse=True, return_counts=True)
    split = lambda c: np.stack([(c >> 16) & 255, (c >> 8) & 255, c & 255], axis=-1)  # noqa: E731
    kept = np.argsort(-counts, kind="stable")[:PNG_COLORS]
    table = split(colors[kept])
    # every colour -> its nearest kept colour (itself, for the kept ones)
    nearest = np.empty(len(colors), dtype=np.uint8)
    for start in range(0, len(colors), 4096):
        chunk = split(colors[start:start + 4096])
        nearest[start:start + 4096] = ((chunk[:, None, :] - table[None]) ** 2).sum(-1).argmin(1)
    indexed = Image.fromarray(nearest[inverse].reshape(packed.shape))
    indexed.putpalette(table.astype(np.uint8).ravel().tolist())
    out = io.BytesIO()
    indexed.save(out, format="png", optimize=True)
    return out.getvalue()


def save_figure(fig: "Figure", path: str | os.PathLike, fmt: str, *, default_name: str = "figure") -> Path | None:
    """Write `fig` as png|svg|pdf through the one writer (whole or not at all; '-' is stdout)."""
    data = figure_bytes(fig, fmt)
    return write_output(path, data, default_name=default_name if "." in default_name else f"{default_name}.{fmt}")


def default_figure_name(layout: "Layout | tuple[Layout, Layout, Layout]", fmt: str, *, mma: bool = False) -> str:
    """e.g. wmma_matrix_a_m16n16k16_f16_row_load.png; MMA views: wmma_mma_m16n16k16_f16_row_col_f32_row_load.png.

    With mma=True, `layout` is the (A, B, C) triple or just A (then B and C are not in the name).
    """
    check_format(fmt)
    if mma:
        if isinstance(layout, (tuple, list)):
            a, b, c = layout
            parts = (a.spec.api, "mma", a.spec.shape, a.spec.dtype, a.spec.layout, b.spec.layout,
                     c.spec.dtype, c.spec.layout, a.method)
        else:
            s = layout.spec
            parts = (s.api, "mma", s.shape, s.dtype, s.layout, layout.method)
    else:
        s = layout.spec
        # the spec's key carries the other families' fields (ldmatrix: num4, trans1), so names never collide
        parts = (*s.key.split("."), layout.method)
    return "_".join(parts) + "." + fmt


# ---- every figure of an atlas --------------------------------------------------------------------------------

def mma_triples(specs: Sequence[Any]) -> list[tuple[Any, Any, Any]]:
    """One MMA view per (shape, input type) of every family that has MMA views, as `fraglab layout --mma`
    draws it by default; only triples that `specs` holds whole."""
    from ..apis import FAMILIES

    out: list[tuple[Any, Any, Any]] = []
    for family in FAMILIES.values():
        if family.mma_views is not None:
            out += family.mma_views([s for s in specs if s.api == family.api])
    return out


def layout_digest(layout: Layout) -> str:
    """sha256 of what a figure draws (identity, source, slot map, reads): the figure is current iff it matches."""
    doc = {k: v for k, v in layout.to_dict().items() if k != "fraglab"}
    doc["source"].pop("note", None)  # why a source was chosen is not drawn
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _draw_job(kind: str, layouts: list[Layout], formats: Sequence[str]) -> tuple[list[bytes], list[str]]:
    """One figure (a fragment, or an MMA view of three), encoded in each format, and its layouts' digests for the
    manifest: what a pool worker runs."""
    fig = plot_layout(layouts[0]) if kind == "fragment" else plot_mma(*layouts)
    encoded = [figure_bytes(fig, fmt) for fmt in formats]
    fig.clear()
    return encoded, [layout_digest(lay) for lay in layouts]


def _job_cost(job: tuple[str, list[Layout]]) -> int:
    """Cells drawn: the big grids go to the pool first, so no core is left with one at the end."""
    return sum(lay.spec.rows * lay.spec.cols for lay in job[1])


def _draw_jobs(jobs: list[tuple[str, list[Layout]]], formats: Sequence[str], workers: int,
               progress: Callable[[int, int, str], None]) -> list[tuple[list[bytes], list[str]]]:
    """Every job's encoded files and layout digests, in job order, drawn by `workers` processes (1: in this
    one); progress(done, total, name) after each file."""
    results: list[tuple[list[bytes], list[str]] | None] = [None] * len(jobs)
    total, done = len(jobs) * len(formats), 0

    def finished(i: int, encoded: tuple[list[bytes], list[str]]) -> None:
        nonlocal done
        results[i] = encoded
        for fmt in formats:
            done += 1
            progress(done, total, _job_name(*jobs[i], fmt))

    if workers <= 1:
        for i, job in enumerate(jobs):
            finished(i, _draw_job(*job, formats))
        return results
    import multiprocessing

    # spawn, not fork: the caller may run threads (the progress bar's), which a forked child must not inherit
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        order = sorted(range(len(jobs)), key=lambda i: -_job_cost(jobs[i]))
        futures = {pool.submit(_draw_job, *jobs[i], formats): i for i in order}
        for future in as_completed(futures):
            finished(futures[future], future.result())
    return results


def _job_name(kind: str, lays: list[Layout], fmt: str) -> str:
    return default_figure_name(lays[0] if kind == "fragment" else tuple(lays), fmt, mma=kind == "mma")


def default_workers() -> int:
    """Every core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def generate_all(out_dir: str | os.PathLike, atlas: Any = None, *, formats: Sequence[str] = ("svg",),
                 progress: Callable[[int, int, str], None] | None = None, workers: int | None = None) -> list[Path]:
    """Every fragment of the atlas (method load, MMA reads from the one-hot probe) and one MMA view per
    (shape, input type), in each format; also writes figures.json, the manifest docs tests check.

    The figures are drawn by `workers` processes (default: every core); the files are the same bytes whatever
    the count. progress(done, total, name) is called after each file. Files that an earlier run listed
    in the manifest and this run no longer makes are removed; nothing else in out_dir is touched.
    """
    for fmt in formats:
        check_format(fmt)
    if atlas is None:
        from ..layouts.atlas import load_bundled

        atlas = load_bundled()
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise FigureError("out", f"invalid --out {str(out)!r}: not a folder")

    specs = list(atlas.specs())
    layouts = {spec: _drawn_layout(atlas, spec) for spec in specs}
    jobs: list[tuple[str, list[Layout]]] = [("fragment", [layouts[s]]) for s in specs]
    jobs += [("mma", [layouts[s] for s in triple]) for triple in mma_triples(specs)]
    encoded = _draw_jobs(jobs, formats, workers or default_workers(), progress or (lambda *_: None))
    written: list[Path] = []
    entries = []
    manifest_path = out / MANIFEST_NAME
    with write_many(out) as files:  # all figures and the manifest land together, or none does
        for (kind, lays), (datas, digests) in zip(jobs, encoded):
            for fmt, data in zip(formats, datas):
                name = _job_name(kind, lays, fmt)
                written.append(files.write(name, data))
                entries.append({
                    "file": name, "kind": kind, "format": fmt,
                    "specs": [lay.spec.key for lay in lays],
                    "layouts_sha256": digests,
                    "sha256": hashlib.sha256(data).hexdigest(),
                })
        stale = _stale_files(manifest_path, {e["file"] for e in entries})
        manifest = {
            "generator": f"fraglab {__version__}",
            "matplotlib": _matplotlib_version(),
            "provenance": dict(getattr(atlas, "provenance", {}) or {}),
            "figures": entries,
        }
        files.write(MANIFEST_NAME, json.dumps(manifest, indent=1, sort_keys=True, default=str) + "\n")
    for path in stale:
        path.unlink(missing_ok=True)
    return written


def _drawn_layout(atlas: Any, spec: Any) -> Layout:
    """The atlas' load layout (every holder, reads from the one-hot probe) where the family has one, else the
    first of the family's methods that the atlas holds (mma.sync and wgmma: the identity MMA)."""
    from ..errors import AtlasError

    methods = tuple(spec.family.methods)
    for method in dict.fromkeys((("load",) if "load" in methods else ()) + methods):
        try:
            return atlas.layout(spec, method=method)
        except AtlasError as error:
            last = error
    raise last


def _matplotlib_version() -> str:
    import matplotlib

    return matplotlib.__version__


def _stale_files(manifest_path: Path, keep: set[str]) -> list[Path]:
    """Files an earlier run listed in the manifest that this run no longer makes (nothing else is touched)."""
    if not manifest_path.exists():
        return []
    try:
        old = json.loads(manifest_path.read_text())
        return [manifest_path.parent / Path(e["file"]).name for e in old.get("figures", []) if e["file"] not in keep]
    except (ValueError, KeyError, TypeError, AttributeError):
        return []  # a manifest we cannot read lists nothing we may remove
