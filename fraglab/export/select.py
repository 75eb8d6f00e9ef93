"""Which layouts the export commands work on: one fragment chosen as `fraglab layout` chooses it, or every
layout of an atlas (plus the families' PTX models for fragments the atlas does not hold).

The CLI parses options and calls these; `--atlas FILE` answers from that atlas file instead of the
bundled one (an H100 capture against the H200 one, say).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import FraglabError


def make_spec(api: str = "wmma", **choices: Any):
    """The validated fragment (InputError names the bad option and its choices)."""
    from ..apis import make_spec as family_make_spec

    fields = {k: v for k, v in choices.items() if v is not None}
    core = {k: fields.pop(k, None) for k in ("frag", "shape", "dtype", "layout")}
    return family_make_spec(api=api, **core, **fields)


def select_layout(*, api: str = "wmma", frag: str | None = None, shape: str | None = None, dtype: str | None = None,
                  layout: str | None = None, num: int | None = None, trans: bool | None = None,
                  swizzle: str | None = None, major: str | None = None,
                  source: str = "auto", atlas: Path | None = None, method: str | None = None):
    """One layout: from `atlas` when given, else as `fraglab layout --source` resolves it.

    The method defaults to "load" where the family measures with it, else the family's first (mma.sync
    measures with "mma", wgmma with "codes"): each gives the full slot map."""
    spec = make_spec(api, frag=frag, shape=shape, dtype=dtype, layout=layout, num=num, trans=trans,
                     swizzle=swizzle, major=major)
    if method is None:
        methods = spec.family.methods
        method = "load" if "load" in methods else methods[0]
    if atlas is not None:
        from ..layouts import atlas as atlas_mod

        return atlas_mod.load(Path(atlas)).layout(spec, method)
    from ..layouts.resolve import resolve_layout

    return resolve_layout(spec, source, method)


def measured_layouts(found) -> list:
    """Every layout the atlas `found` holds, each by "load" where its family measures with it, else by the
    family's first method the atlas recorded (wgmma: "codes", mma.sync: "mma")."""
    out = []
    for spec in found.specs():
        method = next((m for m in ("load", *spec.family.methods) if found.has(spec, m)), None)
        if method is not None:
            out.append(found.layout(spec, method))
    return out


def page_layouts(atlas: Path | None = None) -> list:
    """Every layout of the atlas (the bundled one by default), then each family's model where the atlas has none."""
    from ..apis import FAMILIES
    from ..layouts import atlas as atlas_mod

    found = atlas_mod.load(Path(atlas)) if atlas is not None else atlas_mod.load_bundled()
    out = measured_layouts(found)
    held = {lay.spec.key for lay in out}
    for family in FAMILIES.values():
        for spec in family.specs():
            if spec.key in held:
                continue
            try:
                modelled = family.model(spec, "load")
            except FraglabError:
                continue  # a fragment the model does not cover stays off the page
            if modelled is not None:
                out.append(modelled)
    return out
