"""`fraglab check` through the CLI: exit 0 equal, 1 differ, 2 bad input; 80 columns; JSON; the figure."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli_errors import error_message
from fraglab.cli.main import app
from fraglab.export.select import select_layout

runner = CliRunner(env={"COLUMNS": "80"})
MMA_A = ["--api", "mma", "--frag", "matrix_a", "--shape", "m16n8k16", "--dtype", "f16", "--source", "atlas"]
SM80_A = "((4,8),(2,2,2)):((32,1),(16,8,128))"
WRONG_A = "((4,8),(2,2,2)):((32,1),(8,16,128))"  # value factors 0 and 1 swapped: slots 1, 2 and 5, 6 move


def run(*args):
    return runner.invoke(app, list(args))


def test_equal_prints_equal_and_exits_0():
    result = run("check", "--cute", SM80_A, *MMA_A)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "equal" and "256 slots" in lines[-1]


def test_differing_slots_exit_1_in_a_table_of_80_columns():
    result = run("check", "--cute", WRONG_A, *MMA_A)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "differ: 128 of 256 slots"
    assert max(len(line) for line in lines) <= 80
    head = lines.index(next(line for line in lines if line.split()[:4] == ["thread", "warp", "lane", "slot"]))
    measured = select_layout(api="mma", frag="matrix_a", shape="m16n8k16", dtype="f16", source="atlas")
    first = lines[head + 1].split()
    thread, slot = int(first[0]), int(first[3])
    assert slot in (1, 2, 5, 6)
    assert first[5] == f"({measured.row[thread, slot]},{measured.col[thread, slot]})"
    assert "more (--format json lists every one)" in lines[-1]


def test_json_lists_every_differing_slot(tmp_path):
    out = tmp_path / "r.json"
    result = run("check", "--cute", WRONG_A, *MMA_A, "--format", "json", "--out", str(out))
    assert result.exit_code == 1
    doc = json.loads(out.read_text())
    assert doc["equal"] is False and len(doc["differing_slots"]) == 128
    assert {d["slot"] for d in doc["differing_slots"]} == {1, 2, 5, 6}
    assert set(doc["differing_slots"][0]) == {"thread", "warp", "lane", "slot", "given", "measured"}
    assert doc["measured"]["fragment"] == "mma.matrix_a.m16n8k16.f16.row"


def test_png_figure_of_the_differences(tmp_path):
    out = tmp_path / "d.png"
    result = run("check", "--cute", WRONG_A, *MMA_A, "--format", "png", "--out", str(out))
    assert result.exit_code == 1, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_table_and_header_files_round_trip_through_the_cli(tmp_path):
    table = tmp_path / "a.csv"
    assert run("layout", *MMA_A, "--format", "csv", "--out", str(table)).exit_code == 0
    assert run("check", "--table", str(table), *MMA_A).exit_code == 0
    exported = tmp_path / "a.json"
    assert run("export", "--to", "triton", *MMA_A, "--format", "json", "--out", str(exported)).exit_code == 0
    assert run("check", "--triton", str(exported), *MMA_A).exit_code == 0
    cute_file = tmp_path / "a.txt"
    assert run("export", "--to", "cute", *MMA_A, "--out", str(cute_file)).exit_code == 0
    assert run("check", "--cute", str(cute_file), *MMA_A).exit_code == 0


@pytest.mark.parametrize("args, argument", [
    (("check", *MMA_A), "--cute"),
    (("check", "--cute", "((4,8):(1,2)", *MMA_A), "--cute"),
    (("check", "--cute", SM80_A, "--api", "nosuch"), "--api"),
    (("check", "--cute", SM80_A, *MMA_A, "--format", "xml"), "--format"),
    (("check", "--triton", "{}", *MMA_A), "--triton"),
    (("check", "--table", "missing.csv", *MMA_A), "--table"),
    (("check", "--cute", SM80_A, "--name", "X", *MMA_A), "--name"),
    (("check", "--cute", SM80_A, *MMA_A, "--format", "png"), "--out"),
    (("check", "--cute", SM80_A, *MMA_A, "--compiler", "clang"), "--compiler"),
])
def test_bad_input_is_one_line_and_exit_2(args, argument):
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert argument in error_message(result.stderr) and "Traceback" not in result.output


def test_help_states_the_cute_convention():
    text = " ".join(word for word in run("check", "--help").stdout.split() if word not in ("│", "|"))  # box rules
    assert "(M,K) tile for A, (N,K) for B, (M,N) for C" in text and "column-major" in text


def test_what_takes_thread_and_the_older_lane():
    for option in ("--thread", "--lane"):
        result = run("what", "--api", "wgmma", "--frag", "accumulator", option, "100", "--slot", "3",
                     "--format", "json", "--source", "atlas")
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        assert (doc["thread"], doc["warp"], doc["lane"]) == (100, 3, 4)
