"""Grid labels drawn by one artist (fraglab.show.labels.LabelField) look exactly as matplotlib Text draws them,
and are still text in SVG; the figures of a whole atlas are the same bytes for one worker or two.

The reference is matplotlib's own Text (ha="center", va="center"): the same labels drawn both ways must give
the same pixels in a PNG and the same boxes, so the speed-up cannot move or change a label unseen.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from fraglab import show as figures

from figure_fixtures import SVG_NS, FakeAtlas, svg_groups, svg_text_style, wgmma_accumulator

# (x, y, lines, colour, rotation): one, two and three lines, short and long, descenders, parentheses, turned
LABELS = [
    (0.5, 0.5, ("T5", "x3"), "black", 0.0),
    (1.5, 0.5, ("T12", "x1", "(x9)"), "white", 0.0),
    (2.5, 0.5, ("T37 x3",), "0.45", 0.0),
    (3.5, 1.0, ("T101 x0-31",), "black", 90.0),
    (0.5, 1.5, ("g", "Tp"), "#e69f00", 0.0),
    (1.5, 1.5, ("31",), "white", 0.0),
]


def _figure():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3.0, 2.0), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    ax.set_xlim(0, 4)
    ax.set_ylim(2, 0)
    ax.set_axis_off()
    return fig, ax


def _with_texts(linespacing):
    fig, ax = _figure()
    texts = [ax.text(x, y, "\n".join(lines), ha="center", va="center", fontsize=6.5, color=colour,
                     rotation=rot, linespacing=None if linespacing == "normal" else linespacing)
             for x, y, lines, colour, rot in LABELS]
    return fig, texts


def _with_field(linespacing):
    from fraglab.show.labels import Label, add_labels

    fig, ax = _figure()
    field = add_labels(ax, [Label(x, y, lines, colour, f"lab-{i}", rot) for i, (x, y, lines, colour, rot)
                            in enumerate(LABELS)], fontsize=6.5, linespacing=linespacing)
    return fig, field


def _pixels(fig, dpi) -> np.ndarray:
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))


@pytest.mark.parametrize("linespacing", [1.1, "normal"])
@pytest.mark.parametrize("dpi", [100, 150])
def test_label_field_draws_the_pixels_text_draws(linespacing, dpi):
    by_text, by_field = _pixels(_with_texts(linespacing)[0], dpi), _pixels(_with_field(linespacing)[0], dpi)
    # about 450 inked pixels at 100 dpi under matplotlib 3.7's glyph rendering, 560 under 3.11's
    assert (by_text != 255).any(axis=-1).sum() > 300, "the labels were drawn"
    assert np.array_equal(by_text, by_field)


def test_pixel_comparison_sees_a_label_one_pixel_off():
    from fraglab.show.labels import Label, add_labels

    fig, ax = _figure()
    moved = [Label(x + (0.02 if i == 0 else 0.0), y, lines, colour, None, rot)
             for i, (x, y, lines, colour, rot) in enumerate(LABELS)]
    add_labels(ax, moved, fontsize=6.5, linespacing=1.1)
    assert not np.array_equal(_pixels(_with_texts(1.1)[0], 100), _pixels(fig, 100))


@pytest.mark.parametrize("linespacing", [1.1, "normal"])
def test_label_boxes_are_the_boxes_of_text(linespacing):
    fig, texts = _with_texts(linespacing)
    fig2, field = _with_field(linespacing)
    fig.canvas.draw()
    fig2.canvas.draw()
    boxes = field.label_boxes(fig2.canvas.get_renderer())
    assert [t for t, _ in boxes] == ["\n".join(lab[2]) for lab in LABELS]
    for text, (_, box) in zip(texts, boxes):
        assert np.allclose(text.get_window_extent().extents, box.extents, atol=1e-6), text.get_text()


def test_svg_labels_are_centred_text_in_groups_at_the_places_text_takes():
    from fraglab.show.gallery import figure_bytes

    by_text = figure_bytes(_with_texts(1.1)[0], "svg")
    by_field = figure_bytes(_with_field(1.1)[0], "svg")
    groups = svg_groups(by_field)
    for i, (_, _, lines, _, _) in enumerate(LABELS):
        assert groups[f"lab-{i}"] == list(lines)
    root = ET.fromstring(by_field)
    texts = {t.text: t for g in root.iter(f"{SVG_NS}g") if (g.get("class") or "").startswith("l")
             for t in g.iter(f"{SVG_NS}text")}
    assert len(texts) == sum(len(lab[2]) for lab in LABELS)
    style = {line: svg_text_style(root, t) for line, t in texts.items()}
    assert "text-anchor: middle" in style["x3"] and "font-size: 6.5px" in style["x3"]
    assert "'DejaVu Sans', sans-serif" in style["x3"]
    assert "fill: #ffffff" in style["31"] and "fill: #737373" in style["T37 x3"]
    assert "fill" not in style["T5"]  # black, as matplotlib writes it
    assert texts["T101 x0-31"].get("transform").startswith("rotate(-90 ")
    assert texts["31"].get("id") == "lab-5" and texts["T5"].get("id") is None  # a one-line label names itself
    # Text writes a line's left end (translate(x y)); the field its centre: same baseline, centre inside the line
    for line in ("T5", "x3", "(x9)", "Tp"):
        left, y = _text_translate(by_text, line)
        assert abs(float(texts[line].get("y")) - y) <= 0.011, line
        assert left < float(texts[line].get("x")) < left + 6.5 * 0.7 * len(line), line


def _text_translate(svg: bytes, line: str) -> tuple[float, float]:
    match = re.search(rb'<text [^>]*transform="translate\(([-\d.]+) ([-\d.]+)\)"[^>]*>' + re.escape(line.encode())
                      + rb"</text>", svg)
    assert match, line
    return float(match.group(1)), float(match.group(2))


def test_a_wgmma_grid_is_not_drawn_as_a_text_per_label():
    """The figure that took 25 s of CPU had a Text per run label (8192 of them): now one artist holds them."""
    from matplotlib.text import Text

    from fraglab.show.labels import LabelField

    fig = figures.plot_layout(wgmma_accumulator(256))
    fields = fig.findobj(LabelField)
    assert sum(len(f.labels) for f in fields) >= 64 * 128
    assert len(fig.findobj(Text)) < 300  # title, notes, ticks, axis names


# ---- the pool ------------------------------------------------------------------------------------------------

def test_one_worker_and_two_give_the_same_files(tmp_path):
    from fraglab.layouts.spec import FragmentSpec

    specs = [FragmentSpec("wmma", f, "m16n16k16", d, "row")
             for f, d in (("matrix_a", "f16"), ("matrix_b", "f16"), ("accumulator", "f32"))]
    specs.append(FragmentSpec("wmma", "matrix_a", "m8n8k128", "b1", "row"))  # runs, not cells
    one, two = tmp_path / "one", tmp_path / "two"
    written = figures.generate_all(one, FakeAtlas(specs), formats=("svg", "png", "pdf"), workers=1)
    figures.generate_all(two, FakeAtlas(specs), formats=("svg", "png", "pdf"), workers=2)
    names = sorted(p.name for p in one.iterdir())
    assert names == sorted(p.name for p in two.iterdir()) and len(names) == len(written) + 1 == 16
    for name in names:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
