"""The catalogue and the PTX model, checked against the documented formulas and against each other."""

import numpy as np
import pytest

from fraglab.apis import make_spec
from fraglab.apis.wmma import wmma_catalogue
from fraglab.errors import InputError as CatalogueError
from fraglab.layouts.spec import FragmentSpec
from fraglab.apis.wmma import MODEL_ARCHITECTURES, header_slots, model_layout

CATALOGUE = wmma_catalogue()


def test_catalogue_counts_every_wmma_fragment():
    keys = [s.key for s in CATALOGUE]
    assert len(keys) == len(set(keys))
    # f16: 3 shapes x (A, B) x 2 layouts + 3 shapes x 2 accumulators x 2 store layouts
    assert sum(s.dtype == "f16" and s.frag != "accumulator" for s in CATALOGUE) == 12
    assert sum(s.frag == "accumulator" for s in CATALOGUE) == 2 * 13
    # sub-byte WMMA only takes A row-major and B col-major
    assert {(s.frag, s.layout) for s in CATALOGUE if s.dtype in ("u4", "s4", "b1")} == {("matrix_a", "row"), ("matrix_b", "col")}
    assert len(CATALOGUE) == 88


@pytest.mark.parametrize("frag,shape,dtype,layout,argument", [
    ("matrix_c", "m16n16k16", None, "row", "frag"),
    ("matrix_a", "m16n16k32", None, "row", "shape"),
    ("matrix_a", "16x16x16", None, "row", "shape"),
    ("matrix_a", "m16n16k16", "f32", "row", "dtype"),
    ("matrix_a", "m16n16k16", "tf32", "row", "dtype"),
    ("accumulator", "m8n8k4", "f32", "row", "dtype"),
    ("matrix_a", "m8n8k32", "u4", "col", "layout"),
    ("matrix_a", "m16n16k16", "f16", "diag", "layout"),
])
def test_bad_combinations_name_the_argument_and_the_choices(frag, shape, dtype, layout, argument):
    with pytest.raises(CatalogueError) as info:
        make_spec(frag, shape, dtype, layout)
    assert info.value.argument == argument
    assert "valid choices" in str(info.value) or "expected the form" in str(info.value) or "offers" in str(info.value)


def test_spec_dimensions():
    a = make_spec("matrix_a", "m32n8k16")
    b = make_spec("matrix_b", "m32n8k16")
    c = make_spec("accumulator", "m32n8k16")
    assert (a.rows, a.cols, b.rows, b.cols, c.rows, c.cols) == (32, 16, 16, 8, 32, 8)
    assert c.dtype == "f32" and a.dtype == "f16"
    assert FragmentSpec.from_key(a.key) == a


@pytest.mark.parametrize("spec", CATALOGUE, ids=lambda s: s.key)
def test_model_covers_every_element_within_range(spec):
    model = model_layout(spec)
    assert model is not None and model.source.kind == "model"
    assert model.num_elements == header_slots(spec)
    assert model.row.min() >= 0 and model.row.max() < spec.rows and model.col.max() < spec.cols
    counts = model.holder_count()
    assert counts.min() >= 1  # every element has a holder
    # Each element is read by exactly one slot the model marks as read.
    read = np.zeros_like(counts)
    np.add.at(read, (model.row[model.mma_reads == 1], model.col[model.mma_reads == 1]), 1)
    assert (read == 1).all()


def test_model_matches_the_documented_ptx_formulas():
    # Written from ../shared/reference/ptx-fragment-layouts.md, independently of fraglab/model.py.
    acc = model_layout(make_spec("accumulator", "m16n16k16", "f32"))
    a = model_layout(make_spec("matrix_a", "m16n16k16", "f16"))
    dbl = model_layout(make_spec("accumulator", "m8n8k4", "f64"))
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        for i in range(8):
            assert (acc.row[lane, i], acc.col[lane, i]) == (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2))
            expected = (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * ((i >> 2) & 1))
            assert (a.row[lane, i], a.col[lane, i]) == expected
            assert (a.row[lane, i + 8], a.col[lane, i + 8]) == expected  # slot i+8 duplicates slot i
        for i in range(2):
            assert (dbl.row[lane, i], dbl.col[lane, i]) == (g, 2 * t + i)
    assert "sm_90" in MODEL_ARCHITECTURES
    assert a.duplicate_slots == 256 and acc.duplicate_slots == 0
