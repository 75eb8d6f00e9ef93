"""What the check tests share: every fragment fraglab ships, each export form of one, and their mutations.

The mutations are written against the forms' own grammar (a CuTe stride, a Triton basis, a table entry, the
header's index()), so each is known to move at least one slot, and which one where that is exact.
"""

from __future__ import annotations

import functools
import re

from fraglab.export import cute, header, linear
from fraglab.export.tile import NoExportForm


@functools.lru_cache(maxsize=1)
def shipped_layouts() -> tuple:
    """Every fragment fraglab ships: the bundled atlases' layouts, then the PTX models of the rest (tcgen05, ...)."""
    from fraglab.export.select import page_layouts

    return tuple(page_layouts())


def cute_texts(layout) -> list[str]:
    """What `fraglab export --to cute` gives: text and JSON, or where no shape:stride form exists the nearest
    swizzled composition its error names; [] when there is none at all."""
    try:
        return [cute.render(layout, "text"), cute.render(layout, "json")]
    except NoExportForm as err:
        return [err.nearest] if err.composed and "swizzle" in err.composed else []


def triton_texts(layout) -> list[str]:
    try:
        return [linear.render(layout, fmt) for fmt in ("text", "json", "python")]
    except NoExportForm:
        return []  # not linear over GF(2) (e.g. 12 slots): no Triton form to check


def tree_text(tree) -> str:
    return str(tree) if isinstance(tree, int) else "(" + ",".join(tree_text(t) for t in tree) + ")"


def _bump_last_leaf(shape, stride):
    """The stride tree with +1 on the last leaf whose extent is above 1 (so some coordinate moves), or None."""
    leaves_shape = re.findall(r"-?\d+", tree_text(shape))
    leaves_stride = re.findall(r"-?\d+", tree_text(stride))
    pick = max((i for i, e in enumerate(leaves_shape) if int(e) > 1), default=None)
    if pick is None:
        return None
    counter = iter(range(len(leaves_stride)))

    def rebuild(tree):
        if isinstance(tree, int):
            return tree + 1 if next(counter) == pick else tree
        return tuple(rebuild(t) for t in tree)

    return rebuild(stride)


def mutated_cute(text: str) -> str:
    """The same spelling with one stride moved: the thread-value layout's, or the swizzled form's outer L."""
    from fraglab.check.cute_text import parse

    parsed = parse(text)
    if parsed.outer is not None:
        shape, stride = parsed.outer
        (ts, td), (vs, vd) = parsed.tv
        b, m, s = parsed.swizzle_bits
        return (f"{tree_text(shape)}:{tree_text(_bump_last_leaf(shape, stride))} o Swizzle<{b},{m},{s}> o "
                f"({tree_text(ts)},{tree_text(vs)}):({tree_text(td)},{tree_text(vd)})")
    (ts, td), (vs, vd) = parsed.tv
    bumped = _bump_last_leaf(vs, vd)
    if bumped is not None:
        return f"({tree_text(ts)},{tree_text(vs)}):({tree_text(td)},{tree_text(bumped)})"
    return f"({tree_text(ts)},{tree_text(vs)}):({tree_text(_bump_last_leaf(ts, td))},{tree_text(vd)})"


def held_slot(layout) -> tuple[int, int]:
    """A (thread, slot) that holds an element, past thread 0 where there is one."""
    held = [(t, s) for t in range(layout.threads) for s in range(layout.num_elements) if layout.row[t, s] >= 0]
    return next(((t, s) for t, s in held if t > 0), held[0])


def mutated_header(text: str, thread: int, slot: int) -> str:
    """index() XOR 1 for (thread, slot) only: exactly that slot moves (index -> (row, col) is one to one)."""
    body = text.index("static constexpr int index(")
    ret = text.index("return ", body)
    end = text.index(";", ret)
    expression = text[ret + len("return "):end]
    head = text[:body] + text[body:ret].replace("int /*thread*/", "int thread").replace("int /*slot*/", "int slot")
    return head + f"return ({expression}) ^ (thread == {thread} && slot == {slot} ? 1 : 0)" + text[end:]


def header_text(layout) -> str:
    return header.render(layout)
