"""Round trip: for every fragment fraglab ships, each export form checks equal, and a mutation of it is found.

Forms: CuTe (text and JSON, or the swizzled composition where no shape:stride form exists), Triton (text,
JSON, Python) where the map is linear, the table (JSON and CSV). The header form compiles, so it is sampled
here (test_check_header.py); FRAGLAB_CHECK_ALL_HEADERS=1 compiles every one.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from check_cases import cute_texts, mutated_cute, shipped_layouts, triton_texts
from fraglab.check import compare, read_given

LAYOUTS = shipped_layouts()
IDS = [layout.spec.key for layout in LAYOUTS]


def check(form: str, text: str, layout):
    return compare(read_given(form, text, layout), layout)


def test_every_fragment_of_the_catalogue_is_covered():
    """The round trip reaches every fragment `fraglab list` names, measured (atlas) or model only."""
    from fraglab import catalogue
    from fraglab.layouts.spec import FragmentSpec

    listed = {FragmentSpec.from_dict(row).key for row in catalogue()}
    assert {layout.spec.key for layout in LAYOUTS} == listed
    assert {"atlas", "model"} <= {layout.source.kind for layout in LAYOUTS}


@pytest.mark.parametrize("layout", LAYOUTS, ids=IDS)
def test_cute_round_trip_and_mutation(layout):
    texts = cute_texts(layout)
    if not texts:  # only a layout with empty slots has neither form; every shipped register fragment has one
        assert layout.empty_slots > 0, layout.spec.key
        return
    for text in texts:
        result = check("cute", text, layout)
        assert result.equal, (layout.spec.key, text, result.differing[:3])
    moved = check("cute", mutated_cute(texts[-1]), layout)
    assert not moved.equal and moved.differing


@pytest.mark.parametrize("layout", LAYOUTS, ids=IDS)
def test_triton_round_trip_and_mutation(layout):
    texts = triton_texts(layout)
    if not texts:
        assert layout.num_elements & (layout.num_elements - 1) or layout.empty_slots or layout.threads & (
            layout.threads - 1), f"{layout.spec.key} has power-of-two sizes and no empty slot, yet no linear form"
        return
    for text in texts:
        result = check("triton", text, layout)
        assert result.equal, (layout.spec.key, text[:200], result.differing[:3])
    doc = json.loads(texts[1])
    r, c = doc["bases"]["register"][0] if doc["bases"]["register"] else doc["bases"]["lane"][0]
    which = "register" if doc["bases"]["register"] else "lane"
    doc["bases"][which][0] = [r ^ 1, c]  # one row further for every index with that bit set
    moved = check("triton", json.dumps(doc), layout)
    assert not moved.equal
    threads, slots = np.meshgrid(np.arange(layout.threads), np.arange(layout.num_elements), indexing="ij")
    bit_set = ((slots if which == "register" else threads % 32) & 1).astype(bool)
    assert {(d["thread"], d["slot"]) for d in moved.differing} == {(int(t), int(s)) for t, s in np.argwhere(bit_set)}


@pytest.mark.parametrize("layout", LAYOUTS, ids=IDS)
def test_table_round_trip_and_mutation(layout):
    as_json, as_csv = layout.to_json(), layout.to_csv()
    for text in (as_json, as_csv):
        result = check("table", text, layout)
        assert result.equal and not result.notes, (layout.spec.key, result.notes)
    # two slots with different elements swap them: exactly those two differ
    held = np.argwhere(layout.row >= 0)
    first = tuple(int(x) for x in held[0])
    element = (layout.row[first], layout.col[first])
    second = next(tuple(int(x) for x in p) for p in held if (layout.row[tuple(p)], layout.col[tuple(p)]) != element)
    doc = json.loads(as_json)
    entries = {(e["thread"], e["slot"]): e for e in doc["slots"]}
    a, b = entries[first], entries[second]
    (a["row"], a["col"]), (b["row"], b["col"]) = (b["row"], b["col"]), (a["row"], a["col"])
    moved = check("table", json.dumps(doc), layout)
    assert [(d["thread"], d["slot"]) for d in moved.differing] == sorted([first, second])
    lines = as_csv.splitlines()
    header_at = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    cells = lines[header_at + 1].split(",")  # thread 0 slot 0 gets an element no slot of the tile has
    cells[3], cells[4] = str(layout.spec.rows), "0"
    lines[header_at + 1] = ",".join(cells)
    moved = check("table", "\n".join(lines), layout)
    assert [(d["thread"], d["slot"], d["given"]) for d in moved.differing] == [(0, 0, [layout.spec.rows, 0])]


def test_older_tables_that_call_the_thread_lane_still_read():
    """Files written before the one vocabulary: JSON slots and the CSV column say `lane` for the thread."""
    layout = next(x for x in LAYOUTS if x.spec.api == "wgmma" and x.spec.frag == "accumulator")
    doc = json.loads(layout.to_json())
    for entry in doc["slots"]:
        entry["lane"] = entry.pop("thread")
    result = check("table", json.dumps(doc), layout)
    assert result.equal and "older file" in result.notes[0]
    csv_text = layout.to_csv().replace("\nthread,slot,", "\nlane,slot,")
    assert "\nlane,slot," in csv_text
    assert check("table", csv_text, layout).equal
    assert np.array_equal(read_given("table", csv_text, layout).row, layout.row)
