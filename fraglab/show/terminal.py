"""Where terminal text goes and what it may use: its width, whether it gets colour, whether it must be ASCII.

Rules (issue 10, views that fit): a terminal gets its own width (COLUMNS when that is a positive number);
a pipe, a file or an unknown terminal gets 80 columns at most; NO_COLOR (set and not empty) turns every
ANSI code off; a stream that cannot encode UTF-8, or a C/POSIX/non-UTF-8 locale, gets ASCII glyphs.
"""

from __future__ import annotations

import codecs
import os
import sys
from collections.abc import Mapping
from typing import TextIO

from rich.box import Box
from rich.console import Console

from ..files import clean_text  # the one sanitizer of strings read from files; printed views use it

__all__ = ["clean_text", "make_console", "output_width", "ascii_only", "colour_wanted", "DEFAULT_WIDTH"]

DEFAULT_WIDTH = 80
MIN_WIDTH = 20  # below this no table can show a label and a cell side by side

# The characters fraglab's own text may carry, spelled in ASCII; anything else non-ASCII becomes '?'.
ASCII_SPELLING = str.maketrans({
    "\u2026": "...", "\u00d7": "x", "\u00b7": "-", "\u2014": "--", "\u2013": "-", "\u2192": "->", "\u2190": "<-",
    "\u2264": "<=", "\u2265": ">=", "\u00b5": "u", "\u00b1": "+/-", "\u2018": "'", "\u2019": "'", "\u201c": '"',
    "\u201d": '"', "\u2500": "-", "\u2501": "-", "\u2502": "|", "\u2503": "|",
})


def columns_setting(environ: Mapping[str, str] | None = None) -> int | None:
    """COLUMNS as a positive int; None when unset, zero, negative or not a number."""
    value = (os.environ if environ is None else environ).get("COLUMNS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # closed, detached or a plain buffer
        return False


def output_width(stream: TextIO | None = None, environ: Mapping[str, str] | None = None) -> int:
    """The width to lay text out for: the terminal's own, else 80 at most (pipes, files, CliRunner)."""
    stream = sys.stdout if stream is None else stream
    columns = columns_setting(environ)
    if is_terminal(stream):
        if columns is None:
            try:
                columns = os.get_terminal_size(stream.fileno()).columns or None
            except (AttributeError, ValueError, OSError):
                columns = None
        width = columns or DEFAULT_WIDTH
    else:
        width = min(columns or DEFAULT_WIDTH, DEFAULT_WIDTH)
    return max(width, MIN_WIDTH)


def ascii_only(stream: TextIO | None = None, environ: Mapping[str, str] | None = None) -> bool:
    """True when the stream's encoding is not UTF-8, or the locale that decides (LC_ALL, else LC_CTYPE, else
    LANG, as setlocale reads them) names no UTF-8 codeset, e.g. C or POSIX: Python itself still writes UTF-8
    under a C locale (PEP 538/540), but the terminal behind it may not show it."""
    stream = sys.stdout if stream is None else stream
    environ = os.environ if environ is None else environ
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        if not codecs.lookup(encoding).name.startswith("utf"):
            return True
    except LookupError:
        return True
    if environ is os.environ and _started_in_c_locale():
        return True
    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = environ.get(name, "")
        if value:
            return "utf-8" not in value.lower() and "utf8" not in value.lower()
    return False


def _started_in_c_locale() -> bool:
    # Python turns UTF-8 mode on by itself only when it starts under the C or POSIX locale (PEP 540), and
    # then rewrites LC_CTYPE to C.UTF-8 (PEP 538), so the flag is what is left of LANG=C
    return bool(sys.flags.utf8_mode) and "PYTHONUTF8" not in os.environ and "utf8" not in sys._xoptions


def colour_wanted(environ: Mapping[str, str] | None = None) -> bool:
    return (os.environ if environ is None else environ).get("NO_COLOR", "") == ""


class AsciiStream:
    """A text stream that spells what it is given in ASCII (rich reads `encoding` and picks ASCII boxes)."""

    encoding = "ascii"

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        plain = text.translate(ASCII_SPELLING).encode("ascii", "replace").decode("ascii")
        return self._stream.write(plain)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return is_terminal(self._stream)

    def fileno(self) -> int:
        return self._stream.fileno()


def make_console(file: TextIO | None = None, *, width: int | None = None, record: bool = False,
                 stderr: bool = False) -> Console:
    """The one way fraglab builds a rich Console: the width, colour and glyph rules above."""
    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    if ascii_only(stream):
        stream = AsciiStream(stream)
    colour = colour_wanted()
    return Console(file=stream, width=width or output_width(stream), record=record, highlight=False,
                   soft_wrap=False, emoji=False, markup=True, legacy_windows=False,
                   color_system="auto" if colour else None, no_color=not colour)


class RuleBox(Box):
    """A box with only a rule under the header; under ASCII output it becomes its ASCII twin, not rich's
    bordered ASCII box (which would add '|' between every column of a grid)."""

    def __init__(self, box: str, ascii_twin: Box | None = None):
        super().__init__(box, ascii=ascii_twin is None)
        self.ascii_twin = ascii_twin

    def substitute(self, options, safe: bool = True) -> Box:
        if options.ascii_only and self.ascii_twin is not None:
            return self.ascii_twin
        return self


# Header rule only; columns are separated by one space (the vertical character of every line is a space).
ASCII_HEAD_RULE = RuleBox("    \n    \n -- \n    \n    \n    \n    \n    \n")
HEAD_RULE = RuleBox("    \n    \n \u2500\u2500 \n    \n    \n    \n    \n    \n", ascii_twin=ASCII_HEAD_RULE)
