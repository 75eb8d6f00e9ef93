"""Triton's linear layout in the spellings people meet, read into a slot map.

A linear layout sends the bits of (register, lane, warp) to (dim0, dim1) by XOR; here register is the slot,
lane the thread's lane in its warp and warp its warp (thread = 32 * warp + lane), dim0 the row and dim1 the
column of fraglab's tile (A: M x K, B: K x N, as Triton's dot operands are shaped). Spellings read:
- the JSON `fraglab export --to triton --format json` writes: {"bases": {"register": [[r, c], ...], ...}};
- what Triton prints for a LinearLayout: ` - register=1 -> (0, 1)` lines and `where out dims are: [...]`
  (out dims listed dim1 first are swapped back);
- the TTGIR attribute `#ttg.linear<{register = [[0, 1], ...], lane = [...], warp = [...], block = []}>`;
- Gluon's `DistributedLinearLayout(reg_bases=[...], lane_bases=[...], warp_bases=[...], ...)` (what
  `--format python` writes), and fraglab's text form (`register [0,1] [8,0]`, one line per dim).
Block bases must be empty or zero (one CTA). Trailing zero warp bases beyond the fragment's threads are
Triton's broadcast over more warps than the instruction uses: they are dropped, with a note.
"""

from __future__ import annotations

import json
import re

from ..errors import InputError
from ..export.linear import IN_DIMS, LinearLayout
from .given import GivenLayout, check_size, grid, tile_of

# Each spelling's name for the in dims, to fraglab's (register, lane, warp) and block.
_DIM_ALIASES = {"register": "register", "reg": "register", "reg_bases": "register", "lane": "lane",
                "lane_bases": "lane", "warp": "warp", "warp_bases": "warp", "block": "block", "block_bases": "block"}


def _bad(why: str) -> InputError:
    return InputError(f"invalid --triton: {why}", argument="triton")


def _bracketed(text: str, start: int) -> str:
    """The balanced [...] that opens at text[start]."""
    depth = 0
    for pos in range(start, len(text)):
        depth += {"[": 1, "]": -1}.get(text[pos], 0)
        if depth == 0:
            return text[start:pos + 1]
    raise _bad("a [ is never closed")


def _vectors(value, dim: str) -> list[tuple[int, int]]:
    if not isinstance(value, list) or not all(
            isinstance(v, list) and len(v) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
            for v in value):
        raise _bad(f"the {dim} bases must be a list of [dim0, dim1] integer pairs")
    return [(int(a), int(b)) for a, b in value]


def _keyed_lists(text: str, pattern: str) -> dict[str, list]:
    """{dim: bases} for every `key = [...]` (or `key: [...]`) the pattern's key group names."""
    found: dict[str, list] = {}
    for match in re.finditer(pattern, text):
        dim = _DIM_ALIASES[match.group(1)]
        try:
            found[dim] = json.loads(_bracketed(text, match.end() - 1))
        except json.JSONDecodeError as exc:
            raise _bad(f"the {dim} bases are not a list of integer pairs ({exc.msg})") from exc
    return found


def _printed(text: str) -> dict[str, list]:
    """Triton's LinearLayout printout: ` - lane=1 -> (0, 2)` lines, out dims on the `where` line."""
    found: dict[str, list] = {}
    for match in re.finditer(r"(\w+)=(\d+)\s*->\s*\(([^)]*)\)", text):
        name, value, vector = match.groups()
        if name not in _DIM_ALIASES:
            raise _bad(f"in dim {name!r} is not one of register, lane, warp, block")
        dim = _DIM_ALIASES[name]
        bases = found.setdefault(dim, [])
        if int(value) != 1 << len(bases):
            raise _bad(f"{name}={value} is out of order: expected {name}={1 << len(bases)}")
        bases.append([int(x) for x in vector.split(",") if x.strip()])
    outs = re.search(r"where out dims are:\s*\[([^\]]*)\]", text)
    if outs is not None:
        names = re.findall(r"(\w+)\s*\(size", outs.group(1))
        if len(names) != 2:
            raise _bad(f"a fragment has two out dims (dim0, dim1), this layout has {len(names)}")
        if names == ["dim1", "dim0"] or names == ["col", "row"]:
            found = {dim: [list(reversed(v)) for v in bases] for dim, bases in found.items()}
    return found


def _fraglab_text(text: str) -> dict[str, list]:
    found: dict[str, list] = {}
    for line in text.splitlines():
        words = line.split(None, 1)
        if words and words[0] in IN_DIMS:
            pairs = re.findall(r"\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]", words[1] if len(words) > 1 else "")
            found[words[0]] = [[int(a), int(b)] for a, b in pairs]
    return found


def parse(text: str) -> tuple[dict[str, list[tuple[int, int]]], list[str]]:
    """{register, lane, warp: bases} of any spelling above, and notes; InputError when none fits."""
    stripped = text.strip()
    if not stripped:
        raise _bad("it is empty")
    if stripped.startswith("{"):
        try:
            doc = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise _bad(f"not JSON ({exc.msg} at line {exc.lineno})") from exc
        raw = doc.get("bases", doc) if isinstance(doc, dict) else None
        if not isinstance(raw, dict):
            raise _bad('the JSON must be {"bases": {"register": [...], "lane": [...], "warp": [...]}}')
        unknown = sorted(set(raw) - set(_DIM_ALIASES))
        if unknown:
            raise _bad(f"unknown in dims {', '.join(map(str, unknown))}: valid are register, lane, warp, block")
        found = {_DIM_ALIASES[k]: v for k, v in raw.items()}
        outs = doc.get("out_dims") if isinstance(doc, dict) else None
        if outs is not None and list(outs) not in (["row", "col"], ["dim0", "dim1"]):
            raise _bad(f"out_dims {outs!r}: expected [\"row\", \"col\"] (dim0, dim1)")
    elif re.search(r"^(register|lane|warp)[ \t]+\[", stripped, re.MULTILINE):
        found = _fraglab_text(stripped)
    elif "reg_bases" in stripped:
        found = _keyed_lists(stripped, r"\b(reg_bases|lane_bases|warp_bases|block_bases)\s*=\s*\[")
    elif "->" in stripped:
        found = _printed(stripped)
    elif re.search(r"\b(register|lane|warp|block)\s*=\s*\[", stripped):
        found = _keyed_lists(stripped, r"\b(register|lane|warp|block)\s*=\s*\[")
    else:
        found = _fraglab_text(stripped)
    if not found.get("register") and not found.get("lane"):
        raise _bad("no register or lane bases found; expected Triton's printout, #ttg.linear<{...}>, "
                   "DistributedLinearLayout(...) or the JSON of fraglab export --to triton")
    bases = {dim: _vectors(found.get(dim, []), dim) for dim in (*IN_DIMS, "block")}
    if any(v != (0, 0) for v in bases.pop("block")):
        raise _bad("block bases map several CTAs; a fragment lives in one (give block = [])")
    if bases["warp"] and len(bases["lane"]) != 5:
        raise _bad(f"warp bases need 5 lane bases (32 lanes), this layout has {len(bases['lane'])}")
    return bases, []


def read(text: str, measured) -> GivenLayout:
    """The slot map the linear layout `text` gives, over the measured fragment's tile."""
    bases, notes = parse(text)
    warps = list(bases["warp"])
    threads = (1 << len(bases["lane"])) << len(warps)
    dropped = 0
    while warps and warps[-1] == (0, 0) and threads > measured.threads:
        warps.pop()
        threads //= 2
        dropped += 1
    if dropped:
        notes.append(f"{dropped} trailing zero warp bases (a broadcast over more warps) dropped: "
                     f"{threads} threads compared")
    bases["warp"] = warps
    slots = 1 << len(bases["register"])
    check_size(threads, slots, "triton")
    found = LinearLayout({dim: tuple(bases[dim]) for dim in IN_DIMS}, measured.spec.rows, measured.spec.cols)
    row, col = found(*grid(threads, slots))
    spelled = json.dumps({dim: [list(v) for v in bases[dim]] for dim in IN_DIMS}, separators=(",", ":"))
    return GivenLayout("triton", spelled, tile_of(measured), row, col, notes)

