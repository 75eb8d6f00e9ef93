"""What a fragment is: FragmentSpec (api, operand, shape, element type, layout, and the optional fields of
the newer families), shape parsing, and the per-type facts every family shares. Pure data, no GPU.

Which combinations exist, how many threads hold a fragment and which architecture runs it are the
family's to say; a spec asks its family on demand, through FAMILIES below. The families are defined a wing up
(fraglab.apis) and register here, so this wing never imports upward, not even lazily.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any, Callable

from ..errors import InputError, check_choice

# Bits one logical element takes in a register; sub-byte types pack 8 (4-bit) or 32 (1-bit) per word.
ELEMENT_BITS = {
    "f16": 16, "bf16": 16, "tf32": 32, "f64": 64, "u8": 8, "s8": 8, "u4": 4, "s4": 4, "b1": 1,
    "f32": 32, "s32": 32, "e4m3": 8, "e5m2": 8, "b16": 16, "b8": 8, "b32": 32,
}

# Largest integer n such that every code 0..n-1 is exact in the type (how far one probe pass reaches).
CODE_BASE = {
    "f16": 2048, "bf16": 256, "tf32": 2048, "f64": 1 << 30, "u8": 256, "s8": 128,
    "u4": 16, "s4": 8, "b1": 2, "f32": 1 << 24, "s32": 1 << 30, "b16": 1 << 16, "b8": 256, "b32": 1 << 30,
}

OPERAND_LETTERS = {"matrix_a": "A", "matrix_b": "B", "accumulator": "accumulator"}
OPTIONAL_FIELDS = ("num", "trans", "swizzle", "major")  # None where a family does not use them

_SHAPE_RE = re.compile(r"^m(\d+)n(\d+)(?:k(\d+))?$")


def parse_shape(shape: str) -> tuple[int, int, int]:
    """'m16n16k16' -> (16, 16, 16); a shape without k (ldmatrix's m8n8) has k = 0."""
    match = _SHAPE_RE.match(shape)
    if not match:
        raise InputError(f"invalid --shape {shape!r}: expected the form m16n16k16 (or m8n8)", argument="shape")
    m, n, k = (int(g) if g is not None else 0 for g in match.groups())
    return m, n, k


# ---- the instruction families --------------------------------------------------------------------------------
# fraglab.apis registers every family here (api -> a loader of its Family, run on first use); fraglab/__init__.py
# imports fraglab.apis, so the registrations are made whichever fraglab module a program imports first.

class FamilyRegistry(dict):
    """api -> Family (fraglab.apis.family.Family), in registration order, each loaded on first access (so a broken
    family module cannot sink the others' import)."""

    def __init__(self):
        super().__init__()
        self._loaders: dict[str, Callable[[], Any]] = {}

    def register(self, api: str, loader: Callable[[], Any]) -> None:
        self._loaders[api] = loader
        dict.pop(self, api, None)

    def _load(self, api: str) -> Any:
        if not dict.__contains__(self, api):
            dict.__setitem__(self, api, self._loaders[api]())
        return dict.__getitem__(self, api)

    def __getitem__(self, api: str) -> Any:
        return self._load(api)

    def get(self, api, default=None):
        return self._load(api) if api in self._loaders else default

    def __contains__(self, api) -> bool:
        return api in self._loaders

    def __iter__(self):
        return iter(list(self._loaders))

    def __len__(self) -> int:
        return len(self._loaders)

    def keys(self):
        return list(self._loaders)

    def values(self):
        return [self._load(api) for api in self._loaders]

    def items(self):
        return [(api, self._load(api)) for api in self._loaders]


FAMILIES: FamilyRegistry = FamilyRegistry()


def get_family(api: str) -> Any:
    """The registered family of `api`; InputError naming the valid choices otherwise."""
    return FAMILIES[check_choice(api, tuple(FAMILIES), "api", name="--api")]


def _key_part(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return f"{name}{int(value)}"
    return f"{name}{value}"


@dataclass(frozen=True, order=True)
class FragmentSpec:
    """One fragment type: which operand, its MMA shape, element type and memory layout.

    For the accumulator `layout` is the memory layout it is stored (and loaded) with. `num` (ldmatrix
    x1/x2/x4), `trans`, `swizzle` ("none", "32B", "64B", "128B") and `major` ("k", "mn") stay None for
    the families that do not have them, so WMMA keys and JSON are unchanged.
    """

    api: str
    frag: str
    shape: str
    dtype: str
    layout: str
    num: int | None = None
    trans: bool | None = None
    swizzle: str | None = None
    major: str | None = None

    @property
    def mnk(self) -> tuple[int, int, int]:
        return parse_shape(self.shape)

    @property
    def family(self):
        """The instruction family (fraglab.apis.Family) this fragment belongs to."""
        return get_family(self.api)

    def _known_family(self):
        """The family, or None for an api no family module registers (a layout can still be drawn)."""
        return FAMILIES.get(self.api)

    @property
    def dims(self) -> tuple[int, int]:
        """(rows, cols) of the matrix this fragment holds (A: M x K, B: K x N, C: M x N unless the family says)."""
        family = self._known_family()
        if family is not None and family.dims is not None:
            return family.dims(self)
        m, n, k = self.mnk
        return (k if self.frag == "matrix_b" else m), (k if self.frag == "matrix_a" else n)

    @property
    def rows(self) -> int:
        return self.dims[0]

    @property
    def cols(self) -> int:
        return self.dims[1]

    @property
    def threads(self) -> int:
        family = self._known_family()
        return family.threads if family is not None else 32

    @property
    def element_bits(self) -> int:
        if self.frag == "metadata":  # mma.sp's metadata: 2-bit fields of one word, whatever A's type
            return 2
        return ELEMENT_BITS[self.dtype]

    @property
    def min_sm(self) -> int:
        family = self.family
        return family.spec_min_sm(self) if family.spec_min_sm is not None else family.min_sm

    def extras(self) -> dict[str, Any]:
        """The optional fields that are set, in declaration order."""
        return {name: getattr(self, name) for name in OPTIONAL_FIELDS if getattr(self, name) is not None}

    @property
    def key(self) -> str:
        """A stable identifier, also used in file names: wmma.matrix_a.m16n16k16.f16.row
        (other families append their set optional fields, e.g. ...row.num4.trans1)."""
        parts = [self.api, self.frag, self.shape, self.dtype, self.layout]
        parts += [_key_part(name, value) for name, value in self.extras().items()]
        return ".".join(parts)

    @classmethod
    def from_key(cls, key: str) -> "FragmentSpec":
        parts = key.split(".")
        if len(parts) < 5:
            raise InputError(f"invalid fragment key {key!r}: expected api.frag.shape.dtype.layout", argument="key")
        extras: dict[str, Any] = {}
        for part in parts[5:]:
            name = next((n for n in OPTIONAL_FIELDS if part.startswith(n)), None)
            if name is None or name in extras:
                raise InputError(f"invalid fragment key {key!r}: unknown part {part!r}", argument="key")
            value = part[len(name):]
            extras[name] = int(value) if name == "num" else (value == "1") if name == "trans" else value
        return cls(*parts[:5], **extras)

    def to_dict(self) -> dict[str, Any]:
        """The identity fields (optional ones only when set)."""
        out = {"api": self.api, "frag": self.frag, "shape": self.shape, "dtype": self.dtype, "layout": self.layout}
        out.update(self.extras())
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "FragmentSpec":
        names = [f.name for f in fields(cls)]
        return cls(**{n: data[n] for n in names[:5]}, **{n: data[n] for n in OPTIONAL_FIELDS if data.get(n) is not None})

    def describe(self) -> str:
        what = OPERAND_LETTERS.get(self.frag, self.frag)
        if self.frag in ("matrix_a", "matrix_b"):
            major = f"{self.layout}_major"
        elif self.frag == "accumulator":
            major = f"stored {self.layout}_major"
        else:
            major = self.layout
        extra = "".join(f", {n}={v}" for n, v in self.extras().items())
        return f"{self.api} {what} {self.shape} {self.dtype} ({major}{extra}, {self.rows}x{self.cols})"


def check_lane(lane: int | None, threads: int = 32) -> None:
    if lane is not None and not 0 <= lane < threads:
        raise InputError(f"invalid --thread {lane}: valid threads are 0..{threads - 1} (--lane is the same option)",
                         argument="lane")


__all__ = ["FragmentSpec", "FamilyRegistry", "FAMILIES", "get_family", "parse_shape", "check_lane", "ELEMENT_BITS", "CODE_BASE", "OPTIONAL_FIELDS",
           "OPERAND_LETTERS"]
