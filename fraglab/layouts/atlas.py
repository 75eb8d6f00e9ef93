"""Atlases: every fragment layout measured on one GPU, with provenance, in one JSON file.

An atlas is recorded on real hardware (`fraglab atlas capture`) and shipped in fraglab/data/ so that a
machine without a GPU still answers from a measurement. Per fragment it keeps the slot map of every
method: `cells[lane][slot]` = row * cols + col (-1: no element) and `reads[lane]` = one character
per slot, '1' read by the MMA, '0' ignored, '?' not measured.
"""

from __future__ import annotations

import copy
import gzip
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from ..errors import AtlasError, FraglabError
from ..files import write_output
from .atlas_schema import check_atlas_document, check_atlas_entry
from .layout import NO_ELEMENT, UNKNOWN, Layout, Source, with_reads
from .spec import FAMILIES, FragmentSpec

ATLAS_FORMAT = 1
DATA_DIR = Path(__file__).resolve().parent.parent / "data"
DEFAULT_NAME = "atlas.json"
_READ_CHARS = {1: "1", 0: "0", UNKNOWN: "?"}
_CHAR_READS = {v: k for k, v in _READ_CHARS.items()}


@dataclass
class Atlas:
    provenance: dict[str, Any]
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> method -> Layout (or its encoding, decoded on use)
    refused: dict[str, str] = field(default_factory=dict)             # key -> why it was not measured
    path: Path | None = None
    # key -> provenance, for entries merged in from another capture (the bundled atlas joins several files)
    entry_provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    entries_checked: bool = True  # False: each entry is checked against the format when first decoded

    @property
    def arch(self) -> int:
        return int(self.provenance.get("compute_capability", 0))

    def specs(self) -> list[FragmentSpec]:
        return [FragmentSpec.from_key(k) for k in self.entries]

    def has(self, spec: FragmentSpec, method: str = "load") -> bool:
        return method in self.entries.get(spec.key, {})

    def raw_layout(self, spec: FragmentSpec, method: str) -> Layout | None:
        """The layout as recorded (decoded on first use, so loading an atlas stays cheap)."""
        methods = self.entries.get(spec.key, {})
        found = methods.get(method)
        if isinstance(found, dict):
            if not self.entries_checked:
                problem = check_atlas_entry(spec.key, {method: found}, tile_size)
                if problem:
                    raise AtlasError(f"{self.path or 'atlas'}: {problem}")
            found = methods[method] = _decode(spec, method, found, self.source(spec.key))
        return found

    def layout(self, spec: FragmentSpec, method: str = "load") -> Layout:
        """The recorded layout; `load` gets mma_reads from the one-hot probe of the same capture."""
        found = self.raw_layout(spec, method)
        if found is None:
            why = self.refused.get(spec.key)
            raise AtlasError(f"the atlas ({self.describe()}) holds no {method} layout of {spec.describe()}"
                             + (f": {why}" if why else ""))
        if method == "load":
            found = with_reads(found, self.raw_layout(spec, "onehot"))
        return found

    def source(self, key: str | None = None) -> Source:
        """Where the atlas (or, in a merged atlas, the entry `key`) was measured."""
        prov = dict(self.entry_provenance.get(key, self.provenance))
        if self.path is not None and "atlas_file" not in prov:
            prov["atlas_file"] = self.path.name
        return Source("atlas", prov)

    @classmethod
    def merged(cls, atlases: "list[Atlas]") -> "Atlas":
        """One atlas answering from several captures of one architecture, each entry keeping its provenance."""
        first = atlases[0]
        out = cls(dict(first.provenance), {}, {}, first.path, {}, all(a.entries_checked for a in atlases))
        for atlas in atlases:
            for key, methods in atlas.entries.items():
                if key in out.entries:
                    continue  # the first file that holds a fragment answers for it
                out.entries[key] = methods
                if atlas is not first:
                    prov = dict(atlas.entry_provenance.get(key, atlas.provenance))
                    if atlas.path is not None:
                        prov.setdefault("atlas_file", atlas.path.name)
                    out.entry_provenance[key] = prov
            for key, why in atlas.refused.items():
                out.refused.setdefault(key, why)
        return out

    def describe(self) -> str:
        p = self.provenance
        return f"{p.get('gpu_name', '?')} sm_{p.get('compute_capability', '?')}, captured {p.get('captured', '?')}"

    # ---- serialisation -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON document, a copy: a caller that edits it never edits this atlas (nor the cached bundled one)."""
        entries = {}
        for key, methods in self.entries.items():
            entries[key] = {m: copy.deepcopy(enc) if isinstance(enc, dict) else _encode(enc)
                            for m, enc in methods.items()}
        return {"fraglab_atlas": ATLAS_FORMAT, "provenance": copy.deepcopy(self.provenance), "entries": entries,
                "refused": dict(self.refused)}

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: Path | None = None, deep: bool = True) -> "Atlas":
        """An atlas from its JSON document, checked against the format (`deep`: every entry now)."""
        problem = check_atlas_document(data, tile_size, deep=deep)
        if problem:
            raise AtlasError(f"{path or 'the document'} is not a valid fraglab atlas: {problem}")
        entries = {key: dict(methods) for key, methods in data["entries"].items()}
        return cls(data["provenance"], entries, dict(data.get("refused", {})), path, entries_checked=deep)

    def save(self, path: Path) -> Path | None:
        """Write the atlas (whole or not at all; '-' is stdout); returns the file written."""
        return write_output(path, json.dumps(self.to_dict(), separators=(",", ":"), sort_keys=False) + "\n",
                            default_name=DEFAULT_NAME)


def _encode(layout: Layout) -> dict[str, Any]:
    cells = np.where(layout.row != NO_ELEMENT, layout.row * layout.spec.cols + layout.col, -1)
    reads = ["".join(_READ_CHARS[int(v)] for v in lane) for lane in layout.mma_reads]
    return {"cells": cells.tolist(), "reads": reads}


def _decode(spec: FragmentSpec, method: str, enc: dict[str, Any], source: Source) -> Layout:
    cells = np.asarray(enc["cells"], dtype=np.int32)
    row = np.where(cells >= 0, cells // spec.cols, NO_ELEMENT)
    col = np.where(cells >= 0, cells % spec.cols, NO_ELEMENT)
    reads = np.array([[_CHAR_READS[ch] for ch in lane] for lane in enc["reads"]], dtype=np.int8)
    return Layout(spec, method, source, row, col, reads)


def tile_size(key: str) -> int | str:
    """rows * cols of the fragment an atlas key names, or why the key names no fragment fraglab knows."""
    try:
        spec = FragmentSpec.from_key(key)
    except (FraglabError, TypeError, ValueError) as exc:
        return str(exc)
    if spec.api not in FAMILIES:
        return f"unknown instruction family {spec.api!r} (known: {', '.join(FAMILIES)})"
    if spec not in _catalogue_of(spec.api):
        return f"no such {spec.api} fragment (see `fraglab list --api {spec.api}`)"
    return spec.rows * spec.cols


@lru_cache(maxsize=None)
def _catalogue_of(api: str) -> frozenset:
    return frozenset(FAMILIES[api].specs())


def load(path: Path, deep: bool = True) -> Atlas:
    """Read and check an atlas file (JSON, or gzip-compressed JSON)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise AtlasError(f"no atlas file at {path}", argument="atlas") from None
    except IsADirectoryError:
        raise AtlasError(f"{path} is a folder, not an atlas file", argument="atlas") from None
    except OSError as exc:
        raise AtlasError(f"cannot read {path}: {exc.strerror}", argument="atlas") from None
    try:
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        data = json.loads(raw)
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AtlasError(f"{path} is not a fraglab atlas: not JSON ({exc})", argument="atlas") from None
    return Atlas.from_dict(data, path, deep=deep)


_BUNDLED_NAME = re.compile(r"^atlas_sm(\d+)(?:_[a-z0-9]+)?\.json(?:\.gz)?$")


def bundled_paths() -> dict[int, list[Path]]:
    """Architecture -> the shipped atlas files for it (atlas_sm90.json, atlas_sm90_wgmma.json.gz, ...)."""
    found: dict[int, list[Path]] = {}
    for path in sorted(DATA_DIR.iterdir()):
        match = _BUNDLED_NAME.match(path.name)
        if match:
            found.setdefault(int(match.group(1)), []).append(path)
    return found


# file name -> the instruction families its entries belong to; lets a question about one family skip parsing
# the others' files (the wgmma capture alone is 12 MB of JSON). A file not listed is always read.
INDEX_PATH = DATA_DIR / "atlas_index.json"


@lru_cache(maxsize=1)
def bundled_index() -> dict[str, frozenset]:
    if not INDEX_PATH.is_file():
        return {}
    return {name: frozenset(apis) for name, apis in json.loads(INDEX_PATH.read_text()).items()}


@lru_cache(maxsize=None)
def _load_bundled_files(paths: tuple[Path, ...]) -> Atlas:
    # entries are checked as they are decoded: the shipped files are large and a question needs few entries
    return Atlas.merged([load(p, deep=False) for p in paths])


def load_bundled(arch: int | None = None, api: str | None = None) -> Atlas:
    """The shipped atlas for `arch`, or the closest recorded architecture (the newest when arch is None);
    with `api`, only the files that hold that family are read (every file when api is None)."""
    archs = bundled_paths()
    if not archs:
        raise AtlasError(f"no atlas is bundled in {DATA_DIR}")
    target = max(archs) if arch is None else min(archs, key=lambda a: (abs(a - arch), -a))
    paths = archs[target]
    if api is not None:
        index = bundled_index()
        paths = [p for p in paths if p.name not in index or api in index[p.name]]
        if not paths:   # the index says no file holds it: reading them all would only prove that
            raise AtlasError(f"no atlas bundled for sm_{target} holds {api} layouts")
    return _load_bundled_files(tuple(paths))


def diff(a: Atlas, b: Atlas) -> list[str]:
    """Every slot that differs between two atlases, one line each (plus fragments only one holds)."""
    lines: list[str] = []
    for key in sorted(set(a.entries) | set(b.entries)):
        if key not in b.entries:
            lines.append(f"{key}: only in A")
            continue
        if key not in a.entries:
            lines.append(f"{key}: only in B")
            continue
        spec = FragmentSpec.from_key(key)
        for method in sorted(set(a.entries[key]) | set(b.entries[key])):
            la, lb = a.raw_layout(spec, method), b.raw_layout(spec, method)
            if la is None or lb is None:
                lines.append(f"{key} {method}: only in {'B' if la is None else 'A'}")
                continue
            lines.extend(f"{key} {method}: {line}" for line in diff_layouts(la, lb))
    return lines


def diff_layouts(a: Layout, b: Layout) -> Iterable[str]:
    if a.row.shape != b.row.shape:
        yield f"slot count differs: {a.num_elements} vs {b.num_elements} per thread"
        return
    for lane, slot in zip(*np.nonzero((a.row != b.row) | (a.col != b.col) | (a.mma_reads != b.mma_reads))):
        yield f"thread {lane} slot {slot}: {_slot_text(a, lane, slot)} vs {_slot_text(b, lane, slot)}"


def _slot_text(layout: Layout, lane: int, slot: int) -> str:
    r, c, reads = layout.row[lane, slot], layout.col[lane, slot], layout.mma_reads[lane, slot]
    where = "none" if r == NO_ELEMENT else f"({r},{c})"
    return where + {1: " read", 0: " ignored", UNKNOWN: ""}[int(reads)]
