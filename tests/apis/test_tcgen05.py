"""tcgen05.ld / tcgen05.st (Blackwell, model only: no sm_100 here).

The model is checked against tables written out by hand from the PTX ISA's "Matrix fragments for shape
..." figures (section "Tensor Memory" > "Data Movement Shape" > "Memory Layout"), against the register
counts of the ISA's tcgen05.ld/.st table, and against CUTLASS/CuTe's TMEM copy atoms (the shapes and
strides of SM100_TMEM_LOAD_* in include/cute/atom/copy_traits_sm100.hpp, evaluated here by a small CuTe
layout reader of the test's own). Then every path that iterates the registry: list, layout (auto, model,
gpu, atlas), export, figures, and capture/verify with a faked sm_90 and sm_100 GPU (the min_sm gate).
"""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from cli_errors import error_message
from fraglab.apis import FAMILIES, make_spec
from fraglab.apis import tcgen05 as tc
from fraglab.cli.main import app
from fraglab.errors import AtlasError, ProbeError, ProbeUnsupported
from fraglab.layouts import atlas as atlas_mod
from fraglab.layouts.layout import NO_ELEMENT
from fraglab.layouts.resolve import resolve_layout

runner = CliRunner(env={"COLUMNS": "200", "FRAGLAB_NO_GPU": "1"})

# ---- the ISA, by hand --------------------------------------------------------------------------------
# Register counts per thread, from the ISA's table of tcgen05.ld/.st vector sizes ("NA": .num not allowed).
ISA_REGISTERS = {
    # num:      16x32bx2/16x64b/32x32b, 16x128b, 16x256b
    1: (1, 2, 4), 2: (2, 4, 8), 4: (4, 8, 16), 8: (8, 16, 32), 16: (16, 32, 64), 32: (32, 64, 128),
    64: (64, 128, None), 128: (128, None, None),
}
COLUMN_OF_TABLE = {"16x32bx2": 0, "16x64b": 0, "32x32b": 0, "16x128b": 1, "16x256b": 2}

# The figures for .num = x1, one text line per TMEM lane, one cell per 32-bit column: T<thread>.<register>.
FIGURES_X1 = {
    "32x32b": "\n".join(f"T{lane}.0" for lane in range(32)),  # "thread i accesses lane i", one column
    "16x64b": """
        T0.0  T2.0
        T4.0  T6.0
        T8.0  T10.0
        T12.0 T14.0
        T16.0 T18.0
        T20.0 T22.0
        T24.0 T26.0
        T28.0 T30.0
        T1.0  T3.0
        T5.0  T7.0
        T9.0  T11.0
        T13.0 T15.0
        T17.0 T19.0
        T21.0 T23.0
        T25.0 T27.0
        T29.0 T31.0
    """,
    "16x128b": """
        T0.0  T1.0  T2.0  T3.0
        T4.0  T5.0  T6.0  T7.0
        T8.0  T9.0  T10.0 T11.0
        T12.0 T13.0 T14.0 T15.0
        T16.0 T17.0 T18.0 T19.0
        T20.0 T21.0 T22.0 T23.0
        T24.0 T25.0 T26.0 T27.0
        T28.0 T29.0 T30.0 T31.0
        T0.1  T1.1  T2.1  T3.1
        T4.1  T5.1  T6.1  T7.1
        T8.1  T9.1  T10.1 T11.1
        T12.1 T13.1 T14.1 T15.1
        T16.1 T17.1 T18.1 T19.1
        T20.1 T21.1 T22.1 T23.1
        T24.1 T25.1 T26.1 T27.1
        T28.1 T29.1 T30.1 T31.1
    """,
    "16x256b": """
        T0.0  T0.1  T1.0  T1.1  T2.0  T2.1  T3.0  T3.1
        T4.0  T4.1  T5.0  T5.1  T6.0  T6.1  T7.0  T7.1
        T8.0  T8.1  T9.0  T9.1  T10.0 T10.1 T11.0 T11.1
        T12.0 T12.1 T13.0 T13.1 T14.0 T14.1 T15.0 T15.1
        T16.0 T16.1 T17.0 T17.1 T18.0 T18.1 T19.0 T19.1
        T20.0 T20.1 T21.0 T21.1 T22.0 T22.1 T23.0 T23.1
        T24.0 T24.1 T25.0 T25.1 T26.0 T26.1 T27.0 T27.1
        T28.0 T28.1 T29.0 T29.1 T30.0 T30.1 T31.0 T31.1
        T0.2  T0.3  T1.2  T1.3  T2.2  T2.3  T3.2  T3.3
        T4.2  T4.3  T5.2  T5.3  T6.2  T6.3  T7.2  T7.3
        T8.2  T8.3  T9.2  T9.3  T10.2 T10.3 T11.2 T11.3
        T12.2 T12.3 T13.2 T13.3 T14.2 T14.3 T15.2 T15.3
        T16.2 T16.3 T17.2 T17.3 T18.2 T18.3 T19.2 T19.3
        T20.2 T20.3 T21.2 T21.3 T22.2 T22.3 T23.2 T23.3
        T24.2 T24.3 T25.2 T25.3 T26.2 T26.3 T27.2 T27.3
        T28.2 T28.3 T29.2 T29.3 T30.2 T30.3 T31.2 T31.3
    """,
    # two .16x32b accesses: threads 0-15 read lanes 0-15 at taddr, threads 16-31 at taddr + immHalfSplitoff
    "16x32bx2": "\n".join(f"T{lane}.0 T{16 + lane}.0" for lane in range(16)),
}


def figure_cells(text: str) -> dict[tuple[int, int], tuple[int, int]]:
    """(lane, col) -> (thread, register) from a hand-written figure."""
    out = {}
    rows = [line.split() for line in text.strip().splitlines()]
    for lane, cells in enumerate(rows):
        for col, cell in enumerate(cells):
            thread, reg = re.fullmatch(r"T(\d+)\.(\d+)", cell).groups()
            out[(lane, col)] = (int(thread), int(reg))
    return out


def isa_map(shape: str, num: int) -> np.ndarray:
    """The ISA's map for .num = N: the x1 figure repeated N times along the columns, repetition k in
    registers k*R .. k*R+R-1 (R = registers of x1). .16x32bx2 repeats each of its two .16x32b halves:
    first-half columns 0..N-1, second half N..2N-1 (this module's convention for immHalfSplitoff)."""
    x1 = figure_cells(FIGURES_X1[shape])
    x1_regs = 1 + max(reg for _, reg in x1.values())
    x1_cols = 1 + max(col for _, col in x1)
    out = np.full((32, x1_regs * num, 2), -1)
    for k in range(num):
        for (lane, col), (thread, reg) in x1.items():
            if shape == "16x32bx2":
                col_k = col * num + k  # half `col` (0 or 1), repetition k
            else:
                col_k = k * x1_cols + col
            assert out[thread, k * x1_regs + reg, 0] == -1
            out[thread, k * x1_regs + reg] = (lane, col_k)
    return out


ALL_NUMS = [(shape, num) for shape in tc.SHAPES for num in tc.allowed_nums(shape)]


def test_figures_are_well_formed():
    for shape, text in FIGURES_X1.items():
        cells = figure_cells(text)
        assert len(cells) == 32 * ISA_REGISTERS[1][COLUMN_OF_TABLE[shape]], shape  # 32 threads x x1 registers
        assert len(set(cells.values())) == len(cells), shape                       # each (thread, reg) once


def test_allowed_nums_and_register_counts_are_the_isa_table():
    for shape in tc.SHAPES:
        allowed = [n for n, counts in ISA_REGISTERS.items() if counts[COLUMN_OF_TABLE[shape]] is not None]
        assert list(tc.allowed_nums(shape)) == allowed, shape
        for num in allowed:
            assert tc.TmemMove(shape, num).regs == ISA_REGISTERS[num][COLUMN_OF_TABLE[shape]], (shape, num)
    for shape, num in [("16x256b", 64), ("16x128b", 128), ("32x32b", 3), ("32x32b", 256), ("16x64b", 0)]:
        with pytest.raises(ValueError):
            tc.TmemMove(shape, num)


@pytest.mark.parametrize("shape,num", ALL_NUMS, ids=[f"{s}.x{n}" for s, n in ALL_NUMS])
def test_model_is_the_isa_figure(shape, num):
    assert np.array_equal(tc.model_map(tc.TmemMove(shape, num)), isa_map(shape, num))


@pytest.mark.parametrize("shape,num", ALL_NUMS, ids=[f"{s}.x{n}" for s, n in ALL_NUMS])
def test_every_element_is_held_exactly_once(shape, num):
    move = tc.TmemMove(shape, num)
    found = tc.model_map(move).reshape(-1, 2)
    lanes = 32 if shape == "32x32b" else 16
    cols = {"32x32b": 1, "16x64b": 2, "16x128b": 4, "16x256b": 8, "16x32bx2": 2}[shape] * num  # 32*N bits ...
    assert len(found) == 32 * move.regs == lanes * cols  # ... per lane, in 32-bit columns
    assert sorted(map(tuple, found.tolist())) == [(r, c) for r in range(lanes) for c in range(cols)]


def test_16x64b_lanes_0_to_15_by_hand():
    """The odd one: neighbouring threads sit 8 lanes apart, pairs of threads 2 columns apart."""
    m = tc.model_map(tc.TmemMove("16x64b", 1))
    assert [tuple(m[t, 0]) for t in range(4)] == [(0, 0), (8, 0), (0, 1), (8, 1)]
    assert [tuple(m[t, 0]) for t in (4, 5, 6, 7, 30, 31)] == [(1, 0), (9, 0), (1, 1), (9, 1), (7, 1), (15, 1)]


# ---- a second reading of the figures: CuTe's TMEM copy atoms ----------------------------------------
# (bits of one TMEM lane in the atom, DstLayout thread shape:stride, value shape:stride), as written in
# CUTLASS include/cute/atom/copy_traits_sm100.hpp; a reference bit b is TMEM lane b // W, bit b % W.
CUTE_ATOMS = {
    ("32x32b", 1): (32, ((32,), (32,)), ((32,), (1,))),                      # SM100_TMEM_LOAD_32dp32b1x
    ("32x32b", 2): (64, ((32,), (64,)), ((64,), (1,))),                      # 32dp32b2x
    ("16x64b", 1): (64, ((2, 2, 8), (512, 32, 64)), ((32,), (1,))),          # 16dp64b1x
    ("16x64b", 2): (128, ((2, 2, 8), (1024, 32, 128)), ((32, 2), (1, 64))),  # 16dp64b2x
    ("16x128b", 1): (128, ((4, 8), (32, 128)), ((32, 2), (1, 1024))),        # 16dp128b1x
    ("16x128b", 2): (256, ((4, 8), (32, 256)), ((32, 2, 2), (1, 2048, 128))),  # 16dp128b2x
    ("16x256b", 1): (256, ((4, 8), (64, 256)), ((64, 2), (1, 2048))),        # 16dp256b1x
    ("16x256b", 2): (512, ((4, 8), (64, 512)), ((64, 2, 2), (1, 4096, 256))),  # 16dp256b2x
    ("16x32bx2", 1): (64, ((16, 2), (64, 32)), ((32,), (1,))),               # 16dp32b1x (immHalfSplitoff 1)
    ("16x32bx2", 2): (128, ((16, 2), (128, 64)), ((64,), (1,))),             # 16dp32b2x (immHalfSplitoff 2)
}


def cute_offset(index: int, shape: tuple, stride: tuple) -> int:
    """CuTe's layout function: index split colexicographically over `shape`, dotted with `stride`."""
    offset = 0
    for extent, step in zip(shape, stride):
        offset += (index % extent) * step
        index //= extent
    return offset


@pytest.mark.parametrize("shape,num", sorted(CUTE_ATOMS), ids=[f"{s}.x{n}" for s, n in sorted(CUTE_ATOMS)])
def test_model_agrees_with_cute_copy_atoms(shape, num):
    width, (tshape, tstride), (vshape, vstride) = CUTE_ATOMS[(shape, num)]
    values = int(np.prod(vshape))
    assert values == 32 * tc.TmemMove(shape, num).regs
    m = tc.model_map(tc.TmemMove(shape, num))
    for thread in range(32):
        for v in range(values):
            bit = cute_offset(thread, tshape, tstride) + cute_offset(v, vshape, vstride)
            lane, bit_in_lane = divmod(bit, width)
            assert bit_in_lane % 32 == v % 32  # a register's bits stay together, lowest first
            assert tuple(m[thread, v // 32]) == (lane, bit_in_lane // 32), (thread, v)


# ---- a third reading: Apache TVM's tcgen05.ld/st page, "Native images" (l = lane id, r = register) ----
TVM_NATIVE_IMAGES = {  # shape: register r of lane l holds (row, column); its table has no .16x32bx2
    "32x32b": lambda l, r: (l, r),
    "16x64b": lambda l, r: (l // 4 + 8 * (l % 2), l // 2 % 2 + 2 * r),
    "16x128b": lambda l, r: (l // 4 + 8 * (r % 2), l % 4 + 4 * (r // 2)),
    "16x256b": lambda l, r: (l // 4 + 8 * (r // 2 % 2), r % 2 + 2 * (l % 4) + 8 * (r // 4)),
}


@pytest.mark.parametrize("shape", sorted(TVM_NATIVE_IMAGES))
@pytest.mark.parametrize("num", [1, 2, 4, 32])
def test_model_agrees_with_tvm_native_images(shape, num):
    move = tc.TmemMove(shape, num)
    want = [[TVM_NATIVE_IMAGES[shape](l, r) for r in range(move.regs)] for l in range(32)]
    assert tc.model_map(move).tolist() == [[list(x) for x in row] for row in want]


# ---- the family ----------------------------------------------------------------------------------

def test_family_is_model_only_and_says_so():
    family = FAMILIES["tcgen05"]
    assert family.threads == 32 and family.operands == ("tmem",) and family.min_sm == 100
    assert family.model_only and family.model_archs == ("sm_100",) and family.kernel_builds() == []
    assert all("not measured: no sm_100 here" in family.note(s) for s in family.specs())
    assert [(s.shape, s.num) for s in family.specs()] == [(sh, n) for sh in tc.SHAPES for n in (1, 2, 4)]
    for spec in family.specs():
        assert family.slots(spec) == ISA_REGISTERS[spec.num][COLUMN_OF_TABLE[spec.shape]]
        assert spec.dtype == "b32" and spec.element_bits == 32
    with pytest.raises(ProbeUnsupported, match="model only"):
        family.measure(family.specs()[0], family.methods)


def test_model_layout_is_the_map_and_marked_unmeasured():
    spec = make_spec(api="tcgen05", shape="16x256b", num=2)
    lay = resolve_layout(spec, "model")
    assert lay.source.kind == "model" and "not measured: no sm_100 here" in lay.source.summary()
    assert np.array_equal(lay.to_numpy(), isa_map("16x256b", 2))
    assert (lay.row != NO_ELEMENT).all() and lay.duplicate_slots == 0 and lay.missing_elements == 0


def test_auto_answers_from_the_model_and_atlas_refuses(no_gpu):
    spec = make_spec(api="tcgen05", shape="16x64b", num=2)
    lay = resolve_layout(spec, "auto")
    # the source line is short (issue 23): the note says model only, the provenance why it is unmeasured
    assert lay.source.kind == "model" and "model only" in lay.source.note
    assert "not measured" in lay.source.provenance["model"]
    with pytest.raises(AtlasError, match="model only"):
        resolve_layout(spec, "atlas")
    with pytest.raises(ProbeUnsupported, match="not measured: no sm_100 here"):
        resolve_layout(spec, "gpu")


# ---- the CLI ---------------------------------------------------------------------------------------

def run(*args):
    return runner.invoke(app, list(args))


def one_line_error(result) -> str:
    """The one error message (wrapped within 80 columns under one head), unwrapped."""
    return error_message(result.output)


def test_layout_cli_auto_says_model_and_unmeasured(no_gpu):
    result = run("layout", "--api", "tcgen05", "--shape", "16x64b", "--num", "2")
    assert result.exit_code == 0, result.output
    words = " ".join(result.output.split())
    assert "source: model" in words and "not measured: no sm_100 here" in words and "model only" in words
    assert "(a model, not a measurement)" in words
    grid = [ln.split() for ln in result.output.splitlines() if re.match(r"^\s*\d+\s+\d+\.\d", ln)]
    assert grid[0] == ["0", "0.0", "2.0", "0.1", "2.1"] and grid[8] == ["8", "1.0", "3.0", "1.1", "3.1"]


@pytest.mark.parametrize("source,code,words", [("gpu", 1, "model only"), ("atlas", 2, "model only")])
def test_layout_cli_gpu_and_atlas_refuse_in_one_line(no_gpu, source, code, words):
    result = run("layout", "--api", "tcgen05", "--shape", "16x128b", "--source", source)
    assert result.exit_code == code and words in one_line_error(result)


@pytest.mark.parametrize("args,words", [
    (["--shape", "16x65b"], "valid choices are 32x32b, 16x64b, 16x128b, 16x256b, 16x32bx2"),
    (["--shape", "16x256b", "--num", "8"], "valid choices are 1, 2, 4"),
    (["--dtype", "f32"], "valid choices are b32"),
    (["--trans"], "--trans does not apply to tcgen05"),
])
def test_layout_cli_bad_choices_name_the_valid_ones(no_gpu, args, words):
    result = run("layout", "--api", "tcgen05", *args)
    assert result.exit_code == 2 and words in one_line_error(result)


def test_layout_json_is_the_model(no_gpu):
    result = run("layout", "--api", "tcgen05", "--shape", "16x32bx2", "--num", "2", "--format", "json")
    doc = json.loads(result.output)
    assert doc["threads"] == 32 and doc["rows"] == 16 and doc["cols"] == 4 and doc["num_elements"] == 2
    assert doc["source"]["kind"] == "model" and "not measured" in doc["source"]["model"]
    got = {(s["thread"], s["slot"]): (s["row"], s["col"]) for s in doc["slots"]}
    want = isa_map("16x32bx2", 2)
    assert got == {(t, r): tuple(want[t, r]) for t in range(32) for r in range(2)}


def test_list_shows_the_family_with_its_note(no_gpu):
    result = run("list", "--api", "tcgen05")
    assert result.exit_code == 0, result.output
    words = " ".join(result.output.split())
    assert "MODEL ONLY" in words and "needs sm_100" in words and "not measured: no sm_100 here" in words
    assert {"32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2", "x1", "x2", "x4"} <= set(words.split())
    rows = json.loads(run("list", "--api", "tcgen05", "--format", "json").output)
    assert len(rows) == 15 and all(r["model_only"] and r["min_sm"] == 100 and r["threads"] == 32 for r in rows)
    everything = run("list")
    assert everything.exit_code == 0 and "--api tcgen05" in everything.output


def test_where_and_what_answer_from_the_model(no_gpu):
    where = run("where", "--api", "tcgen05", "--shape", "16x256b", "--row", "9", "--col", "3")
    assert where.exit_code == 0 and re.search(r"^\s+5\s+0\s+5\s+3\s", where.output, re.M), where.output
    what = json.loads(run("what", "--api", "tcgen05", "--shape", "16x64b", "--lane", "1", "--slot", "0",
                          "--format", "json").output)
    assert (what["row"], what["col"]) == (8, 0)


def test_exports_work_from_the_model(no_gpu, tmp_path):
    cute = run("export", "--to", "cute", "--api", "tcgen05", "--shape", "16x64b", "--num", "2")
    assert cute.exit_code == 0 and "((4,8),2):((8,1),32)" in cute.output and "not measured" in cute.output
    triton = run("export", "--to", "triton", "--api", "tcgen05", "--shape", "16x256b", "--format", "json")
    bases = json.loads(triton.output)["bases"]
    # thread bit k moves the element as the figure does: t+1 -> two columns over, t+4 -> one lane down
    assert bases["lane"][:3] == [[0, 2], [0, 4], [1, 0]] and bases["register"] == [[0, 1], [8, 0]]
    header = run("export", "--to", "header", "--api", "tcgen05", "--shape", "32x32b", "--num", "4",
                 "--out", str(tmp_path / "t.cuh"))
    assert header.exit_code == 0 and "kSlots = 4" in (tmp_path / "t.cuh").read_text()


def test_figure_from_the_model(no_gpu, tmp_path):
    out = tmp_path / "t.svg"
    result = run("layout", "--api", "tcgen05", "--shape", "16x128b", "--num", "2", "--out", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "not measured: no sm_100 here" in text and "TMEM lane" in text
    assert "T31" in text and "x3" in text


def test_the_html_page_carries_the_model(no_gpu):
    from fraglab.export.html import build_page
    from fraglab.export.select import page_layouts

    layouts = [lay for lay in page_layouts() if lay.spec.api == "tcgen05"]
    assert len(layouts) == 15 and all(lay.source.kind == "model" for lay in layouts)
    page = build_page(layouts, generated="test")
    assert '"key":"tcgen05.tmem.16x64b.b32.row.num2"' in page and "not measured" in page


# ---- capture and verify on a GPU that cannot run tcgen05: the min_sm gate, with a faked GPU ----------

@pytest.fixture
def fake_gpu(monkeypatch):
    """A pretend GPU of a chosen architecture whose measured families answer from the bundled atlas."""
    from fraglab.runtime import gpu

    bundled = atlas_mod.load_bundled(90)

    def answer(spec):
        if spec.key not in bundled.entries:
            raise ProbeError(f"{spec.key} is not in the bundled atlas")
        return {m: bundled.raw_layout(spec, m) for m in bundled.entries[spec.key]}

    def fake_measure(spec, methods=None, source=None, **_):
        return answer(spec)

    def fake_capture(specs, progress=None, source=None):
        return {s.key: answer(s) for s in specs}, {}, 0.0

    for api, family in FAMILIES.items():
        if not family.model_only:
            monkeypatch.setitem(FAMILIES, api, dataclasses.replace(
                family, measure=fake_measure, capture=fake_capture if family.capture is not None else None))

    # the shared-memory cases that `fraglab verify` also runs have no pretend twin of their bank probe: the
    # model answers them here (tests/smem/test_smem_gpu.py measures them on a real GPU)
    from fraglab.smem import verify as smem_verify
    model_cases = smem_verify.run_cases
    monkeypatch.setattr(smem_verify, "run_cases", lambda source="gpu": model_cases("model"))

    def use(arch: int):
        monkeypatch.setattr(gpu, "available", lambda: (True, ""))
        monkeypatch.setattr(gpu, "compute_capability", lambda: arch)
        monkeypatch.setattr(gpu, "device_info", lambda: {**bundled.provenance, "compute_capability": arch,
                                                         "gpu_name": f"pretend sm_{arch}"})
    return use


def test_capture_on_sm90_refuses_tcgen05_with_the_reason(fake_gpu):
    from fraglab.probes.run import capture_atlas

    fake_gpu(90)
    captured = capture_atlas(apis=("tcgen05",))
    assert captured.entries == {}
    assert set(captured.refused) == {s.key for s in FAMILIES["tcgen05"].specs()}
    assert all(why == "needs sm_100 or newer; this GPU is sm_90" for why in captured.refused.values())


def test_capture_on_sm100_refuses_tcgen05_as_model_only(fake_gpu):
    from fraglab.probes.run import capture_atlas

    fake_gpu(100)
    captured = capture_atlas(apis=("tcgen05",))
    assert captured.entries == {} and len(captured.refused) == 15
    assert all("model only" in why and "ProbeUnsupported" in why for why in captured.refused.values())


def test_atlas_capture_and_verify_on_sm90_skip_tcgen05(fake_gpu, tmp_path):
    """What tests/probes/test_gpu_probes.py asserts on the device, here with a pretend sm_90: the capture
    diffs empty against the bundled atlas, and verify passes; tcgen05 is refused, never a failure."""
    fake_gpu(90)
    out = tmp_path / "atlas.json"
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["atlas", "capture", "--out", str(out)])
    assert result.exit_code == 0, result.output
    again = atlas_mod.load(out)
    assert atlas_mod.diff(again, atlas_mod.load_bundled(again.arch)) == []
    assert not any(k.startswith("tcgen05.") for k in again.entries)
    assert {k for k in again.refused if k.startswith("tcgen05.")} == {s.key for s in FAMILIES["tcgen05"].specs()}
    verify = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["verify"])
    assert verify.exit_code == 0, verify.output[-2000:]
    words = " ".join(verify.output.split())
    assert "refused tcgen05.tmem.16x64b.b32.row.num2: needs sm_100 or newer; this GPU is sm_90" in words
    assert re.search(r"(\d+) of \1 fragments agree on pretend sm_90 .*; 15 refused", words), words[-300:]
    assert "\ntcgen05:" not in verify.output  # no verify table for it: nothing was measured


# ---- docs/tcgen05.md stays true to the model ---------------------------------------------------------

def _doc_formula(expr: str, t, r, n):
    py = expr.replace("/", "//").replace("N", "n")
    py = re.sub(r"(\d)\s*([(a-z])", r"\1*\2", py)  # "8 (t%2)" -> "8*(t%2)", "2r" -> "2*r"
    py = re.sub(r"([n)])\s+\(", r"\1*(", py)        # "n (t//16)" -> "n*(t//16)"
    return eval(py, {"__builtins__": {}}, {"t": t, "r": r, "n": n})


def test_the_docs_formula_table_is_the_model():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "tcgen05.md").read_text()
    rows = re.findall(r"^\| `\.(\w+)` \| [^|]+ \| [^|]+ \| `([^`]+)` \| `([^`]+)` \|$", text, re.M)
    assert sorted(shape for shape, _, _ in rows) == sorted(tc.SHAPES)
    for shape, lane_expr, col_expr in rows:
        for num in (1, 2, 4):
            move = tc.TmemMove(shape, num)
            t, r = np.arange(32)[:, None], np.arange(move.regs)[None, :]
            want = np.stack(np.broadcast_arrays(_doc_formula(lane_expr, t, r, num),
                                                _doc_formula(col_expr, t, r, num)), axis=-1)
            assert np.array_equal(tc.model_map(move), want), (shape, num)
