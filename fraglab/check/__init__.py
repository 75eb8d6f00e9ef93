"""Hold a layout someone wrote against the measured one: `fraglab check` and `fraglab.check(...)`.

Four forms are read (one module each), all into one slot map (thread, slot) -> (row, col) over fraglab's
tile: cute_text (CuTe's thread-value layout as CUTLASS's MMA_Traits spell it), triton_text (Triton's linear
layout), table_text (the JSON/CSV of `fraglab layout`), header_eval (a C++ header's row()/col(), evaluated
by compiling only). compare.py compares slot by slot and renders the verdict.

    >>> import fraglab
    >>> r = fraglab.check(cute="((4,8),(2,2,2)):((32,1),(16,8,128))", api="mma", frag="matrix_a",
    ...                   shape="m16n8k16", dtype="f16")
    >>> r.equal, r.differing[:1]
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

from ..errors import InputError
from .compare import CheckResult, compare, figure, render_json, render_text
from ..files import clean_text
from .given import GivenLayout

FORMS = ("cute", "triton", "table", "header")
MAX_FILE_BYTES = 64 << 20


def read_text(value: str, form: str) -> str:
    """The text a --cute/--triton/--table value gives: the file it names when there is one, else itself."""
    if "\n" not in value and len(value) < 4096:
        path = Path(value)
        try:
            is_file = path.is_file()
        except OSError:
            is_file = False
        if is_file:
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    raise InputError(f"invalid --{form}: {clean_text(value, 60)} is over 64 MB", argument=form)
                return path.read_text(errors="replace")
            except OSError as exc:
                raise InputError(f"invalid --{form}: cannot read {clean_text(value, 60)} ({exc.strerror})",
                                 argument=form) from None
        if form == "table" and not value.lstrip().startswith(("{", "[")):
            raise InputError(f"invalid --table: no file {clean_text(value, 60)}", argument=form)
    return value


def read_given(form: str, value: str, measured, *, name: str | None = None,
               compiler: str = "auto") -> GivenLayout:
    """The given layout of one form, over the tile of the measured layout `measured`."""
    if form == "cute":
        from .cute_text import read
    elif form == "triton":
        from .triton_text import read
    elif form == "table":
        from .table_text import read
    elif form == "header":
        from .header_eval import read as read_header

        return read_header(Path(value), measured, name=name, compiler=compiler)
    else:
        raise InputError(f"invalid form {form!r}: valid choices are {', '.join(FORMS)}", argument="form")
    return read(read_text(value, form), measured)


def chosen_form(**values: str | None) -> tuple[str, str]:
    """The one form given (InputError for none or several)."""
    given = [(form, value) for form, value in values.items() if value is not None]
    if len(given) != 1:
        what = "none" if not given else " and ".join(f"--{f}" for f, _ in given)
        raise InputError(f"give exactly one layout to check: --cute, --triton, --table or --header (got {what})",
                         argument="cute")
    return given[0]


def check(*, cute: str | None = None, triton: str | None = None, table: str | None = None,
          header: str | None = None, api: str = "wmma", frag: str | None = None, shape: str | None = None,
          dtype: str | None = None, layout: str | None = None, num: int | None = None, trans: bool | None = None,
          swizzle: str | None = None, major: str | None = None, source: str = "auto", atlas: str | None = None,
          method: str | None = None, name: str | None = None, compiler: str = "auto") -> CheckResult:
    """Compare one given layout (text or a file; header: a file) with the fragment the options choose, as
    `fraglab layout` chooses it; `result.equal` says whether every slot holds the same element."""
    form, value = chosen_form(cute=cute, triton=triton, table=table, header=header)
    from .header_eval import pick_compiler

    pick_compiler(compiler)  # a bad --compiler is refused whatever the form
    if name is not None and form != "header":
        raise InputError("--name names the header's struct: use it with --header", argument="name")
    from ..export.select import select_layout

    measured = select_layout(api=api, frag=frag, shape=shape, dtype=dtype, layout=layout, num=num, trans=trans,
                             swizzle=swizzle, major=major, source=source,
                             atlas=None if atlas is None else Path(atlas), method=method)
    return compare(read_given(form, value, measured, name=name, compiler=compiler), measured)


class _CallableModule(types.ModuleType):
    """`fraglab.check(...)` is this package called: it forwards to check()."""

    def __call__(self, *args, **kwargs):
        return check(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["check", "compare", "read_given", "CheckResult", "GivenLayout", "FORMS", "render_text", "render_json",
           "figure"]
