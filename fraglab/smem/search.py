"""Which swizzle or padding takes an access conflict-free: every candidate that fits a row-major tile, ranked.

Candidates: the plain row-major tile, rows padded by 4..128 bytes, and every CuTe swizzle Sw<B,M,S> (B 1..3,
M 0..4, S B..7) that fits it and keeps the access's vectors whole. Ranked by wavefronts (measured when the
GPU measured the leading candidates, else predicted), then by the bytes padding costs, then by fewer bits.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import FraglabError, InputError
from .access import parse_access
from .analysis import analyze, build_instructions, parse_tile
from .layout import DTYPE_BYTES, SmemLayout, Swizzle, check_dtype, check_layout
from .model import total_wavefronts

PAD_BYTES = (4, 8, 16, 32, 64, 128)
MEASURED_CANDIDATES = 8   # the GPU times the best few by prediction (and the plain tile), not all


@dataclass
class Candidate:
    layout: SmemLayout
    pad_bytes: int
    predicted: int
    minimum: int
    measured: int | None = None

    @property
    def rank_key(self):
        """Measured ones first (by measured wavefronts), then the rest by prediction; fewer padding bytes and
        swizzle bits break ties."""
        wf = self.measured if self.measured is not None else self.predicted
        bits = self.layout.swizzle.bits if self.layout.swizzle else 0
        return (self.measured is None and self.ranked_measured, wf, self.pad_bytes, bits, self.layout.spelling)

    ranked_measured = False   # set when some candidates were measured: the unmeasured then rank below them

    def to_dict(self) -> dict:
        out = {"layout": self.layout.spelling, "pad_bytes": self.pad_bytes,
               "wavefronts": {"predicted": self.predicted, "minimum": self.minimum}}
        if self.measured is not None:
            out["wavefronts"]["measured"] = self.measured
        return out


def candidates(rows: int, cols: int, dtype: str) -> list[tuple[SmemLayout, int]]:
    """(layout, padding bytes per tile) of every candidate that fits a rows x cols tile."""
    e = DTYPE_BYTES[dtype]
    found = [(SmemLayout((rows, cols), (cols, 1), dtype), 0)]
    for pad in PAD_BYTES:
        if pad % e == 0:
            found.append((SmemLayout((rows, cols), (cols + pad // e, 1), dtype), pad * rows))
    span_bits = (rows * cols - 1).bit_length()
    for b in (1, 2, 3):
        for m in range(5):
            for s in range(b, 8):
                if b + m + s > span_bits:
                    continue
                found.append((SmemLayout((rows, cols), (cols, 1), dtype, Swizzle(b, m, s)), 0))
    fitting = []
    for layout, pad in found:
        try:
            check_layout(layout)
        except InputError:
            continue
        fitting.append((layout, pad))
    return fitting


def search(tile: str, dtype: str = "f16", access: str = "ldmatrix.x4", *, fragment: str | None = None,
           source: str = "auto") -> tuple[list[Candidate], str]:
    """Candidates best first, and a note (how they were ranked)."""
    check_dtype(dtype)
    parsed = parse_tile(tile)
    if parsed is None:
        raise InputError("--search needs --tile ROWSxCOLS (the tile the access walks)", argument="tile")
    rows, cols = parsed
    spec = parse_access(access)
    ranked = []
    for layout, pad in candidates(rows, cols, dtype):
        try:
            instructions = build_instructions(spec, layout, fragment)
        except InputError:   # the access does not fit this candidate (a vector split by the swizzle)
            continue
        ranked.append(Candidate(layout, pad, *total_wavefronts(instructions)))
    if not ranked:
        raise InputError(f"no candidate layout of a {rows}x{cols} {dtype} tile takes {access}", argument="access")
    ranked.sort(key=lambda c: c.rank_key)
    note = "ranked by predicted wavefronts (model)"
    if source != "model":
        note = _measure_leaders(ranked, dtype, access, fragment, source) or note
        ranked.sort(key=lambda c: c.rank_key)
    return ranked, note


def _measure_leaders(ranked, dtype, access, fragment, source) -> str:
    from ..runtime import gpu

    if source == "auto" and not gpu.available()[0]:
        return "ranked by predicted wavefronts (no usable GPU)"
    plain = [c for c in ranked if c.pad_bytes == 0 and c.layout.swizzle is None]
    chosen = ranked[:MEASURED_CANDIDATES] + [c for c in plain if c not in ranked[:MEASURED_CANDIDATES]]
    try:
        for c in chosen:
            c.measured = analyze(c.layout, dtype, access, fragment=fragment, source="gpu").measured
    except FraglabError as exc:
        if source == "gpu":
            raise
        for c in chosen:
            c.measured = None
        return f"ranked by predicted wavefronts (the GPU probe failed: {str(exc).splitlines()[0]})"
    for c in ranked:   # an unmeasured candidate may not outrank a measured one on its prediction alone
        c.ranked_measured = True
    return (f"the best {MEASURED_CANDIDATES} by prediction and the plain tile measured on the GPU; the rest "
            "ranked by prediction below them")


__all__ = ["Candidate", "candidates", "search", "PAD_BYTES"]
