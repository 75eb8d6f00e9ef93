"""Each form's spellings, checked against the measured atlas with layouts written down from their sources.

The CuTe layouts are CUTLASS's own (cute/atom/mma_traits_sm80.hpp, mma_traits_sm90_gmma.hpp), the Triton ones
are worked out here from the PTX ISA's fragment figures (mma.m16n8k16 C: row g + 8 * (i >= 2), col 2t + i % 2
with g = lane >> 2, t = lane % 4), not from fraglab's exporters.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from fraglab.check import check, compare, read_given
from fraglab.errors import InputError
from fraglab.export.select import select_layout

MMA = dict(api="mma", shape="m16n8k16", dtype="f16", source="atlas")
SM80_A = "((4,8),(2,2,2)):((32,1),(16,8,128))"
SM80_B = "((4,8),(2,2)):((16,1),(8,64))"      # (T32,V4) -> (N8,K16): CUTLASS's SM80_8x16_Row
SM80_C = "((4,8),(2,2)):((32,1),(16,8))"      # (T32,V4) -> (M16,N8): SM80_16x8_Row


@pytest.mark.parametrize("frag, text", [
    ("matrix_a", SM80_A),
    ("matrix_a", "((_4,_8),(_2,_2,_2)):((_32,_1),(_16,_8,_128))"),   # as cute::print writes static ints
    ("matrix_a", "using ALayout = Layout<Shape <Shape < _4,_8>,Shape < _2,_2,  _2>>,\n"
                 "                       Stride<Stride<_32,_1>,Stride<_16,_8,_128>>>;"),
    ("matrix_a", "cute::Layout<cute::Shape<cute::Shape<Int<4>,Int<8>>,Shape<C<2>,_2,_2>>,"
                 "Stride<Stride<_32,_1>,Stride<_16,_8,_128>>>"),
    ("matrix_b", SM80_B),
    ("accumulator", SM80_C),
    ("matrix_a", '{"shape": [[4, 8], [2, 2, 2]], "stride": [[32, 1], [16, 8, 128]]}'),
])
def test_cutlass_sm80_layouts_are_equal_to_the_measured_ones(frag, text):
    result = check(cute=text, frag=frag, **MMA)
    assert result.equal, result.differing[:3]
    assert result.compared == 32 * {"matrix_a": 8, "matrix_b": 4, "accumulator": 4}[frag]


def test_b_is_read_over_the_nk_tile_so_a_kn_reading_differs():
    """The same strides over fraglab's K x N tile would be another map: the convention matters and is CUTLASS's."""
    assert not check(cute="((4,8),(2,2)):((2,16),(1,8))", frag="matrix_b", **MMA).equal


def test_gmma_accumulator_layout_is_equal_on_a_warpgroup():
    """GMMA::CLayout_64xN: ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)); N = 64."""
    result = check(cute="((4,8,4),(2,2,8)):((128,1,16),(64,8,512))", api="wgmma", frag="accumulator",
                   shape="m64n64k16", dtype="f32", source="atlas")
    assert result.equal and result.compared == 128 * 32


def test_gmma_register_a_layout_is_equal():
    """GMMA::ALayout_64x16 (register-sourced A, wgmma ... RS): ((4,8,4),(2,2,2)):((128,1,16),(64,8,512))."""
    assert check(cute="((4,8,4),(2,2,2)):((128,1,16),(64,8,512))", api="wgmma", frag="matrix_a", shape="m64n8k16",
                 dtype="f16", source="atlas").equal


def test_a_wrong_stride_lists_exactly_the_slots_it_moves():
    wrong = "((4,8),(2,2,2)):((32,1),(16,8,129))"  # the last value factor moves slots 4..7 one row down
    result = check(cute=wrong, frag="matrix_a", **MMA)
    assert {d["slot"] for d in result.differing} == {4, 5, 6, 7}
    assert len(result.differing) == 32 * 4
    one = result.differing[0]
    assert one["given"] == [one["measured"][0] + 1, one["measured"][1]]
    assert (one["warp"], one["lane"]) == (one["thread"] // 32, one["thread"] % 32)


def test_a_layout_of_other_sizes_lists_the_absent_slots():
    result = check(cute="((4,8),(2,2)):((32,1),(16,8))", frag="matrix_a", **MMA)  # 4 values, A has 8
    assert not result.equal
    assert {d["slot"] for d in result.differing if d["given"] == "absent"} == {4, 5, 6, 7}


@pytest.mark.parametrize("text, words", [
    ("((4,8),(2,2,2):((32,1),(16,8,128))", "expected"),
    ("(32):(1)", "two top modes"),
    ("((4,8),(2,2)):((32,1),(16,8,4))", "not congruent"),
    ("((4,8),(2,2)):((32,-1),(16,8))", "negative stride"),
    ("Layout<Shape<_32,Int<N/8>>,Stride<_1,_32>>", "integer"),
    ("", "empty"),
    ("((4,8),2):((16,1),8) composed with the slot selection 0-1 (slots 2 hold nothing)", "slot-selection"),
    ('{"shape": [32, 2]}', "JSON form"),
])
def test_bad_cute_is_one_input_error_naming_the_argument(text, words):
    with pytest.raises(InputError, match=words) as err:
        check(cute=text, frag="matrix_a", **MMA)
    assert err.value.argument == "cute" and err.value.exit_code == 2 and "\n" not in str(err.value)


# ---- Triton -------------------------------------------------------------------------------------------------
# mma.m16n8k16 C: slot i: bit 0 -> col + 1, bit 1 -> row + 8; lane bits 0-1 (t) -> cols 2, 4; bits 2-4 (g) -> rows 1, 2, 4
C_BASES = {"register": [[0, 1], [8, 0]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": []}
PRINTED = """\
 - register=1 -> (0, 1)
   register=2 -> (8, 0)
 - lane=1 -> (0, 2)
   lane=2 -> (0, 4)
   lane=4 -> (1, 0)
   lane=8 -> (2, 0)
   lane=16 -> (4, 0)
 - warp is a size 1 dimension
 - block is a size 1 dimension
where out dims are: [dim0 (size 16), dim1 (size 8)]"""


@pytest.mark.parametrize("text", [
    json.dumps({"bases": C_BASES, "out_dims": ["row", "col"]}),
    PRINTED,
    "#ttg.linear<{register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [], "
    "block = []}>",
    "gl.DistributedLinearLayout(reg_bases=[[0, 1], [8, 0]], lane_bases=[[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],"
    " warp_bases=[], block_bases=[], shape=[16, 8])",
    # Triton printing the out dims minor first: each vector is (dim1, dim0)
    PRINTED.replace("(0, 1)", "(1, 0)").replace("(8, 0)", "(0, 8)").replace("(0, 2)", "(2, 0)")
    .replace("(0, 4)", "(4, 0)").replace("(1, 0)\n   lane=8", "(0, 1)\n   lane=8").replace("(2, 0)\n   lane=16",
                                                                                         "(0, 2)\n   lane=16")
    .replace("lane=16 -> (4, 0)", "lane=16 -> (0, 4)")
    .replace("[dim0 (size 16), dim1 (size 8)]", "[dim1 (size 8), dim0 (size 16)]"),
])
def test_triton_spellings_of_the_mma_accumulator_are_equal(text):
    result = check(triton=text, frag="accumulator", **MMA)
    assert result.equal, result.differing[:3]


def test_zero_warp_bases_past_the_fragment_are_a_broadcast_with_a_note():
    four_warps = dict(C_BASES, warp=[[0, 0], [0, 0]])
    result = check(triton=json.dumps({"bases": four_warps}), frag="accumulator", **MMA)
    assert result.equal and "2 trailing zero warp bases" in result.notes[0]


@pytest.mark.parametrize("text, words", [
    ('{"bases": {"register": [[0, 1]], "offset": [[1, 0]]}}', "unknown in dims offset"),
    (" - register=1 -> (0, 1)\n   register=4 -> (8, 0)", "out of order"),
    ('{"bases": {"register": [[0, 1]], "lane": [[0, 2]], "block": [[1, 0]]}}', "several CTAs"),
    ('{"bases": {"register": [[0, 1, 2]]}}', "integer pairs"),
    ("nothing here", "no register or lane bases"),
])
def test_bad_triton_is_one_input_error(text, words):
    with pytest.raises(InputError, match=words) as err:
        check(triton=text, frag="accumulator", **MMA)
    assert err.value.argument == "triton"


# ---- tables -------------------------------------------------------------------------------------------------
def test_a_hand_written_csv_with_only_the_needed_columns_reads():
    layout = select_layout(frag="accumulator", **MMA)
    lines = ["thread,slot,row,col"] + [f"{t},{s},{layout.row[t, s]},{layout.col[t, s]}"
                                       for t in range(32) for s in range(4)]
    assert compare(read_given("table", "\n".join(lines), layout), layout).equal
    short = compare(read_given("table", "\n".join(lines[:-1]), layout), layout)  # thread 31 slot 3 left out
    assert [(d["thread"], d["slot"], d["given"]) for d in short.differing] == [(31, 3, None)]
    assert "1 (thread, slot) pairs are not listed" in short.notes[-1]


def test_a_table_of_another_fragment_says_so():
    b_doc = select_layout(frag="matrix_b", **MMA).to_json()
    result = check(table=b_doc, frag="matrix_a", **MMA)
    assert not result.equal and any("the table names mma matrix_b" in n for n in result.notes)


@pytest.mark.parametrize("text, words", [
    ('[{"thread": 0, "slot": 0, "row": 1}]', "no 'col' field"),
    ('[{"thread": 0, "slot": 0, "row": 1, "col": null}]', "both be empty or both be set"),
    ('[{"thread": 0, "slot": 0, "row": 1, "col": 1}, {"thread": 0, "slot": 0, "row": 2, "col": 1}]', "twice"),
    ('[{"who": 0, "slot": 0, "row": 1, "col": 1}]', "names no thread"),
    ('[{"thread": 99999999, "slot": 0, "row": 1, "col": 1}]', "pairs"),
    ('[{"thread": "x", "slot": 0, "row": 1, "col": 1}]', "not an integer"),
    ("thread,slot,row,col\n0,0,1.5,1", "not an integer"),
    ("no_such_file.json", "no file"),
])
def test_bad_tables_are_one_input_error(text, words):
    with pytest.raises(InputError, match=words) as err:
        check(table=text, frag="accumulator", **MMA)
    assert err.value.argument == "table"


def test_exactly_one_form_is_needed():
    with pytest.raises(InputError, match="exactly one"):
        check(frag="accumulator", **MMA)
    with pytest.raises(InputError, match="--cute and --triton"):
        check(cute=SM80_C, triton=PRINTED, frag="accumulator", **MMA)


def test_a_file_is_read_when_the_value_names_one(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text(f"// the C layout\n{SM80_C}\n")
    assert check(cute=str(path), frag="accumulator", **MMA).equal
    rows = np.asarray(read_given("cute", str(path), select_layout(frag="accumulator", **MMA)).row)
    assert rows.shape == (32, 4)
