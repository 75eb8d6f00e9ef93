"""A C++ header exposing row(thread, slot) and col(thread, slot), read into a slot map by compiling only.

The header is untrusted, so nothing built from it ever runs: a small translation unit includes it and fills
a constexpr table with row and col of every (thread, slot) (`constexpr` forces the compiler to evaluate them
while compiling), the table is a constant-initialized global, and its values are read back from the compiler's
output: the host g++'s assembly (`-S`), or, without g++, the PTX of NVRTC from the pip wheels. The compile
has a time limit and its messages are cut to one clean line.

row/col are found as NAME::row / NAME::col, NAME the --name given, else the header's only struct, else the
free functions row/col. A struct's kThreads/kSlots (what `fraglab export --to header` declares) set how many
threads and slots are read; without them the measured fragment's counts are used.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..files import clean_text
from .given import MAX_SLOTS, GivenLayout, tile_of

COMPILERS = ("auto", "gxx", "nvrtc")
COMPILE_SECONDS = 300
TABLE = "fraglab_check_table"
_QUALIFIED = re.compile(r"^[A-Za-z_]\w*(::[A-Za-z_]\w*)*$")
_STRUCT = re.compile(r"\b(?:struct|class)\s+([A-Za-z_]\w*)\s*(?:final\s*)?(?::[^{;]*)?\{")

# kThreads/kSlots when the struct declares them, else the fallback; two members per dimension.
_PROGRAM = """\
#include "{path}"
namespace fraglab_check_ns {{
template <class T, class = void> struct Threads {{ static constexpr int value = {threads}; }};
template <class T> struct Threads<T, decltype(void(T::kThreads))> {{ static constexpr int value = T::kThreads; }};
template <class T, class = void> struct Slots {{ static constexpr int value = {slots}; }};
template <class T> struct Slots<T, decltype(void(T::kSlots))> {{ static constexpr int value = T::kSlots; }};
constexpr int kThreads = {threads_expr};
constexpr int kSlots = {slots_expr};
static_assert(kThreads > 0 && kSlots > 0 && kThreads * kSlots <= {limit}, "fraglab check: kThreads x kSlots out of range");
struct Table {{ int v[2 + 2 * kThreads * kSlots]; }};
FRAGLAB_CHECK_DEV constexpr Table make() {{
  Table t{{}};
  t.v[0] = kThreads;
  t.v[1] = kSlots;
  for (int thread = 0; thread < kThreads; ++thread)
    for (int slot = 0; slot < kSlots; ++slot) {{
      t.v[2 + 2 * (thread * kSlots + slot)] = {qual}row(thread, slot);
      t.v[3 + 2 * (thread * kSlots + slot)] = {qual}col(thread, slot);
    }}
  return t;
}}
}}  // namespace fraglab_check_ns
extern FRAGLAB_CHECK_DEV const fraglab_check_ns::Table {table};
FRAGLAB_CHECK_DEV constexpr fraglab_check_ns::Table {table} = fraglab_check_ns::make();
"""


def _bad(why: str) -> InputError:
    return InputError(f"invalid --header: {why}", argument="header")


def qualifier(text: str, name: str | None) -> tuple[str, bool]:
    """(NAME:: or "", whether NAME is a struct of the header) for row/col."""
    structs = _STRUCT.findall(text)
    if name is not None:
        if not _QUALIFIED.match(name):
            raise InputError(f"invalid --name {clean_text(name, 40)!r}: a C++ name is needed (e.g. MyLayout or "
                             "ns::MyLayout)", argument="name")
        return name + "::", name.split("::")[-1] in structs
    if len(set(structs)) > 1:
        raise InputError(f"the header defines several structs ({', '.join(sorted(set(structs))[:4])}): "
                         "name the one with row()/col() with --name", argument="name")
    if structs:
        return structs[0] + "::", True
    return "", False


def program(path: Path, qual: str, is_struct: bool, threads: int, slots: int) -> str:
    """The translation unit that tabulates row/col of the header at `path`."""
    target = qual[:-2] if is_struct else ""
    return _PROGRAM.format(
        path=str(path), threads=threads, slots=slots, limit=MAX_SLOTS, qual=qual, table=TABLE,
        threads_expr=f"Threads<{target}>::value" if is_struct else threads,
        slots_expr=f"Slots<{target}>::value" if is_struct else slots)


def _first_error(log: str) -> str:
    lines = [line for line in log.splitlines() if "error" in line.lower()]
    return clean_text((lines or log.splitlines() or ["(no message)"])[0].strip(), 160)


def _from_assembly(text: str) -> np.ndarray:
    """The table's ints from g++'s assembly: `.long` values and `.zero` runs after its label."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == f"{TABLE}:")
    except StopIteration:
        raise _bad("the compiler's output holds no table (was row/col constant?)") from None
    values: list[int] = []
    for line in lines[start + 1:]:
        words = line.split()
        if not words or words[0] == ".long":
            values.extend(int(w) for w in words[1:2])
        elif words[0] == ".zero":
            values.extend([0] * (int(words[1]) // 4))
        else:
            break
    return np.array(values, dtype=np.int64)


def _from_ptx(text: str) -> np.ndarray:
    match = re.search(rf"\.b8\s+{TABLE}\[(\d+)\](\s*=\s*\{{([^}}]*)\}})?", text)
    if match is None:
        raise _bad("the compiler's output holds no table (was row/col constant?)")
    size = int(match.group(1))
    raw = bytes(int(b) for b in match.group(3).split(",")) if match.group(3) else b""
    if len(raw) > size:
        raise _bad("the compiler's table does not have the expected size")
    raw += bytes(size - len(raw))  # PTX leaves out the trailing zeros of an initializer
    return np.frombuffer(raw, dtype="<i4").astype(np.int64)


def _gxx(source: str, folder: Path, header_dir: Path) -> np.ndarray:
    unit = folder / "fraglab_check.cpp"
    unit.write_text(source)
    command = [shutil.which("g++") or "g++", "-std=c++17", "-S", "-o", "-", "-w", "-x", "c++",
               "-fconstexpr-loop-limit=4194304", "-fconstexpr-ops-limit=4294967296",
               "-DFRAGLAB_CHECK_DEV=", "-D__host__=", "-D__device__=", "-D__forceinline__=inline",
               "-I", str(header_dir), str(unit)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=COMPILE_SECONDS,
                              stdin=subprocess.DEVNULL, cwd=folder)
    except subprocess.TimeoutExpired:
        raise _bad(f"g++ took over {COMPILE_SECONDS} s to evaluate row/col") from None
    if done.returncode != 0:
        raise _bad(f"g++ could not evaluate row/col at compile time: {_first_error(done.stderr)}")
    return _from_assembly(done.stdout)


def _nvrtc_ptx(source: str, options: list[str]) -> tuple[bool, str, str]:
    """(ok, log, PTX) of NVRTC from the pip wheels (cuda-bindings; no GPU or driver needed); the table is
    kept through a name expression, so whole-program mode cannot drop it."""
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        raise InputError("no compiler for --header: no g++ on PATH and no NVRTC (pip install fraglab[dev] "
                         "brings cuda-bindings)", argument="header") from None

    def read_buffer(size_call, read_call, prog) -> str:
        _, size = size_call(prog)
        buf = bytearray(size)  # a fresh buffer: NVRTC writes into it
        read_call(prog, buf)
        return bytes(buf).decode(errors="replace").rstrip("\x00 ")

    _, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"fraglab_check.cu", 0, [], [])
    try:
        nvrtc.nvrtcAddNameExpression(prog, f"&{TABLE}".encode())
        opts = [o.encode() for o in options]
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        log = read_buffer(nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog, prog)
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return False, log, ""
        return True, log, read_buffer(nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX, prog)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _nvrtc(source: str, header_dir: Path) -> np.ndarray:
    ok, log, ptx = _nvrtc_ptx(source, ["-std=c++17", "-default-device", "-arch=compute_90",
                                       "-DFRAGLAB_CHECK_DEV=__device__", f"-I{header_dir}"])
    if not ok:
        raise _bad(f"NVRTC could not evaluate row/col at compile time: {_first_error(log)}")
    return _from_ptx(ptx)


def pick_compiler(compiler: str) -> str:
    if compiler not in COMPILERS:
        raise InputError(f"invalid --compiler {clean_text(compiler, 20)!r}: valid choices are {', '.join(COMPILERS)}",
                         argument="compiler")
    if compiler == "auto":
        return "gxx" if shutil.which("g++") else "nvrtc"
    return compiler


def evaluate(path: Path, measured_threads: int, measured_slots: int, name: str | None = None,
             compiler: str = "auto") -> tuple[np.ndarray, np.ndarray, str]:
    """(row, col) arrays of the header at `path` and the compiler used; InputError when it cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise _bad(f"{clean_text(path, 60)} is not a file")
    if any(ch in str(path.resolve()) for ch in '"\n\\'):
        raise _bad("the path holds a quote, backslash or line break; copy the header to a plain path")
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise _bad(f"cannot read it ({exc.strerror})") from None
    qual, is_struct = qualifier(text, name)
    if not re.search(r"\brow\s*\(", text) or not re.search(r"\bcol\s*\(", text):
        raise _bad("it declares no row( and col( functions")
    used = pick_compiler(compiler)
    source = program(path.resolve(), qual, is_struct, measured_threads, measured_slots)
    with tempfile.TemporaryDirectory(prefix="fraglab-check-") as folder:
        table = (_gxx(source, Path(folder), path.resolve().parent) if used == "gxx"
                 else _nvrtc(source, path.resolve().parent))
    threads, slots = (int(v) for v in table[:2]) if len(table) >= 2 else (0, 0)
    if threads < 1 or slots < 1 or len(table) != 2 + 2 * threads * slots:
        raise _bad("the compiler's table does not have the expected size")
    pairs = table[2:].reshape(threads, slots, 2)
    return pairs[..., 0], pairs[..., 1], used


def read(path: Path, measured, name: str | None = None, compiler: str = "auto") -> GivenLayout:
    row, col, used = evaluate(path, measured.threads, measured.num_elements, name, compiler)
    row = np.where((row < 0) | (col < 0), -1, row)
    col = np.where(row < 0, -1, col)
    compilers = {"gxx": "g++", "nvrtc": "NVRTC"}
    return GivenLayout("header", f"{clean_text(Path(path).name, 60)} (row/col evaluated by {compilers[used]})",
                       tile_of(measured), row, col)
