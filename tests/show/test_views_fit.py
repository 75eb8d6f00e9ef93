"""Terminal views fit their width, keep every label and mark the highlighted lane, for every family."""

import io

import pytest
from rich.text import Text
from view_checks import assert_fits, layout_for, read_bands, render, view_specs

from fraglab.apis import FAMILIES, make_spec
from fraglab.layouts.layout import NO_ELEMENT
from fraglab.layouts.verify import VerifyRow
from fraglab.show import terminal
from fraglab.show.listings import atlas_view, catalogue_view, verify_view
from fraglab.show.tables import banded_tables, layout_view

SPECS = view_specs()
DATA_MOVEMENT = {"ldmatrix", "stmatrix", "movmatrix", "tcgen05"}  # they move data: no MMA reads their slots


@pytest.fixture(scope="module")
def layouts():
    return {spec.key: layout_for(spec) for spec in SPECS}


def test_every_family_contributes_fragments():
    assert {s.api for s in SPECS} == set(FAMILIES)


@pytest.mark.parametrize("width", [80, 60])
@pytest.mark.parametrize("key", [s.key for s in SPECS])
def test_grid_fits_and_every_band_has_every_label(layouts, key, width):
    lay = layouts[key]
    text = render(layout_view(lay, "grid", None, width), width)
    assert_fits(text, width)
    bands = read_bands(text, "r\\c")
    assert bands, text[:400]
    want_rows = [str(r) for r in range(lay.spec.rows)]
    assert all(rows == want_rows for _, rows in bands)
    assert [c for cols, _ in bands for c in cols] == [str(c) for c in range(lay.spec.cols)]


@pytest.mark.parametrize("width", [80, 60])
@pytest.mark.parametrize("key", [s.key for s in SPECS])
def test_lanes_view_fits_and_every_band_has_every_label(layouts, key, width):
    lay = layouts[key]
    text = render(layout_view(lay, "lanes", None, width), width)
    assert_fits(text, width)
    bands = read_bands(text, "thread")
    assert all(rows == [str(t) for t in range(lay.threads)] for _, rows in bands)
    assert [c for cols, _ in bands for c in cols] == [f"x{s}" for s in range(lay.num_elements)]


@pytest.mark.parametrize("key", [s.key for s in SPECS])
def test_lane_highlight_is_a_marker_before_each_element_the_lane_holds(layouts, key):
    lay = layouts[key]
    lane = lay.threads - 1  # the last lane: 31, or 127 for a warpgroup
    held = {(int(r), int(c)) for r, c in zip(lay.row[lane], lay.col[lane]) if r != NO_ELEMENT}
    text = render(layout_view(lay, "grid", lane, 80), 80)
    # one '*' per element the lane holds (its slots of one element are joined by '/'), each followed by the lane
    assert text.count("*") == len(held) + 1  # + the legend's "'*' thread N"
    assert text.count(f"*{lane}.") == len(held)
    assert f"'*' thread {lane} (--thread)" in " ".join(text.split())


def test_wide_wgmma_tile_wraps_into_labelled_bands_at_60_columns():
    lay = layout_for(make_spec("accumulator", "m64n256k16", "f32", None, api="wgmma"))
    text = render(layout_view(lay, "grid", None, 60), 60)
    assert_fits(text, 60)
    bands = read_bands(text, "r\\c")
    assert len(bands) >= 256 // 8  # a cell is at least '127.127' wide: at most 7 of them in 60 columns
    assert [c for cols, _ in bands for c in cols] == [str(c) for c in range(256)]
    assert all(rows == [str(r) for r in range(64)] for _, rows in bands)
    assert f"columns 0..{len(bands[0][0]) - 1} of 0..255" in text


def test_bands_separate_multi_lane_cells_by_two_spaces():
    cells = [[Text("1.0 17.0"), Text("2.0 18.0")], [Text("3.0"), Text("4.0")]]
    text = render(banded_tables("r\\c", ["0", "1"], ["0", "1"], cells, 80, "columns")[0], 80)
    assert "1.0 17.0  2.0 18.0" in text


def test_model_says_unknown_for_what_only_a_gpu_can_tell():
    for family in FAMILIES.values():
        spec = family.specs()[0]
        lay = layout_for(spec)
        if lay.source.kind != "model":
            continue
        words = " ".join(render(layout_view(lay), 80).split())
        if family.api in DATA_MOVEMENT:
            assert "ignored by the MMA: n/a (no MMA reads this fragment)" in words
        else:
            assert "ignored by the MMA: unknown (only a GPU can tell)" in words
        assert "ignored by the MMA: 0" not in words


def _words(text: str) -> set[str]:
    return set(text.split())


@pytest.mark.parametrize("width", [80])
def test_catalogue_fits_and_names_every_fragment(width):
    text = render(catalogue_view(FAMILIES.values()), width)
    assert_fits(text, width)
    words = _words(text)
    for family in FAMILIES.values():
        assert str(len(family.specs())) in words
        for s in family.specs():
            assert {s.frag, s.shape, s.dtype, s.layout, f"{s.rows}x{s.cols}"} <= words, s.key
        if family.note is not None:  # every note is printed whole (as a footnote)
            flat = " ".join(text.split())
            assert all(family.note(s) in flat for s in family.specs() if family.note(s))


def test_atlas_view_fits_and_names_every_fragment():
    from fraglab.layouts import atlas as atlas_mod

    found = atlas_mod.load_bundled()
    text = render(atlas_view(found), 80)
    assert_fits(text, 80)
    words = _words(text)
    for spec in found.specs():
        assert {spec.frag, spec.shape, spec.dtype} <= words, spec.key
        if spec.num is not None:
            assert f"x{spec.num}" in words
        for name in ("swizzle", "major"):
            if getattr(spec, name) is not None:
                assert f"{name}={getattr(spec, name)}" in words


def test_verify_view_fits_with_long_problems():
    rows = []
    for family in FAMILIES.values():
        for spec in family.specs()[:2]:
            rows.append(VerifyRow(spec, methods="differ", model="not modelled", atlas="not in atlas",
                                  duplicates=16384, ignored=16384,
                                  problems=["mma and onehot disagree on what the MMA reads",
                                            "the model has 128 slots per thread, the GPU 64"]))
    text = render(verify_view(rows, {"wgmma.accumulator.m64n256k16.f32.row": "out of shared memory"}), 80)
    assert_fits(text, 80)
    flat = " ".join(text.split())
    words = _words(text)
    for r in rows:  # a fragment's words may wrap inside its cell
        assert {r.spec.frag, r.spec.shape, r.spec.dtype, r.spec.layout} <= words
    assert set("mma and onehot disagree on what the MMA reads;".split()) <= words
    assert "refused wgmma.accumulator.m64n256k16.f32.row: out of shared memory" in flat


@pytest.mark.parametrize("value, want", [("0", None), ("-5", None), ("junk", None), ("", None), (" 60 ", 60),
                                         ("132", 132)])
def test_columns_setting_accepts_only_positive_numbers(value, want):
    assert terminal.columns_setting({"COLUMNS": value}) == want


class _Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("columns, tty, want", [
    ("200", False, 80), ("60", False, 60), ("0", False, 80), ("junk", False, 80), ("-3", False, 80),
    ("120", True, 120), ("0", True, 80), ("junk", True, 80),  # a StringIO has no terminal size to ask
])
def test_output_width(columns, tty, want):
    stream = _Tty() if tty else io.StringIO()
    assert terminal.output_width(stream, {"COLUMNS": columns}) == want


@pytest.mark.parametrize("environ, want", [
    ({"LC_ALL": "C"}, True), ({"LANG": "C"}, True), ({"LC_ALL": "POSIX", "LANG": "C.UTF-8"}, True),
    ({"LANG": "en_US.ISO-8859-1"}, True), ({"LANG": "C.UTF-8"}, False),
    ({"LC_CTYPE": "en_US.utf8", "LANG": "C"}, False),
    ({"LC_ALL": "C.UTF-8", "LANG": "C"}, False), ({}, False),
])
def test_ascii_only_follows_the_deciding_locale(environ, want):
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    assert terminal.ascii_only(stream, environ) is want


def test_an_ascii_stream_gets_ascii_boxes_and_no_traceback(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")  # raises on any non-ASCII character
    con = terminal.make_console(stream)
    lay = layout_for(make_spec("matrix_a", "m16n16k16", "f16", "row"))
    con.print(layout_view(lay, "grid", 3, con.width))
    con.print(catalogue_view(FAMILIES.values()))
    con.print("a \u00d7 b \u2026 \u2192 \u2603")
    stream.flush()
    text = raw.getvalue().decode("ascii")
    assert "a x b ... -> ?" in text
    assert "---" in text and "\u2500" not in text


def test_no_color_means_no_ansi_even_when_colour_is_forced(monkeypatch):
    lay = layout_for(make_spec("accumulator", "m16n16k16", "f32", "row"))
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    coloured = terminal.make_console(io.StringIO(), width=80)
    coloured.print(layout_view(lay, "grid", 1, 80))
    assert "\x1b[" in coloured.file.getvalue()  # the check below can fail
    monkeypatch.setenv("NO_COLOR", "1")
    plain = terminal.make_console(io.StringIO(), width=80)
    plain.print(layout_view(lay, "grid", 1, 80))
    assert "\x1b" not in plain.file.getvalue()
    assert "*1.0" in plain.file.getvalue()


def test_a_warpgroup_is_coloured_by_warp():
    from fraglab.show.tables import lane_style

    hue = {lane: lane_style(lane, None, 128).split()[0] for lane in range(128)}
    assert len({hue[w * 32] for w in range(4)}) == 4  # four warps, four hues
    assert all(len({hue[w * 32 + i] for i in range(32)}) == 1 for w in range(4))
    assert len({lane_style(lane, None, 32).split()[0] for lane in range(16)}) == 16  # a warp: a hue per lane
