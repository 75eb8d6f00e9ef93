"""The generated C++ header: compiled with the host compiler (g++ -std=c++17) and run, compiled by NVRTC into a
kernel with no GPU, and (gpu-marked) run on the GPU against the probe."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from export_cases import (atlas_layouts, empty_slot_case, family_layouts, formula_cases, layout_name,
                          scrambled_case, swizzled_case)
from fraglab.export import header
from fraglab.export.tile import InputError
from nvrtc_compile import nvrtc_compiles

def _family_samples() -> list:
    """One measured and one model layout per (api, operand, swizzle, major) of the PTX families, at most 4096
    slots (the driver asks the O(threads x slots) inverse about the elements)."""
    picked: dict[tuple, object] = {}
    measured = [x for x in atlas_layouts() if x.spec.api != "wmma"]
    for layout in measured + family_layouts():
        s = layout.spec
        if layout.threads * layout.num_elements <= 4096:
            kind = layout.source.to_dict().get("kind")
            picked.setdefault((kind, s.api, s.frag, getattr(s, "swizzle", None), getattr(s, "major", None)), layout)
    return list(picked.values())


WMMA = [x for x in atlas_layouts() if x.spec.api == "wmma"]
CASES = formula_cases() + [swizzled_case(), empty_slot_case(), scrambled_case()] + WMMA + _family_samples()
GXX = shutil.which("g++")


def holders_of(layout, r: int, c: int) -> list[tuple[int, int]]:
    """Every (thread, slot) holding (r, c), in (thread, slot) order."""
    return [(int(t), int(s)) for t, s in np.argwhere((layout.row == r) & (layout.col == c))]


def inverse_step(layout) -> int:
    """Every element's holders are checked on small layouts; every 7th on large ones (the search is O(n))."""
    return 1 if layout.threads * layout.num_elements <= 1024 else 7


def driver(names: list[str], steps: list[int]) -> str:
    """A program printing every struct's forward map and, for each element, its holders."""
    dump = """template <class L, int kStep> void dump(const char* name) {
  std::printf("struct %s\\n", name);
  for (int t = 0; t < L::kThreads; ++t)
    for (int s = 0; s < L::kSlots; ++s) std::printf("%d %d\\n", L::row(t, s), L::col(t, s));
  for (int e = 0; e < L::kRows * L::kCols; e += kStep) {
      const int r = e / L::kCols, c = e % L::kCols;
      const int n = L::holders(r, c);
      std::printf("%d", n);
      for (int k = 0; k < n; ++k) {
        const int h = L::holder(r, c, k);
        std::printf(" %d:%d", h / L::kSlots, h % L::kSlots);
      }
      // holder_thread/holder_slot on the first holder, and past the last
      std::printf(" %d:%d %d\\n", L::holder_thread(r, c, 0), L::holder_slot(r, c, 0), L::holder(r, c, n));
    }
}
"""
    calls = "\n".join(f'  dump<{name}, {step}>("{name}");' for name, step in zip(names, steps))
    return "#include <cstdio>\n" + dump + "int main() {\n" + calls + "\n  return 0;\n}\n"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    if GXX is None:
        pytest.skip("no host C++ compiler (g++) on PATH")
    folder = tmp_path_factory.mktemp("headers")
    names = [f"Layout{i}" for i in range(len(CASES))]
    includes = []
    for name, layout in zip(names, CASES):
        (folder / f"{name}.h").write_text(header.render(layout, name))
        includes.append(f'#include "{name}.h"')
    # the functions are constexpr under plain C++17: evaluate a few at compile time
    asserts = [f"static_assert({n}::row(0, 0) == {int(c.row[0, 0])} && {n}::col({c.threads - 1}, {c.num_elements - 1})"
               f" == {int(c.col[-1, -1])}, \"{n}\");" for n, c in zip(names, CASES)]
    (folder / "main.cpp").write_text("\n".join(includes + asserts) + "\n" + driver(names, [inverse_step(c) for c in CASES]))
    subprocess.run([GXX, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-Wshadow", "-O2", "-o", str(folder / "main"),
                    str(folder / "main.cpp")], check=True, capture_output=True, text=True, cwd=folder)
    out = subprocess.run([str(folder / "main")], check=True, capture_output=True, text=True).stdout
    blocks = out.split("struct ")[1:]
    return {b.split("\n", 1)[0]: b.split("\n")[1:-1] for b in blocks}, names


@pytest.mark.parametrize("index", range(len(CASES)), ids=[layout_name(c) for c in CASES])
def test_header_reproduces_forward_map_and_inverse(compiled, index):
    results, names = compiled
    layout = CASES[index]
    lines = results[names[index]]
    n = layout.threads * layout.num_elements
    got = np.array([[int(x) for x in ln.split()] for ln in lines[:n]])
    assert np.array_equal(got[:, 0], np.asarray(layout.row).ravel())
    assert np.array_equal(got[:, 1], np.asarray(layout.col).ravel())
    rows, cols = layout.spec.rows, layout.spec.cols
    elements = range(0, rows * cols, inverse_step(layout))
    assert len(lines) == n + len(elements)
    for e, line in zip(elements, lines[n:]):
        r, c = divmod(e, cols)
        words = line.split()
        expected = holders_of(layout, r, c)
        assert int(words[0]) == len(expected), (r, c)
        assert [tuple(int(x) for x in w.split(":")) for w in words[1:-2]] == expected, (r, c)
        assert words[-2] == (f"{expected[0][0]}:{expected[0][1]}" if expected else "-1:-1"), (r, c)
        assert words[-1] == "-1"  # past the last holder


def test_header_uses_the_cute_arithmetic_when_it_exists_and_a_table_otherwise():
    assert "CuTe form ((4,8),(2,2,2)):((32,1),(16,8,128))" in header.render(formula_cases()[0], "A")
    assert "constexpr short kIndex[kThreads * kSlots]" in header.render(swizzled_case(), "S")


def test_header_has_provenance_and_both_compilers():
    text = header.render(WMMA[0], "WmmaA", command="fraglab export --to header --name WmmaA")
    # one source line, no note, whatever the layout's source carried (issue 23)
    assert "// Source: atlas (H200, sm_90)\n" in text and "fraglab export --to header" in text
    assert "#define FRAGLAB_HD __host__ __device__" in text and "defined(__CUDACC_RTC__)" in text


@pytest.mark.parametrize("name", ["9lives", "has space", "struct", ""])
def test_bad_struct_name_is_an_input_error(name):
    with pytest.raises(InputError, match="invalid --name"):
        header.render(formula_cases()[0], name)


# ---- device side ---------------------------------------------------------------------------------

def kernel_source(layout, name: str = "Frag") -> str:
    """The header plus a kernel writing row/col of every slot and each element's holder count and first holder."""
    return header.render(layout, name) + f"""
extern "C" __global__ void header_map(int* rows, int* cols, int* counts, int* first) {{
  const int t = threadIdx.x;
  for (int s = 0; s < {name}::kSlots; ++s) {{
    rows[t * {name}::kSlots + s] = {name}::row(t, s);
    cols[t * {name}::kSlots + s] = {name}::col(t, s);
  }}
  for (int e = t; e < {name}::kRows * {name}::kCols; e += blockDim.x) {{
    counts[e] = {name}::holders(e / {name}::kCols, e % {name}::kCols);
    first[e] = {name}::holder(e / {name}::kCols, e % {name}::kCols, 0);
  }}
}}
"""


def test_header_compiles_into_a_kernel_with_nvrtc():
    for layout in formula_cases() + [scrambled_case()]:
        ok, log = nvrtc_compiles(kernel_source(layout), "header_map.cu")
        assert ok, log


def _probe(spec):
    """The layout measured on the GPU now, with the family's own method (load, else mma.sync's mma, wgmma's codes)."""
    from fraglab.layouts.resolve import resolve_layout

    methods = spec.family.methods
    return resolve_layout(spec, "gpu", "load" if "load" in methods else methods[0])


@pytest.mark.gpu
def test_header_kernel_matches_the_probe_on_the_gpu():
    cupy = pytest.importorskip("cupy")
    # a few WMMA fragments, and the first register fragment of each other family
    picks = WMMA[:6]
    for layout in family_layouts():
        if getattr(layout.spec, "swizzle", None) is None and layout.spec.api not in {p.spec.api for p in picks}:
            picks.append(layout)
    for layout in picks:
        # a model-only family (tcgen05: no sm_100 here) has no probe; its header must still run to the model's map
        measured = layout if layout.spec.family.model_only else _probe(layout.spec)
        module = cupy.RawModule(code=kernel_source(measured), options=("-std=c++17",))
        kernel = module.get_function("header_map")
        n = measured.threads * measured.num_elements
        cells = measured.spec.rows * measured.spec.cols
        rows, cols = cupy.full(n, -7, dtype=cupy.int32), cupy.full(n, -7, dtype=cupy.int32)
        counts, first = cupy.full(cells, -7, dtype=cupy.int32), cupy.full(cells, -7, dtype=cupy.int32)
        kernel((1,), (measured.threads,), (rows, cols, counts, first))
        assert np.array_equal(rows.get(), measured.row.ravel()), layout_name(layout)
        assert np.array_equal(cols.get(), measured.col.ravel()), layout_name(layout)
        expected_counts = np.zeros(cells, dtype=np.int64)
        held = measured.row >= 0
        np.add.at(expected_counts, (measured.row * measured.spec.cols + measured.col)[held], 1)
        assert np.array_equal(counts.get(), expected_counts), layout_name(layout)
        for e in np.nonzero(expected_counts)[0][:64]:
            t, s = holders_of(measured, e // measured.spec.cols, e % measured.spec.cols)[0]
            assert int(first.get()[e]) == t * measured.num_elements + s
