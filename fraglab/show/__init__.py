"""What a person looks at: rich tables (tables), colours (palette), the grid engine (grid), figures (figure),
and figures as files with their manifest (gallery). matplotlib is imported only when a figure is drawn."""

from __future__ import annotations

import importlib

from ..layouts.layout import register_view

# public name -> submodule, so `fraglab.show.plot_layout` works without importing every view up front
_EXPORTS = {
    "plot_layout": "figure", "plot_mma": "figure",
    "PALETTES": "palette", "COLOR_BY": "palette", "FigureError": "palette", "palette_colors": "palette",
    "check_style": "palette",
    "FORMATS": "gallery", "MANIFEST_NAME": "gallery", "PNG_DPI": "gallery", "save_figure": "gallery",
    "figure_bytes": "gallery", "default_figure_name": "gallery", "mma_triples": "gallery",
    "layout_digest": "gallery", "generate_all": "gallery", "check_format": "gallery",
    "layout_view": "tables",
}


def _table(layout, view: str = "grid", lane=None, width: int = 80):
    from .tables import layout_view

    return layout_view(layout, view, lane, width)


def _figure(layout, **style):
    from .figure import plot_layout

    return plot_layout(layout, **style)


# Layout.table() and Layout.figure() draw through these (the layouts wing sits below and cannot import show/).
register_view("table", _table)
register_view("figure", _figure)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted(_EXPORTS)
