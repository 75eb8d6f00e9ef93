"""SASS and PTX text -> the instructions of each kernel (pure Python; the text comes from nvdisasm, cuobjdump
or a .ptx file, so every string here is untrusted and only matched, never run).

A `Line` is one instruction as written: the kernel it sits in, where (SASS address or PTX line), the mnemonic
(dotted) and its operands split at top-level commas (braces and brackets kept whole).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# nvdisasm -c: "//---- .text.NAME ----" / ".text.NAME:"; cuobjdump -sass: "Function : NAME"
_SASS_FUNCTION = re.compile(r"^\s*(?:Function\s*:\s*(\S+)|\.text\.(\S+?):\s*$|//-+\s*\.text\.(\S+)\s+-+)")
_SASS_LINE = re.compile(r"/\*([0-9a-fA-F]{4,})\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Za-z0-9_.]*)\s*([^;]*);")
_PTX_FUNCTION = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)")
_PTX_LINE = re.compile(r"^\s*(?:@!?%?\w+\s+)?([a-z][a-z0-9_]*(?:\.[\w:]+)+)\s+([^;]*);")


@dataclass(frozen=True)
class Line:
    kernel: str
    where: str              # SASS: the address ("0220"); PTX: "line 123"
    mnemonic: str
    operands: tuple[str, ...]
    text: str               # the instruction as written, one line, whitespace collapsed


def split_operands(text: str) -> tuple[str, ...]:
    """'R8, {R1, R2}, [R6+0x10], 0x0' -> ('R8', '{R1, R2}', '[R6+0x10]', '0x0')."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    tail = "".join(current).strip()
    if tail:
        parts.append(tail)
    return tuple(parts)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def sass_lines(text: str) -> list[Line]:
    """Every instruction of nvdisasm or cuobjdump -sass output, with the kernel it belongs to."""
    out: list[Line] = []
    kernel = "?"
    for raw in text.splitlines():
        found = _SASS_FUNCTION.match(raw)
        if found:
            kernel = found.group(1) or found.group(2) or found.group(3)
            continue
        match = _SASS_LINE.search(raw)
        if match:
            address, mnemonic, operands = match.groups()
            out.append(Line(kernel, address.lower().lstrip("0").rjust(4, "0"), mnemonic, split_operands(operands),
                            _collapse(f"{mnemonic} {operands}")))
    return out


def ptx_lines(text: str) -> list[Line]:
    """Every dotted instruction of a PTX module (directives and labels left out), with its kernel."""
    out: list[Line] = []
    kernel = "?"
    for number, raw in enumerate(text.splitlines(), start=1):
        code = raw.split("//", 1)[0]
        found = _PTX_FUNCTION.match(code)
        if found:
            kernel = found.group(1)
            continue
        match = _PTX_LINE.match(code)
        if match:
            mnemonic, operands = match.groups()
            out.append(Line(kernel, f"line {number}", mnemonic, split_operands(operands),
                            _collapse(f"{mnemonic} {operands}")))
    return out


def looks_like_ptx(text: str) -> bool:
    return bool(re.search(r"^\s*\.version\s+\d", text, re.M)) and bool(re.search(r"^\s*\.target\s", text, re.M))


__all__ = ["Line", "sass_lines", "ptx_lines", "split_operands", "looks_like_ptx"]
