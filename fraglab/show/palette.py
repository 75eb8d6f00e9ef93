"""Colours of the figures: palettes (colour-blind safe and greyscale ones included), text contrast, dimming.

Also the style checks shared by every figure (--color-by, --palette) and FigureError, the figures' bad-input error.
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from ..errors import InputError

PALETTES: dict[str, str] = {
    "tab20": "matplotlib's tab20, continued with tab20b and tab20c past 20 colours (the default)",
    "okabe-ito": "Okabe and Ito's colour-blind-safe hues, extended to 32 colours that stay apart under "
                 "simulated protan-, deutan- and tritanopia: for colour-blind readers",
    "cividis": "matplotlib's cividis, a colour map made for colour-vision deficiency; neighbouring indices look alike",
    "grey": "grey levels only, neighbouring indices far apart in lightness: prints in greyscale",
}
COLOR_BY = ("lane", "slot", "register")
_DIM_TOWARD_WHITE = 0.75
# Okabe and Ito's colour-blind-safe hues (black left out: it hides labels), then 25 more picked greedily
# (farthest point) from an 18-level sRGB grid with L* 25..92, the distance being the smallest CIELAB
# delta-E over normal vision and Machado et al. (2009) full protan, deutan and tritan simulations:
# every pair of the 32 stays at delta-E >= 12 for all four.
_CVD_SAFE = (
    "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#8700F0",
    "#692D0F", "#3C3C4B", "#C3F0C3", "#69FF87", "#9678FF", "#F0004B", "#4B3CB4", "#692D78",
    "#D2C3E1", "#87C378", "#D2A5A5", "#69693C", "#A53C78", "#A53C0F", "#96B44B", "#C30FA5",
    "#C3E15A", "#7896F0", "#874BF0", "#4B3C2D", "#5A0FC3", "#F02D69", "#A587C3", "#A5F0E1",
)



class FigureError(InputError):
    """Bad figure input (palette, colour mode, format, path); the message names the argument and the choices."""

    def __init__(self, argument: str, message: str):
        super().__init__(message, argument=argument)


# ---- colours ---------------------------------------------------------------------------------------

def check_style(color_by: str, palette: str) -> None:
    if color_by not in COLOR_BY:
        raise FigureError("color_by", f"invalid --color-by {color_by!r}: valid choices are {', '.join(COLOR_BY)}")
    if palette not in PALETTES:
        raise FigureError("palette", f"invalid --palette {palette!r}: valid choices are {', '.join(PALETTES)}")


def _far_step(n: int) -> int:
    """A step coprime with n near 0.4 n: walking the levels by it puts neighbouring indices far apart."""
    from math import gcd

    if n <= 2:
        return 1
    target = max(1, round(0.4 * n))
    for delta in range(n):
        for step in (target + delta, target - delta):
            if 0 < step < n and gcd(step, n) == 1:
                return step
    return 1


def palette_colors(palette: str, n: int) -> list[tuple[float, float, float]]:
    """n RGB colours of `palette`, index i for lane/slot/register i (cycles only past 60 for tab20)."""
    import matplotlib

    if palette not in PALETTES:
        raise FigureError("palette", f"invalid --palette {palette!r}: valid choices are {', '.join(PALETTES)}")
    n = max(n, 1)
    if n == 128 and palette != "grey":
        return _warpgroup_colors(palette)
    if palette == "tab20":
        base = [c for name in ("tab20", "tab20b", "tab20c") for c in matplotlib.colormaps[name].colors]
        return [tuple(base[i % len(base)][:3]) for i in range(n)]
    if palette == "okabe-ito":
        return [tuple(matplotlib.colors.to_rgb(_CVD_SAFE[i % len(_CVD_SAFE)])) for i in range(n)]
    if palette == "cividis":
        cmap = matplotlib.colormaps["cividis"]
        return [tuple(cmap(0.08 + 0.9 * i / max(n - 1, 1))[:3]) for i in range(n)]
    # grey: levels 0.30..0.96 visited with a far step, so lane i and lane i+1 differ strongly in lightness.
    step = _far_step(n)
    levels = np.linspace(0.30, 0.96, n) if n > 1 else np.array([0.7])
    return [(float(levels[(i * step) % n]),) * 3 for i in range(n)]


def _warpgroup_colors(palette: str) -> list[tuple[float, float, float]]:
    """128 lanes of a warpgroup (wgmma): one hue per warp, 32 lightness steps inside it, so warps stay distinct."""
    hues = palette_colors(palette, 8)[:8:2] if palette == "tab20" else palette_colors(palette, 4)
    out = []
    for lane in range(128):
        rgb, shade = hues[lane // 32], ((lane % 32) * 13 % 32) / 31.0   # neighbouring lanes far apart
        mix = 0.55 * shade - 0.25        # -0.25 (darker) .. +0.30 (lighter)
        out.append(tuple(float(c + (1.0 - c) * mix if mix > 0 else c * (1.0 + mix)) for c in rgb[:3]))
    return out


def _luminance(rgb: Sequence[float]) -> float:
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _text_color(rgb: Sequence[float]) -> str:
    return _text_color_of(tuple(float(c) for c in rgb[:3]))


@functools.lru_cache(maxsize=4096)  # a figure asks for a few hundred colours, once per label
def _text_color_of(rgb: tuple[float, float, float]) -> str:
    return "white" if _luminance(rgb) < 0.26 else "black"


def _dim(rgb: Sequence[float]) -> tuple[float, float, float]:
    return tuple(c + (1.0 - c) * _DIM_TOWARD_WHITE for c in rgb[:3])
