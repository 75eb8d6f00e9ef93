"""An explanation as data, as terminal text (fits the width, 80 columns by default) and as JSON.

Instructions of one kind (family, shape, types) share a legend entry [n] with the `fraglab layout` commands
that show each operand's layout; each instruction line names its registers.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field

from .._version import __version__
from ..files import clean_text
from .instructions import Finding


@dataclass
class Layouts:
    """One operand's fragment: the `fraglab layout` command, or why fraglab has none."""

    role: str
    command: str | None
    key: str | None
    why: str = ""


@dataclass
class Kind:
    number: int
    api: str
    shape: str
    types: str
    note: str
    layouts: list[Layouts]
    count: int = 0


@dataclass
class Explanation:
    file: str
    input: str                       # cu | ptx | cubin | build
    level: str                       # sass | ptx
    arch: str | None = None
    tool: str | None = None          # the disassembler that produced the SASS
    notes: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    kinds: list[Kind] = field(default_factory=list)

    def kind_of(self, finding: Finding) -> Kind:
        return next(k for k in self.kinds if (k.api, k.shape, k.types) == (finding.api, finding.shape, finding.types))

    def mnemonics(self) -> set[str]:
        return {f.line.mnemonic for f in self.findings}

    # ---- JSON -----------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "fraglab": __version__, "file": self.file, "input": self.input, "level": self.level, "arch": self.arch,
            "tool": self.tool, "notes": self.notes, "kernels": self.kernels,
            "kinds": [{"kind": k.number, "api": k.api, "shape": k.shape, "types": k.types, "note": k.note,
                       "instructions": k.count,
                       "layouts": [{"operand": lay.role, "command": lay.command, "fragment": lay.key,
                                    **({"why": lay.why} if lay.why else {})} for lay in k.layouts]}
                      for k in self.kinds],
            "instructions": [{"kernel": f.line.kernel, "where": f.line.where, "mnemonic": f.line.mnemonic,
                              "text": f.line.text, "kind": self.kind_of(f).number,
                              "operands": [{"operand": role, "registers": regs} for role, regs in f.operands]}
                             for f in self.findings],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    # ---- terminal -------------------------------------------------------------------------------
    def to_text(self, width: int = 80) -> str:
        width = max(40, width)
        lines = [f"{clean_text(self.file, None)}: {self.input} -> {self.level.upper()}"
                 + (f" for {self.arch}" if self.arch else "") + (f" ({self.tool})" if self.tool else "")]
        for note in self.notes:
            lines += _wrap(f"note: {clean_text(note, None)}", width, "  ")
        count = len(self.findings)
        lines.append(f"{count} tensor-core / matrix-move instruction{'s' if count != 1 else ''} in "
                     f"{len({f.line.kernel for f in self.findings})} of {len(self.kernels)} kernel(s)")
        if not self.findings:
            return "\n".join(lines) + "\n"
        lines.append("")
        lines.append("kinds (family, shape, types) and the commands that show their layouts:")
        for k in self.kinds:
            lines += _wrap(f"[{k.number}] {k.api} {k.shape} {k.types}  ({k.count}x)", width, "  ", "      ")
            if k.note:
                lines += _wrap(k.note, width, "      ", "      ")
            for lay in k.layouts:
                lines += _layout_lines(lay, width)
        current = None
        for f in self.findings:
            if f.line.kernel != current:
                current = f.line.kernel
                lines.append("")
                lines += _wrap(f"kernel {clean_text(current, None)}", width, "  ")
            kind = self.kind_of(f)
            where, mnemonic = clean_text(f.line.where, None), clean_text(f.line.mnemonic, None)
            lines += _wrap(f"{where}  {mnemonic}  [{kind.number}]", width, "  ", "      ")
            regs = "  ".join(f"{role} {clean_text(r, None)}" for role, r in f.operands)
            if regs:
                lines += _wrap(regs, width, "      ", "      ")
        return "\n".join(lines) + "\n"


def _wrap(text: str, width: int, indent: str = "", later: str | None = None) -> list[str]:
    return textwrap.wrap(text, width, initial_indent=indent if indent else "",
                         subsequent_indent=later if later is not None else indent + "  ",
                         break_long_words=True, break_on_hyphens=False) or [indent]


def _layout_lines(lay: Layouts, width: int) -> list[str]:
    """'    <command>  # A' when it fits, else the '# A' line above the command, which is cut at spaces with
    ' \\' continuations so that it still pastes into a shell."""
    if lay.command is None:
        return _wrap(f"# {lay.role}: no fraglab layout ({clean_text(lay.why, None)})", width, "    ", "    # ")
    one = f"    {lay.command}  # {lay.role}"
    if len(one) <= width and not lay.why:
        return [one]
    cut = _wrap(lay.command, width - 2, "    ", "      ")
    head = _wrap(f"# {lay.role}: {lay.why}" if lay.why else f"# {lay.role}", width, "    ", "    # ")
    return head + [ln + " \\" for ln in cut[:-1]] + cut[-1:]


__all__ = ["Explanation", "Kind", "Layouts"]
