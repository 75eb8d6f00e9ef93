"""The header form: row()/col() evaluated by compiling only (g++ here, NVRTC from the pip wheels), never run.

Compiling every shipped header takes minutes on a 2-core machine, so the round trip is sampled: every 12th
fragment in the catalogue's order plus the largest one of each form (arithmetic, table), 30-odd headers,
with g++; FRAGLAB_CHECK_ALL_HEADERS=1 takes all of them. Each sampled header is mutated in one slot too.
"""

from __future__ import annotations

import os
import shutil

import pytest

from check_cases import header_text, held_slot, mutated_header, shipped_layouts
from fraglab.check import check, compare, read_given
from fraglab.errors import InputError
from fraglab.export.cute import to_cute
from fraglab.export.select import select_layout
from fraglab.export.tile import NoExportForm

HAS_GXX = shutil.which("g++") is not None
needs_gxx = pytest.mark.skipif(not HAS_GXX, reason="no g++ on PATH")


def _has_nvrtc() -> bool:
    try:
        from cuda.bindings import nvrtc  # noqa: F401
    except ImportError:
        return False
    return True


needs_nvrtc = pytest.mark.skipif(not _has_nvrtc(), reason="cuda-bindings (NVRTC from the pip wheels) not installed")


def _arithmetic(layout) -> bool:
    try:
        to_cute(layout)
    except NoExportForm:
        return False
    return True


def sampled() -> list:
    layouts = list(shipped_layouts())
    if os.environ.get("FRAGLAB_CHECK_ALL_HEADERS") == "1":
        return layouts
    picked = layouts[::12]
    for arithmetic in (True, False):
        kind = [x for x in layouts if _arithmetic(x) == arithmetic and x.threads * x.num_elements <= 8192]
        picked.append(max(kind, key=lambda x: x.threads * x.num_elements))
    return list({x.spec.key: x for x in picked}.values())


SAMPLE = sampled()


@needs_gxx
@pytest.mark.parametrize("layout", SAMPLE, ids=[x.spec.key for x in SAMPLE])
def test_exported_header_checks_equal_and_a_one_slot_mutation_is_found(layout, tmp_path):
    path = tmp_path / "layout.cuh"
    text = header_text(layout)
    path.write_text(text)
    result = compare(read_given("header", str(path), layout, compiler="gxx"), layout)
    assert result.equal, (layout.spec.key, result.differing[:3])
    thread, slot = held_slot(layout)
    path.write_text(mutated_header(text, thread, slot))
    moved = compare(read_given("header", str(path), layout, compiler="gxx"), layout)
    assert [(d["thread"], d["slot"]) for d in moved.differing] == [(thread, slot)]


@needs_nvrtc
@pytest.mark.parametrize("key", ["mma.matrix_b.m16n8k16.f16.col", "wgmma.matrix_a.m64n8k16.f16.row.swizzle32B.majork"])
def test_nvrtc_reads_the_same_table_from_ptx(key, tmp_path):
    layout = next(x for x in shipped_layouts() if x.spec.key == key)
    path = tmp_path / "layout.cuh"
    path.write_text(header_text(layout))
    given = read_given("header", str(path), layout, compiler="nvrtc")
    assert "NVRTC" in given.text and compare(given, layout).equal
    path.write_text(mutated_header(header_text(layout), 1, 0))
    assert [(d["thread"], d["slot"]) for d in compare(read_given("header", str(path), layout, compiler="nvrtc"),
                                                      layout).differing] == [(1, 0)]


MMA_C = dict(api="mma", frag="accumulator", shape="m16n8k16", dtype="f16", source="atlas")
# mma.m16n8k16 C from the PTX ISA: row g + 8 * (i >= 2), col 2t + i % 2 (g = lane >> 2, t = lane % 4)
FREE_FUNCTIONS = """\
namespace mine {
constexpr int row(int thread, int slot) { return (thread % 32) / 4 + 8 * (slot / 2); }
constexpr int col(int thread, int slot) { return 2 * (thread % 4) + slot % 2; }
}
"""


@needs_gxx
def test_a_hand_written_namespace_header_is_read_with_name(tmp_path):
    path = tmp_path / "mine.h"
    path.write_text(FREE_FUNCTIONS)
    assert check(header=str(path), name="mine", **MMA_C).equal
    path.write_text("#include <cstdint>\n" + "\n".join(FREE_FUNCTIONS.splitlines()[1:3]) + "\n")
    assert "namespace" not in path.read_text()
    assert check(header=str(path), **MMA_C).equal  # free functions: no struct, no --name


@needs_gxx
def test_the_header_is_never_run(tmp_path):
    """A static initializer and a main that would write a file: compiled to assembly only, so nothing appears."""
    marker = tmp_path / "ran"
    path = tmp_path / "evil.h"
    path.write_text(f"""#include <cstdio>
static int fraglab_evil = (std::fopen("{marker}", "w") != nullptr);
int main() {{ std::fopen("{marker}", "w"); return 0; }}
{FREE_FUNCTIONS}""")
    assert check(header=str(path), name="mine", **MMA_C).equal
    assert not marker.exists() and not (tmp_path / "a.out").exists()


@needs_gxx
@pytest.mark.parametrize("text, name, words", [
    ("int row(int t, int s) { return t; }\nint col(int t, int s) { return s; }\n", None, "compile time"),
    ("struct A { static constexpr int row(int, int) { return 0; } static constexpr int col(int, int) { return 0; } };\n"
     "struct B {};\n", None, "several structs"),
    ("struct A {};\n", None, "no row\\( and col\\("),
    (FREE_FUNCTIONS, "mine; system", "a C\\+\\+ name"),
    (FREE_FUNCTIONS.replace("return 2 *", "return 2 +* "), "mine", "g\\+\\+ could not evaluate"),
])
def test_bad_headers_are_one_input_error(text, name, words, tmp_path):
    path = tmp_path / "bad.h"
    path.write_text(text)
    with pytest.raises(InputError, match=words) as err:
        check(header=str(path), name=name, **MMA_C)
    assert "\n" not in str(err.value) and err.value.exit_code == 2


def test_a_missing_header_file_is_bad_input(tmp_path):
    with pytest.raises(InputError, match="is not a file"):
        check(header=str(tmp_path / "none.h"), **MMA_C)


def test_header_counts_come_from_the_struct_when_it_declares_them(tmp_path):
    """kThreads/kSlots of the header decide what is read: one slot too few shows as absent slots."""
    if not HAS_GXX:
        pytest.skip("no g++ on PATH")
    layout = select_layout(**MMA_C)
    path = tmp_path / "short.cuh"
    path.write_text(header_text(layout).replace("kSlots = 4;", "kSlots = 3;"))
    result = check(header=str(path), **MMA_C)
    assert {d["slot"] for d in result.differing} == {3} and {d["given"] for d in result.differing} == {"absent"}
