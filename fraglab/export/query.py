"""Queries on one layout: who holds element (row, col), and what a thread's slot holds.

`where` lists every holder (a replicated element has several); `what` names one slot's element.
Both give the 32-bit register the slot is packed in and its bits there. Vocabulary: `thread` is the index in
the instruction's thread group (0..127 for wgmma's warpgroup), `warp` its warp and `lane` its lane there. Out-of-range input is an InputError naming the argument and the valid range.
"""

from __future__ import annotations

import json

import numpy as np

from .tile import InputError, register_and_bits, title, warp_of


def _check(value: int, limit: int, argument: str) -> None:
    if not 0 <= value < limit:
        raise InputError(f"invalid --{argument} {value}: valid values are 0..{limit - 1}", argument=argument)


def _slot_info(layout, thread: int, slot: int) -> dict:
    register, bits = register_and_bits(layout, slot)
    return {"thread": thread, "warp": warp_of(thread), "lane": thread % 32, "slot": slot,
            "register": register, "bits": bits}


def where(layout, row: int, col: int) -> list[dict]:
    """Every holder of (row, col): [{"thread", "warp", "lane", "slot", "register", "bits"}], in (thread, slot) order."""
    _check(row, layout.spec.rows, "row")
    _check(col, layout.spec.cols, "col")
    hits = np.argwhere((np.asarray(layout.row) == row) & (np.asarray(layout.col) == col))
    return [_slot_info(layout, int(t), int(s)) for t, s in hits]


def what(layout, thread: int, slot: int) -> dict:
    """{"row", "col", ...} of a thread's slot (row and col None where the slot holds nothing)."""
    _check(thread, layout.threads, "thread")
    _check(slot, layout.num_elements, "slot")
    r, c = int(layout.row[thread, slot]), int(layout.col[thread, slot])
    held = r >= 0
    return {"row": r if held else None, "col": c if held else None, **_slot_info(layout, thread, slot)}


def where_text(layout, row: int, col: int, fmt: str = "table") -> str:
    found = where(layout, row, col)
    if fmt == "json":
        return json.dumps(found)
    head = f"{title(layout)}: element ({row}, {col}) is held by {len(found)} slot{'s' * (len(found) != 1)}"
    lines = [head, f"{'thread':>6} {'warp':>4} {'lane':>4} {'slot':>4} {'register':>8}  bits"]
    lines += [f"{h['thread']:>6} {h['warp']:>4} {h['lane']:>4} {h['slot']:>4} {h['register']:>8}  {h['bits']}"
              for h in found]
    return "\n".join(lines) + "\n"


def what_text(layout, thread: int, slot: int, fmt: str = "table") -> str:
    found = what(layout, thread, slot)
    if fmt == "json":
        return json.dumps(found)
    element = "no element" if found["row"] is None else f"element ({found['row']}, {found['col']})"
    return (f"{title(layout)}: thread {thread} (warp {found['warp']}, lane {found['lane']}) slot {slot} "
            f"holds {element}, in register {found['register']} bits {found['bits']}\n")
