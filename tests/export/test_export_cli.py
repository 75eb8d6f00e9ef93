"""`fraglab export`, `where`, `what`, `html` and `diff` through the CLI, on a machine without a GPU."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from export_cases import atlas_layouts
from fraglab.cli.main import app
from cli_errors import error_message

runner = CliRunner(env={"COLUMNS": "200"})
ATLAS_ACC = "wmma.accumulator.m16n16k16.f32.row"


def run(*args):
    return runner.invoke(app, list(args))


def recorded(key: str):
    return next(x for x in atlas_layouts() if x.spec.key == key)


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    return error_message(result.stderr)


def test_export_cute_json_evaluates_to_the_atlas_layout():
    result = run("export", "--to", "cute", "--frag", "matrix_a", "--source", "atlas", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    layout = recorded("wmma.matrix_a.m16n16k16.f16.row")
    (ts, vs), (td, vd) = doc["shape"], doc["stride"]
    for t in range(32):
        for s in range(16):
            # colexicographic split of each mode, evaluated here
            index, rest = 0, t
            for extent, step in zip(ts, td):
                index, rest = index + rest % extent * step, rest // extent
            rest = s
            for extent, step in zip(vs, vd):
                index, rest = index + rest % extent * step, rest // extent
            assert (index % 16, index // 16) == (layout.row[t, s], layout.col[t, s])


def test_export_cute_text_for_mma_is_cutlass_a_layout():
    from fraglab.apis import FAMILIES

    if "mma" not in FAMILIES:
        pytest.skip("the mma.sync family is not registered in this checkout yet")
    result = run("export", "--to", "cute", "--api", "mma", "--frag", "matrix_a", "--shape", "m16n8k16",
                 "--dtype", "f16", "--source", "model")
    assert result.exit_code == 0, result.output
    assert "((4,8),(2,2,2)):((32,1),(16,8,128))" in result.stdout


def test_export_triton_json_and_python():
    result = run("export", "--to", "triton", "--frag", "accumulator", "--source", "atlas", "--format", "json")
    assert result.exit_code == 0, result.output
    bases = json.loads(result.stdout)["bases"]
    layout = recorded(ATLAS_ACC)
    for t in range(32):
        for s in range(8):
            r = c = 0
            for dim, value in (("register", s), ("lane", t)):
                for bit, (br, bc) in enumerate(bases[dim]):
                    if value >> bit & 1:
                        r, c = r ^ br, c ^ bc
            assert (r, c) == (layout.row[t, s], layout.col[t, s])
    snippet = run("export", "--to", "triton", "--frag", "accumulator", "--source", "atlas", "--format", "python")
    assert "gl.DistributedLinearLayout(" in snippet.stdout


def test_export_header_into_a_folder_gets_the_default_name(tmp_path):
    result = run("export", "--to", "header", "--frag", "accumulator", "--source", "atlas", "--name", "WmmaAcc",
                 "--out", str(tmp_path) + "/")
    assert result.exit_code == 0, result.output
    written = tmp_path / f"{ATLAS_ACC}.cuh"
    text = written.read_text()
    assert "struct WmmaAcc {" in text and "// Source: atlas (H200, sm_90)" in text and "fraglab export --to header" in text


def test_export_tikz_to_a_file(tmp_path):
    out = tmp_path / "acc.tex"
    result = run("export", "--to", "tikz", "--frag", "accumulator", "--source", "atlas", "--color-by", "register",
                 "--out", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_text().count(r"\fill[") == 256


def test_where_and_what_json():
    layout = recorded("wmma.matrix_a.m16n16k16.f16.row")
    where = run("where", "--frag", "matrix_a", "--source", "atlas", "--row", "3", "--col", "5", "--format", "json")
    assert where.exit_code == 0, where.output
    holders = [(h["thread"], h["slot"]) for h in json.loads(where.stdout)]
    assert holders == [tuple(int(x) for x in ts) for ts in np.argwhere((layout.row == 3) & (layout.col == 5))]
    what = run("what", "--frag", "matrix_a", "--source", "atlas", "--lane", "14", "--slot", "9", "--format", "json")
    doc = json.loads(what.stdout)
    assert (doc["row"], doc["col"]) == (layout.row[14, 9], layout.col[14, 9])


def test_html_writes_one_page_with_every_atlas_layout(tmp_path):
    out = tmp_path / "page.html"
    result = run("html", "--out", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text()
    for layout in atlas_layouts():
        assert f'"key":"{layout.spec.key}"' in text


def test_diff_of_wmma_and_mma_accumulators():
    from fraglab.apis import FAMILIES

    if "mma" not in FAMILIES:
        pytest.skip("the mma.sync family is not registered in this checkout yet")
    result = run("diff", "--frag", "accumulator", "--source", "atlas", "--with", "mma.accumulator.m16n8k16.f32.row",
                 "--with-source", "model", "--format", "json")
    assert result.exit_code == 1, result.output  # they differ
    rows = json.loads(result.stdout)["differing_slots"]
    assert {r["slot"] for r in rows} == {4, 5, 6, 7} and len(rows) == 128


def test_diff_of_a_layout_with_itself_exits_zero(tmp_path):
    result = run("diff", "--frag", "accumulator", "--source", "atlas", "--format", "png", "--out", str(tmp_path / "d.png"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "d.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("args, argument", [
    (("export", "--to", "cute", "--api", "nosuch", "--frag", "matrix_a"), "--api"),
    (("where", "--frag", "matrix_a", "--source", "atlas", "--row", "16", "--col", "0"), "--row"),
    (("what", "--frag", "matrix_a", "--source", "atlas", "--thread", "32", "--slot", "0"), "--thread"),
    (("what", "--frag", "matrix_a", "--source", "atlas", "--lane", "32", "--slot", "0"), "--thread"),
    (("export", "--to", "cute", "--frag", "matrix_a", "--source", "atlas", "--format", "python"), "--format"),
    (("export", "--to", "header", "--frag", "matrix_a", "--source", "atlas", "--name", "9x"), "--name"),
    (("export", "--to", "triton", "--frag", "matrix_a", "--shape", "m16n16k99"), "--shape"),
])
def test_bad_requests_get_one_line_and_exit_2(args, argument):
    assert argument in one_error_line(run(*args))


def test_a_layout_with_no_cute_form_gets_one_line_and_exit_2(tmp_path):
    """An atlas whose accumulator is XOR-swizzled (col ^= row & 7): linear, but no shape:stride form."""
    from fraglab.layouts import atlas as atlas_mod

    bundled = atlas_mod.DATA_DIR / "atlas_sm90.json"  # the WMMA capture
    doc = json.loads(bundled.read_text())
    cells = np.array(doc["entries"][ATLAS_ACC]["load"]["cells"])
    row, col = cells // 16, cells % 16
    doc["entries"][ATLAS_ACC]["load"]["cells"] = (row * 16 + (col ^ (row & 7))).tolist()
    path = tmp_path / "swizzled.json"
    path.write_text(json.dumps(doc))
    line = one_error_line(run("export", "--to", "cute", "--frag", "accumulator", "--atlas", str(path)))
    assert "no CuTe shape:stride form" in line
    linear = run("export", "--to", "triton", "--frag", "accumulator", "--atlas", str(path), "--format", "json")
    assert linear.exit_code == 0, linear.output


def test_layout_format_tikz_draws_every_cell(tmp_path):
    out = tmp_path / "a.tex"
    result = run("layout", "--frag", "matrix_a", "--source", "atlas", "--format", "tikz", "--out", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.count(r"\fill[") == 256 and r"\documentclass[tikz" in text
    assert "--mma" in one_error_line(run("layout", "--mma", "--format", "tikz"))


def test_out_ending_in_slash_writes_the_default_name_into_a_new_folder(tmp_path):
    result = run("export", "--to", "header", "--frag", "accumulator", "--source", "atlas",
                 "--out", str(tmp_path / "new") + "/")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "new" / f"{ATLAS_ACC}.cuh").is_file()
