"""What a tensor-core or matrix-move instruction implies: its fragment family, shape, types, the registers of
each operand and the fraglab fragments (frag, shape, dtype, layout, ...) that describe them (pure Python).

SASS (sm_80/sm_90): HMMA/IMMA/DMMA/BMMA (mma.sync, wmma; .SP: mma.sp), HGMMA/QGMMA/IGMMA/BGMMA (wgmma),
LDSM/STSM/MOVM (ldmatrix, stmatrix, movmatrix). PTX: mma(.sp), wgmma.mma_async, wmma.*, ldmatrix, stmatrix,
movmatrix. Register counts per lane follow from the shape and types: elements * bits / (32 threads * 32 bits).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from .parse import Line

BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s32": 32, "s8": 8, "u8": 8, "e4m3": 8,
        "e5m2": 8, "s4": 4, "u4": 4, "b1": 1, "b16": 16}
MOVES = ("LDSM", "STSM", "MOVM")


@dataclass(frozen=True)
class Finding:
    line: Line
    level: str                                    # "sass" | "ptx"
    api: str                                      # the fraglab family: mma, mma_sp, wgmma, wmma, ldmatrix, ...
    shape: str
    types: str                                    # "f32 = f16 x f16 + f32", or the moved element type
    operands: tuple[tuple[str, str], ...]         # (role, registers), as the instruction names them
    fragments: tuple[tuple[str, dict], ...] = field(default_factory=tuple)  # (role, make_spec options)
    note: str = ""

    @property
    def kind(self) -> str:
        """What identifies the instruction's layouts: family, shape and types (one legend row each)."""
        return f"{self.api} {self.shape} {self.types}"


# ---- registers ---------------------------------------------------------------------------------

_REG = re.compile(r"^(U?R)(\d+|Z)")


def registers(operand: str, count: int) -> str:
    """'R12.reuse', 4 -> 'R12..R15'; RZ stays RZ; anything else (descriptors, immediates) as written."""
    found = _REG.match(operand.strip())
    if not found:
        return operand.strip()
    prefix, number = found.groups()
    if number == "Z" or count <= 1:
        return f"{prefix}{number}"
    return f"{prefix}{number}..{prefix}{int(number) + count - 1}"


def _count(elements: int, dtype: str, threads: int = 32) -> int:
    return max(1, elements * BITS[dtype] // (threads * 32))


# ---- SASS ----------------------------------------------------------------------------------------

def _mma_shape(token: str) -> tuple[int, int, int]:
    """'16816' -> (16, 8, 16), '884' -> (8, 8, 4), '88128' -> (8, 8, 128), '8x8x4' -> (8, 8, 4)."""
    if "x" in token:
        m, n, k = token.split("x")
        return int(m), int(n), int(k)
    if token.startswith("16"):
        return 16, int(token[2]), int(token[3:])
    return 8, int(token[1]), int(token[2:])


def _mma_types(unit: str, tokens: list[str]) -> tuple[str, str, str]:
    """(A type, B type, accumulator type) from the mnemonic's tokens after the shape."""
    low = [t.lower() for t in tokens]
    if unit == "DMMA":
        return "f64", "f64", "f64"
    if unit == "BMMA":
        return "b1", "b1", "s32"
    if unit == "IMMA":
        ints = [t for t in low if t in ("s8", "u8", "s4", "u4")]
        return ints[0], ints[-1], "s32"
    acc = next((t for t in low if t in ("f16", "f32")), "f32")
    rest = [t for t in low[low.index(acc) + 1:] if t in BITS] if acc in low else []
    ab = rest[0] if rest else "f16"
    return ab, (rest[1] if len(rest) > 1 else ab), acc


def _sass_mma(line: Line) -> Finding | None:
    parts = line.mnemonic.split(".")
    unit, sparse = parts[0], len(parts) > 1 and parts[1] == "SP"
    tokens = parts[2:] if sparse else parts[1:]
    if not tokens:
        return None
    m, n, k = _mma_shape(tokens[0])
    a, b, acc = _mma_types(unit, tokens[1:])
    shape = f"m{m}n{n}k{k}"
    counts = (("D", _count(m * n, acc)), ("A", _count(m * k // (2 if sparse else 1), a)), ("B", _count(k * n, b)),
              ("C", _count(m * n, acc)))
    ops = [(role, registers(op, c)) for (role, c), op in zip(counts, line.operands)]
    api = "mma_sp" if sparse else "mma"
    frags = [("A", dict(frag="matrix_a", shape=shape, dtype=a, layout="row")),
             ("B", dict(frag="matrix_b", shape=shape, dtype=b, layout="col")),
             ("C/D", dict(frag="accumulator", shape=shape, dtype=acc, layout="row"))]
    note = "" if sparse else "mma.sync, or a wmma.mma (which compiles to these)"
    if sparse and len(line.operands) >= 6:
        selector = int(line.operands[5], 0) if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", line.operands[5]) else 0
        ops += [("E", registers(line.operands[4], 1)), ("sel", line.operands[5])]
        frags.append(("E", dict(frag="metadata", shape=shape, dtype=a, layout=f"sel{selector}")))
        note = "A packed to K/2; E: 2-bit indices, read from the lanes the selector picks"
    types = f"{acc} = {a} x {b} + {acc}" + (f", sel {selector}" if sparse and len(line.operands) >= 6 else "")
    return Finding(line, "sass", api, shape, types, tuple(ops), tuple(frags), note)


_GMMA_TYPES = {"HGMMA": "f16", "QGMMA": "e4m3", "IGMMA": "s8", "BGMMA": "b1"}


def _sass_gmma(line: Line) -> Finding | None:
    parts = line.mnemonic.split(".")
    dims = parts[1].split("x") if len(parts) > 1 else []
    if len(dims) != 3:
        return None
    m, n, k = (int(d) for d in dims)
    low = [t.lower() for t in parts[2:]]
    acc = "s32" if parts[0] == "IGMMA" else next((t for t in low if t in ("f16", "f32")), "f32")
    inputs = [t for t in low if t in BITS and t not in ("f32", "s32")] if parts[0] != "HGMMA" \
        else [t for t in low[1:] if t in BITS]
    a = inputs[0] if inputs else _GMMA_TYPES[parts[0]]
    b = inputs[1] if len(inputs) > 1 else a
    shape = f"m{m}n{n}k{k}"
    ops = list(line.operands)
    a_in_registers = len(ops) > 1 and _REG.match(ops[1]) is not None and not ops[1].startswith("gdesc")
    operands = [("D", registers(ops[0], _count(m * n, acc, 128)))] if ops else []
    frags = [("C/D", dict(frag="accumulator", shape=shape, dtype=acc))]
    if a_in_registers:
        operands += [("A", registers(ops[1], _count(m * k, a, 128))), ("B", ops[2] if len(ops) > 2 else "?"),
                     ("C", registers(ops[3], _count(m * n, acc, 128)) if len(ops) > 3 else "?")]
        frags.insert(0, ("A", dict(frag="matrix_a", shape=shape, dtype=a, swizzle=None)))
        note = "A from registers, B from shared memory (descriptor)"
    else:
        operands += [("A,B", ops[1] if len(ops) > 1 else "?"),
                     ("C", registers(ops[2], _count(m * n, acc, 128)) if len(ops) > 2 else "?")]
        note = "A and B from shared memory (descriptors: swizzle and major are in them, not here)"
    types = f"{acc} = {a} x {b} + {acc}"
    return Finding(line, "sass", "wgmma", shape, types, tuple(operands), tuple(frags), note)


def _sass_move(line: Line) -> Finding | None:
    parts = line.mnemonic.split(".")
    if len(parts) < 3:
        return None
    trans = parts[2].startswith("MT")
    num = int(parts[3]) if len(parts) > 3 and parts[3].isdigit() else 1
    api = {"LDSM": "ldmatrix", "STSM": "stmatrix", "MOVM": "movmatrix"}[parts[0]]
    return _move_finding(line, "sass", api, num, trans, lambda op: registers(op, num))


def _move_finding(line: Line, level: str, api: str, num: int, trans: bool, regs: Callable[[str], str]) -> Finding:
    """An ldmatrix / stmatrix / movmatrix of `num` 8x8 b16 matrices; `regs` spells its register operand."""
    ops = line.operands
    if api == "stmatrix":
        operands = (("addr", ops[0] if ops else "?"), ("src", regs(ops[1]) if len(ops) > 1 else "?"))
    else:
        operands = (("dst", regs(ops[0]) if ops else "?"), ("src", ops[1] if len(ops) > 1 else "?"))
    options = dict(frag="matrix", shape="m8n8", dtype="b16", num=num, trans=trans)
    if api == "movmatrix":
        options.pop("num")
    return Finding(line, level, api, "m8n8", f"b16 x{num}{' .trans' if trans else ''}", operands,
                   (("regs", options),))


def classify_sass(line: Line) -> Finding | None:
    unit = line.mnemonic.split(".", 1)[0]
    try:
        if unit in ("HMMA", "IMMA", "DMMA", "BMMA"):
            return _sass_mma(line)
        if unit in _GMMA_TYPES:
            return _sass_gmma(line)
        if unit in MOVES:
            return _sass_move(line)
    except (ValueError, IndexError, KeyError):
        return Finding(line, "sass", unit.lower(), "?", "?", (), (), "a form fraglab does not decode")
    return None


# ---- PTX -------------------------------------------------------------------------------------------

_SHAPE = re.compile(r"^m(\d+)n(\d+)k(\d+)$")


def _braced(operand: str) -> str:
    inner = operand.strip().strip("{}").split(",")
    regs = [r.strip() for r in inner if r.strip()]
    if len(regs) <= 2:
        return ", ".join(regs)
    return f"{regs[0]}..{regs[-1]} ({len(regs)})"


def _ptx_mma(line: Line, parts: list[str]) -> Finding | None:
    sparse = parts[0] == "mma" and parts[1].startswith("sp")
    shape = next((p for p in parts if _SHAPE.match(p)), None)
    if shape is None:
        return None
    layouts = [p for p in parts if p in ("row", "col")]
    types = [p for p in parts[parts.index(shape) + 1:] if p in BITS]
    if len(types) < 4:
        return None
    d, a, b, c = types[:4]
    roles = ("D", "A", "B", "C", "E", "sel") if sparse else ("D", "A", "B", "C")
    ops = tuple((role, _braced(op) if role not in ("sel",) else op) for role, op in zip(roles, line.operands))
    api = "mma_sp" if sparse else "mma"
    frags = [("A", dict(frag="matrix_a", shape=shape, dtype=a, layout=layouts[0] if layouts else "row")),
             ("B", dict(frag="matrix_b", shape=shape, dtype=b, layout=layouts[1] if len(layouts) > 1 else "col")),
             ("C/D", dict(frag="accumulator", shape=shape, dtype=d, layout="row"))]
    if sparse and len(line.operands) >= 6:
        sel = line.operands[5].strip()
        selector = int(sel, 0) if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", sel) else 0
        frags.append(("E", dict(frag="metadata", shape=shape, dtype=a, layout=f"sel{selector}")))
        c = f"{c}, sel {selector}"
    return Finding(line, "ptx", api, shape, f"{d} = {a} x {b} + {c}", ops, tuple(frags))


def _ptx_wgmma(line: Line, parts: list[str]) -> Finding | None:
    shape = next((p for p in parts if _SHAPE.match(p)), None)
    types = [p for p in parts if p in BITS]
    if shape is None or len(types) < 2:
        return None
    d, a = types[0], types[1]
    b = types[2] if len(types) > 2 else a
    ops = line.operands
    a_regs = len(ops) > 1 and ops[1].strip().startswith("{")
    operands = [("D", _braced(ops[0]) if ops else "?"), ("A", _braced(ops[1]) if a_regs else (ops[1] if len(ops) > 1
                                                                                              else "?")),
                ("B", ops[2] if len(ops) > 2 else "?")]
    frags = [("C/D", dict(frag="accumulator", shape=shape, dtype=d))]
    if a_regs:
        frags.insert(0, ("A", dict(frag="matrix_a", shape=shape, dtype=a, swizzle=None)))
    return Finding(line, "ptx", "wgmma", shape, f"{d} = {a} x {b} + {d}", tuple(operands), tuple(frags),
                   "A and B descriptors hold swizzle and major" if not a_regs else "A from registers")


_WMMA_FRAG = {"a": "matrix_a", "b": "matrix_b", "c": "accumulator", "d": "accumulator"}


def _ptx_wmma(line: Line, parts: list[str]) -> Finding | None:
    shape = next((p for p in parts if _SHAPE.match(p)), None)
    if shape is None:
        return None
    types = [p for p in parts if p in BITS]
    layouts = [p for p in parts if p in ("row", "col")]
    ops = line.operands
    if parts[1] in ("load", "store"):
        frag = _WMMA_FRAG.get(parts[2], "accumulator")
        dtype = types[-1] if types else "f16"
        role, regs = ("dst", ops[0] if ops else "?") if parts[1] == "load" else \
            ("src", ops[1] if len(ops) > 1 else "?")
        operands = ((role, _braced(regs)),)
        return Finding(line, "ptx", "wmma", shape, f"{frag} {dtype}", operands,
                       ((frag, dict(frag=frag, shape=shape, dtype=dtype, layout=layouts[0] if layouts else "row")),))
    d = types[0] if types else "f32"
    a = types[1] if len(types) >= 4 else "f16"
    operands = tuple((role, _braced(op)) for role, op in zip(("D", "A", "B", "C"), ops))
    frags = (("A", dict(frag="matrix_a", shape=shape, dtype=a, layout=layouts[0] if layouts else "row")),
             ("B", dict(frag="matrix_b", shape=shape, dtype=a, layout=layouts[1] if len(layouts) > 1 else "col")),
             ("C/D", dict(frag="accumulator", shape=shape, dtype=d, layout="row")))
    return Finding(line, "ptx", "wmma", shape, f"{d} = {a} x {a} + {types[-1] if types else d}", operands, frags)


def _ptx_move(line: Line, parts: list[str]) -> Finding | None:
    api = parts[0]
    num = next((int(p[1:]) for p in parts if re.fullmatch(r"x[124]", p)), 1)
    trans = "trans" in parts
    return _move_finding(line, "ptx", api, num, trans, _braced)


def classify_ptx(line: Line) -> Finding | None:
    parts = line.mnemonic.split(".")
    head = parts[0].split("::")[0]
    try:
        if head == "mma" and len(parts) > 1:
            return _ptx_mma(line, [p.split("::")[0] for p in parts])
        if head == "wgmma" and len(parts) > 1 and parts[1].startswith("mma_async"):
            return _ptx_wgmma(line, parts)
        if head == "wmma" and len(parts) > 2 and parts[1] in ("load", "store", "mma"):
            return _ptx_wmma(line, parts)
        if head in ("ldmatrix", "stmatrix", "movmatrix"):
            return _ptx_move(line, parts)
    except (ValueError, IndexError, KeyError):
        return Finding(line, "ptx", head, "?", "?", (), (), "a form fraglab does not decode")
    return None


__all__ = ["Finding", "classify_sass", "classify_ptx", "registers", "BITS"]
