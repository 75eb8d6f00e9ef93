"""The layout data model: one fragment's slot map (thread, slot) -> (row, col), its identity and source.

A layout is a value. Every view (grid of holders, per-lane lists, register packing, figures) is
computed from the slot map here; nothing else stores a second copy of it. Thread count is not
hard-wired to a warp, so `wgmma` (128 threads) fits the same structure.

Layout.table() and .figure() are drawn by fraglab.show, a wing above this one, which registers them here
(register_view) when imported; fraglab/__init__.py imports fraglab.show, so they are in place whichever fraglab
module a program imports first, and this wing never imports show/, not even lazily.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._version import __version__
from ..errors import InputError, LayoutFormatError
from .spec import FragmentSpec

SOURCE_KINDS = ("gpu", "atlas", "model")
METHODS = ("load", "mma", "onehot")
NO_ELEMENT = -1  # row/col of a slot that holds no element
UNKNOWN = -1     # mma_reads not measured


# view name ("table", "figure") -> the function drawing it, registered by fraglab.show
_VIEWS: dict[str, Callable[..., Any]] = {}


def register_view(name: str, draw: Callable[..., Any]) -> None:
    """Make Layout.<name>(...) call draw(layout, ...) (fraglab.show registers "table" and "figure")."""
    _VIEWS[name] = draw


def _view(name: str) -> Callable[..., Any]:
    if name not in _VIEWS:  # only when fraglab/__init__.py was bypassed
        raise LookupError(f"no {name} view registered: import fraglab.show first")
    return _VIEWS[name]


@dataclass
class Source:
    """Where a layout came from: kind gpu|atlas|model plus provenance (GPU, versions, date, model scope)."""

    kind: str
    provenance: dict[str, Any] = field(default_factory=dict)
    note: str = ""  # e.g. why --source auto fell back

    def to_dict(self) -> dict[str, Any]:
        out = {"kind": self.kind, **self.provenance}
        if self.note:
            out["note"] = self.note
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Source":
        data = dict(data)
        kind = data.pop("kind")
        note = data.pop("note", "")
        if kind not in SOURCE_KINDS:
            raise LayoutFormatError(f"source kind {kind!r} is not one of {', '.join(SOURCE_KINDS)}")
        return cls(kind, data, note)

    def summary(self) -> str:
        p = self.provenance
        if self.kind == "model":
            return f"model ({p.get('model', 'PTX formulas')}; claims {', '.join(p.get('architectures', []))})"
        gpu = p.get("gpu_name", "unknown GPU")
        cc = p.get("compute_capability", "?")
        text = f"{self.kind}: {gpu} (sm_{cc})"
        if self.kind == "atlas" and p.get("captured"):
            text += f", captured {p['captured']}"
        return text


class SlotShape:
    """Threads and slots per thread of a (thread, slot) -> (row, col) map kept as `row` and `col` arrays of
    shape (threads, num_elements): a Layout, a written layout being checked, a test's stand-in."""

    @property
    def threads(self) -> int:
        return int(self.row.shape[0])

    @property
    def num_elements(self) -> int:
        return int(self.row.shape[1])


@dataclass
class Layout(SlotShape):
    spec: FragmentSpec
    method: str
    source: Source
    row: np.ndarray        # (threads, num_elements) int, NO_ELEMENT where a slot holds nothing
    col: np.ndarray        # same shape
    mma_reads: np.ndarray  # (threads, num_elements) int8: 1 read, 0 ignored, UNKNOWN not measured

    def __post_init__(self):
        self.row = np.asarray(self.row, dtype=np.int32)
        self.col = np.asarray(self.col, dtype=np.int32)
        self.mma_reads = np.asarray(self.mma_reads, dtype=np.int8)
        if self.row.ndim != 2 or self.row.shape != self.col.shape or self.row.shape != self.mma_reads.shape:
            raise LayoutFormatError("row, col and mma_reads must be (threads, num_elements) arrays of one shape")
        held = self.row != NO_ELEMENT
        if np.any(held & ((self.row < 0) | (self.row >= self.spec.rows) | (self.col < 0) | (self.col >= self.spec.cols))):
            raise LayoutFormatError(f"a slot names an element outside the {self.spec.rows}x{self.spec.cols} matrix")
        if np.any((self.row == NO_ELEMENT) != (self.col == NO_ELEMENT)):
            raise LayoutFormatError("row and col must both be null or both be set")

    # ---- derived views (threads, num_elements: SlotShape) --------------------------------------
    def holders(self, row: int, col: int) -> list[tuple[int, int]]:
        """Every (thread, slot) holding element (row, col), in (thread, slot) order."""
        if not (0 <= row < self.spec.rows and 0 <= col < self.spec.cols):
            raise InputError(f"({row}, {col}) is outside the {self.spec.rows}x{self.spec.cols} tile of "
                             f"{self.spec.describe()}: rows 0..{self.spec.rows - 1}, cols 0..{self.spec.cols - 1}",
                             argument="row" if not 0 <= row < self.spec.rows else "col")
        threads, slots = np.nonzero((self.row == row) & (self.col == col))
        return [(int(t), int(s)) for t, s in zip(threads, slots)]

    def to_numpy(self) -> np.ndarray:
        """(threads, slots, 2) int array of (row, col); -1 where a slot holds no element."""
        return np.stack([self.row, self.col], axis=-1).astype(np.int64)

    def table(self, view: str = "grid", lane: int | None = None, width: int = 80):
        """The terminal view as a rich renderable (what `fraglab layout` prints)."""
        return _view("table")(self, view, lane, width)

    def figure(self, **style):
        """A matplotlib Figure of the grid (style: lane=, color_by=, palette=, as `fraglab layout --format png`)."""
        return _view("figure")(self, **style)

    def __repr__(self) -> str:
        s = self.spec
        return (f"<Layout {s.describe()} method={self.method}: {self.threads} threads x {self.num_elements} slots"
                f" -> {s.rows}x{s.cols}>\n  source: {self.source.summary()}"
                f"\n  duplicates {self.duplicate_slots}, empty {self.empty_slots}, missing {self.missing_elements}")

    def holder_grid(self) -> list[list[list[tuple[int, int]]]]:
        """grid[r][c] = every (thread, slot) holding element (r, c), in (thread, slot) order."""
        grid: list[list[list[tuple[int, int]]]] = [[[] for _ in range(self.spec.cols)] for _ in range(self.spec.rows)]
        for t, s in zip(*np.nonzero(self.row != NO_ELEMENT)):
            grid[self.row[t, s]][self.col[t, s]].append((int(t), int(s)))
        return grid

    def holder_count(self) -> np.ndarray:
        """(rows, cols) array: how many slots hold each element."""
        counts = np.zeros((self.spec.rows, self.spec.cols), dtype=np.int32)
        held = self.row != NO_ELEMENT
        np.add.at(counts, (self.row[held], self.col[held]), 1)
        return counts

    def register_of_slot(self) -> np.ndarray:
        """(num_elements,) index of the 32-bit register each slot is packed in (f64: the first of two)."""
        bits = self.spec.element_bits
        return (np.arange(self.num_elements) * bits) // 32

    @property
    def duplicate_slots(self) -> int:
        """Slots holding an element that another slot already holds."""
        counts = self.holder_count()
        return int(np.sum(np.maximum(counts - 1, 0)))

    @property
    def empty_slots(self) -> int:
        return int(np.sum(self.row == NO_ELEMENT))

    @property
    def ignored_slots(self) -> int:
        """Slots the MMA was measured not to read."""
        return int(np.sum(self.mma_reads == 0))

    @property
    def reads_measured(self) -> bool:
        return bool(np.any(self.mma_reads != UNKNOWN))

    @property
    def missing_elements(self) -> int:
        return int(np.sum(self.holder_count() == 0))

    def same_map(self, other: "Layout") -> bool:
        return bool(np.array_equal(self.row, other.row) and np.array_equal(self.col, other.col))

    # ---- JSON / CSV ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        slots = []
        for t in range(self.threads):
            for s in range(self.num_elements):
                held = self.row[t, s] != NO_ELEMENT
                reads = int(self.mma_reads[t, s])
                slots.append({
                    "thread": t, "slot": s,
                    "row": int(self.row[t, s]) if held else None,
                    "col": int(self.col[t, s]) if held else None,
                    "mma_reads": None if reads == UNKNOWN else bool(reads),
                })
        return {
            "fraglab": __version__, **self.spec.to_dict(), "rows": self.spec.rows, "cols": self.spec.cols,
            "threads": self.threads, "num_elements": self.num_elements, "method": self.method,
            "source": self.source.to_dict(), "slots": slots,
        }

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Layout":
        try:
            spec = FragmentSpec.from_dict(data)
            threads = int(data.get("threads", 32))
            ne = int(data["num_elements"])
            row = np.full((threads, ne), NO_ELEMENT, dtype=np.int32)
            col = row.copy()
            reads = np.full((threads, ne), UNKNOWN, dtype=np.int8)
            seen = np.zeros((threads, ne), dtype=bool)
            for entry in data["slots"]:
                t, s = int(entry[_thread_key(entry)]), int(entry["slot"])
                seen[t, s] = True
                if entry["row"] is not None:
                    row[t, s], col[t, s] = int(entry["row"]), int(entry["col"])
                if entry.get("mma_reads") is not None:
                    reads[t, s] = 1 if entry["mma_reads"] else 0
            if not seen.all():
                raise LayoutFormatError("slots must list every (thread, slot) pair")
            return cls(spec, data["method"], Source.from_dict(data["source"]), row, col, reads)
        except (KeyError, TypeError, IndexError) as exc:
            raise LayoutFormatError(f"not a fraglab layout document: {exc!r}") from exc

    @classmethod
    def from_json(cls, text: str) -> "Layout":
        return cls.from_dict(json.loads(text))

    CSV_COLUMNS = ("thread", "slot", "register", "row", "col", "mma_reads")

    def to_csv(self) -> str:
        """One row per (thread, slot); identity and source go in leading '#' comment lines."""
        buf = io.StringIO()
        s = self.spec
        extras = "".join(f" {name}={value}" for name, value in s.extras().items())
        buf.write(f"# fraglab {__version__} {s.api} {s.frag} {s.shape} {s.dtype} {s.layout} method={self.method}{extras}\n")
        buf.write(f"# source: {json.dumps(self.source.to_dict(), sort_keys=True)}\n")
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.CSV_COLUMNS)
        regs = self.register_of_slot()
        for t in range(self.threads):
            for sl in range(self.num_elements):
                held = self.row[t, sl] != NO_ELEMENT
                reads = int(self.mma_reads[t, sl])
                writer.writerow([t, sl, int(regs[sl]),
                                 int(self.row[t, sl]) if held else "", int(self.col[t, sl]) if held else "",
                                 "" if reads == UNKNOWN else int(reads)])
        return buf.getvalue()

    @classmethod
    def from_csv(cls, text: str) -> "Layout":
        lines = text.splitlines()
        header = [ln for ln in lines if ln.startswith("#")]
        if len(header) < 2 or not header[0].startswith("# fraglab "):
            raise LayoutFormatError("CSV lacks the '# fraglab ...' and '# source: ...' header lines")
        words = header[0].split()
        api, frag, shape, dtype, layout = words[3:8]
        method = words[8].split("=", 1)[1]
        extras = dict(w.split("=", 1) for w in words[9:])
        if "num" in extras:
            extras["num"] = int(extras["num"])
        if "trans" in extras:
            extras["trans"] = extras["trans"] == "True"
        source = Source.from_dict(json.loads(header[1].split(":", 1)[1]))
        rows = list(csv.DictReader([ln for ln in lines if not ln.startswith("#")]))
        key = _thread_key(rows[0]) if rows else "thread"
        threads = 1 + max(int(r[key]) for r in rows)
        ne = 1 + max(int(r["slot"]) for r in rows)
        row = np.full((threads, ne), NO_ELEMENT, dtype=np.int32)
        col = row.copy()
        reads = np.full((threads, ne), UNKNOWN, dtype=np.int8)
        for r in rows:
            t, s = int(r[key]), int(r["slot"])
            if r["row"] != "":
                row[t, s], col[t, s] = int(r["row"]), int(r["col"])
            if r["mma_reads"] != "":
                reads[t, s] = int(r["mma_reads"])
        return cls(FragmentSpec(api, frag, shape, dtype, layout, **extras), method, source, row, col, reads)


def _thread_key(entry: dict) -> str:
    """The thread's field in a slot entry: `thread` (the index in the instruction's thread group, 0..127 for
    wgmma), or `lane`, which files written before the one vocabulary used for the same index."""
    return "thread" if "thread" in entry else "lane"


def with_reads(layout: Layout, reads_from: Layout | None) -> Layout:
    """`layout` with mma_reads taken from a one-hot layout of the same fragment (if given)."""
    if reads_from is None:
        return layout
    return Layout(layout.spec, layout.method, layout.source, layout.row, layout.col, reads_from.mma_reads)
