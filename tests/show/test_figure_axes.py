"""A grid's row and column numbers and axis names (fraglab.show.labels.AxisLabels) land where matplotlib's own
axes put tick labels and axis labels, and text measurements kept across figures give the same files.

The reference is matplotlib's Axis with the same ticks (length 0, pad 2 pt, labels 3 pt past them): the same
numbers drawn both ways must give the same pixels and the same boxes.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from fraglab import show as figures

from figure_fixtures import accumulator_m16n16k16, wgmma_accumulator

COLS, ROWS = 12, 6
X_TICKS = [c + 0.5 for c in range(0, COLS, 2)]
Y_TICKS = [r + 0.5 for r in range(ROWS)]


def _axes(title: str = ""):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.0, 3.0), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.2, 0.1, 0.7, 0.55))
    ax.set_xlim(0, COLS)
    ax.set_ylim(ROWS, 0)
    if title:
        ax.set_title(title, fontsize=8, loc="left", pad=12)
    return fig, ax


def _by_matplotlib(title: str = ""):
    fig, ax = _axes(title)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.patch.set_visible(False)
    ax.set_xticks(X_TICKS, [str(int(x)) for x in X_TICKS])
    ax.set_yticks(Y_TICKS, [str(int(y)) for y in Y_TICKS])
    ax.tick_params(axis="x", labelsize=7.5, length=0, pad=2)
    ax.tick_params(axis="y", labelsize=6.0, length=0, pad=2)
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("col (n)", fontsize=8, labelpad=3)
    ax.set_ylabel("row (m)", fontsize=8, labelpad=3)
    return fig, ax


def _by_field(title: str = ""):
    from fraglab.show.labels import add_axis_labels

    fig, ax = _axes(title)
    ax.set_axis_off()
    cols = add_axis_labels(ax, "top", X_TICKS, [str(int(x)) for x in X_TICKS], fontsize=7.5, pad_pt=2,
                           name="col (n)", name_size=8, labelpad_pt=3, gid="g-cols")
    rows = add_axis_labels(ax, "left", Y_TICKS, [str(int(y)) for y in Y_TICKS], fontsize=6.0, pad_pt=2,
                           name="row (m)", name_size=8, labelpad_pt=3, gid="g-rows")
    return fig, ax, cols, rows


def _pixels(fig, dpi) -> np.ndarray:
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))


@pytest.mark.parametrize("dpi", [100, 150])
@pytest.mark.parametrize("title", ["", "a title\nof two lines"])
def test_axis_labels_draw_the_pixels_matplotlib_axes_draw(dpi, title):
    by_axes, by_field = _pixels(_by_matplotlib(title)[0], dpi), _pixels(_by_field(title)[0], dpi)
    assert (by_axes != 255).any(axis=-1).sum() > 300, "the numbers and names were drawn"
    assert np.array_equal(by_axes, by_field)


def test_axis_labels_have_the_strings_and_boxes_of_matplotlib_tick_labels():
    fig, ax = _by_matplotlib("title")
    fig2, ax2, cols, rows = _by_field("title")
    fig.canvas.draw()
    fig2.canvas.draw()
    r = fig2.canvas.get_renderer()
    for field, ticks, label in ((cols, ax.get_xticklabels(), ax.xaxis.label),
                                (rows, ax.get_yticklabels(), ax.yaxis.label)):
        boxes = field.label_boxes(r)
        assert [t for t, _ in boxes] == [t.get_text() for t in ticks]
        for tick, (_, box) in zip(ticks, boxes):
            assert np.allclose(tick.get_window_extent().extents, box.extents, atol=1e-6), tick.get_text()
        assert field.name.get_text() == label.get_text()
        assert np.allclose(field.name.get_window_extent(r).extents, label.get_window_extent().extents, atol=1e-6)
    assert np.allclose(ax2.title.get_window_extent(r).extents, ax.title.get_window_extent().extents, atol=1e-6)


def test_pixel_comparison_sees_a_number_moved():
    from fraglab.show.labels import add_axis_labels

    fig, ax = _axes()
    ax.set_axis_off()
    add_axis_labels(ax, "top", [x + 0.05 for x in X_TICKS], [str(int(x)) for x in X_TICKS], fontsize=7.5,
                    pad_pt=2, name="col (n)", name_size=8, labelpad_pt=3)
    reference, _ = _by_matplotlib()
    ref = reference.axes[0]
    ref.set_yticks([])
    ref.set_ylabel("")
    assert not np.array_equal(_pixels(reference, 100), _pixels(fig, 100))


def test_svg_numbers_are_text_in_a_group_named_by_the_grid():
    from figure_fixtures import svg_groups

    svg = figures.figure_bytes(figures.plot_layout(accumulator_m16n16k16()), "svg")
    groups = svg_groups(svg)
    assert groups["grid-cols"] == [str(c) for c in range(16)]
    assert groups["grid-rows"] == [str(r) for r in range(16)]
    assert b">col (n)</text>" in svg and b">row (m)</text>" in svg


def test_a_grid_draws_its_numbers_with_two_fields_not_matplotlib_ticks():
    from fraglab.show.labels import AxisLabels

    fig = figures.plot_layout(wgmma_accumulator(64))
    grid = next(ax for ax in fig.axes if ax.get_gid() == "grid")
    assert not grid.axison  # matplotlib's axes (a Tick of lines and texts per number) are not drawn
    fields = [a for a in grid.get_children() if isinstance(a, AxisLabels)]
    assert sorted(f.get_gid() for f in fields) == ["grid-cols", "grid-rows"]
    assert all(len(f.labels) >= 8 for f in fields)


# ---- measurements kept across figures -----------------------------------------------------------------------

def test_svg_sizes_scaled_from_one_measurement_are_the_renderer_sizes():
    from matplotlib.backends.backend_svg import RendererSVG
    from matplotlib.font_manager import FontProperties

    from fraglab.show import labels

    renderer = RendererSVG(100, 100, io.StringIO())
    texts = ["T5 x0-31", "(x11)", "127", "gyp", "T101 x0,x1 T37 (x8-15)"]
    for size in (5.5, 6.0, 6.37, 7.5, 8.0, 11.0):
        prop = FontProperties(family="DejaVu Sans", size=size)
        measure = labels._text_measurer(renderer, prop)
        for text in texts:
            assert measure(text) == tuple(renderer.get_text_width_height_descent(text, prop, ismath=False))


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_a_figure_is_the_same_bytes_first_or_after_others(fmt):
    """The process keeps text sizes between figures: a figure drawn after others (at other sizes and dpi) is the
    file it is when drawn first."""
    from fraglab.show import labels

    small = accumulator_m16n16k16()
    labels._MEASURED.clear()
    labels._SVG_SCALES.clear()
    first = figures.figure_bytes(figures.plot_layout(small), fmt)
    figures.figure_bytes(figures.plot_layout(wgmma_accumulator(128)), fmt)  # another dpi, other sizes
    figures.figure_bytes(figures.plot_layout(small, color_by="slot"), fmt)
    assert figures.figure_bytes(figures.plot_layout(small), fmt) == first
