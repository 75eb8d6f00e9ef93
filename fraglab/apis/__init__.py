"""The registry of instruction families (families as data) and the catalogue they make up.

FAMILIES maps an api name to its Family; everything that lists, validates, resolves or captures fragments
iterates it. A new family: write fraglab/apis/<name>.py building a Family, add it to _FAMILY_MODULES.
The registry itself sits in the wing below (fraglab.layouts.spec: a spec asks it for its family, the atlas and
the probe runner iterate it); this module registers each family there when imported.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import InputError
from ..layouts.spec import FAMILIES, OPTIONAL_FIELDS, FragmentSpec, get_family, parse_shape
from .family import Family

# api -> module that defines FAMILY; imported on first use so a broken family cannot sink the others' import.
_FAMILY_MODULES = {
    "wmma": "fraglab.apis.wmma",
    "wgmma": "fraglab.apis.wgmma",
    "mma": "fraglab.apis.mma",
    "mma_sp": "fraglab.apis.mma_sp",
    "ldmatrix": "fraglab.apis.ldmatrix",
    "stmatrix": "fraglab.apis.ldmatrix:STMATRIX_FAMILY",
    "movmatrix": "fraglab.apis.ldmatrix:MOVMATRIX_FAMILY",
    "tcgen05": "fraglab.apis.tcgen05",  # model only (no sm_100 here)
}


def _loader(module: str):
    """'module[:ATTR]' -> a function importing the module and returning its FAMILY (or ATTR)."""
    name, _, attr = module.partition(":")
    return lambda: getattr(importlib.import_module(name), attr or "FAMILY")


def register(api: str, module: str) -> None:
    """Add a family module to the registry (fraglab's own families are listed in _FAMILY_MODULES)."""
    _FAMILY_MODULES[api] = module
    FAMILIES.register(api, _loader(module))


for _api, _module in _FAMILY_MODULES.items():
    FAMILIES.register(_api, _loader(_module))


def catalogue(api: str | None = None) -> list[FragmentSpec]:
    """Every fragment of one family (or of all of them, family by family), in a stable order."""
    if api is not None:
        return list(get_family(api).specs())
    return [spec for family in FAMILIES.values() for spec in family.specs()]


def _choices(values) -> str:
    return ", ".join(str(v) for v in dict.fromkeys(values))


_ORDER = ("frag", "shape", "dtype", "layout", *OPTIONAL_FIELDS)


def _is_mnk(shape) -> bool:
    try:
        parse_shape(shape)
        return True
    except InputError:
        return False  # tcgen05's 32x32b, 16x64b ...: their choices are the message


def make_spec(frag: str | None = None, shape: str | None = None, dtype: str | None = None,
              layout: str | None = None, api: str = "wmma", **extras: Any) -> FragmentSpec:
    """Validate user input against the family's catalogue; InputError names the first bad argument and its choices.

    Arguments left as None take the family's default for the operand, or else the first value the catalogue
    offers with what was chosen before (frag, shape, dtype, layout, then num, trans, swizzle, major)."""
    family = get_family(api)
    unknown = set(extras) - set(OPTIONAL_FIELDS)
    if unknown:
        raise InputError(f"unknown fragment option(s) {', '.join(sorted(unknown))}", argument=sorted(unknown)[0])
    wanted = {"frag": frag, "shape": shape, "dtype": dtype, "layout": layout, **extras}
    candidates = list(family.specs())
    chosen: list[str] = []
    for name in _ORDER:
        value = wanted.get(name)
        offered = [getattr(s, name) for s in candidates]
        if all(v is None for v in offered):
            if value is not None:
                raise InputError(f"--{name} does not apply to {api}" + (f" {wanted['frag']}" if chosen else ""),
                                 argument=name)
            continue
        if value is None:
            default = family.default_for(candidates[0].frag, name) if name != "frag" else None
            if name == "frag" and len(set(offered)) > 1:  # a one-operand family (ldmatrix) needs no --frag
                raise InputError(f"--frag is required: valid choices are {_choices(offered)}", argument="frag")
            value = default if default in offered else offered[0]
        if value not in offered:
            if name == "shape" and isinstance(value, str) and all(_is_mnk(o) for o in offered):
                parse_shape(value)  # a malformed shape gets the format message (families with m..n..k.. shapes)
            where = f" for {api} " + " ".join(str(wanted[c]) if c != "frag" else str(wanted[c]) for c in chosen) \
                if chosen else f" for {api}"
            raise InputError(f"invalid --{name} {value!r}{where}: valid choices are {_choices(offered)}",
                             argument=name, see=f"fraglab list --api {api}")
        wanted[name] = value
        chosen.append(name)
        candidates = [s for s in candidates if getattr(s, name) == value]
    return candidates[0]


__all__ = ["Family", "FAMILIES", "get_family", "catalogue", "make_spec", "register"]
