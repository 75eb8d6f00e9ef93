"""Every `fraglab layout`, `list`, `atlas` and `verify` path through the CLI, on a machine without a GPU."""

import json

import pytest
from typer.testing import CliRunner

from fraglab.layouts import atlas as atlas_mod
from fraglab.apis import make_spec
from fraglab.cli.main import app
from cli_errors import error_message
from fraglab.layouts.layout import UNKNOWN, Layout
from fraglab.layouts.spec import FragmentSpec
from fraglab.layouts.resolve import resolve_layout
from fraglab.layouts.verify import check_combination

runner = CliRunner(env={"COLUMNS": "200"})


def run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_layout_without_gpu_answers_from_the_atlas_and_says_so(no_gpu):
    result = run("layout", "--frag", "matrix_a")
    assert result.exit_code == 0, result.output
    words = " ".join(result.output.split())  # the header wraps at 80 columns
    # one short source line (issue 23): the GPU's short name, its arch, and that there is no GPU here
    assert "source: atlas (H200, sm_90; no GPU here)" in words
    assert "no usable GPU" not in words and "CuPy" not in result.output
    assert "duplicates: 256; ignored by the MMA: 256" in words
    assert "0.0/8~" in result.output  # element (0,0): lane 0 slots 0 and 8, the MMA ignores slot 8


def test_layout_json_matches_the_atlas(no_gpu, tmp_path):
    out = tmp_path / "a.json"
    result = run("layout", "--frag", "accumulator", "--shape", "m32n8k16", "--dtype", "f16", "--layout", "col",
                 "--format", "json", "--out", str(out))
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert (doc["frag"], doc["shape"], doc["dtype"], doc["layout"], doc["rows"], doc["cols"]) == \
        ("accumulator", "m32n8k16", "f16", "col", 32, 8)
    assert doc["source"]["kind"] == "atlas"
    recorded = atlas_mod.load_bundled().layout(make_spec("accumulator", "m32n8k16", "f16", "col"))
    assert Layout.from_dict(doc).same_map(recorded)


def test_layout_csv_to_stdout(no_gpu):
    result = run("layout", "--frag", "matrix_b", "--dtype", "u8", "--format", "csv")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].startswith("# fraglab") and lines[2] == "thread,slot,register,row,col,mma_reads"
    assert len(lines) == 3 + 32 * 8


def test_layout_lanes_view_and_lane_highlight(no_gpu, tmp_path):
    out = tmp_path / "t.txt"
    result = run("layout", "--frag", "matrix_a", "--dtype", "f64", "--shape", "m8n8k4", "--view", "lanes",
                 "--lane", "6", "--out", str(out))
    assert result.exit_code == 0
    text = out.read_text()
    # lane 6: g = 1, t = 2 -> A(1, 2), and only lane 6 is listed
    rows = [line.split() for line in text.splitlines()]
    assert ["6", "1,2"] in rows and not any(r and r[0] == "7" for r in rows)


@pytest.mark.parametrize("method", ["mma", "onehot"])
def test_layout_methods_from_the_atlas(no_gpu, method):
    result = run("layout", "--frag", "matrix_b", "--shape", "m32n8k16", "--method", method, "--format", "json")
    doc = json.loads(result.output)
    assert doc["method"] == method
    read = [s for s in doc["slots"] if s["mma_reads"]]
    assert len(read) == 16 * 8  # every element of the 16x8 B read exactly once, by 4 of 16 slots per lane
    assert all(s["row"] is None for s in doc["slots"] if s["mma_reads"] is False)


def test_layout_from_the_model(no_gpu):
    result = run("layout", "--frag", "accumulator", "--source", "model", "--format", "json")
    doc = json.loads(result.output)
    assert doc["source"]["kind"] == "model" and "sm_90" in doc["source"]["architectures"]


def test_source_gpu_without_gpu_fails_with_one_line(no_gpu):
    result = runner.invoke(app, ["layout", "--frag", "matrix_a", "--source", "gpu"])
    assert result.exit_code == 1
    assert result.output.strip().startswith("fraglab: error:") and "FRAGLAB_NO_GPU" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args,needle", [
    (["--frag", "matrix_c"], "invalid --frag 'matrix_c' for wmma: valid choices are matrix_a, matrix_b, accumulator"),
    (["--frag", "matrix_a", "--shape", "m16n16k32"], "invalid --shape 'm16n16k32' for wmma matrix_a: valid choices are m16n16k16, m32n8k16, m8n32k16, m16n16k8"),
    (["--frag", "matrix_a", "--dtype", "f32"], "invalid --dtype 'f32' for wmma matrix_a m16n16k16: valid choices are f16, bf16, u8, s8"),
    (["--frag", "matrix_a", "--shape", "m8n8k4", "--dtype", "f16"], "invalid --dtype 'f16' for wmma matrix_a m8n8k4: valid choices are f64"),
    (["--frag", "matrix_a", "--lane", "32"], "invalid --thread 32: valid threads are 0..31 (--lane is the same option)"),
    (["--frag", "matrix_a", "--thread", "32"], "invalid --thread 32: valid threads are 0..31"),
    (["--frag", "matrix_a", "--lane", "-1"], "invalid --thread -1"),
    (["--frag", "matrix_b", "--dtype", "b1", "--shape", "m8n8k128", "--layout", "row"], "invalid --layout 'row' for wmma matrix_b m8n8k128 b1: valid choices are col"),
    (["--mma", "--dtype", "f32"], "invalid --dtype 'f32' for --mma"),
    (["--api", "cuda"], "invalid --api 'cuda': valid choices are wmma"),  # the message goes on to list the others
    ([], "--frag is required"),
    (["--mma", "--frag", "matrix_a"], "leave out --frag"),
])
def test_bad_input_exits_2_with_one_line(no_gpu, args, needle):
    result = runner.invoke(app, ["layout", *args])
    assert result.exit_code == 2, result.output
    assert needle in error_message(result.output), result.output


def test_click_level_bad_choice_exits_2(no_gpu):
    result = runner.invoke(app, ["layout", "--frag", "matrix_a", "--source", "cloud"])
    assert result.exit_code == 2
    assert error_message(result.output) == "fraglab: error: invalid --source 'cloud': valid choices are auto, gpu, atlas, model"


def test_nothing_is_half_written_on_error(no_gpu, tmp_path):
    out = tmp_path / "x.json"
    result = runner.invoke(app, ["layout", "--frag", "matrix_a", "--source", "gpu", "--format", "json", "--out", str(out)])
    assert result.exit_code == 1 and not out.exists()


def test_list_prints_every_combination():
    result = run("list", "--format", "json")
    rows = [r for r in json.loads(result.output) if r["api"] == "wmma"]
    assert len(rows) == 88
    assert json.loads(run("list", "--format", "json", "--api", "wmma").output) == rows
    b1 = [r for r in rows if r["dtype"] == "b1"]
    assert [(r["frag"], r["layout"], r["slots"], r["min_sm"]) for r in b1] == [("matrix_a", "row", 32, 80), ("matrix_b", "col", 32, 80)]
    table = run("list")
    assert "m16n16k8" in table.output and "tf32" in table.output and "experimental" in table.output


def test_atlas_show_and_diff(tmp_path):
    assert "NVIDIA H200" in run("atlas", "show").output
    bundled = atlas_mod.load_bundled()
    same, changed = tmp_path / "same.json", tmp_path / "changed.json"
    bundled.save(same)
    doc = bundled.to_dict()
    doc["entries"]["wmma.matrix_a.m8n8k4.f64.row"]["mma"]["reads"][0] = "0"
    atlas_mod.Atlas.from_dict(doc).save(changed)
    assert runner.invoke(app, ["atlas", "diff", str(same), str(same)]).exit_code == 0
    result = runner.invoke(app, ["atlas", "diff", str(same), str(changed)])
    assert result.exit_code == 1 and "wmma.matrix_a.m8n8k4.f64.row mma: thread 0 slot 0" in result.output
    bad = runner.invoke(app, ["atlas", "diff", str(same), str(tmp_path / "nope.json")])
    assert bad.exit_code == 2 and "no atlas file" in bad.output


@pytest.mark.parametrize("command", [["atlas", "capture", "--out", "x.json"], ["verify"]])
def test_gpu_commands_without_gpu_fail_clearly(no_gpu, command):
    result = runner.invoke(app, command)
    assert result.exit_code == 1 and "needs a GPU" in result.output


def _measured(spec):
    bundled = atlas_mod.load_bundled()
    return {m: bundled.raw_layout(spec, m) for m in ("load", "mma", "onehot")}, bundled


def test_verify_agrees_on_the_atlas_itself():
    spec = make_spec("matrix_a", "m16n16k16", "f16")
    measured, bundled = _measured(spec)
    row = check_combination(spec, measured, 90, bundled)
    assert row.ok and row.duplicates == 256 and row.ignored == 256 and row.model == "agrees"


def test_verify_flags_a_method_disagreement_and_a_model_difference():
    spec = make_spec("accumulator", "m16n16k16", "f32")
    measured, bundled = _measured(spec)
    load = measured["load"]
    row_arr, col_arr = load.row.copy(), load.col.copy()
    row_arr[0, [0, 1]] = row_arr[0, [1, 0]]
    col_arr[0, [0, 1]] = col_arr[0, [1, 0]]
    measured["load"] = Layout(spec, "load", load.source, row_arr, col_arr, load.mma_reads)
    row = check_combination(spec, measured, 90, bundled)
    assert not row.ok and row.methods == "differ" and row.model == "differs" and row.atlas == "differs"
    assert any("load and onehot disagree" in p for p in row.problems)


def test_verify_compares_reads_only_where_both_methods_see_them():
    # wgmma's accumulator `mma` method writes D and cannot see reads (UNKNOWN); onehot sees every one
    bundled = atlas_mod.load_bundled()
    spec = FragmentSpec.from_key("wgmma.accumulator.m64n8k16.f32.row")
    measured = {m: bundled.raw_layout(spec, m) for m in ("onehot", "mma")}
    assert (measured["mma"].mma_reads == UNKNOWN).all() and (measured["onehot"].mma_reads == 1).all()
    assert check_combination(spec, measured, 90, bundled).ok
    onehot = measured["onehot"]
    reads = onehot.mma_reads.copy()
    reads[3, 1] = 0
    measured["mma"] = Layout(spec, "mma", onehot.source, onehot.row, onehot.col, onehot.mma_reads.copy())
    measured["onehot"] = Layout(spec, "onehot", onehot.source, onehot.row, onehot.col, reads)
    row = check_combination(spec, measured, 90, bundled)
    assert "mma and onehot disagree on what the MMA reads" in row.problems


def test_fallback_note_does_not_stick_to_the_cached_atlas(no_gpu):
    spec = make_spec("matrix_a")
    answered = resolve_layout(spec, "auto")
    assert answered.source.note == "no GPU here"
    assert atlas_mod.load_bundled().layout(spec).source.note == ""


def test_atlas_diff_against_the_bundled_atlas_names_each_changed_slot(tmp_path):
    import copy

    from fraglab.layouts.atlas import DATA_DIR

    doc = json.loads((DATA_DIR / "atlas_sm90.json").read_text())
    key = "wmma.accumulator.m16n16k16.f32.row"
    changed = copy.deepcopy(doc)
    cells = changed["entries"][key]["load"]["cells"]
    cells[3][1], cells[3][2] = cells[3][2], cells[3][1]  # swap two slots of lane 3
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(changed))
    result = runner.invoke(app, ["atlas", "diff", str(path)])
    assert result.exit_code == 1, result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith(key)]
    assert [ln.split(":")[1].strip() for ln in lines] == ["thread 3 slot 1", "thread 3 slot 2"]
    assert "B: the bundled atlas" in result.output
