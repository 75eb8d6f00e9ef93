"""CuTe and Triton forms: each export is evaluated here (by the test's own evaluator) and compared slot by slot."""

from __future__ import annotations

import json

import numpy as np
import pytest

from export_cases import (atlas_layouts, empty_slot_case, family_layouts, formula_cases, layout_name,
                          mma_cases, scrambled_case, swizzled_case, wmma_f16_a_formula)
from fraglab.export import cute, linear
from fraglab.export.tile import NoExportForm

ALL = formula_cases() + atlas_layouts() + family_layouts()
IDS = [layout_name(x) for x in ALL]


def grid(layout):
    """Every (thread, slot) as two integer arrays of the layout's shape."""
    return np.meshgrid(np.arange(layout.threads), np.arange(layout.num_elements), indexing="ij")


def eval_cute(doc: dict, thread, slot):
    """CuTe layout evaluation from the JSON: each mode splits its index colexicographically (numpy arrays)."""
    total = 0
    for coord, shape, stride in zip((thread, slot), doc["shape"], doc["stride"]):
        shape = shape if isinstance(shape, list) else [shape]
        stride = stride if isinstance(stride, list) else [stride]
        for extent, step in zip(shape, stride):
            total = total + (coord % extent) * step
            coord = coord // extent
        assert np.all(coord == 0), "index past the mode's size"
    return total


def eval_linear(doc: dict, thread, slot):
    """XOR of the basis vectors of the set bits of register, lane and warp (numpy arrays)."""
    row = col = 0
    for dim, value in (("register", slot), ("lane", thread % 32), ("warp", thread // 32)):
        for bit, (r, c) in enumerate(doc["bases"][dim]):
            on = (value >> bit) & 1
            row = row ^ (on * r)
            col = col ^ (on * c)
    return row, col


def test_known_sm80_a_operand_matches_cutlass():
    a = mma_cases()[0]
    doc = json.loads(cute.render(a, "json"))
    # CUTLASS mma_traits_sm80.hpp, SM80_16x8x16_F16F16F16F16_TN ALayout
    assert doc == {"shape": [[4, 8], [2, 2, 2]], "stride": [[32, 1], [16, 8, 128]]}
    assert cute.to_cute(a).text() == "((4,8),(2,2,2)):((32,1),(16,8,128))"


def test_known_sm80_c_operand_matches_cutlass():
    c = mma_cases()[2]
    # CUTLASS SM80_16x8_Row: Shape<Shape<_4,_8>,Shape<_2,_2>>, Stride<Stride<_32,_1>,Stride<_16,_8>>
    assert json.loads(cute.render(c, "json")) == {"shape": [[4, 8], [2, 2]], "stride": [[32, 1], [16, 8]]}


def eval_flat(doc: dict, offset):
    """A layout taking one index: colexicographic over all its factors, modes flattened in order."""
    factors = [(e, d) for shape, stride in zip(doc["shape"], doc["stride"])
               for e, d in zip(shape if isinstance(shape, list) else [shape],
                               stride if isinstance(stride, list) else [stride])]
    total = 0
    for extent, step in factors:
        total = total + (offset % extent) * step
        offset = offset // extent
    return total


def eval_composed(composed: dict, thread, slot):
    """The nearest composed form L o Swizzle<B,M,S> o (T,V):(V,1) (numpy arrays)."""
    bits, base, shift = composed["swizzle"]
    offset = thread * composed["offset"]["stride"][0] + slot
    yyy = ((1 << bits) - 1) << (base + shift)
    return eval_flat(composed["layout"], offset ^ ((offset & yyy) >> shift))


@pytest.mark.parametrize("layout", ALL, ids=IDS)
def test_cute_form_reproduces_every_slot(layout):
    """The shape:stride form, or where none exists (swizzled shared memory) the nearest composed form."""
    rows = layout.spec.rows
    try:
        doc = json.loads(cute.render(layout, "json"))
        evaluate = lambda t, s: eval_cute(doc, t, s)  # noqa: E731
    except NoExportForm as err:
        if (np.asarray(layout.row) < 0).any():  # mma.sp metadata: unselected lanes hold nothing, no CuTe form
            assert "hold no element" in err.reason
            return
        composed = err.composed
        assert composed is not None and "swizzle" in composed, str(err)
        evaluate = lambda t, s: eval_composed(composed, t, s)  # noqa: E731
    index = evaluate(*grid(layout))
    if layout.spec.frag == "matrix_b":  # CUTLASS's BLayout indexes the (N,K) tile: index = n + k * N
        n = layout.spec.cols
        assert np.array_equal(index % n, layout.col) and np.array_equal(index // n, layout.row)
        return
    assert np.array_equal(index % rows, layout.row) and np.array_equal(index // rows, layout.col)


def power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


@pytest.mark.parametrize("layout", ALL, ids=IDS)
def test_linear_form_reproduces_every_slot(layout):
    if (np.asarray(layout.row) < 0).any():  # mma.sp metadata: a linear map sends every index to an element
        with pytest.raises(NoExportForm, match="hold no element"):
            linear.render(layout, "json")
        return
    if not power_of_two(layout.num_elements):  # wgmma m64n24: 12 slots; Triton's dims are powers of two
        with pytest.raises(NoExportForm, match=f"{layout.num_elements} slots is not a power of two"):
            linear.render(layout, "json")
        return
    doc = json.loads(linear.render(layout, "json"))
    assert doc["out_dims"] == ["row", "col"]
    row, col = eval_linear(doc, *grid(layout))
    assert np.array_equal(row, layout.row) and np.array_equal(col, layout.col)


def test_cute_modes_are_coalesced():
    """No factor of 1, and no neighbours that merge (stride[k+1] == shape[k] * stride[k])."""
    for layout in ALL:
        try:
            doc = cute.to_cute(layout)
        except NoExportForm:
            continue  # swizzled shared memory: covered by the composed-form test

        for shape, stride in ((doc.thread_shape, doc.thread_stride), (doc.value_shape, doc.value_stride)):
            if len(shape) > 1:
                assert 1 not in shape, layout_name(layout)
            for k in range(len(shape) - 1):
                assert stride[k + 1] != shape[k] * stride[k], (layout_name(layout), shape, stride)


def test_duplicated_slots_are_a_stride_zero_factor_and_a_zero_basis():
    """WMMA f16 A: slots 8-15 repeat 0-7; CuTe says (2):(0) for slot bit 3, Triton a [0, 0] register basis."""
    a = wmma_f16_a_formula()
    found = cute.to_cute(a)
    assert found.value_shape[-1] == 2 and found.value_stride[-1] == 0
    assert json.loads(linear.render(a, "json"))["bases"]["register"][3] == [0, 0]


def test_wgmma_has_warp_bases_of_sixteen_rows():
    acc = [c for c in formula_cases() if c.spec.api == "wgmma"][-1]
    doc = json.loads(linear.render(acc, "json"))
    assert doc["bases"]["warp"] == [[16, 0], [32, 0]]


def test_xor_swizzle_has_no_cute_form_but_a_swizzled_composition_and_is_linear():
    case = swizzled_case()
    with pytest.raises(NoExportForm) as err:
        cute.to_cute(case)
    assert "no CuTe shape:stride form" in str(err.value) and err.value.exit_code == 2
    # offset 8g + 2t + i: bits 0-2 (2t + i) XOR bits 3-5 (g) is CuTe's Swizzle<3,0,3>
    assert err.value.composed["swizzle"] == [3, 0, 3]
    index = eval_composed(err.value.composed, *grid(case))
    assert np.array_equal(index % 8, case.row) and np.array_equal(index // 8, case.col)
    row, col = eval_linear(json.loads(linear.render(case, "json")), *grid(case))
    assert np.array_equal(row, case.row) and np.array_equal(col, case.col)


def test_empty_slots_give_the_nearest_composed_form():
    case = empty_slot_case()
    with pytest.raises(NoExportForm) as err:
        cute.to_cute(case)
    assert "hold no element" in err.value.reason
    # the kept slots 0-1 are the m8n8k4 f64 C layout: ((4,8),2):((16,1),8) on an 8x8 tile
    assert err.value.nearest.startswith("((4,8),2):((16,1),8) composed with the slot selection 0-1")
    with pytest.raises(NoExportForm):
        linear.to_linear(case)


def test_scrambled_map_has_neither_form_and_says_where():
    case = scrambled_case()
    with pytest.raises(NoExportForm, match="no CuTe"):
        cute.to_cute(case)
    with pytest.raises(NoExportForm, match=r"not linear over GF\(2\): thread \d+ slot \d+"):
        linear.to_linear(case)


def test_triton_snippet_carries_the_bases():
    a = mma_cases()[0]
    text = linear.render(a, "python")
    assert "gl.DistributedLinearLayout(" in text and "shape=[16, 16]" in text
    # a0 -> a1 is one column over; a1 -> a2 eight rows down; a3 -> a4 eight columns over
    assert "reg_bases=[[0, 1], [8, 0], [0, 8]]" in text
    assert "lane_bases=[[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]" in text
    compile(text, "snippet", "exec")  # valid Python


def test_cute_cpp_text_names_every_extent():
    text = cute.render(mma_cases()[0], "text", name="SM80_A")
    assert "using SM80_A = cute::Layout<Shape <Shape<_4,_8>,Shape<_2,_2,_2>>," in text
    assert "Stride<Stride<_32,_1>,Stride<_16,_8,_128>>>;" in text
    assert "(T32,V8) -> (M16,K16)" in text
