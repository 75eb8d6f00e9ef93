"""The atlas checker: the bundled atlas passes, and each kind of damage is named with its place."""

import copy
import json
from pathlib import Path

import pytest

from fraglab.layouts.atlas_schema import check_atlas_document

BUNDLED = Path(__file__).resolve().parents[2] / "fraglab" / "data" / "atlas_sm90.json"
KEY = "wmma.matrix_a.m16n16k16.f16.row"


@pytest.fixture(scope="module")
def bundled():
    return json.loads(BUNDLED.read_text())


def test_bundled_atlas_is_valid(bundled):
    assert check_atlas_document(bundled) is None


def test_tile_size_bounds_element_indices(bundled):
    doc = copy.deepcopy(bundled)
    doc["entries"][KEY]["load"]["cells"][0][0] = 256  # the 16x16 tile holds indices 0..255
    assert "cells[0][0] = 256" in check_atlas_document(doc, lambda key: 256)
    assert check_atlas_document(doc) is None  # without tile sizes only the structure is checked


def test_unknown_key_is_reported_through_the_resolver(bundled):
    problem = check_atlas_document(bundled, lambda key: "no such fragment")
    assert problem.startswith("entries[") and problem.endswith("no such fragment")


@pytest.mark.parametrize("damage, expected", [
    (lambda d: d.pop("fraglab_atlas"), "not a fraglab atlas"),
    (lambda d: d.update(fraglab_atlas=7), "reads format 1"),
    (lambda d: d.update(provenance=[]), "'provenance' must be an object"),
    (lambda d: d["provenance"].update(compute_capability="90"), "compute_capability"),
    (lambda d: d.update(entries=[]), "'entries' must be an object"),
    (lambda d: d.update(refused={"x": 3}), "'refused'"),
    (lambda d: d["entries"].update({KEY: {}}), "at least one method"),
    (lambda d: d["entries"][KEY]["load"].pop("reads"), "lacks 'reads'"),
    (lambda d: d["entries"][KEY]["load"]["cells"][5].pop(), "cells[5] has 15 slots"),
    (lambda d: d["entries"][KEY]["load"]["cells"][2].__setitem__(1, -2), "cells[2][1] = -2"),
    (lambda d: d["entries"][KEY]["load"]["cells"][2].__setitem__(1, True), "cells[2][1] = True"),
    (lambda d: d["entries"][KEY]["mma"]["reads"].pop(), "reads must be a list of 32"),
    (lambda d: d["entries"][KEY]["mma"]["reads"].__setitem__(0, "1" * 15 + "x"), "reads[0]"),
])
def test_each_damage_is_named(bundled, damage, expected):
    doc = copy.deepcopy(bundled)
    damage(doc)
    problem = check_atlas_document(doc)
    assert problem is not None and expected in problem, problem


@pytest.mark.parametrize("doc", [None, [], "atlas", 3])
def test_non_objects_are_refused(doc):
    assert check_atlas_document(doc) == "the document is not a JSON object"
