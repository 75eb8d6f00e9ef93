"""One output rule for every command (fraglab/files.py): the suffix fits the format, --out names a file, "wrote"
lines go to stderr, `figures` never writes into a docs/ it finds, generated files carry a one-line source
and no note, and a struct --name either is refused or gives a header that compiles."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from fraglab.cli.main import app
from fraglab.errors import InputError
from fraglab.export import header
from nvrtc_compile import nvrtc_compiles

try:  # click 8.2+ (typer 0.29's copy included) keeps stderr apart by default; older click needs asking
    runner = CliRunner(env={"COLUMNS": "80", "FRAGLAB_NO_GPU": "1"}, mix_stderr=False)
except TypeError:
    runner = CliRunner(env={"COLUMNS": "80", "FRAGLAB_NO_GPU": "1"})


def run(tmp_path, *args):
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        return runner.invoke(app, list(args))
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("args,name", [
    (["export", "--to", "header", "--frag", "accumulator"], "existing.json"),
    (["export", "--to", "tikz", "--frag", "matrix_a"], "t.png"),
    (["export", "--to", "cute", "--api", "mma", "--frag", "matrix_a", "--format", "json"], "c.cuh"),
    (["diff", "--frag", "accumulator", "--format", "png"], "d.json"),
    (["layout", "--frag", "matrix_a", "--format", "tikz"], "a.png"),
    (["layout", "--frag", "matrix_a", "--format", "json"], "a.csv"),
    (["html"], "page.json"),
])
def test_a_suffix_of_another_format_is_refused_and_nothing_written(tmp_path, args, name):
    target = tmp_path / name
    target.write_text("keep")
    result = run(tmp_path, *args, "--out", name)
    assert result.exit_code == 2, result.output
    message = result.stderr if hasattr(result, "stderr") and result.stderr else result.output
    assert f"invalid --out '{name}': its suffix" in message and "use a name ending in ." in message
    assert "  name" not in message  # a word is never missing ("use a  name")
    assert target.read_text() == "keep"


@pytest.mark.parametrize("out", ["", " ", "/"])
@pytest.mark.parametrize("args", [["layout", "--frag", "matrix_a", "--format", "json"],
                                  ["export", "--to", "cute", "--api", "mma", "--frag", "matrix_a"], ["html"]])
def test_out_must_name_a_file(tmp_path, args, out):
    result = run(tmp_path, *args, "--out", out)
    assert result.exit_code == 2, result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args,name", [
    (["layout", "--frag", "matrix_a", "--format", "json"], "a.json"),
    (["layout", "--frag", "matrix_a", "--format", "csv"], "a.csv"),
    (["export", "--to", "header", "--frag", "accumulator"], "a.cuh"),
    (["html"], "p.html"),
    (["diff", "--frag", "accumulator", "--with", "mma.accumulator.m16n8k16.f32.row"], "d.txt"),
])
def test_wrote_goes_to_stderr_and_stdout_stays_empty(tmp_path, args, name):
    result = run(tmp_path, *args, "--out", name)
    assert result.exit_code in (0, 1), result.output
    assert (tmp_path / name).exists()
    assert result.stdout == ""
    assert f"wrote {name}" in result.stderr


def test_figures_default_folder_is_named_in_its_help_and_is_not_docs(tmp_path):
    from fraglab.cli import figures

    assert figures.DEFAULT_FOLDER != "docs/figures" and not figures.DEFAULT_FOLDER.startswith("docs")
    help_text = " ".join(runner.invoke(app, ["figures", "--help"]).output.split())
    assert f"default: {figures.DEFAULT_FOLDER}/ in the current folder" in help_text


def test_generated_files_carry_a_one_line_source_and_no_note(tmp_path):
    for args, name in ((["export", "--to", "header", "--frag", "accumulator"], "a.cuh"),
                       (["layout", "--frag", "accumulator", "--format", "csv"], "a.csv"),
                       (["layout", "--frag", "accumulator", "--format", "json"], "a.json"),
                       (["export", "--to", "cute", "--api", "mma", "--frag", "accumulator"], "c.txt")):
        result = run(tmp_path, *args, "--out", name)
        assert result.exit_code == 0, result.output
        text = (tmp_path / name).read_text()
        assert "no usable GPU" not in text and "CuPy" not in text and "no GPU here" not in text
        assert "note" not in text.lower().split("source", 1)[-1].splitlines()[0]
        if name.endswith(".json"):
            assert "note" not in json.loads(text)["source"]
    source = [l for l in (tmp_path / "a.cuh").read_text().splitlines() if l.startswith("// Source:")]
    assert source == ["// Source: atlas (H200, sm_90)"]


def test_the_no_gpu_reason_is_on_stderr_only_with_verbose(tmp_path):
    quiet = run(tmp_path, "layout", "--frag", "matrix_a")
    assert "no GPU here" in quiet.stdout and "FRAGLAB_NO_GPU" not in quiet.stdout + quiet.stderr
    loud = run(tmp_path, "--verbose", "layout", "--frag", "matrix_a")
    assert loud.stderr.count("no usable GPU: the GPU is switched off by FRAGLAB_NO_GPU") <= 1
    assert "FRAGLAB_NO_GPU" not in loud.stdout


# ---- struct names: refused, or compiled ------------------------------------------------------------------
REFUSED = ["FRAGLAB_HD", "FRAGLAB_X_H", "std", "struct", "and", "char8_t", "co_await", "requires", "__x", "_Frag",
           "a__b", "float4", "dim3", "threadIdx", "row", "index", "kThreads", "9lives", "has space", "", "a" * 65]
ACCEPTED = ["Frag", "WmmaAcc", "fraglab_hd", "Std", "cuda_frag", "x", "int8", "float5", "Row", "HD", "F" * 64]


@pytest.mark.parametrize("name", REFUSED)
def test_names_that_would_not_compile_are_refused(name):
    with pytest.raises(InputError, match="invalid --name"):
        header.check_name(name)


def _compiles(source: str) -> tuple[bool, str]:
    return nvrtc_compiles(source, "named.cu")


def test_every_accepted_name_gives_a_header_that_compiles():
    from fraglab.apis import make_spec
    from fraglab.layouts.resolve import resolve_layout

    layout = resolve_layout(make_spec("accumulator"), "model")
    for name in ACCEPTED:
        header.check_name(name)
        source = header.render(layout, name) + (
            f'extern "C" __global__ void use_{len(name)}(int* out) {{ out[threadIdx.x] = {name}::row(threadIdx.x, 0); }}\n')
        ok, log = _compiles(source)
        assert ok, (name, log)


def test_the_refused_names_really_do_not_compile():
    """The rule is not arbitrary: the names it refuses break the header (compiled with the check bypassed)."""
    from fraglab.apis import make_spec
    from fraglab.layouts.resolve import resolve_layout

    layout = resolve_layout(make_spec("accumulator"), "model")
    original = header.check_name
    header.check_name = lambda name: None
    try:
        for name in ("FRAGLAB_HD", "std", "struct", "float4", "row", "dim3"):
            ok, _ = _compiles(header.render(layout, name)
                              + f'extern "C" __global__ void k(int* o) {{ o[0] = {name}::kRows; }}\n')
            assert not ok, name
    finally:
        header.check_name = original
