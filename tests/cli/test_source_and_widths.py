"""Issue 23 re-checked: every generated form carries the same one short source line (the header's), a bad
--palette is refused whatever the format, and atlas diff's A/B lines fit 80 columns."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_errors import error_message
from fraglab.cli.main import app

runner = CliRunner(env={"COLUMNS": "80", "FRAGLAB_NO_GPU": "1", "NO_COLOR": "1"})
BUNDLED = Path(__file__).resolve().parents[2] / "fraglab" / "data" / "atlas_sm90.json"


def _source_of(text: str, marker: str) -> str:
    found = [line for line in text.splitlines() if line.lower().startswith(marker)]
    assert len(found) == 1, text
    return found[0][len(marker):].strip()


@pytest.mark.parametrize("api,frag", [("wmma", "accumulator"), ("mma", "matrix_a")])
def test_cute_triton_header_and_diff_name_the_source_alike(api, frag):
    fragment = ["--api", api, "--frag", frag]
    header = runner.invoke(app, ["export", "--to", "header", *fragment])
    cute = runner.invoke(app, ["export", "--to", "cute", *fragment])
    triton = runner.invoke(app, ["export", "--to", "triton", *fragment])
    diff = runner.invoke(app, ["diff", *fragment])
    assert {r.exit_code for r in (header, cute, triton, diff)} == {0}, (cute.output, diff.output)
    source = _source_of(header.stdout, "// source:")
    assert re.fullmatch(r"atlas \([^()]+, sm_\d+\)", source), source  # short: GPU and arch, no date, no note
    assert _source_of(cute.stdout, "// source:") == source
    assert _source_of(triton.stdout, "# source:") == source
    assert diff.stdout.splitlines()[0].endswith("; " + source)


def test_a_bad_palette_is_refused_for_a_table_too():
    result = runner.invoke(app, ["layout", "--frag", "matrix_a", "--palette", "rainbow"])
    assert result.exit_code == 2
    message = error_message(result.output)
    assert "--palette" in message and "okabe-ito" in message


def test_atlas_diff_names_both_atlases_within_80_columns(tmp_path):
    # README's example, as a reader runs it: a fresh process (this one's cached bundled atlas may have been
    # handled by other tests)
    copy = tmp_path / "my_gpu.json"
    shutil.copy(BUNDLED, copy)
    env = {**os.environ, "COLUMNS": "80", "FRAGLAB_NO_GPU": "1", "NO_COLOR": "1"}
    for args in (["atlas", "diff", str(copy)], ["atlas", "diff", str(copy), str(copy)]):
        result = subprocess.run([sys.executable, "-m", "fraglab", *args], capture_output=True, text=True, env=env,
                                cwd=tmp_path, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        assert all(len(line) <= 80 for line in result.stdout.splitlines()), result.stdout
        assert result.stdout.startswith("A: ") and "\nB: " in result.stdout
        assert result.stdout.rstrip().endswith("no differences")
