"""The notebook API: one fragment's layout, or the whole catalogue, in one call.

    >>> import fraglab
    >>> L = fraglab.layout("matrix_a", shape="m16n16k16", dtype="f16", source="auto", api="wmma")
    >>> L.holders(3, 5)              # every (lane, slot) holding element (3, 5)
    >>> L.to_numpy()[lane, slot]     # (row, col), -1 where the slot holds nothing
    >>> fraglab.catalogue(api="mma")  # what `fraglab list --api mma --format json` lists
"""

from __future__ import annotations

from typing import Any

from .apis import FAMILIES, get_family, make_spec
from .layouts.layout import Layout
from .layouts.resolve import resolve_layout


def layout(frag: str | None = None, shape: str | None = None, dtype: str | None = None, layout: str | None = None,
           *, api: str = "wmma", source: str = "auto", method: str | None = None, atlas: str | None = None,
           num: int | None = None, trans: bool | None = None, swizzle: str | None = None,
           major: str | None = None) -> Layout:
    """The layout of one fragment, from the GPU, the bundled atlas (or `atlas`, a captured file) or the model.

    Options left as None take the family's defaults, as on the command line; a bad value raises
    fraglab.InputError naming the argument and its valid choices."""
    extras = {k: v for k, v in (("num", num), ("trans", trans), ("swizzle", swizzle), ("major", major))
              if v is not None}
    spec = make_spec(frag, shape, dtype, layout, api=api, **extras)
    return resolve_layout(spec, source, method, atlas=atlas)


def catalogue(api: str | None = None) -> list[dict[str, Any]]:
    """Every fragment fraglab knows, one dict each, exactly as `fraglab list --format json` prints them."""
    families = [get_family(api)] if api is not None else list(FAMILIES.values())
    rows = []
    for family in families:
        for spec in family.specs():
            row = {**spec.to_dict(), "rows": spec.rows, "cols": spec.cols, "threads": spec.threads,
                   "slots": family.slots(spec) if family.slots is not None else None, "min_sm": spec.min_sm}
            if family.model_only:  # tcgen05: answered from the PTX model only, never measured
                row["model_only"] = True
            if family.api == "wmma":  # kept for the WMMA rows' established shape
                row["experimental"] = (family.note(spec) if family.note else "") == "experimental::precision"
            rows.append(row)
    return rows


__all__ = ["layout", "catalogue"]
