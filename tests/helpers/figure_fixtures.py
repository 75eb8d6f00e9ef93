"""Hand-built layouts and SVG readers for the figure tests (no tests here).

The layouts are written from the PTX ISA's fragment formulas, independently of fraglab.model, so a
figure can be checked against a map nobody derived from the code under test.
"""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from fraglab.apis.wmma import wmma_catalogue
from fraglab.layouts.spec import FragmentSpec
from fraglab.layouts.layout import Layout, Source

H200 = Source("atlas", {"gpu_name": "NVIDIA H200", "compute_capability": "90", "captured": "2026-11-20"})
SVG_NS = "{http://www.w3.org/2000/svg}"


def _g_t(lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return lanes >> 2, lanes % 4  # groupID, threadID_in_group


def accumulator_m16n16k16(dtype: str = "f32", layout: str = "row") -> Layout:
    """PTX m16n8 accumulator, two n-tiles: row = g + 8*((i>>1)&1), col = 2t + (i&1) + 8*(i>>2)."""
    g, t = _g_t(np.arange(32)[:, None])
    i = np.arange(8)[None, :]
    row = g + 8 * ((i >> 1) & 1)
    col = 2 * t + (i & 1) + 8 * (i >> 2)
    reads = np.ones((32, 8), dtype=np.int8)
    return Layout(FragmentSpec("wmma", "accumulator", "m16n16k16", dtype, layout), "load", H200, row, col, reads)


def matrix_a_m16n16k16(layout: str = "row") -> Layout:
    """16 slots; slot i+8 repeats slot i, and the MMA reads only slots 0..7."""
    g, t = _g_t(np.arange(32)[:, None])
    i = np.arange(8)[None, :]
    row8 = g + 8 * ((i >> 1) & 1)
    col8 = 2 * t + (i & 1) + 8 * (i >> 2)
    row = np.concatenate([row8, row8], axis=1)
    col = np.concatenate([col8, col8], axis=1)
    reads = np.concatenate([np.ones((32, 8)), np.zeros((32, 8))], axis=1).astype(np.int8)
    return Layout(FragmentSpec("wmma", "matrix_a", "m16n16k16", "f16", layout), "load", H200, row, col, reads)


def matrix_b_m16n16k16(layout: str = "row") -> Layout:
    """B (k x n): row = 2t + (i&1) + 8*((i>>1)&1), col = g + 8*(i>>2); slot i+8 repeats slot i, ignored."""
    g, t = _g_t(np.arange(32)[:, None])
    i = np.arange(8)[None, :]
    row8 = 2 * t + (i & 1) + 8 * ((i >> 1) & 1)
    col8 = g + 8 * (i >> 2)
    row = np.concatenate([row8, row8], axis=1)
    col = np.concatenate([col8, col8], axis=1)
    reads = np.concatenate([np.ones((32, 8)), np.zeros((32, 8))], axis=1).astype(np.int8)
    return Layout(FragmentSpec("wmma", "matrix_b", "m16n16k16", "f16", layout), "load", H200, row, col, reads)


def chunked(spec: FragmentSpec, threads: int = 32, copies: int = 1, source: Source = H200) -> Layout:
    """Lane t holds elements t*ne .. t*ne+ne-1 in memory order; `copies` > 1 adds ignored repeats."""
    rows, cols = spec.rows, spec.cols
    ne = max(1, rows * cols // threads)
    e = np.arange(threads)[:, None] * ne + np.arange(ne)[None, :]
    if spec.layout == "row":
        row, col = e // cols, e % cols
    else:
        row, col = e % rows, e // rows
    reads = np.ones((threads, ne), dtype=np.int8)
    if copies > 1:
        row, col = np.tile(row, copies), np.tile(col, copies)
        reads = np.concatenate([reads] + [np.zeros_like(reads)] * (copies - 1), axis=1)
    return Layout(spec, "load", source, row, col, reads)


def wgmma_accumulator(n: int) -> Layout:
    """A 64xN accumulator over 128 threads (warp w owns rows 16w..16w+15, m16n8 tiles along n)."""
    th = np.arange(128)[:, None]
    i = np.arange(n // 2)[None, :]
    w, lane = th // 32, th % 32
    g, t = _g_t(lane)
    row = 16 * w + g + 8 * ((i >> 1) & 1)
    col = 8 * (i >> 2) + 2 * t + (i & 1)
    spec = FragmentSpec("wgmma", "accumulator", f"m64n{n}k16", "f32", "row")
    return Layout(spec, "load", H200, row, col, np.ones(row.shape, dtype=np.int8))


class FakeAtlas:
    """The Atlas interface generate_all uses: specs(), layout(spec, method), provenance."""

    provenance = {"gpu_name": "NVIDIA H200", "compute_capability": "90", "captured": "2026-11-20"}

    def __init__(self, specs=None):
        self._specs = list(specs) if specs is not None else wmma_catalogue()
        self.calls = 0

    def specs(self):
        return list(self._specs)

    def layout(self, spec, method="load"):
        self.calls += 1
        if spec == FragmentSpec("wmma", "accumulator", "m16n16k16", "f32", "row"):
            return accumulator_m16n16k16()
        if spec == FragmentSpec("wmma", "matrix_a", "m16n16k16", "f16", "row"):
            return matrix_a_m16n16k16()
        if spec == FragmentSpec("wmma", "matrix_b", "m16n16k16", "f16", "row"):
            return matrix_b_m16n16k16()
        return chunked(spec, copies=2 if spec.frag != "accumulator" and spec.element_bits == 16 else 1)


# ---- reading files back ----------------------------------------------------------------------------

def svg_groups(data: bytes | str | Path) -> dict[str, list[str]]:
    """id -> the text lines of every <text> inside that <g id=...>, or of the <text id=...> itself (a label of
    one line carries its id, a label of several lines is a group of that id)."""
    if isinstance(data, Path):
        data = data.read_bytes()
    root = ET.fromstring(data)
    out: dict[str, list[str]] = {}
    for g in root.iter(f"{SVG_NS}g"):
        gid = g.get("id")
        if gid is None:
            continue
        texts = ["".join(t.itertext()) for t in g.iter(f"{SVG_NS}text")]
        if texts:
            out[gid] = texts
    for t in root.iter(f"{SVG_NS}text"):
        if t.get("id") is not None:
            out[t.get("id")] = ["".join(t.itertext())]
    return out


def svg_texts(data: bytes) -> list[str]:
    root = ET.fromstring(data)
    return ["".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")]


def svg_text_style(root: ET.Element, text: ET.Element) -> str:
    """The CSS that styles one <text>: the rules of the classes of its enclosing groups (outermost first) and of
    its own (from the file's <style> elements), then its own style attribute; later declarations win."""
    rules = {}
    for style in root.iter(f"{SVG_NS}style"):
        for name, rule in re.findall(r"\.([\w-]+)\s*\{([^}]*)\}", style.text or ""):
            rules[name] = rule
    parent = {child: node for node in root.iter() for child in node}
    chain, node = [], text
    while node is not None:
        chain.append(node)
        node = parent.get(node)
    parts = []
    for node in reversed(chain):
        parts += [rules[name] for name in (node.get("class") or "").split() if name in rules]
        parts += [node.get("style")] if node.get("style") else []
    return "; ".join(parts)


def svg_font_sizes(data: bytes, id_prefix: str = "") -> list[float]:
    """font-size (px = pt in matplotlib's SVG) of every <text> under groups whose id starts with id_prefix, or
    with such an id itself."""
    root = ET.fromstring(data)
    texts = []
    for g in root.iter(f"{SVG_NS}g"):
        if (g.get("id") or "").startswith(id_prefix) and id_prefix:
            texts += list(g.iter(f"{SVG_NS}text"))
    texts += [t for t in root.iter(f"{SVG_NS}text") if id_prefix and (t.get("id") or "").startswith(id_prefix)]
    texts = list({id(t): t for t in texts}.values())  # a text in a matching group with a matching id counts once
    # matplotlib < 3.10 writes a Text's size in the CSS font shorthand ("font: 8px 'DejaVu Sans'")
    return [float(re.search(r"font(?:-size)?:[^;]*?([\d.]+)px", svg_text_style(root, t)).group(1)) for t in texts]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height
