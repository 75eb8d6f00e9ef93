"""Figures a new user can read (CPU only): no text on top of other text, keys and notes inside the page,
notes for every mark drawn, PNG files of a sane size, and 128-thread (warpgroup) grids coloured by warp.

Layouts are written here from the PTX ISA formulas (not from fraglab's models), and overlaps are measured
on matplotlib's own text bounding boxes after drawing.
"""

from __future__ import annotations

import colorsys

import numpy as np
import pytest

from fraglab import show as figures
from fraglab.layouts.layout import Layout
from fraglab.layouts.spec import FragmentSpec

from figure_fixtures import H200, accumulator_m16n16k16, chunked, matrix_a_m16n16k16, matrix_b_m16n16k16, svg_groups, \
    svg_texts

PNG_BUDGET = 500_000   # bytes; the "well under 0.5 MB" is checked with the margins below


# ---- layouts from the PTX ISA ---------------------------------------------------------------------------------

def warpgroup_accumulator(n: int) -> Layout:
    """wgmma m64nNk16 f32 accumulator, 128 threads x N/2 slots (PTX ISA, "wgmma .m64nNk16 register fragment"):
    row = 16*warp + g + 8*((i>>1)&1), col = 2t + (i&1) + 8*(i>>2), g = lane/4, t = lane%4."""
    thread = np.arange(128)[:, None]
    i = np.arange(n // 2)[None, :]
    warp, g, t = thread // 32, (thread % 32) // 4, thread % 4
    row = 16 * warp + g + 8 * ((i >> 1) & 1)
    col = 2 * t + (i & 1) + 8 * (i >> 2)
    spec = FragmentSpec("wgmma", "accumulator", f"m64n{n}k16", "f32", "row")
    return Layout(spec, "mma", H200, row, col, np.ones(row.shape, dtype=np.int8))


def onehot_matrix_a() -> Layout:
    """What the one-hot probe reports for WMMA m16n16k16 A: slots 0..7 feed the MMA, slots 8..15 feed nothing."""
    load = matrix_a_m16n16k16()
    row, col = load.row.copy(), load.col.copy()
    row[:, 8:] = col[:, 8:] = -1
    return Layout(load.spec, "onehot", H200, row, col, load.mma_reads.copy())


def b1_triple():
    return (chunked(FragmentSpec("wmma", "matrix_a", "m8n8k128", "b1", "row")),
            chunked(FragmentSpec("wmma", "matrix_b", "m8n8k128", "b1", "col")),
            chunked(FragmentSpec("wmma", "accumulator", "m8n8k128", "s32", "row")))


# ---- reading a drawn figure -----------------------------------------------------------------------------------

def drawn_texts(fig):
    """(text, bbox in pixels) of every visible, non-empty text of the figure, as the Agg renderer places it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    out = []
    for artist in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_window_extent")):
        if not artist.get_visible() or not artist.get_text().strip():
            continue
        out.append((artist.get_text(), artist.get_window_extent(renderer)))
    from fraglab.show.labels import LabelField

    for field in fig.findobj(LabelField):  # the grids' and keys' labels, as Text would place them
        out += [(text, box) for text, box in field.label_boxes(renderer) if field.get_visible() and text.strip()]
    return out


def overlaps(texts, slack_px: float = 0.5):
    """Pairs of texts whose boxes overlap by more than slack_px both ways (a sweep along x)."""
    boxes = sorted(texts, key=lambda tb: tb[1].x0)
    found = []
    for i, (a, ba) in enumerate(boxes):
        for b, bb in boxes[i + 1:]:
            if bb.x0 >= ba.x1 - slack_px:
                break
            if min(ba.y1, bb.y1) - max(ba.y0, bb.y0) > slack_px:
                found.append((a, b))
    return found


def figure_bbox(fig):
    return fig.bbox


# ---- the four figures issue 10 found wanting ------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: figures.plot_layout(chunked(FragmentSpec("wmma", "matrix_a", "m16n16k16", "u8", "row")), color_by="register"),
    lambda: figures.plot_layout(chunked(FragmentSpec("wmma", "matrix_a", "m16n16k16", "u8", "row")), color_by="slot"),
    lambda: figures.plot_layout(b1_triple()[0]),
    lambda: figures.plot_layout(b1_triple()[1]),
    lambda: figures.plot_mma(*b1_triple()),
    lambda: figures.plot_mma(matrix_a_m16n16k16(), matrix_b_m16n16k16(), accumulator_m16n16k16(),
                             color_by="register"),
    lambda: figures.plot_layout(onehot_matrix_a()),
    lambda: figures.plot_layout(warpgroup_accumulator(8)),
    lambda: figures.plot_layout(warpgroup_accumulator(64)),
    lambda: figures.plot_layout(warpgroup_accumulator(256)),
], ids=["u8-register", "u8-slot", "b1-a", "b1-b", "b1-mma", "mma-register", "onehot", "wgmma-n8", "wgmma-n64",
        "wgmma-n256"])
def test_no_text_overlaps_and_all_of_it_is_inside_the_figure(make):
    fig = make()
    texts = drawn_texts(fig)
    assert len(texts) > 20  # the check saw the figure's labels
    assert overlaps(texts) == []
    page = figure_bbox(fig)
    outside = [t for t, b in texts if b.x0 < page.x0 - 0.5 or b.x1 > page.x1 + 0.5 or b.y0 < page.y0 - 0.5
               or b.y1 > page.y1 + 0.5]
    assert outside == []


def test_overlap_check_can_see_an_overlap():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2))
    fig.text(0.1, 0.5, "colour: 32-bit register")
    fig.text(0.2, 0.5, "T31 x0-31")
    assert overlaps(drawn_texts(fig)) == [("colour: 32-bit register", "T31 x0-31")]


def test_register_key_and_its_title_lie_inside_the_figure():
    """The u8 key has two swatches but a long title: the page is wide enough for the title."""
    fig = figures.plot_layout(chunked(FragmentSpec("wmma", "matrix_a", "m16n16k16", "u8", "row")), color_by="register")
    titles = [(t, b) for t, b in drawn_texts(fig) if t.startswith("colour:")]
    assert [t for t, _ in titles] == ["colour: 32-bit register"]
    box = titles[0][1]
    assert box.x1 <= fig.bbox.x1 and box.x0 >= fig.bbox.x0
    swatches = [t for t, _ in drawn_texts(fig) if t in ("r0", "r1")]
    assert sorted(swatches) == ["r0", "r1"]


def test_b1_k_axis_labels_are_spaced_apart():
    from fraglab.show.labels import AxisLabels

    fig = figures.plot_mma(*b1_triple())
    ax = next(x for x in fig.axes if x.get_gid() == "A")
    fig.canvas.draw()
    columns = next(f for f in ax.get_children() if isinstance(f, AxisLabels) and f.get_gid() == "A-cols")
    boxes = sorted((b for t, b in columns.label_boxes(fig.canvas.get_renderer()) if t), key=lambda b: b.x0)
    assert len(boxes) >= 5
    gaps = [b.x0 - a.x1 for a, b in zip(boxes, boxes[1:])]
    # 3 pt of white space (4 px at 100 dpi) between numbers such as 100 and 104; the labels that ran
    # together as "100104108" stood 2 px apart
    assert min(gaps) >= 4.0


def test_onehot_figure_says_why_slots_are_missing_and_explains_only_what_it_draws(tmp_path):
    data = figures.figure_bytes(figures.plot_layout(onehot_matrix_a()), "svg")
    texts = " ".join(svg_texts(data))
    assert "Slots x8-15 of every lane are listed in no cell" in texts
    assert "the MMA reads no element from them" in texts
    labels = [v for k, v in svg_groups(data).items() if k.startswith("grid-cell-")]
    assert len(labels) == 256 and not any("(" in line for v in labels for line in v)
    assert "(x11)" not in texts  # no parenthesised slot is drawn, so none is explained


def test_parenthesised_slot_is_explained_where_it_is_drawn():
    data = figures.figure_bytes(figures.plot_layout(matrix_a_m16n16k16()), "svg")
    groups = svg_groups(data)
    assert groups["grid-cell-9-3"] == ["T5", "x3", "(x11)"]   # lane 5 = (g 1, t 1): row 9 col 3 in slots 3 and 11
    notes = [t for t in svg_texts(data) if t.startswith("(x11), in parentheses")]
    assert notes and "does not read that slot" in notes[0] and "one-hot" in notes[0]


# ---- file sizes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, budget", [
    (lambda: figures.plot_mma(matrix_a_m16n16k16(), matrix_b_m16n16k16(), accumulator_m16n16k16()), 350_000),
    (lambda: figures.plot_mma(*b1_triple()), 250_000),
    (lambda: figures.plot_layout(warpgroup_accumulator(64)), 350_000),
    (lambda: figures.plot_layout(warpgroup_accumulator(256)), 350_000),
    (lambda: figures.plot_layout(accumulator_m16n16k16()), 150_000),
], ids=["mma", "b1-mma", "wgmma-n64", "wgmma-n256", "accumulator"])
def test_png_files_stay_small(make, budget):
    assert budget < PNG_BUDGET
    data = figures.figure_bytes(make(), "png")
    assert data.startswith(b"\x89PNG") and len(data) < budget


def test_small_png_keeps_every_fill_colour_exactly():
    from io import BytesIO

    from PIL import Image

    lay = accumulator_m16n16k16()
    fig = figures.plot_layout(lay, palette="okabe-ito")
    img = Image.open(BytesIO(figures.figure_bytes(fig, "png"))).convert("RGB")
    present = {tuple(p) for p in np.asarray(img).reshape(-1, 3)}
    for rgb in figures.palette_colors("okabe-ito", 32):
        assert tuple(round(c * 255) for c in rgb) in present
    assert (255, 255, 255) in present  # the page stays white, not a near-white palette neighbour


def test_large_figures_get_fewer_dots_per_inch_but_not_too_few():
    big = figures.plot_mma(matrix_a_m16n16k16(), matrix_b_m16n16k16(), accumulator_m16n16k16())
    small = figures.plot_layout(accumulator_m16n16k16())
    from fraglab.show.gallery import PNG_MAX_SIDE_PX, png_dpi

    assert png_dpi(small) == figures.PNG_DPI
    assert 120 <= png_dpi(big) < figures.PNG_DPI
    assert max(big.get_size_inches()) * png_dpi(big) <= PNG_MAX_SIDE_PX + 1


# ---- 128-thread (warpgroup) views -------------------------------------------------------------------------

def _hue(rgb) -> float:
    return colorsys.rgb_to_hsv(*rgb)[0]


@pytest.mark.parametrize("palette", ["tab20", "okabe-ito"])
def test_warpgroup_colours_one_hue_per_warp_and_distinct_shades_for_lanes(palette):
    colours = figures.palette_colors(palette, 128)
    assert len(set(colours)) == 128
    hues = np.array([_hue(c) for c in colours]).reshape(4, 32)
    centre = [float(np.median(h)) for h in hues]

    def dist(a, b):
        d = abs(a - b) % 1.0
        return min(d, 1.0 - d)

    for w in range(4):  # every lane is nearer its own warp's hue than any other warp's
        for h in hues[w]:
            assert dist(h, centre[w]) < min(dist(h, centre[o]) for o in range(4) if o != w)


def _cell_fill(fig, rows, cols):
    ax = next(x for x in fig.axes if x.get_gid() == "grid")
    (image,) = ax.get_images()  # a pixel per cell
    out = np.asarray(image.get_array(), dtype=float)
    assert out.shape == (rows, cols, 3)
    return out


def test_warpgroup_grid_cells_take_their_warp_colour():
    lay = warpgroup_accumulator(16)
    fills = _cell_fill(figures.plot_layout(lay), 64, 16)
    colours = figures.palette_colors("tab20", 128)
    for thread in (0, 37, 70, 127):
        for slot in range(8):
            assert np.allclose(fills[lay.row[thread, slot], lay.col[thread, slot]], colours[thread])


def test_small_warpgroup_grid_names_thread_and_slot_in_every_cell():
    groups = svg_groups(figures.figure_bytes(figures.plot_layout(warpgroup_accumulator(8)), "svg"))
    cells = {k: v for k, v in groups.items() if k.startswith("grid-cell-")}
    assert len(cells) == 64 * 8
    # thread 37: warp 1, g 1, t 1; slot 3 -> row 16 + 1 + 8, col 2 + 1
    assert cells["grid-cell-25-3"] in (["T37 x3"], ["T37", "x3"])


def test_widest_warpgroup_grid_labels_lanes_inside_their_warp_and_says_so():
    data = figures.figure_bytes(figures.plot_layout(warpgroup_accumulator(256)), "svg")
    runs = {k: v for k, v in svg_groups(data).items() if k.startswith("grid-run-")}
    assert len(runs) == 64 * 128  # every pair of columns a thread holds in one row is labelled
    # row 25, cols 2..3: thread 37 (lane 5 of warp 1); row 63, cols 254..255: thread 127 (lane 31 of warp 3)
    assert runs["grid-run-25-2"] == ["5"] and runs["grid-run-63-254"] == ["31"]
    texts = " ".join(svg_texts(data))
    assert "lane 5 of the warp its hue shows" in texts and "one hue per warp" in texts
    from figure_fixtures import svg_font_sizes

    assert min(svg_font_sizes(data, "grid-run-")) >= 5.5
