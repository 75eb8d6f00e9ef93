"""`fraglab figures` and the figure paths of `fraglab layout`, on a machine without a GPU."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fraglab.layouts import atlas as atlas_mod
from fraglab.layouts.spec import FragmentSpec
from fraglab.cli.main import app

from cli_errors import error_message
from figure_fixtures import FakeAtlas, png_size, svg_groups, svg_texts

runner = CliRunner(env={"COLUMNS": "200"})
SMALL = [FragmentSpec("wmma", f, "m16n16k16", d, "row")
         for f, d in (("matrix_a", "f16"), ("matrix_b", "f16"), ("accumulator", "f32"))]


def run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def one_error_line(result) -> str:
    assert "Traceback" not in result.output
    return error_message(result.stderr)


# ---- fraglab figures ---------------------------------------------------------------------------------------

def test_figures_writes_every_figure_of_the_atlas(tmp_path, monkeypatch):
    monkeypatch.setattr(atlas_mod, "load_bundled", lambda *a, **k: FakeAtlas(SMALL))
    out = tmp_path / "figs"
    result = run("figures", "--out", str(out), "--format", "svg,png")
    assert result.exit_code == 0, result.output
    assert "wrote 8 figures" in result.output
    names = sorted(p.name for p in out.iterdir())
    assert len(names) == 9 and "figures.json" in names
    svg = (out / "wmma_accumulator_m16n16k16_f32_row_load.svg").read_bytes()
    assert svg_groups(svg)["grid-cell-0-2"] == ["T1", "x0"]  # (0, 2): g = 0, t = 1, slot 0


@pytest.mark.parametrize("args, words", [
    (["--format", "gif"], ["--format", "'gif'", "svg", "png", "pdf"]),
    (["--format", ""], ["--format", "svg"]),
])
def test_figures_bad_format_is_one_line_and_exit_2(tmp_path, args, words):
    result = run("figures", "--out", str(tmp_path / "x"), *args)
    assert result.exit_code == 2
    line = one_error_line(result)
    assert all(w in line for w in words), line
    assert not (tmp_path / "x").exists()


def test_figures_out_that_is_a_file_is_exit_2(tmp_path):
    target = tmp_path / "file.svg"
    target.write_text("keep")
    result = run("figures", "--out", str(target))
    assert result.exit_code == 2
    assert "--out" in one_error_line(result)
    assert target.read_text() == "keep"


# ---- fraglab layout --format png|svg|pdf (the service calls fraglab.figures) --------------------------------

def test_layout_png_without_out_writes_a_descriptive_name_here(no_gpu, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("layout", "--frag", "accumulator", "--format", "png")
    assert result.exit_code == 0, result.output
    path = tmp_path / "wmma_accumulator_m16n16k16_f32_row_load.png"
    assert path.exists() and path.name in result.output
    width, height = png_size(path.read_bytes())
    assert width > 16 * 50 and height > 16 * 50  # 16 cells of at least a third of an inch at 150 dpi


def test_layout_svg_comes_from_the_atlas_and_says_so(no_gpu, tmp_path):
    out = tmp_path / "a.svg"
    result = run("layout", "--frag", "matrix_a", "--format", "svg", "--out", str(out), "--lane", "5",
                 "--palette", "okabe-ito")
    assert result.exit_code == 0, result.output
    data = out.read_bytes()
    texts = " ".join(svg_texts(data))
    assert "atlas: NVIDIA H200 (sm_90)" in texts and "Lane 5 outlined" in texts
    recorded = atlas_mod.load_bundled().layout(FragmentSpec("wmma", "matrix_a", "m16n16k16", "f16", "row"))
    lane, slot = 5, 3
    r, c = recorded.row[lane, slot], recorded.col[lane, slot]
    assert f"x{slot}" in svg_groups(data)[f"grid-cell-{r}-{c}"]


def test_layout_mma_figure_holds_all_three_operands(no_gpu, tmp_path):
    out = tmp_path / "mma.pdf"
    result = run("layout", "--mma", "--shape", "m16n16k16", "--dtype", "f16", "--format", "pdf", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"%PDF")
    svg_out = tmp_path / "mma.svg"
    assert run("layout", "--mma", "--format", "svg", "--out", str(svg_out)).exit_code == 0
    groups = svg_groups(svg_out.read_bytes())
    for name in ("A", "B", "C"):
        assert any(k.startswith(f"{name}-cell-") for k in groups), name


@pytest.mark.parametrize("args, words", [
    (["--palette", "rainbow"], ["--palette", "rainbow", "okabe-ito", "grey"]),
    (["--lane", "40"], ["--lane", "0..31"]),
])
def test_layout_figure_bad_input_is_one_line_and_exit_2(no_gpu, tmp_path, args, words):
    result = run("layout", "--frag", "accumulator", "--format", "png", "--out", str(tmp_path / "x.png"), *args)
    assert result.exit_code == 2
    line = one_error_line(result)
    assert all(w in line for w in words), line
    assert not (tmp_path / "x.png").exists()


def test_figures_from_a_captured_atlas_file(tmp_path):
    import json

    doc = atlas_mod.load_bundled().to_dict()  # encoded copies: nothing shared with the cached atlas
    doc["entries"] = {spec.key: doc["entries"][spec.key] for spec in SMALL}
    doc["provenance"] = {**doc["provenance"], "gpu_name": "NVIDIA Example GPU"}
    path = tmp_path / "my_gpu.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "figs"
    result = run("figures", "--atlas", str(path), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert len(list(out.glob("*.svg"))) == 4
    texts = " ".join(svg_texts((out / "wmma_matrix_a_m16n16k16_f16_row_load.svg").read_bytes()))
    assert "NVIDIA Example GPU" in texts


def test_figures_missing_atlas_file_is_exit_2(tmp_path):
    result = run("figures", "--atlas", str(tmp_path / "nope.json"), "--out", str(tmp_path / "figs"))
    assert result.exit_code == 2
    assert "--atlas" in one_error_line(result)
