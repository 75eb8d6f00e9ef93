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
from typing import Iterable, Sequence

from matplotlib import colors as mcolors
from matplotlib import rcParams
from matplotlib.artist import Artist, allow_rasterization
from matplotlib.backends.backend_svg import RendererSVG
from matplotlib.font_manager import FontProperties, findfont, font_family_aliases, get_font
from matplotlib.transforms import Bbox


@dataclass(frozen=True)
class Label:
    """One label: its lines centred on (x, y) in the field's coordinates (data units of the axes)."""

    x: float
    y: float
    lines: tuple[str, ...]
    color: str = "black"
    gid: str | None = None     # the SVG group's id, e.g. grid-cell-3-1
    rotation: float = 0.0      # degrees, counter-clockwise


@dataclass(frozen=True)
class _Line:
    text: str
    x: float            # left end of the baseline, display units
    y: float
    width: float


class LabelField(Artist):
    """Labels of one font size and line spacing; linespacing is a float or "normal", as for Text."""

    zorder = 3  # as Text: above the cells, the lines between them and the outlines

    def __init__(self, labels: Iterable[Label], *, fontsize: float, linespacing: float | str = "normal"):
        super().__init__()
        self._labels = [lab for lab in labels if any(lab.lines)]
        self._prop = FontProperties(size=fontsize)
        self._linespacing = linespacing
        self.set_clip_on(False)  # as ax.text: a label is never cut at the axes' edge

    @property
    def labels(self) -> list[Label]:
        return list(self._labels)

    @property
    def fontsize(self) -> float:
        return float(self._prop.get_size_in_points())

    # ---- layout ----------------------------------------------------------------------------------------------

    def _font_extent(self, renderer) -> tuple[float, float, float]:
        """(ascent, descent, line gap) of the font, in display units: what Text spaces lines by."""
        font = get_font(findfont(self._prop))
        scale = renderer.points_to_pixels(self.fontsize) / font.get_sfnt_table("head")["unitsPerEm"]
        for table_name, gap, ascent, descent in (("OS/2", "sTypoLineGap", "sTypoAscender", "sTypoDescender"),
                                                 ("hhea", "lineGap", "ascent", "descent")):
            table = font.get_sfnt_table(table_name)
            if table is not None and ascent in table:  # matplotlib < 3.8 leaves the sTypo* keys out of OS/2
                return table[ascent] * scale, -table[descent] * scale, table[gap] * scale
        _, height, descent = renderer.get_text_width_height_descent("lp", self._prop, ismath=False)
        return height - descent, descent, 0.0

    def _layout(self, renderer) -> list[tuple[Label, list[_Line], Bbox]]:
        """Every label's lines (baseline start, display units) and its box, as Text lays out ha=va=center."""
        measured: dict[str, tuple[float, float, float]] = {}

        def measure(text: str) -> tuple[float, float, float]:
            if text not in measured:
                measured[text] = renderer.get_text_width_height_descent(text, self._prop, ismath=False) \
                    if text else (0.0, 0.0, 0.0)
            return measured[text]

        min_ascent, min_descent, gap = self._font_extent(renderer)
        transform = self.get_transform()
        anchors = transform.transform([(lab.x, lab.y) for lab in self._labels]) if self._labels else []
        out = []
        for lab, (ax, ay) in zip(self._labels, anchors):
            line_gap = gap if len(lab.lines) > 1 else 0.0
            top, rows = 0.0, []
            for text in lab.lines:
                w, h, d = measure(text)
                a = h - d
                if self._linespacing == "normal":
                    a, d = max(a, min_ascent) + line_gap / 2, max(d, min_descent) + line_gap / 2
                else:
                    leading = self._linespacing * (min_ascent + min_descent) - (a + d)
                    a, d = a + leading / 2, d + leading / 2
                top -= a
                rows.append((text, w, top))
                top -= d
            width, bottom = max(w for _, w, _ in rows), top
            cx, cy = width / 2, bottom / 2  # the box's centre goes on the anchor, whatever the rotation
            cos, sin = _cos_sin(lab.rotation)
            lines = []
            for text, w, y in rows:
                dx, dy = (width - w) / 2 - cx, y - cy
                lines.append(_Line(text, ax + dx * cos - dy * sin, ay + dx * sin + dy * cos, w))
            corners = [((x - cx) * cos - (y - cy) * sin, (x - cx) * sin + (y - cy) * cos)
                       for x, y in ((0, bottom), (0, 0), (width, 0), (width, bottom))]
            xs, ys = [x for x, _ in corners], [y for _, y in corners]
            out.append((lab, lines, Bbox.from_extents(ax + min(xs), ay + min(ys), ax + max(xs), ay + max(ys))))
        return out

    def label_boxes(self, renderer) -> list[tuple[str, Bbox]]:
        """(text, box in display units) of every label, as Text.get_window_extent gives them."""
        return [("\n".join(lab.lines), box) for lab, _, box in self._layout(renderer)]

    def get_window_extent(self, renderer=None) -> Bbox:
        renderer = renderer or self.get_figure(root=True)._get_renderer()
        boxes = [box for _, _, box in self._layout(renderer)]
        return Bbox.union(boxes) if boxes else Bbox.null()

    # ---- drawing ---------------------------------------------------------------------------------------------

    @allow_rasterization
    def draw(self, renderer) -> None:
        if not self.get_visible() or not self._labels:
            return
        placed = self._layout(renderer)
        # savefig wraps a vector renderer in a MixedModeRenderer; its _renderer is the one drawing now
        if isinstance(getattr(renderer, "_renderer", renderer), RendererSVG):
            self._draw_svg(renderer, placed)
        else:
            self._draw_any(renderer, placed)
        self.stale = False

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
        centred). The font and colour are a CSS class on a <g> around every label of that colour, which its
        texts inherit (a style repeated on each of thousands of labels was most of a file's bytes); a one-line
        label carries its id, a label of several lines is a <g> of that id."""
        writer, height = renderer.writer, renderer.height
        font = f"font-size: {_short(self.fontsize)}px; font-family: {_svg_family(self._prop)}; text-anchor: middle"
        by_class: dict[str, list] = {}   # e.g. l550 (5.5 px, black), l550ffffff (white): its rule, its labels
        rules: dict[str, str] = {}
        for item in placed:
            colour = mcolors.to_hex(item[0].color)[1:]
            name = f"l{round(self.fontsize * 100)}" + ("" if colour == "000000" else colour)
            rules[name] = font + ("" if colour == "000000" else f"; fill: #{colour}")
            by_class.setdefault(name, []).append(item)
        writer.element("style", "".join(f".{name}{{{rule}}}" for name, rule in sorted(rules.items())),
                       attrib={"type": "text/css"})
        for name, items in by_class.items():
            writer.start("g", attrib={"class": name})
            for lab, lines, _ in items:
                grouped = lab.gid is not None and len(lines) > 1
                if grouped:
                    writer.start("g", id=lab.gid)
                cos, sin = _cos_sin(lab.rotation)
                for line in lines:
                    x = _short(line.x + line.width / 2 * cos)
                    y = _short(height - (line.y + line.width / 2 * sin))
                    attrib = {"id": None if grouped else lab.gid, "x": x, "y": y}
                    if lab.rotation:
                        attrib["transform"] = f"rotate({_short(-lab.rotation)} {x} {y})"
                    writer.element("text", line.text, attrib=attrib)
                if grouped:
                    writer.end("g")
            writer.end("g")


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
