"""Layout figures (CPU only): palettes, labels in the files, sizes, determinism, MMA arrangement."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import numpy as np
import pytest

from fraglab import show as figures
from fraglab.layouts.spec import FragmentSpec

from figure_fixtures import (
    FakeAtlas, accumulator_m16n16k16, chunked, matrix_a_m16n16k16, matrix_b_m16n16k16, png_size, svg_font_sizes,
    svg_groups, svg_texts, wgmma_accumulator,
)


def render(fig, tmp_path, fmt, name="fig"):
    path = figures.save_figure(fig, tmp_path / f"{name}.{fmt}", fmt)
    return path.read_bytes()


# ---- module hygiene ----------------------------------------------------------------------------------

def test_importing_figures_does_not_import_matplotlib():
    code = "import sys, fraglab.show.figure, fraglab.show.gallery, fraglab.cli; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.stdout.strip() == "False"


def test_plotting_never_shows_and_leaves_no_pyplot_figure(monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.setattr(plt, "show", lambda *a, **k: pytest.fail("plt.show() called"))
    before = plt.get_fignums()
    fig = figures.plot_layout(accumulator_m16n16k16())
    fig2 = figures.plot_mma(matrix_a_m16n16k16(), matrix_b_m16n16k16(), accumulator_m16n16k16())
    assert plt.get_fignums() == before  # not registered with pyplot: nothing accumulates in a notebook
    from matplotlib.figure import Figure

    assert isinstance(fig, Figure) and isinstance(fig2, Figure)


# ---- palettes and bad input ----------------------------------------------------------------------------

def test_palettes_offer_default_colour_blind_and_grey():
    assert {"tab20", "okabe-ito", "grey"} <= set(figures.PALETTES)
    assert figures.COLOR_BY == ("lane", "slot", "register")


@pytest.mark.parametrize("palette", ["tab20", "okabe-ito"])
def test_32_lanes_get_32_different_colours(palette):
    colours = figures.palette_colors(palette, 32)
    assert len(set(colours)) == 32


# Machado, Oliveira & Fernandes (2009), severity 1.0, on linear RGB.
_CVD = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}


def _lab(srgb: np.ndarray, matrix) -> np.ndarray:
    lin = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    lin = np.clip(lin @ np.asarray(matrix).T, 0, 1)
    xyz = lin @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]).T
    xyz = xyz / np.array([0.9505, 1.0, 1.089])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


def _min_delta_e(colours, matrix) -> float:
    lab = _lab(np.asarray(colours, dtype=float), matrix)
    d = np.sqrt(((lab[:, None] - lab[None]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    return float(d.min())


@pytest.mark.parametrize("vision", sorted(_CVD))
def test_colour_blind_palette_keeps_32_lanes_apart(vision):
    # delta-E 2.3 is a just-noticeable difference; 10 is "clearly another colour".
    assert _min_delta_e(figures.palette_colors("okabe-ito", 32), _CVD[vision]) > 10
    assert _min_delta_e(figures.palette_colors("okabe-ito", 32), np.eye(3)) > 10


def test_tab20_is_not_colour_blind_safe_which_is_why_okabe_ito_exists():
    # Guards the previous test's meaning: the check does tell palettes apart.
    assert _min_delta_e(figures.palette_colors("tab20", 32), _CVD["protanopia"]) < 5


def test_grey_palette_is_grey_and_neighbouring_lanes_differ_in_lightness():
    colours = figures.palette_colors("grey", 32)
    assert all(r == g == b for r, g, b in colours)
    levels = [c[0] for c in colours]
    assert min(abs(levels[i + 1] - levels[i]) for i in range(31)) > 0.15
    assert min(abs(levels[i + 4] - levels[i]) for i in range(28)) > 0.15  # next row of an accumulator
    assert len(set(levels)) == 32


@pytest.mark.parametrize("kwargs, argument, choices", [
    ({"palette": "rainbow"}, "palette", "tab20, okabe-ito"),
    ({"color_by": "warp"}, "color_by", "lane, slot, register"),
])
def test_bad_style_names_the_argument_and_the_choices(kwargs, argument, choices):
    with pytest.raises(figures.FigureError) as err:
        figures.plot_layout(accumulator_m16n16k16(), **kwargs)
    assert err.value.argument == argument
    assert choices in str(err.value)
    assert list(kwargs.values())[0] in str(err.value)


def test_bad_lane_and_format_and_folder_are_figure_errors(tmp_path):
    with pytest.raises(figures.FigureError, match="0..31"):
        figures.plot_layout(accumulator_m16n16k16(), lane=32)
    fig = figures.plot_layout(accumulator_m16n16k16())
    with pytest.raises(figures.FigureError, match="png, svg, pdf"):
        figures.save_figure(fig, tmp_path / "x.gif", "gif")
    written = figures.save_figure(fig, tmp_path / "missing" / "x.svg", "svg")  # folders are made as needed
    assert written == tmp_path / "missing" / "x.svg" and written.read_bytes().startswith(b"<?xml")


def test_plot_mma_rejects_swapped_operands():
    with pytest.raises(figures.FigureError, match="matrix_a"):
        figures.plot_mma(matrix_b_m16n16k16(), matrix_a_m16n16k16(), accumulator_m16n16k16())


# ---- what the files hold --------------------------------------------------------------------------------

def test_svg_cell_labels_follow_the_accumulator_formula(tmp_path):
    groups = svg_groups(render(figures.plot_layout(accumulator_m16n16k16()), tmp_path, "svg"))
    for r in range(16):
        for c in range(16):
            # Inverse of the PTX formula: who should hold (r, c).
            lane = 4 * (r % 8) + (c % 8) // 2
            slot = (c & 1) + 2 * (r // 8) + 4 * (c // 8)
            assert groups[f"grid-cell-{r}-{c}"] == [f"T{lane}", f"x{slot}"], (r, c)


def test_svg_shows_every_holder_and_marks_ignored_slots(tmp_path):
    data = render(figures.plot_layout(matrix_a_m16n16k16()), tmp_path, "svg")
    groups = svg_groups(data)
    # Element (9, 3): g = 1, t = 1 -> lane 5; col 3 = 2t + 1 -> i&1 = 1; row 9 -> (i>>1)&1 = 1: slot 3, copy 11.
    assert groups["grid-cell-9-3"] == ["T5", "x3", "(x11)"]
    texts = " ".join(svg_texts(data))
    assert "256 duplicate slots" in texts and "MMA ignores 256 slots" in texts
    assert "(x11), in parentheses: the lane's slot x[11] holds this element, but the MMA does not read" in texts


def test_svg_title_names_fragment_shape_dtype_layout_and_source(tmp_path):
    texts = " ".join(svg_texts(render(figures.plot_layout(matrix_a_m16n16k16("col")), tmp_path, "svg")))
    for word in ("A", "m16n16k16", "f16", "col_major", "atlas", "NVIDIA H200", "sm_90", "2026-11-20"):
        assert word in texts, word


def test_duplicates_in_other_lanes_list_every_lane(tmp_path):
    spec = FragmentSpec("wmma", "matrix_b", "m16n16k16", "f16", "row")
    base = chunked(spec)  # 8 slots per lane, one holder per element
    row = np.concatenate([base.row, base.row[::-1]], axis=1)  # lane 31-t holds lane t's elements again
    col = np.concatenate([base.col, base.col[::-1]], axis=1)
    from fraglab.layouts.layout import Layout, UNKNOWN

    lay = Layout(spec, "load", base.source, row, col, np.full(row.shape, UNKNOWN, dtype=np.int8))
    groups = svg_groups(render(figures.plot_layout(lay), tmp_path, "svg"))
    # Element 0 (row 0, col 0) is lane 0 slot 0, and lane 31 slot 8.
    assert " ".join(groups["grid-cell-0-0"]).split() == ["T0", "x0", "T31", "x8"]


def test_color_by_register_colours_by_32_bit_register(tmp_path):
    lay = matrix_a_m16n16k16()
    fig = figures.plot_layout(lay, color_by="register", palette="tab20")
    grid = next(ax for ax in fig.axes if ax.get_gid() == "grid")
    colours = figures.palette_colors("tab20", 8)
    fills = _cell_fills(grid, 16, 16)
    # f16: two slots per register. (0, 0) is slot 0 -> r0; (8, 0) slot 2 -> r1; (0, 8) slot 4 -> r2.
    assert np.allclose(fills[0, 0], colours[0])
    assert np.allclose(fills[8, 0], colours[1])
    assert np.allclose(fills[0, 8], colours[2])


def _cell_fills(ax, rows, cols) -> np.ndarray:
    """(rows, cols, 3) fill colour of every cell, read back from the grid's fill image (a pixel per cell)."""
    (image,) = ax.get_images()
    assert image.get_extent() == [0, cols, rows, 0], "the image spans the grid, row 0 on top"
    assert image.get_interpolation() == "none", "cells drawn unsmoothed"
    out = np.asarray(image.get_array(), dtype=float)
    assert out.shape == (rows, cols, 3) and not np.isnan(out).any(), "every cell is filled"
    return out


def test_lane_highlight_keeps_its_colour_and_dims_the_rest():
    lay = accumulator_m16n16k16()
    fig = figures.plot_layout(lay, lane=5, palette="okabe-ito")
    grid = next(ax for ax in fig.axes if ax.get_gid() == "grid")
    fills = _cell_fills(grid, 16, 16)
    lane5 = np.array(figures.palette_colors("okabe-ito", 32)[5])
    holders = np.zeros((16, 16), dtype=bool)
    holders[lay.row[5], lay.col[5]] = True
    assert holders.sum() == 8
    assert np.allclose(fills[holders], lane5)
    # Everything else is lighter than its own undimmed colour.
    undimmed = _cell_fills(next(ax for ax in figures.plot_layout(lay, palette="okabe-ito").axes
                                if ax.get_gid() == "grid"), 16, 16)
    assert np.all(fills[~holders].sum(-1) > undimmed[~holders].sum(-1))


# ---- sizes and legibility -------------------------------------------------------------------------------

def test_png_has_the_pixel_size_of_the_figure_at_150_dpi(tmp_path):
    fig = figures.plot_layout(accumulator_m16n16k16())
    w_in, h_in = fig.get_size_inches()
    width, height = png_size(render(fig, tmp_path, "png"))
    assert (width, height) == (round(w_in * 150), round(h_in * 150))
    # 16 cells of at least a third of an inch each, so labels stay readable.
    assert width >= 16 * 150 / 3


@pytest.mark.parametrize("fmt, magic", [("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_every_format_is_written_whole(tmp_path, fmt, magic):
    data = render(figures.plot_mma(matrix_a_m16n16k16(), matrix_b_m16n16k16(), accumulator_m16n16k16()),
                  tmp_path, fmt)
    assert data.startswith(magic) and len(data) > 10_000
    assert (b"%%EOF" in data[-64:]) if fmt == "pdf" else True
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"fig.{fmt}"]  # no temp file left behind
    assert (tmp_path / f"fig.{fmt}").stat().st_mode & 0o044  # readable by others, not mkstemp's 0600


def test_failed_save_leaves_the_old_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "fig.svg"
    target.write_text("old")
    fig = figures.plot_layout(accumulator_m16n16k16())

    def broken(handle, **kwargs):
        handle.write("<?xml half" if isinstance(handle, io.TextIOBase) else b"<?xml half")  # SVG is drawn as text
        raise RuntimeError("disk full")

    monkeypatch.setattr(fig, "savefig", broken)
    with pytest.raises(RuntimeError):
        figures.save_figure(fig, target, "svg")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["fig.svg"]


@pytest.mark.parametrize("fmt", ["svg", "pdf", "png"])
def test_same_layout_gives_the_same_bytes(tmp_path, fmt):
    a = render(figures.plot_layout(matrix_a_m16n16k16(), lane=3), tmp_path, fmt, "a")
    b = render(figures.plot_layout(matrix_a_m16n16k16(), lane=3), tmp_path, fmt, "b")
    assert a == b
    c = render(figures.plot_layout(matrix_a_m16n16k16(), lane=4), tmp_path, fmt, "c")
    assert c != a  # the comparison can see a difference


@pytest.mark.parametrize("lay, label", [
    (chunked(FragmentSpec("wmma", "matrix_a", "m8n8k128", "b1", "row")), "T5 x0-31"),   # 8 x 128
    (chunked(FragmentSpec("wmma", "matrix_b", "m8n8k128", "b1", "col")), "T5 x0-31"),   # 128 x 8
    (wgmma_accumulator(64), "T37"),                                 # 64 x 64, 128 threads: lanes only
])
def test_large_grids_label_runs_at_a_readable_size(tmp_path, lay, label):
    data = render(figures.plot_layout(lay), tmp_path, "svg")
    groups = svg_groups(data)
    runs = {k: v for k, v in groups.items() if k.startswith("grid-run-")}
    assert runs and not any(k.startswith("grid-cell-") for k in groups)
    assert [label] in runs.values()
    assert min(svg_font_sizes(data, "grid-run-")) >= 5.5
    assert max(svg_font_sizes(data, "grid-run-")) <= 8


@pytest.mark.parametrize("shape, rows, cols", [("m32n8k16", 32, 8), ("m8n32k16", 8, 32)])
def test_32x8_and_8x32_accumulators_label_every_cell_readably(tmp_path, shape, rows, cols):
    lay = chunked(FragmentSpec("wmma", "accumulator", shape, "f32", "row"))
    data = render(figures.plot_layout(lay), tmp_path, "svg")
    groups = svg_groups(data)
    assert len([k for k in groups if k.startswith("grid-cell-")]) == rows * cols
    assert min(svg_font_sizes(data, "grid-cell-")) >= 5.5


def _scattered_warpgroup_256() -> "figures.Layout":
    """64 x 256 over 128 threads, neighbouring cells in different threads: no run longer than one cell."""
    from fraglab.layouts.layout import Layout

    element = np.arange(128)[:, None] + 128 * np.arange(128)[None, :]  # thread t, slot s -> element t + 128 s
    row, col = element // 256, element % 256
    spec = FragmentSpec("wgmma", "accumulator", "m64n256k16", "f32", "row")
    return Layout(spec, "mma", wgmma_accumulator(8).source, row, col, np.ones(row.shape, dtype=np.int8))


def test_grid_too_dense_to_label_says_so_instead_of_printing_specks(tmp_path):
    data = render(figures.plot_layout(_scattered_warpgroup_256()), tmp_path, "svg")
    groups = svg_groups(data)
    assert not any(k.startswith(("grid-cell-", "grid-run-")) for k in groups)
    assert any("too small to label" in t for t in svg_texts(data))
    assert all(size >= 5.5 for size in svg_font_sizes(data, "grid"))


# ---- the MMA view ---------------------------------------------------------------------------------------

def _boxes(fig):
    return {ax.get_gid(): ax.get_position() for ax in fig.axes if ax.get_gid() in ("A", "B", "C")}


def test_mma_view_is_arranged_as_c_equals_a_times_b():
    a, b, c = matrix_a_m16n16k16(), matrix_b_m16n16k16(), accumulator_m16n16k16()
    box = _boxes(figures.plot_mma(a, b, c))
    assert box["A"].x1 < box["C"].x0                                   # A left of C
    assert box["B"].y0 > box["C"].y1                                   # B above C
    assert np.isclose(box["B"].x0, box["C"].x0) and np.isclose(box["B"].width, box["C"].width)   # n aligned
    assert np.isclose(box["A"].y0, box["C"].y0) and np.isclose(box["A"].height, box["C"].height)  # m aligned
    assert box["A"].x1 < box["B"].x0                                   # the top-left quadrant is free


def test_mma_view_shares_one_lane_colouring(tmp_path):
    a, b, c = matrix_a_m16n16k16(), matrix_b_m16n16k16(), accumulator_m16n16k16()
    fig = figures.plot_mma(a, b, c, palette="okabe-ito")
    lane7 = np.array(figures.palette_colors("okabe-ito", 32)[7])
    for name, lay in (("A", a), ("B", b), ("C", c)):
        ax = next(x for x in fig.axes if x.get_gid() == name)
        fills = _cell_fills(ax, lay.spec.rows, lay.spec.cols)
        assert np.allclose(fills[lay.row[7, 0], lay.col[7, 0]], lane7), name
    groups = svg_groups(render(fig, tmp_path, "svg"))
    assert groups["A-cell-9-3"] == ["T5", "x3", "(x11)"] and groups["C-cell-0-0"] == ["T0", "x0"]


def test_mma_view_compresses_a_long_k_but_keeps_c_labelled(tmp_path):
    a = chunked(FragmentSpec("wmma", "matrix_a", "m8n8k128", "b1", "row"))
    b = chunked(FragmentSpec("wmma", "matrix_b", "m8n8k128", "b1", "col"))
    c = chunked(FragmentSpec("wmma", "accumulator", "m8n8k128", "s32", "row"))
    fig = figures.plot_mma(a, b, c, lane=3)
    w, h = fig.get_size_inches()
    assert w < 20 and h < 20
    data = render(fig, tmp_path, "svg")
    groups = svg_groups(data)
    assert len([k for k in groups if k.startswith("C-cell-")]) == 64
    assert ["T3 x0-31"] in [v for k, v in groups.items() if k.startswith("A-run-")]
    assert any("compressed" in t for t in svg_texts(data))


# ---- names, API use with an Axes -------------------------------------------------------------------------

def test_default_names_describe_the_fragment():
    assert figures.default_figure_name(matrix_a_m16n16k16(), "png") == "wmma_matrix_a_m16n16k16_f16_row_load.png"
    assert figures.default_figure_name(accumulator_m16n16k16(layout="col"), "svg") == \
        "wmma_accumulator_m16n16k16_f32_col_load.svg"
    triple = (matrix_a_m16n16k16(), matrix_b_m16n16k16("col"), accumulator_m16n16k16())
    assert figures.default_figure_name(triple, "pdf", mma=True) == "wmma_mma_m16n16k16_f16_row_col_f32_row_load.pdf"
    assert figures.default_figure_name(triple[0], "png", mma=True) == "wmma_mma_m16n16k16_f16_row_load.png"


def test_plot_layout_draws_into_a_given_axes():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 6))
    left, right = fig.subplots(1, 2)
    out = figures.plot_layout(accumulator_m16n16k16(), ax=left, lane=2)
    assert out is fig
    assert left.get_title(loc="left").startswith("wmma accumulator m16n16k16 f32")
    from fraglab.show.labels import LabelField

    cell_labels = [lab for field in left.findobj(LabelField) for lab in field.labels
                   if (lab.gid or "").startswith("grid-cell-")]
    assert len(cell_labels) == 256
    assert len(right.texts) == 0 and not right.findobj(LabelField)
    assert left.get_xlim() == (0, 16) and left.get_ylim() == (16, 0)  # row 0 on top


# ---- generate_all ------------------------------------------------------------------------------------------

SMALL = [FragmentSpec("wmma", f, "m16n16k16", d, "row")
         for f, d in (("matrix_a", "f16"), ("matrix_b", "f16"), ("accumulator", "f32"))]


def test_generate_all_draws_every_fragment_and_the_mma_view(tmp_path):
    calls = []
    paths = figures.generate_all(tmp_path, FakeAtlas(SMALL), formats=("svg", "png"),
                                 progress=lambda done, total, name: calls.append((done, total, name)))
    names = sorted(p.name for p in paths)
    assert names == sorted([
        "wmma_matrix_a_m16n16k16_f16_row_load.svg", "wmma_matrix_a_m16n16k16_f16_row_load.png",
        "wmma_matrix_b_m16n16k16_f16_row_load.svg", "wmma_matrix_b_m16n16k16_f16_row_load.png",
        "wmma_accumulator_m16n16k16_f32_row_load.svg", "wmma_accumulator_m16n16k16_f32_row_load.png",
        "wmma_mma_m16n16k16_f16_row_row_f32_row_load.svg", "wmma_mma_m16n16k16_f16_row_row_f32_row_load.png",
    ])
    assert [c[0] for c in calls] == list(range(1, 9)) and {c[1] for c in calls} == {8}
    import json

    manifest = json.loads((tmp_path / figures.MANIFEST_NAME).read_text())
    assert sorted(e["file"] for e in manifest["figures"]) == names
    assert manifest["provenance"]["gpu_name"] == "NVIDIA H200"


def test_generate_all_is_deterministic(tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    figures.generate_all(first, FakeAtlas(SMALL), formats=("svg",))  # pdf and png: test_same_layout_...
    figures.generate_all(second, FakeAtlas(SMALL), formats=("svg",))
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir()) and len(names) == 5
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_generate_all_removes_only_figures_it_made_before(tmp_path):
    figures.generate_all(tmp_path, FakeAtlas(SMALL), formats=("svg",))
    (tmp_path / "notes.txt").write_text("mine")
    figures.generate_all(tmp_path, FakeAtlas(SMALL[2:]), formats=("svg",))
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "figures.json", "notes.txt", "wmma_accumulator_m16n16k16_f32_row_load.svg"]


def test_generate_all_rejects_a_bad_format_before_writing(tmp_path):
    with pytest.raises(figures.FigureError, match="gif"):
        figures.generate_all(tmp_path / "out", FakeAtlas(SMALL), formats=("svg", "gif"))
    assert not (tmp_path / "out").exists()


def test_summary_says_when_reads_are_only_partly_known(tmp_path):
    lay = matrix_a_m16n16k16()
    from fraglab.layouts.layout import UNKNOWN, Layout, Source

    reads = lay.mma_reads.copy()
    reads[:, 8:] = UNKNOWN  # a model that cannot say whether the copies are read
    model = Layout(lay.spec, "load", Source("model", {"model": "PTX", "architectures": ["sm_90"]}), lay.row, lay.col,
                   reads)
    texts = " ".join(svg_texts(render(figures.plot_layout(model), tmp_path, "svg")))
    assert "whether the MMA reads 256 slots is not known" in texts
    assert "MMA reads every slot" not in texts and "source: model" in texts


# ---- file size: cells as one image, labels as text -------------------------------------------------------------

def test_svg_draws_the_cells_as_one_unsmoothed_image_of_the_layout_colours():
    import base64
    import io
    import re

    from PIL import Image

    from figure_fixtures import svg_texts, wgmma_accumulator

    lay = wgmma_accumulator(64)
    data = figures.figure_bytes(figures.plot_layout(lay), "svg")
    images = re.findall(rb'<image [^>]*xlink:href="data:image/png;base64,([^"]+)"[^>]*>', data)
    assert len(images) == 1, "one image holds every cell"
    assert b"image-rendering:pixelated" in re.search(rb"<image [^>]*>", data).group(0)
    pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(images[0]))).convert("RGB"), dtype=float) / 255
    assert pixels.shape == (lay.spec.rows, lay.spec.cols, 3)
    colours = np.array(figures.palette_colors("tab20", lay.threads))
    thread, slot = 37, 3
    assert np.allclose(pixels[lay.row[thread, slot], lay.col[thread, slot]], colours[thread], atol=1 / 255)
    assert b"<path" in data and not re.search(rb' (?:d|x|y)="[^"]*\d\.\d{3,}', data), "coordinates to 1/100 pt"
    assert b'transform="rotate(-0 ' not in data and len(svg_texts(data)) > lay.spec.rows  # labels stay text
