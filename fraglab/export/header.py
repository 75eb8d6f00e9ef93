"""A self-contained C++ header for one layout: row/col of (thread, slot), and the inverse (holders of (row, col)).

Under nvcc or NVRTC the functions are `__host__ __device__ constexpr`; under a host C++17 compiler they
are plain `constexpr`. Where the layout has a CuTe form, row/col are its shape:stride arithmetic (what
an epilogue wants in a loop); otherwise they read a table local to the function, which is exact for
any map, empty slots included. The inverse searches the forward map (threads x slots steps): it
serves checks and tools, not inner loops.
"""

from __future__ import annotations

import re

import numpy as np

from .cute import to_cute
from .tile import InputError, NoExportForm, index_map, mapping_comment, title

_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
# C++20 keywords and alternative tokens: none can name a struct.
_CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch template
this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t
while xor xor_eq
""".split())
# Names NVRTC and nvcc already give a meaning (namespaces, builtin types and variables), and the names the
# header itself uses inside the struct (a member cannot share the struct's name).
_TAKEN = frozenset("""
std cuda cub thrust nv size_t ptrdiff_t nullptr_t max_align_t dim3 threadIdx blockIdx blockDim gridDim warpSize
clock64 printf assert malloc free memcpy memset
kThreads kSlots kRows kCols kMaxHolders kIndex index row col holders holder holder_thread holder_slot
""".split())
_VECTOR_TYPE = re.compile(r"^(u?(char|short|int|long|longlong)|float|double|half|bfloat16)[1-4]$")
_MACRO_PREFIX = "FRAGLAB_"  # the header's own macros: FRAGLAB_HD and the include guard


def check_name(name: str) -> None:
    """InputError unless `name` gives a header that compiles: an identifier of letters, digits and '_' that is
    not a C++ keyword, not reserved (no leading '_', no '__'), not a name CUDA already uses, not one of the
    header's own macro or member names."""
    why = ""
    if not _NAME_RE.match(name):
        why = "a C++ identifier is needed (a letter, then letters, digits or _; 64 at most)"
    elif "__" in name:
        why = "names with '__' are reserved for the compiler"
    elif name in _CPP_KEYWORDS:
        why = "it is a C++ keyword"
    elif name in _TAKEN or _VECTOR_TYPE.match(name):
        why = "CUDA or the header already uses that name"
    elif name.startswith(_MACRO_PREFIX):
        why = f"names starting with {_MACRO_PREFIX} are the header's own macros"
    if why:
        from ..files import clean_text

        raise InputError(f"invalid --name {clean_text(name, 40)!r}: {why}", argument="name")


def default_name(layout) -> str:
    """e.g. WmmaMatrixAM16n16k16F16Row."""
    words = re.split(r"[^A-Za-z0-9]+", title(layout).replace("=", " "))
    return "".join(w[:1].upper() + w[1:] for w in words if w)


def _index_expression(layout) -> tuple[str, str]:
    """(C++ expression of the tile index from `thread` and `slot`, a comment naming the form)."""
    try:
        cute = to_cute(layout)
    except NoExportForm:
        return "", ""
    terms: list[str] = []
    for var, shape, stride in (("thread", cute.thread_shape, cute.thread_stride),
                               ("slot", cute.value_shape, cute.value_stride)):
        step = 1
        for extent, s in zip(shape, stride):
            if s and extent > 1:
                coord = var if step == 1 else f"{var} / {step}"
                if step * extent < (cute.threads if var == "thread" else cute.slots):
                    coord = f"{coord} % {extent}" if step == 1 else f"({coord}) % {extent}"
                terms.append(f"({coord})" if s == 1 else f"({coord}) * {s}")
            step *= extent
    return " + ".join(terms) or "0", f"CuTe form {cute.text()}, index = row + col * kRows"


def _params(expression: str) -> str:
    """The parameter list, leaving unnamed one the expression does not read (-Wunused-parameter)."""
    return ", ".join(f"int {v}" if re.search(rf"\b{v}\b", expression) else f"int /*{v}*/"
                     for v in ("thread", "slot"))


def _wrapped(values: list[int], indent: str, per_line: int = 24) -> str:
    lines = [", ".join(str(v) for v in values[i:i + per_line]) for i in range(0, len(values), per_line)]
    return (",\n" + indent).join(lines)


def render(layout, name: str | None = None, command: str = "") -> str:
    """The header text for `layout` as struct `name`."""
    name = default_name(layout) if name is None else name
    check_name(name)
    rows, cols = layout.spec.rows, layout.spec.cols
    threads, slots = layout.threads, layout.num_elements
    idx = index_map(layout)
    counts = np.zeros(rows * cols, dtype=np.int64)
    np.add.at(counts, idx[idx >= 0], 1)
    expression, form = _index_expression(layout)
    from ..layouts.resolve import source_line

    guard = f"FRAGLAB_{name.upper()}_H"
    out = [
        f"// {name}: {title(layout)}   {mapping_comment(layout)}",
        "// Generated by fraglab" + (f": {command}" if command else "") + ". Do not edit; regenerate instead.",
        f"// Source: {source_line(layout.source, with_note=False)}",
        "// row(thread, slot), col(thread, slot): the element a thread's slot holds (-1: none).",
        "// holders(row, col): how many (thread, slot) pairs hold it; holder_thread/holder_slot(row, col, k):",
        "// the k-th of them in (thread, slot) order (-1 past the last).",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#ifndef FRAGLAB_HD",
        "#if defined(__CUDACC__) || defined(__CUDACC_RTC__)",
        "#define FRAGLAB_HD __host__ __device__",
        "#else",
        "#define FRAGLAB_HD",
        "#endif",
        "#endif",
        "",
        f"struct {name} {{",
        f"  static constexpr int kThreads = {threads};",
        f"  static constexpr int kSlots = {slots};",
        f"  static constexpr int kRows = {rows};",
        f"  static constexpr int kCols = {cols};",
        f"  static constexpr int kMaxHolders = {int(counts.max()) if counts.size else 0};",
        "",
    ]
    if expression:
        out += [
            f"  // {form}",
            f"  FRAGLAB_HD static constexpr int index({_params(expression)}) {{",
            f"    return {expression};",
            "  }",
            "  FRAGLAB_HD static constexpr int row(int thread, int slot) { return index(thread, slot) % kRows; }",
            "  FRAGLAB_HD static constexpr int col(int thread, int slot) { return index(thread, slot) / kRows; }",
        ]
    else:
        indent = " " * 6
        out += [
            "  // No CuTe form (see `fraglab export --to cute`): the map as a table, index = row + col * kRows.",
            "  FRAGLAB_HD static constexpr int index(int thread, int slot) {",
            f"    constexpr {'short' if rows * cols < 32768 else 'int'} kIndex[kThreads * kSlots] = {{",
            indent + _wrapped([int(v) for v in idx.ravel()], indent),
            "    };",
            "    return kIndex[thread * kSlots + slot];",
            "  }",
            "  FRAGLAB_HD static constexpr int row(int thread, int slot) {",
            "    return index(thread, slot) < 0 ? -1 : index(thread, slot) % kRows;",
            "  }",
            "  FRAGLAB_HD static constexpr int col(int thread, int slot) {",
            "    return index(thread, slot) < 0 ? -1 : index(thread, slot) / kRows;",
            "  }",
        ]
    out += [
        "",
        "  FRAGLAB_HD static constexpr int holders(int r, int c) {",
        "    int n = 0;",
        "    for (int t = 0; t < kThreads; ++t)",
        "      for (int s = 0; s < kSlots; ++s) n += index(t, s) == r + c * kRows;",
        "    return n;",
        "  }",
        "  // thread * kSlots + slot of the k-th holder, or -1",
        "  FRAGLAB_HD static constexpr int holder(int r, int c, int k) {",
        "    for (int t = 0; t < kThreads; ++t)",
        "      for (int s = 0; s < kSlots; ++s)",
        "        if (index(t, s) == r + c * kRows && k-- == 0) return t * kSlots + s;",
        "    return -1;",
        "  }",
        "  FRAGLAB_HD static constexpr int holder_thread(int r, int c, int k) {",
        "    return holder(r, c, k) < 0 ? -1 : holder(r, c, k) / kSlots;",
        "  }",
        "  FRAGLAB_HD static constexpr int holder_slot(int r, int c, int k) {",
        "    return holder(r, c, k) < 0 ? -1 : holder(r, c, k) % kSlots;",
        "  }",
        "};",
        "",
        f"#endif  // {guard}",
        "",
    ]
    return "\n".join(out)
