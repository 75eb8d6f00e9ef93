"""where/what queries, the TikZ picture and the two-layout diff."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from export_cases import atlas_layouts, formula_cases, mma_cases, wgmma_cases, wmma_f16_a_formula
from fraglab.export import diff, query, tikz
from fraglab.export.tile import InputError


# ---- where / what --------------------------------------------------------------------------------

def test_where_lists_both_holders_of_a_replicated_wmma_element():
    a = wmma_f16_a_formula()
    # PTX A order: (3, 5) is row g=3, col 2t+1 with t=2 -> lane 14, slot 1; slot 9 repeats slot 1
    found = query.where(a, 3, 5)
    assert [(h["thread"], h["slot"]) for h in found] == [(14, 1), (14, 9)]
    # f16: two per 32-bit register, the odd slot in the high half
    assert [(h["register"], h["bits"]) for h in found] == [(0, "16-31"), (4, "16-31")]


def test_what_inverts_where_on_every_slot():
    for layout in formula_cases():
        for t in range(0, layout.threads, 7):
            for s in range(layout.num_elements):
                got = query.what(layout, t, s)
                assert (got["row"], got["col"]) == (layout.row[t, s], layout.col[t, s])
                assert any(h["thread"] == t and h["slot"] == s for h in query.where(layout, got["row"], got["col"]))


def test_wgmma_query_names_the_warp():
    acc = wgmma_cases()[1]  # m64n16k16: warp w owns rows 16w..16w+15
    got = query.what(acc, 100, 3)
    assert got["warp"] == 3 and got["lane"] == 4 and got["row"] == 48 + 1 + 8


def test_where_json_has_thread_warp_lane_and_slot():
    doc = json.loads(query.where_text(mma_cases()[2], 9, 3, "json"))
    # C m16n8: row 9 = g + 8 -> g 1; col 3 = 2t + 1 -> t 1: lane 5, slot 3
    assert doc == [{"thread": 5, "warp": 0, "lane": 5, "slot": 3, "register": 3, "bits": "0-31"}]
    assert list(doc[0])[:4] == ["thread", "warp", "lane", "slot"]  # the one vocabulary, in that order


@pytest.mark.parametrize("call, argument", [
    (lambda L: query.where(L, 16, 0), "row"), (lambda L: query.where(L, 0, -1), "col"),
    (lambda L: query.what(L, 32, 0), "thread"), (lambda L: query.what(L, 0, 8), "slot"),
])
def test_out_of_range_queries_name_the_argument(call, argument):
    with pytest.raises(InputError, match=f"invalid --{argument}") as err:
        call(mma_cases()[0])
    assert err.value.argument == argument


# ---- TikZ ----------------------------------------------------------------------------------------

def test_tikz_labels_every_cell_with_its_first_holder():
    layout = wmma_f16_a_formula()
    text = tikz.render(layout)
    assert text.startswith("%") and r"\documentclass[tikz,border=4pt]{standalone}" in text
    labels = re.findall(r"\\fill\[fl\d+\] \((\d+),(\d+)\) rectangle \+\+\(1,1\); \\node at \([\d.]+,[\d.]+\) \{T(\d+)\\\\V(\d+)(\\\\x2)?\}", text)
    assert len(labels) == 256
    for c, r, t, s, twice in labels:
        holders = np.argwhere((layout.row == int(r)) & (layout.col == int(c)))
        assert (int(t), int(s)) == tuple(holders[0]) and bool(twice) == (len(holders) == 2)


def test_tikz_colours_by_warp_give_four_colours_for_wgmma():
    text = tikz.render(wgmma_cases()[1], color_by="warp")
    assert len(re.findall(r"\\definecolor", text)) == 4


def test_tikz_bad_colour_is_an_input_error():
    with pytest.raises(InputError, match="valid choices are lane, slot, register, warp"):
        tikz.render(mma_cases()[0], color_by="hue")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex installed to compile the picture")
def test_tikz_compiles_with_pdflatex(tmp_path):
    (tmp_path / "a.tex").write_text(tikz.render(mma_cases()[0]))
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "a.tex"], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "a.pdf").stat().st_size > 1000


# ---- diff ----------------------------------------------------------------------------------------

def test_diff_of_a_layout_with_itself_is_empty():
    layout = next(x for x in atlas_layouts() if x.spec.key == "wmma.matrix_a.m16n16k16.f16.row")
    assert diff.differing_slots(layout, layout) == [] and diff.differing_cells(layout, layout) == set()
    assert "0 of 512 slots differ" in diff.render_table(layout, layout)


def test_diff_finds_one_changed_slot():
    a = mma_cases()[2]
    b = type(a)(a.spec, a.row.copy(), a.col.copy())
    b.row[5, 2], b.col[5, 2] = 0, 0
    assert diff.differing_slots(a, b) == [{"thread": 5, "slot": 2, "a": [9, 2], "b": [0, 0]}]
    assert diff.differing_cells(a, b) == {(9, 2), (0, 0)}


def test_wmma_accumulator_against_mma_sync_differs_only_past_slot_four():
    """The WMMA m16n16 accumulator is two m16n8 C fragments side by side: slots 0-3 are mma.sync's."""
    wmma = next(x for x in atlas_layouts() if x.spec.key == "wmma.accumulator.m16n16k16.f32.row")
    mma_c = mma_cases()[2]
    rows = diff.differing_slots(wmma, mma_c)
    assert len(rows) == 32 * 4 and {r["slot"] for r in rows} == {4, 5, 6, 7}
    assert all(r["b"] == "absent" for r in rows)
    # cells of columns 8-15 exist only in the wider tile
    assert diff.differing_cells(wmma, mma_c) == {(r, c) for r in range(16) for c in range(8, 16)}


def test_diff_figure_marks_the_differing_cells():
    a = mma_cases()[2]
    b = type(a)(a.spec, a.row.copy(), a.col.copy())
    b.row[5, 2], b.col[5, 2] = 0, 0
    fig = diff.figure(a, b)
    red = [p for ax in fig.axes for p in ax.patches if p.get_edgecolor()[:3] == pytest.approx((0.690, 0, 0), abs=0.01)]
    assert len(red) == 2 * 2  # two cells in each panel
