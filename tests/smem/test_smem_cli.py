"""`fraglab smem` on a machine without a GPU: the bank map, JSON, figures, the search, and bad input."""

import json

import pytest
from typer.testing import CliRunner

from fraglab.cli.main import app
from cli_errors import error_message
from fraglab.smem.view import bank_map_text
from fraglab.smem.verify import CASES

runner = CliRunner()


def run(*args):
    return runner.invoke(app, ["smem", *args], catch_exceptions=False)


def test_the_issue_example_prints_a_bank_map(no_gpu):
    result = run("--layout", "Sw<3,3,3> o (8,64):(64,1)", "--dtype", "f16", "--access", "ldmatrix.x4")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(len(line) <= 80 for line in lines)
    # 8 rows x 64 halves = 1024 bytes = two x4 instructions of 4 matrices, each conflict-free: 4 wavefronts
    assert "2 instructions: wavefronts predicted 8" in result.output and "conflict-free" in result.output
    assert "no usable GPU" in " ".join(result.output.split())
    # phase 0 = matrix 0 = rows 0-7 at chunk 0, swizzled to chunk r: thread r's 16 bytes in banks 4r..4r+3
    row = next(line for line in lines if line.startswith("p0 w0")).split()[2:]
    assert row == [str(b // 4) for b in range(16)]


@pytest.mark.parametrize("case", [c for c in CASES if c.addresses is None], ids=lambda c: c.name)
def test_every_shipped_bank_map_fits_80_columns(case):
    report = case.report("model")
    for index in (0, len(report.instructions) - 1):
        assert max(len(line) for line in bank_map_text(report, index).splitlines()) <= 80


def test_json_gives_wavefronts_and_each_threads_offsets_and_banks(no_gpu, tmp_path):
    out = tmp_path / "s.json"
    result = run("--layout", "(64,64):(64,1)", "--access", "ldmatrix.x4", "--format", "json", "--out", str(out))
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    first = doc["instructions"][0]
    # 8 rows of 128 bytes share banks 0-3 (matrix 0, 2) or 4-7 (matrix 1, 3 start at column 8): 8-way x 4 phases
    assert first["wavefronts"] == {"predicted": 32, "minimum": 4}
    t9 = next(t for t in first["threads"] if t["thread"] == 9)   # row 9 of the tile, columns 0-7: byte 9*128
    assert t9["byte_offsets"] == [1152, 1156, 1160, 1164] and t9["banks"] == [0, 1, 2, 3]
    assert doc["source"] == "model" and "measured" not in doc["wavefronts"]


def test_figures_are_written_through_the_one_writer(no_gpu, tmp_path):
    for fmt in ("png", "svg"):
        result = run("--layout", "(16,64):(64,1)", "--access", "ldmatrix.x1", "--format", fmt, "--out", str(tmp_path))
        assert result.exit_code == 0, result.output
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["smem_ldmatrix_x1_f16.png", "smem_ldmatrix_x1_f16.svg"]
    assert (tmp_path / names[0]).read_bytes()[:4] == b"\x89PNG"


def test_search_ranks_the_matched_swizzle_first(no_gpu):
    result = run("--search", "--tile", "64x128", "--access", "st.b32", "--fragment", "mma.m16n8k16.accumulator.f32")
    assert result.exit_code == 0, result.output
    # 128 halves = 256-byte rows: the swizzle must take bits 7-9 of the element offset (S = 4), or pad by 16 bytes
    assert "best: Sw<3,3,4> o (64,128):(128,1)" in result.output
    assert all(len(line) <= 80 for line in result.output.splitlines())


@pytest.mark.parametrize("args,needle", [
    (["--layout", "Sw<3,3,3> o (8,60):(60,1)"], "swizzle does not fit"),
    (["--layout", "(8,64):(66,1)", "--access", "ld.b128"], "misaligned 16-byte"),
    (["--layout", "(8,64):(64,1)", "--access", "st.b32", "--fragment", "mma.m16n8k16.accumulator.f32"],
     "outside the 8x64 tile"),
    (["--layout", "(8,64):(64,1)", "--access", "ld.b96"], "valid choices are"),
    (["--layout", "(8,64):(64,1)", "--dtype", "f17"], "invalid --dtype"),
    (["--layout", "(8,64)(64,1)"], "expected (shape):(stride)"),
    (["--layout", "(8,64):(64,1)", "--instruction", "9"], "instructions 0..1"),
    (["--search"], "--tile"),
    (["--search", "--tile", "64x64", "--layout", "(64,64):(64,1)"], "leave out --layout"),
    (["--search", "--tile", "64x", "--access", "ld.b32"], "invalid --tile"),
    (["--layout", "(8,64):(64,1)", "--source", "atlas"], "valid choices are auto, gpu, model"),
    (["--layout", "(8,64):(64,1)", "--access", "ldmatrix.x4", "--dtype", "f32"], "moves b16 elements"),
    (["--layout", "wgmma.256B.k"], "valid choices are interleave"),
])
def test_bad_input_is_one_line_and_exit_2(no_gpu, args, needle):
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert needle in error_message(result.output), result.output


def test_python_api_is_the_package_called():
    import fraglab

    r = fraglab.smem("Sw<3,3,3> o (64,64):(64,1)", dtype="f16", access="ldmatrix.x4", source="model")
    assert (r.predicted, r.minimum) == (64, 64) and r.measured is None
    assert r.table(1).splitlines()[3].startswith("instruction 1: predicted 4")
    assert r.figure(0).axes
