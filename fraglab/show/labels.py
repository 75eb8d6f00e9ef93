"""Many short centred labels (a grid's cells or runs, a key's swatches) drawn by one matplotlib artist.

A matplotlib Text per label costs about 3 ms (its own layout, transforms, font look-up and clip path), and a
wgmma grid has thousands of labels. LabelField measures each distinct line once per drawing and puts every line
where Text(ha="center", va="center") puts it, from the same font metrics, so a figure looks the same. In SVG
each label is vector text centred by text-anchor, inside a group named by the label's id.

This module imports matplotlib: import it only when a figure is drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, NamedTuple, Sequence

import matplotlib
from matplotlib import colors as mcolors
from matplotlib import rcParams
from matplotlib.artist import Artist, allow_rasterization
from matplotlib.backends.backend_mixed import MixedModeRenderer
from matplotlib.backends.backend_svg import RendererSVG
from matplotlib.font_manager import FontProperties, findfont, font_family_aliases, get_font
from matplotlib.text import Text
from matplotlib.transforms import Bbox, IdentityTransform, blended_transform_factory


@dataclass(frozen=True)
class Label:
    """One label: its lines centred on (x, y) in the field's coordinates (data units of the axes)."""

    x: float
    y: float
    lines: tuple[str, ...]
    color: str = "black"
    gid: str | None = None     # the SVG group's id, e.g. grid-cell-3-1
    rotation: float = 0.0      # degrees, counter-clockwise


# matplotlib 3.11 spaces a Text's lines by the font's ascent, descent and line gap; before, by the size of "lp"
_SPACES_BY_LP = matplotlib.__version_info__[:2] < (3, 11)

_HA = ("center", "left", "right")
_VA = ("center", "top", "bottom", "baseline", "center_baseline")


class _Line(NamedTuple):
    text: str
    x: float            # left end of the baseline, display units
    y: float
    width: float


class LabelField(Artist):
    """Labels of one font size and line spacing; linespacing is a float or "normal", as for Text."""

    zorder = 3  # as Text: above the cells, the lines between them and the outlines

    def __init__(self, labels: Iterable[Label], *, fontsize: float, linespacing: float | str = "normal",
                 ha: str = "center", va: str = "center"):
        super().__init__()
        if ha not in _HA or va not in _VA:
            raise ValueError(f"LabelField: ha must be one of {_HA} and va one of {_VA}, not {ha!r}, {va!r}")
        self._labels = [lab for lab in labels if any(lab.lines)]
        self._prop = FontProperties(size=fontsize)
        self._linespacing = linespacing
        self._ha, self._va = ha, va  # how each label's box sits on its (x, y), as Text's ha and va
        self._memo: dict = {}  # the renderer last drawn with, its font extent and line sizes
        self.set_clip_on(False)  # as ax.text: a label is never cut at the axes' edge

    @property
    def labels(self) -> list[Label]:
        return list(self._labels)

    @property
    def fontsize(self) -> float:
        return float(self._prop.get_size_in_points())

    # ---- layout ----------------------------------------------------------------------------------------------

    def _font_extent(self, renderer) -> tuple[float, float, float]:
        """(ascent, descent, line gap) of the font, in display units: what Text spaces lines by (3.11 on)."""
        font = get_font(findfont(self._prop))
        scale = renderer.points_to_pixels(self.fontsize) / font.get_sfnt_table("head")["unitsPerEm"]
        for table_name, gap, ascent, descent in (("OS/2", "sTypoLineGap", "sTypoAscender", "sTypoDescender"),
                                                 ("hhea", "lineGap", "ascent", "descent")):
            table = font.get_sfnt_table(table_name)
            if table is not None:
                return table[ascent] * scale, -table[descent] * scale, table[gap] * scale
        _, height, descent = renderer.get_text_width_height_descent("lp", self._prop, ismath=False)
        return height - descent, descent, 0.0

    def _layout(self, renderer) -> list[tuple[Label, list[_Line], tuple[float, float, float, float]]]:
        """Every label's lines (baseline start, display units) and its box's extents (x0, y0, x1, y1), as Text
        lays out this ha and va (rotation_mode "default": the rotated box is aligned; lines aligned as ha says,
        as Text's multialignment). A label's shape around its anchor is worked out once per text and rotation."""
        shapes: dict[tuple[tuple[str, ...], float], tuple] = {}
        transform = self.get_transform()
        anchors = transform.transform([(lab.x, lab.y) for lab in self._labels]).tolist() if self._labels else []
        out = []
        for lab, (ax, ay) in zip(self._labels, anchors):
            key = (lab.lines, lab.rotation)
            shape = shapes.get(key)
            if shape is None:
                shape = shapes[key] = self._shape(renderer, lab.lines, lab.rotation)
            rows, (x0, y0, x1, y1) = shape
            out.append((lab, [_Line(text, ax + dx, ay + dy, w) for text, dx, dy, w in rows],
                        (ax + x0, ay + y0, ax + x1, ay + y1)))
        return out

    def _shape(self, renderer, lines: tuple[str, ...], rotation: float) -> tuple:
        """([(text, dx, dy, width)] of each line's baseline start, (x0, y0, x1, y1) of the box), both from the
        anchor, in display units: Text._get_layout's arithmetic, in its order, so the sums come out the same."""
        if "metrics" not in self._memo or self._memo["metrics"][0] is not renderer:
            measure = _text_measurer(renderer, self._prop)
            spacing = measure("lp") if _SPACES_BY_LP else self._font_extent(renderer)  # what lines are spaced by
            self._memo["metrics"] = (renderer, spacing, measure)
        _, spacing, measure = self._memo["metrics"]
        ha, va = self._ha, self._va
        sizes = [measure(text) if text else (0.0, 0.0, 0.0) for text in lines]
        stack = _stack_by_lp if _SPACES_BY_LP else _stack_by_font_extent
        tops, bottom, baseline, d = stack(sizes, spacing, self._linespacing)
        rows = [(text, w, y) for text, (w, _, _), y in zip(lines, sizes, tops)]
        width = max(w for _, w, _ in rows)
        cos, sin = _cos_sin(rotation)
        corners = [(x * cos - y * sin, x * sin + y * cos)
                   for x, y in ((0, bottom), (0, 0), (width, 0), (width, bottom))]
        xmin, xmax = min(x for x, _ in corners), max(x for x, _ in corners)
        ymin, ymax = min(y for _, y in corners), max(y for _, y in corners)
        ox = xmin if ha == "left" else xmax if ha == "right" else (xmin + xmax) / 2
        oy = (ymin if va == "bottom" else ymax if va == "top" else (ymin + ymax) / 2 if va == "center"
              else ymin + d if va == "baseline" else ymin + (ymax - ymin) - baseline / 2)
        placed = []
        for text, w, y in rows:
            lx = 0.0 if ha == "left" else width - w if ha == "right" else (width - w) / 2
            placed.append((text, lx * cos - y * sin - ox, lx * sin + y * cos - oy, w))
        return placed, (xmin - ox, ymin - oy, xmax - ox, ymax - oy)

    def label_boxes(self, renderer) -> list[tuple[str, Bbox]]:
        """(text, box in display units) of every label, as Text.get_window_extent gives them."""
        return [("\n".join(lab.lines), Bbox.from_extents(*box)) for lab, _, box in self._layout(renderer)]

    def get_window_extent(self, renderer=None) -> Bbox:
        renderer = renderer or self.figure._get_renderer()
        return _union(self._layout(renderer)) or Bbox.null()

    # ---- drawing ---------------------------------------------------------------------------------------------

    @allow_rasterization
    def draw(self, renderer) -> None:
        if not self.get_visible() or not self._labels:
            return
        self._draw_placed(renderer, self._layout(renderer))
        self.stale = False

    def _draw_placed(self, renderer, placed) -> None:
        # savefig wraps a vector renderer in a MixedModeRenderer; its _renderer is the one drawing now
        if isinstance(getattr(renderer, "_renderer", renderer), RendererSVG):
            self._draw_svg(renderer, placed)
        else:
            self._draw_any(renderer, placed)

    def _draw_any(self, renderer, placed) -> None:
        """Agg (PNG), PDF, anything else: the renderer's own text drawing, line by line, as Text does it."""
        _, height = renderer.get_canvas_width_height()
        gc = renderer.new_gc()
        gc.set_antialiased(rcParams["text.antialiased"])
        for lab, lines, _ in placed:
            renderer.open_group("text", lab.gid)
            gc.set_foreground(mcolors.to_rgba(lab.color), isRGBA=True)
            for line in lines:
                y = height - line.y if renderer.flipy() else line.y
                renderer.draw_text(gc, line.x, y, line.text, self._prop, lab.rotation, ismath=False)
            renderer.close_group("text")
        gc.restore()

    def _draw_svg(self, renderer, placed) -> None:
        """One <text> per line, its x the line's centre (text-anchor: middle, so a viewer's own font stays
        centred; the right end for ha="right", anchored at its end, the left end for ha="left"). The font and
        colour are a CSS class on a <g> around every label of that colour, which its
        texts inherit (a style repeated on each of thousands of labels was most of a file's bytes); a one-line
        label carries its id, a label of several lines is a <g> of that id."""
        writer, height = renderer.writer, renderer.height
        anchor = {"center": "middle", "left": "start", "right": "end"}[self._ha]
        along = {"middle": 0.5, "start": 0.0, "end": 1.0}[anchor]  # where on its line a text's x is
        font = f"font-size: {_short(self.fontsize)}px; font-family: {_svg_family(self._prop)}; text-anchor: {anchor}"
        suffix = "" if anchor == "middle" else f"-{anchor}"
        by_class: dict[str, list] = {}   # e.g. l550 (5.5 px, black), l550ffffff (white): its rule, its labels
        rules: dict[str, str] = {}
        class_of: dict[str, str] = {}    # a label's colour as given -> its class (a few colours, thousands of labels)
        for item in placed:
            name = class_of.get(item[0].color)
            if name is None:
                colour = mcolors.to_hex(item[0].color)[1:]
                tint = "" if colour == "000000" else colour
                name = class_of[item[0].color] = f"l{round(self.fontsize * 100)}{tint}{suffix}"
                rules[name] = font + ("" if colour == "000000" else f"; fill: #{colour}")
            by_class.setdefault(name, []).append(item)
        writer.element("style", "".join(f".{name}{{{rule}}}" for name, rule in sorted(rules.items())),
                       attrib={"type": "text/css"})
        if self.get_gid():
            writer.start("g", id=self.get_gid())
        for name, items in by_class.items():
            writer.start("g", attrib={"class": name})
            for lab, lines, _ in items:
                grouped = lab.gid is not None and len(lines) > 1
                if grouped:
                    writer.start("g", id=lab.gid)
                cos, sin = _cos_sin(lab.rotation)
                for line in lines:
                    x = _short(line.x + line.width * along * cos)
                    y = _short(height - (line.y + line.width * along * sin))
                    attrib = {"id": None if grouped else lab.gid, "x": x, "y": y}
                    if lab.rotation:
                        attrib["transform"] = f"rotate({_short(-lab.rotation)} {x} {y})"
                    writer.element("text", line.text, attrib=attrib)
                if grouped:
                    writer.end("g")
            writer.end("g")
        if self.get_gid():
            writer.end("g")


class AxisLabels(LabelField):
    """One axis of a grid: its numbers (one line each) and its name beyond them, placed where matplotlib's
    Axis places its tick labels and label (ticks of length 0): the numbers pad_pt off the axes' edge, the name
    labelpad_pt past their box. A Tick per number (its own lines, texts and transforms) was 40% of a mid-size
    grid's drawing time. side: "top" (columns) or "left" (rows); the axes' own axes should be off."""

    def __init__(self, ax, side: str, positions: Sequence[float], texts: Sequence[str], *, fontsize: float,
                 pad_pt: float, name: str, name_size: float, labelpad_pt: float):
        if side not in ("top", "left"):
            raise ValueError(f"AxisLabels: side must be 'top' or 'left', not {side!r}")
        top = side == "top"
        labels = [Label(p, 1.0, (t,)) if top else Label(0.0, p, (t,)) for p, t in zip(positions, texts)]
        # matplotlib's tick labels: top ones centred above their column, left ones right-aligned on their row
        super().__init__(labels, fontsize=fontsize, ha="center" if top else "right",
                         va="bottom" if top else "center_baseline")
        transform, _, _ = ax.get_xaxis_text2_transform(pad_pt) if top else ax.get_yaxis_text1_transform(pad_pt)
        self.set_transform(transform)
        self._ax, self._top, self._labelpad = ax, top, labelpad_pt
        if top:  # as XAxis.label at the top: centred, its baseline on the line
            self._name = Text(0.5, 0.0, name, fontsize=name_size, ha="center", va="baseline",
                              transform=blended_transform_factory(ax.transAxes, IdentityTransform()))
        else:  # as YAxis.label: turned a quarter, its bottom on the line
            self._name = Text(0.0, 0.5, name, fontsize=name_size, ha="center", va="bottom", rotation=90,
                              rotation_mode="anchor",
                              transform=blended_transform_factory(IdentityTransform(), ax.transAxes))
        self._name.set_figure(ax.figure)

    @property
    def name(self):
        """The axis' name (a matplotlib Text)."""
        return self._name

    def get_children(self):
        return [self._name]

    def _place_name(self, renderer, placed) -> None:
        edge = Bbox.union([_union(placed) or self._ax.bbox, self._ax.bbox])
        pad = self._labelpad * self.figure.dpi / 72
        if self._top:
            self._name.set_position((0.5, edge.y1 + pad))
        else:
            self._name.set_position((edge.x0 - pad, 0.5))

    def _place_titles(self, renderer, placed) -> None:
        """The axes' titles above the numbers and name, as Axes._update_title_position puts them above a top axis."""
        ax = self._ax
        titles = [t for t in (ax.title, ax._left_title, ax._right_title)]
        if not any(t.get_text() for t in titles):
            return
        top = Bbox.union([_union(placed) or ax.bbox, self._name.get_window_extent(renderer), ax.bbox]).y1
        for title in titles:
            x, _ = title.get_position()
            title.set_position((x, 1.0))
            if title.get_text() and title.get_window_extent(renderer).ymin < top:
                title.set_position((x, ax.transAxes.inverted().transform((0, top))[1]))
                if title.get_window_extent(renderer).ymin < top:  # as matplotlib: once more
                    low = title.get_window_extent(renderer).ymin
                    title.set_position((x, ax.transAxes.inverted().transform((0.0, 2 * top - low))[1]))
        ymax = max(title.get_position()[1] for title in titles)
        for title in titles:
            title.set_position((title.get_position()[0], ymax))

    @allow_rasterization
    def draw(self, renderer) -> None:
        if not self.get_visible():
            return
        placed = self._layout(renderer)
        self._place_name(renderer, placed)
        if self._top:
            self._place_titles(renderer, placed)
        if placed:
            self._draw_placed(renderer, placed)
        self._name.draw(renderer)
        self.stale = False


def add_axis_labels(ax, side: str, positions: Sequence[float], texts: Sequence[str], *, fontsize: float,
                    pad_pt: float, name: str, name_size: float, labelpad_pt: float, gid: str | None = None
                    ) -> AxisLabels:
    """An AxisLabels on `side` of ax, added to ax; drawn before the axes' titles, which it may move up."""
    field = AxisLabels(ax, side, positions, texts, fontsize=fontsize, pad_pt=pad_pt, name=name,
                       name_size=name_size, labelpad_pt=labelpad_pt)
    field.set_gid(gid)
    field.set_zorder(2.5)  # under the titles (3), which it places; over the cells as matplotlib's axes would be
    ax.add_artist(field)
    return field


# (renderer kind, its dpi, font, size, the rc settings a measurement reads) -> {text: (width, height, descent)}:
# a renderer measures a text (FreeType lays out its glyphs) the same way every time, and the same row numbers
# and lane labels recur in figure after figure of one process, so each is measured once per process.
_MEASURED: dict[tuple, dict[str, tuple[float, float, float]]] = {}
_MEASURED_MAX = 200_000  # texts kept (about 30 MB); a process measuring more starts over
# matplotlib's SVG renderer measures every text at this size and scales the sizes by fontsize / it
# (TextToPath.FONT_SCALE, 3.7 to 3.11), so one measurement of a text serves every size
_SVG_MEASURE_SIZE = 100.0
_SVG_SCALES: dict[tuple, bool] = {}  # (font, size) -> whether scaling gave what the renderer gives


def _text_measurer(renderer, prop: FontProperties) -> Callable[[str], tuple[float, float, float]]:
    """measure(text) -> (width, height, descent) in display units: renderer.get_text_width_height_descent(text,
    prop), kept for the process (and, in SVG, measured once at one size and scaled, checked once per size)."""
    # a vector backend's MixedModeRenderer measures through the renderer it wraps
    drawing = renderer._renderer if isinstance(renderer, MixedModeRenderer) else renderer
    if isinstance(drawing, RendererSVG) and _svg_scales(drawing, prop):
        base = prop.copy()
        base.set_size(_SVG_MEASURE_SIZE)
        sizes, scale = _text_sizes(drawing, base), prop.get_size_in_points() / _SVG_MEASURE_SIZE

        def scaled(text: str) -> tuple[float, float, float]:
            if text not in sizes:
                sizes[text] = drawing.get_text_width_height_descent(text, base, ismath=False)
            w, h, d = sizes[text]
            return w * scale, h * scale, d * scale

        return scaled
    sizes = _text_sizes(drawing, prop)

    def measured(text: str) -> tuple[float, float, float]:
        if text not in sizes:
            sizes[text] = drawing.get_text_width_height_descent(text, prop, ismath=False)
        return sizes[text]

    return measured


def _svg_scales(drawing, prop: FontProperties) -> bool:
    """Whether this SVG renderer's sizes of a text in `prop` are its sizes at _SVG_MEASURE_SIZE scaled, to the bit."""
    key = (findfont(prop), prop.get_size_in_points())
    if key not in _SVG_SCALES:
        base = prop.copy()
        base.set_size(_SVG_MEASURE_SIZE)
        scale = prop.get_size_in_points() / _SVG_MEASURE_SIZE
        probe = "T127 (x0-31),gyp"
        direct = drawing.get_text_width_height_descent(probe, prop, ismath=False)
        _SVG_SCALES[key] = tuple(direct) == tuple(v * scale for v in drawing.get_text_width_height_descent(
            probe, base, ismath=False))
    return _SVG_SCALES[key]


def _text_sizes(drawing, prop: FontProperties) -> dict[str, tuple[float, float, float]]:
    """The process' measurements of texts in `prop` by renderers like `drawing` (a dict to read and fill)."""
    key = (type(drawing).__module__, type(drawing).__qualname__, getattr(drawing, "dpi", None), findfont(prop),
           prop, *(rcParams[name] for name in ("text.hinting", "text.hinting_factor", "text.kerning_factor",
                                               "pdf.use14corefonts", "ps.useafm", "text.usetex")))
    if key not in _MEASURED and sum(len(texts) for texts in _MEASURED.values()) >= _MEASURED_MAX:
        _MEASURED.clear()
    return _MEASURED.setdefault(key, {})


def _stack_by_font_extent(sizes, extent, linespacing) -> tuple[list[float], float, float, float]:
    """Text's line stacking from matplotlib 3.11: each line's ascent and descent at least the font's (plus half
    the line gap when there are several lines), or, for a numeric linespacing, linespacing times the font's
    height. sizes: (width, height, descent) of each line; extent: the font's (ascent, descent, line gap).
    Returns each line's baseline below the box's top (negative), the box's bottom, the distance from the top to
    the last baseline, and the last line's descent."""
    min_ascent, min_descent, gap = extent
    line_gap = gap if len(sizes) > 1 else 0.0
    top, tops, baseline, d = 0.0, [], 0.0, 0.0
    for _, h, d in sizes:
        a = h - d
        if linespacing == "normal":
            a, d = max(a, min_ascent) + line_gap / 2, max(d, min_descent) + line_gap / 2
        else:
            leading = linespacing * (min_ascent + min_descent) - (a + d)
            a, d = a + leading / 2, d + leading / 2
        baseline = a - top
        top -= a
        tops.append(top)
        top -= d
    return tops, top, baseline, d


def _stack_by_lp(sizes, lp, linespacing) -> tuple[list[float], float, float, float]:
    """Text's line stacking before matplotlib 3.11: each line at least as tall and deep as "lp"; a line's
    baseline, below the line above's bottom, by linespacing (1.2 for "normal", Text's default then) times the
    larger of its ascent and "lp"'s. lp: the (width, height, descent) of "lp". Returns what
    _stack_by_font_extent returns."""
    _, lp_h, lp_d = lp
    factor = 1.2 if linespacing == "normal" else linespacing
    min_dy = (lp_h - lp_d) * factor
    y, tops, baseline, d = 0.0, [], 0.0, 0.0
    for i, (_, h, d) in enumerate(sizes):
        h, d = max(h, lp_h), max(d, lp_d)
        baseline = (h - d) - y
        y = -(h - d) if i == 0 else y - max(min_dy, (h - d) * factor)
        tops.append(y)
        y -= d
    return tops, y, baseline, d


def _union(placed) -> Bbox | None:
    """The box around every placed label's box (None for no labels)."""
    if not placed:
        return None
    boxes = [box for _, _, box in placed]
    return Bbox.from_extents(min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
                             max(b[3] for b in boxes))


def _cos_sin(degrees: float) -> tuple[float, float]:
    """Exact for the quarter turns labels use (math.cos(pi / 2) is 6e-17, not 0)."""
    quarter = {0.0: (1.0, 0.0), 90.0: (0.0, 1.0), 180.0: (-1.0, 0.0), 270.0: (0.0, -1.0)}
    angle = degrees % 360.0
    if angle in quarter:
        return quarter[angle]
    return math.cos(math.radians(angle)), math.sin(math.radians(angle))


def _short(value: float) -> str:
    """A coordinate to 1/100 pt, without trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _svg_family(prop: FontProperties) -> str:
    """The CSS font-family matplotlib's SVG writes for `prop`: a generic family's configured fonts, then it."""
    names: list[str] = []
    for family in prop.get_family():
        generic = "sans-serif" if family in ("sans", "sans serif") else family
        if generic in font_family_aliases:
            names += [repr(name) for name in rcParams[f"font.{generic}"]]
            names.append(generic)
        else:
            names.append(repr(family))
    return ", ".join(dict.fromkeys(names))


def add_labels(ax, labels: Sequence[Label], *, fontsize: float, linespacing: float | str = "normal") -> LabelField:
    """A LabelField of `labels` in ax's data coordinates, added to ax."""
    field = LabelField(labels, fontsize=fontsize, linespacing=linespacing)
    field.set_transform(ax.transData)
    ax.add_artist(field)
    return field
