"""One self-contained interactive page holding many layouts (no network, no side files).

The page (page.html beside this module) gets every layout as JSON in one script tag: per layout its
identity, tile size, and the index of its map in a shared table: the element of each (thread, slot) as
row * cols + col (-1: none), stored once for all the layouts that share it. Pick family,
shape, type, operand and variant; hover a cell to light every holder and each holder's other slots;
hover a thread to list its registers; colour by lane, slot, register or warp; show A, B, C of one
MMA side by side.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .tile import mapping_comment, title

TEMPLATE = Path(__file__).with_name("page.html")
_MARKER = "/*FRAGLAB_DATA*/"
_CSP_MARKER = "/*FRAGLAB_CSP*/"
_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)  # the page's own scripts (the data block has a type)
_STYLE = re.compile(r"<style>(.*?)</style>", re.S)
_OPERAND_ORDER = ("matrix_a", "matrix_b", "accumulator")


def variant(layout) -> str:
    """What tells apart layouts of one (api, shape, dtype, frag): the memory layout plus a family's extra fields."""
    spec = layout.spec
    words = [str(spec.layout)]
    for extra in ("num", "trans", "swizzle", "major"):
        value = getattr(spec, extra, None)
        if value is not None:
            words.append(f"{extra}={str(value).lower()}")
    return " ".join(words)


def _source_text(layout) -> str:
    from ..layouts.resolve import source_line

    return source_line(layout.source)  # one line, control characters removed, long names cut


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def content_security_policy(page: str) -> str:
    """No network at all, no inline event handlers, no plugins or forms: only the page's own scripts and
    styles run, each allowed by its hash (a script planted in the data could not match one)."""
    scripts = " ".join(_sha256(body) for body in _SCRIPT.findall(page))
    styles = " ".join(_sha256(body) for body in _STYLE.findall(page))
    return (f"default-src 'none'; script-src {scripts}; style-src {styles}; img-src 'none'; "
            "connect-src 'none'; font-src 'none'; object-src 'none'; media-src 'none'; frame-src 'none'; "
            "base-uri 'none'; form-action 'none'")


def _entry(layout, key: str, maps: dict[tuple, int]) -> dict:
    """The layout's fields; its cells go to the shared `maps` table (types of one shape often share a map)."""
    spec = layout.spec
    row = np.asarray(layout.row, dtype=np.int64)
    col = np.asarray(layout.col, dtype=np.int64)
    cells = tuple(np.where(row >= 0, row * spec.cols + col, -1).ravel().tolist())
    return {"key": key, "api": spec.api, "shape": spec.shape, "dtype": spec.dtype, "frag": spec.frag,
            "variant": variant(layout), "title": title(layout), "mapping": mapping_comment(layout),
            "source": _source_text(layout), "rows": spec.rows, "cols": spec.cols, "threads": layout.threads,
            "slots": layout.num_elements, "bits": int(spec.element_bits), "map": maps.setdefault(cells, len(maps))}


def _mma_groups(entries: list[dict]) -> None:
    """Give each A/B layout the keys of its MMA's A, B and accumulator (the accumulator's widest type)."""
    def find(api, shape, frag, dtype=None, variant_=None):
        hits = [e for e in entries if e["api"] == api and e["shape"] == shape and e["frag"] == frag
                and (dtype is None or e["dtype"] == dtype)]
        same = [e for e in hits if e["variant"] == variant_]
        return (same or hits or [None])[0]

    for e in entries:
        if e["frag"] not in _OPERAND_ORDER:
            continue
        a = e if e["frag"] == "matrix_a" else find(e["api"], e["shape"], "matrix_a", e["dtype"], e["variant"])
        if e["frag"] == "accumulator":
            a = find(e["api"], e["shape"], "matrix_a")
        if a is None:
            continue
        b = find(a["api"], a["shape"], "matrix_b", a["dtype"], a["variant"])
        accs = [x for x in entries if x["api"] == a["api"] and x["shape"] == a["shape"] and x["frag"] == "accumulator"]
        accs.sort(key=lambda x: (-x["bits"], x["variant"] != "row"))
        c = e if e["frag"] == "accumulator" else (accs[0] if accs else None)
        e["mma"] = [x["key"] for x in (a, b, c) if x is not None]


def build_page(layouts: list, generated: str = "", smem: list | None = None) -> str:
    """The page text holding `layouts` (the first of each key is kept) and the shared-memory section's cases
    (`smem`; default: fraglab.smem.page.page_cases(), the shipped ones as the model gives them)."""
    entries: list[dict] = []
    maps: dict[tuple, int] = {}
    seen: set[str] = set()
    for lay in layouts:
        key = getattr(lay.spec, "key", None) or title(lay).replace(" ", ".")
        if key in seen:
            continue
        seen.add(key)
        entries.append(_entry(lay, key, maps))
    _mma_groups(entries)
    stamp = generated or f"Generated by fraglab on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC."
    # Inside the data block no '<', '>' or '&' at all (escaped as JSON \\u003c ...): a planted "</script>" or
    # "<!--" cannot end the block or change how the browser reads it.
    if smem is None:
        from ..smem.page import page_cases

        smem = page_cases()
    data = (json.dumps({"layouts": entries, "maps": [list(m) for m in maps], "generated": stamp, "smem": smem},
                       separators=(",", ":"))
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))
    page = TEMPLATE.read_text().replace(_MARKER, data, 1)
    return page.replace(_CSP_MARKER, content_security_policy(page), 1)
