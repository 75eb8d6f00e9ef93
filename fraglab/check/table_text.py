"""A table of (thread, slot) -> (row, col), as `fraglab layout --format json|csv` writes it, read into a slot map.

JSON: a layout document ({"slots": [{"thread", "slot", "row", "col"}, ...]}) or a bare list of such entries;
CSV: '#' comment lines, then a header naming thread, slot, row and col (other columns are ignored). Files
written before the one vocabulary call the thread `lane` (the warpgroup index for wgmma): both are read.
An empty row/col (JSON null, CSV "") is a slot holding nothing; a (thread, slot) not listed holds nothing too,
with a note.
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from ..errors import InputError
from ..files import clean_text
from .given import GivenLayout, check_size, tile_of

THREAD_KEYS = ("thread", "lane")  # today's name first; `lane` is the older files' spelling


def _bad(why: str) -> InputError:
    return InputError(f"invalid --table: {why}", argument="table")


def _integer(value, what: str, where: str) -> int:
    if type(value) is int:  # the common case first: tables run to 16384 entries
        return value
    if isinstance(value, bool):
        raise _bad(f"{where}: {what} {value!r} is not an integer")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise _bad(f"{where}: {what} {clean_text(value, 20)!r} is not an integer") from None
    if isinstance(value, float) and value != number:
        raise _bad(f"{where}: {what} {value!r} is not an integer")
    return number


def _entries_from_json(doc) -> tuple[list[dict], dict]:
    if isinstance(doc, dict) and "slots" in doc:
        return doc["slots"], doc
    if isinstance(doc, dict) and {"matrix_a", "matrix_b", "accumulator"} <= set(doc):
        raise _bad("this file holds the three fragments of `layout --mma`: write one fragment's table instead")
    if isinstance(doc, list):
        return doc, {}
    raise _bad('expected a layout document {"slots": [...]} or a list of {"thread", "slot", "row", "col"}')


def _entries_from_csv(text: str) -> list[dict]:
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise _bad("the CSV has no header line")
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def _thread_key(entry: dict, where: str) -> str:
    key = next((k for k in THREAD_KEYS if k in entry), None)
    if key is None:
        raise _bad(f"{where} names no thread: expected a 'thread' (or older files' 'lane') field")
    return key


def _element(entry: dict, where: str) -> tuple[int, int]:
    try:
        row, col = entry["row"], entry["col"]
    except KeyError as exc:
        raise _bad(f"{where} has no {exc.args[0]!r} field") from None
    empty_row, empty_col = row is None or row == "", col is None or col == ""
    if empty_row and empty_col:
        return -1, -1
    if empty_row or empty_col:
        raise _bad(f"{where}: row and col must both be empty or both be set")
    row, col = _integer(row, "row", where), _integer(col, "col", where)
    if row < 0 or col < 0:
        raise _bad(f"{where}: a negative row or col")
    return row, col


def parse(text: str) -> tuple[dict[tuple[int, int], tuple[int, int]], dict, list[str]]:
    """{(thread, slot): (row, col)} (-1, -1 for an empty slot), the JSON document's fields, notes."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            entries, doc = _entries_from_json(json.loads(stripped))
        except json.JSONDecodeError as exc:
            raise _bad(f"not JSON ({exc.msg} at line {exc.lineno})") from exc
    else:
        entries, doc = _entries_from_csv(text), {}
    if not isinstance(entries, list) or not entries:
        raise _bad("the table lists no slots")
    found: dict[tuple[int, int], tuple[int, int]] = {}
    notes: list[str] = []
    key = None
    for number, entry in enumerate(entries):
        where = f"entry {number}"
        if not isinstance(entry, dict):
            raise _bad(f"{where} is not an object with thread, slot, row and col")
        if key is None or key not in entry:
            key = _thread_key(entry, where)
            if key == "lane" and not notes:
                notes.append("the table calls the thread 'lane' (an older file): read as the thread index")
        pair = (_integer(entry[key], key, where), _integer(entry.get("slot"), "slot", where))
        if pair[0] < 0 or pair[1] < 0:
            raise _bad(f"{where}: a negative thread or slot")
        element = _element(entry, where)
        if found.get(pair, element) != element:
            raise _bad(f"thread {pair[0]} slot {pair[1]} is listed twice with different elements")
        found[pair] = element
    return found, doc if isinstance(doc, dict) else {}, notes


def read(text: str, measured) -> GivenLayout:
    """The slot map the table `text` lists, over the measured fragment's tile."""
    found, doc, notes = parse(text)
    threads = 1 + max(t for t, _ in found)
    slots = 1 + max(s for _, s in found)
    check_size(threads, slots, "table")
    row = np.full((threads, slots), -1, dtype=np.int64)
    col = row.copy()
    for (t, s), (r, c) in found.items():
        row[t, s], col[t, s] = r, c
    missing = threads * slots - len(found)
    if missing:
        notes.append(f"{missing} (thread, slot) pairs are not listed: taken as holding nothing")
    spec = measured.spec
    named = {k: doc.get(k) for k in ("api", "frag", "shape", "dtype", "layout") if doc.get(k) is not None}
    wanted = {k: getattr(spec, k) for k in named}
    if named and named != wanted:
        told = " ".join(clean_text(v, 24) for v in named.values())
        notes.append(f"the table names {told}; it is compared with {' '.join(str(v) for v in wanted.values())}")
    return GivenLayout("table", f"{threads} threads x {slots} slots", tile_of(measured), row, col, notes)
