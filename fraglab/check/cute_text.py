"""CuTe's thread-value layout in its own spellings, read into a slot map.

Convention (CUTLASS's MMA_Traits ALayout/BLayout/CLayout and the GMMA traits): a layout with two top modes,
(thread, value) -> a column-major index into the (M,K) tile for A, the (N,K) tile for B (fraglab's K x N
transposed: index = n + k * N) and the (M,N) tile for C; other fragments (ldmatrix, tcgen05) index fraglab's
rows x cols tile. Each mode takes its 1-D coordinate colexicographically over its leaves (first fastest).

Spellings read:
- CuTe's printed form, `((4,8),(2,2,2)):((32,1),(16,8,128))`, static integers with or without `_` (`_4`);
- the C++ type, `Layout<Shape <Shape <_4,_8>,Shape <_2,_2,_2>>, Stride<...>>` (`cute::`, `Int<N>`, `C<N>`);
- the JSON of `fraglab export --to cute --format json`: {"shape": [thread, value], "stride": [...]};
- fraglab's swizzled composition `L o Swizzle<B,M,S> o (T,V):(V,1)` (`fraglab export --to cute` names it
  for wgmma's swizzled shared-memory operands): the flat offset of (thread, slot) is swizzled, then L.
A text of several lines (what `fraglab export --to cute` writes) is read from its C++ type, else from the
first line, comment marks removed, that parses.
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..errors import InputError
from ..export.cute import cute_tile, swizzle
from .given import GivenLayout, check_size, grid, tile_of

_TOKEN = re.compile(r"\s*(cute::|GMMA::|Shape|Stride|Layout|Int|C(?=\s*<)|Swizzle|Sw(?=\s*<)|-?_?\d+|[<>(),:]|o\b|\S)")


class CuteSyntaxError(ValueError):
    pass


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            break
        pos = match.end()
        out.append(match.group(1))
    return out


class _Reader:
    def __init__(self, tokens: list[str]):
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            found = "the end" if token is None else repr(token)
            raise CuteSyntaxError(f"expected {expected!r}, found {found}" if expected else "unexpected end")
        self.pos += 1
        return token

    def number(self) -> int:
        token = self.take()
        if not re.fullmatch(r"-?_?\d+", token):
            raise CuteSyntaxError(f"expected an integer, found {token!r}")
        return int(token.replace("_", ""))

    # ---- CuTe's printed form: (a,(b,c)) ---------------------------------------------------------
    def tree(self):
        if self.peek() == "(":
            self.take("(")
            items = [self.tree()]
            while self.peek() == ",":
                self.take(",")
                items.append(self.tree())
            self.take(")")
            return tuple(items)
        return self.number()

    def layout(self):
        shape = self.tree()
        self.take(":")
        return shape, self.tree()

    # ---- the C++ type: Layout<Shape<...>, Stride<...>> ------------------------------------------
    def cpp_item(self, kind: str):
        token = self.peek()
        if token in ("Shape", "Stride"):
            if token != kind:
                raise CuteSyntaxError(f"expected {kind}<...>, found {token}<...>")
            self.take()
            self.take("<")
            items = [self.cpp_item(kind)]
            while self.peek() == ",":
                self.take(",")
                items.append(self.cpp_item(kind))
            self.take(">")
            return tuple(items)
        if token in ("Int", "C"):
            self.take()
            self.take("<")
            value = self.number()
            self.take(">")
            return value
        return self.number()

    def cpp_layout(self):
        self.take("Layout")
        self.take("<")
        shape = self.cpp_item("Shape")
        self.take(",")
        stride = self.cpp_item("Stride")
        self.take(">")
        return shape, stride


def _leaves(tree) -> list[int]:
    return [tree] if isinstance(tree, int) else [leaf for item in tree for leaf in _leaves(item)]


def _congruent(shape, stride) -> bool:
    if isinstance(shape, int) or isinstance(stride, int):
        return isinstance(shape, int) and isinstance(stride, int)
    return len(shape) == len(stride) and all(_congruent(a, b) for a, b in zip(shape, stride))


def _eval_flat(shape, stride, coord: np.ndarray) -> np.ndarray:
    """A mode (any nesting) at a 1-D coordinate: colexicographic over its leaves, first fastest."""
    total = np.zeros_like(coord)
    step = 1
    for extent, s in zip(_leaves(shape), _leaves(stride)):
        total = total + (coord // step) % extent * s
        step *= extent
    return total


def _check_layout(shape, stride, what: str) -> None:
    if not _congruent(shape, stride):
        raise CuteSyntaxError(f"the {what}'s shape and stride are not congruent (one nests where the other does not)")
    if any(e < 1 for e in _leaves(shape)):
        raise CuteSyntaxError(f"the {what} has an extent below 1")
    if any(s < 0 for s in _leaves(stride)):
        raise CuteSyntaxError(f"the {what} has a negative stride; a tile index is never negative")


def _tv_modes(shape, stride) -> tuple[tuple, tuple]:
    """(thread shape, thread stride), (value shape, value stride) of a two-mode layout."""
    if isinstance(shape, int) or len(shape) != 2:
        modes = 1 if isinstance(shape, int) else len(shape)
        raise CuteSyntaxError(f"a thread-value layout has two top modes (thread, value), this one has {modes}")
    _check_layout(shape, stride, "layout")
    return (shape[0], stride[0]), (shape[1], stride[1])


class ParsedCute:
    """index(thread, slot) of one of the spellings, with its thread and slot counts."""

    def __init__(self, text: str, tv: tuple, outer: tuple | None = None, swizzle_bits: tuple | None = None):
        self.text = text
        self.tv = tv            # ((thread shape, stride), (value shape, stride)) of the TV (or offset) layout
        self.outer = outer      # L of L o Swizzle o TV: (shape, stride), taken at a 1-D coordinate
        self.swizzle_bits = swizzle_bits
        (tshape, _), (vshape, _) = tv
        self.threads = int(np.prod(_leaves(tshape)))
        self.slots = int(np.prod(_leaves(vshape)))

    def index(self, thread: np.ndarray, slot: np.ndarray) -> np.ndarray:
        (tshape, tstride), (vshape, vstride) = self.tv
        offset = _eval_flat(tshape, tstride, thread) + _eval_flat(vshape, vstride, slot)
        if self.outer is None:
            return offset
        return _eval_flat(*self.outer, swizzle(offset, *self.swizzle_bits))


def _parse_one(text: str) -> ParsedCute:
    """One spelling on one string (whitespace and line breaks inside it allowed)."""
    tokens = [t for t in _tokens(text) if t not in ("cute::", "GMMA::")]  # namespaces say nothing here
    if not tokens:
        raise CuteSyntaxError("it is empty")
    if "Layout" in tokens:
        reader = _Reader(tokens)
        shape, stride = reader.cpp_layout()
        if reader.peek() is not None:
            raise CuteSyntaxError(f"unexpected {reader.peek()!r} after the layout")
        return ParsedCute(text, _tv_modes(shape, stride))
    reader = _Reader(tokens)
    first = reader.layout()
    if reader.peek() == "o":
        reader.take("o")
        kind = reader.take()
        if kind not in ("Swizzle", "Sw"):
            raise CuteSyntaxError(f"expected Swizzle<B,M,S> after 'o', found {kind!r}")
        reader.take("<")
        bits = [reader.number()]
        for _ in range(2):
            reader.take(",")
            bits.append(reader.number())
        reader.take(">")
        reader.take("o")
        offset = reader.layout()
        if reader.peek() is not None:
            raise CuteSyntaxError(f"unexpected {reader.peek()!r} after the layout")
        _check_layout(*first, "outer layout")
        return ParsedCute(text, _tv_modes(*offset), outer=first, swizzle_bits=tuple(bits))
    if reader.peek() is not None:
        raise CuteSyntaxError(f"unexpected {reader.peek()!r} after the layout")
    return ParsedCute(text, _tv_modes(*first))


def _from_json(text: str) -> ParsedCute:
    """`fraglab export --to cute --format json`: {"shape": [thread, value], "stride": [thread, value]}."""
    def tree(value):
        if isinstance(value, bool) or not isinstance(value, (int, list)):
            raise CuteSyntaxError("shape and stride hold integers and lists only")
        return value if isinstance(value, int) else tuple(tree(v) for v in value)

    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CuteSyntaxError(f"not JSON ({exc.msg})") from None
    if not isinstance(doc, dict) or set(doc) != {"shape", "stride"}:
        raise CuteSyntaxError('the JSON form is {"shape": [thread, value], "stride": [thread, value]}')
    return ParsedCute(" ".join(text.split()), _tv_modes(tree(doc["shape"]), tree(doc["stride"])))


def parse(text: str) -> ParsedCute:
    """The layout a --cute text spells; several lines: the C++ type, else the first line that parses."""
    if text.lstrip().startswith("{"):
        try:
            return _from_json(text)
        except CuteSyntaxError as exc:
            raise InputError(f"invalid --cute: {exc}", argument="cute") from None
    if "composed with the slot selection" in text:
        raise InputError("invalid --cute: a slot-selection composition names only the kept slots, so it cannot be "
                         "checked slot by slot; check the table (fraglab layout --format json) instead",
                         argument="cute")
    uncommented = re.sub(r"//[^\n]*", "", text)
    cpp = re.search(r"\bLayout\s*<", uncommented)  # the C++ type, after any `using ALayout =`
    if cpp is not None:
        candidates = [uncommented[cpp.start():].split(";")[0]]
    elif "\n" not in text.strip():
        candidates = [text]
    else:
        candidates = [re.sub(r"^\s*(//|#)\s?", "", line) for line in text.splitlines()]
        candidates = [c for c in candidates if ":" in c and "(" in c or c.strip().isdigit()]
    first_error = None
    for candidate in candidates:
        try:
            return _parse_one(candidate)
        except CuteSyntaxError as exc:
            first_error = first_error or exc
    why = str(first_error) if first_error else "no line holds a shape:stride layout"
    raise InputError(f"invalid --cute: {why}; expected e.g. ((4,8),(2,2,2)):((32,1),(16,8,128)) or "
                     "Layout<Shape<...>,Stride<...>>", argument="cute")


def read(text: str, measured) -> GivenLayout:
    """The slot map `text` spells, over the tile of the measured fragment `measured` (CUTLASS's convention)."""
    parsed = parse(text)
    check_size(parsed.threads, parsed.slots, "cute")
    rows, _, transposed = cute_tile(measured.spec)
    index = parsed.index(*grid(parsed.threads, parsed.slots))
    first, second = index % rows, index // rows
    row, col = (second, first) if transposed else (first, second)
    one_line = " ".join(parsed.text.split())
    return GivenLayout("cute", one_line, tile_of(measured), row, col)
