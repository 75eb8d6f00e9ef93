"""What a person looks at: rich tables (tables), colours (palette), the grid engine (grid), figures (figure),
and figures as files with their manifest (gallery). matplotlib is imported only when a figure is drawn."""

from __future__ import annotations

import importlib

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


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted(_EXPORTS)
