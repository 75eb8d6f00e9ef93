"""`fraglab list`, `atlas show` and `layout` (grid and lanes) as a user runs them: through typer's CliRunner
(output captured, i.e. piped) and through a subprocess with the environments that break terminals."""

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner
from view_checks import ANSI, assert_fits, read_bands

from fraglab.apis import FAMILIES
from fraglab.cli.main import app


def _layout_args(spec) -> list[str]:
    args = ["layout", "--api", spec.api, "--frag", spec.frag, "--shape", spec.shape, "--dtype", spec.dtype,
            "--layout", spec.layout]
    if spec.num is not None:
        args += ["--num", str(spec.num)]
    if spec.trans is not None:
        args += ["--trans" if spec.trans else "--no-trans"]
    for name in ("swizzle", "major"):
        if getattr(spec, name) is not None:
            args += [f"--{name}", getattr(spec, name)]
    return args


def _first_and_widest(family):
    specs = family.specs()
    return [specs[0], max(specs, key=lambda s: (s.cols, s.rows))]


CASES = [(family.api, spec) for family in FAMILIES.values() for spec in _first_and_widest(family)]
IDS = [spec.key for _, spec in CASES]


def invoke(args, **env):
    runner = CliRunner(env={"FRAGLAB_NO_GPU": "1", "NO_COLOR": None, "FORCE_COLOR": None, **env})
    result = runner.invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("columns", ["80", "0", "-7", "junk", "200"])
def test_list_fits_80_columns_when_piped_whatever_columns_says(no_gpu, columns):
    text = invoke(["list"], COLUMNS=columns)
    assert_fits(text, 80)
    for family in FAMILIES.values():
        assert f"--api {family.api} " in text
        assert {s.shape for s in family.specs()} <= set(text.split())


def test_atlas_show_fits_80_columns(no_gpu):
    text = invoke(["atlas", "show"], COLUMNS="200")
    assert_fits(text, 80)
    assert "slots" in text and "methods" in text


@pytest.mark.parametrize("api, spec", CASES, ids=IDS)
@pytest.mark.parametrize("columns, width", [("80", 80), ("60", 60), ("junk", 80)])
def test_grid_from_the_cli_fits_and_keeps_every_label(no_gpu, api, spec, columns, width):
    text = invoke([*_layout_args(spec), "--source", "model"], COLUMNS=columns)
    assert_fits(text, width)
    bands = read_bands(text, "r\\c")
    assert [c for cols, _ in bands for c in cols] == [str(c) for c in range(spec.cols)]
    assert all(rows == [str(r) for r in range(spec.rows)] for _, rows in bands)
    words = " ".join(text.split())
    expected = "n/a" if api in {"ldmatrix", "stmatrix", "movmatrix", "tcgen05"} else "unknown"  # data movement
    assert f"ignored by the MMA: {expected}" in words and "ignored by the MMA: 0" not in words


@pytest.mark.parametrize("api, spec", CASES, ids=IDS)
def test_lanes_view_from_the_cli_fits(no_gpu, api, spec):
    text = invoke([*_layout_args(spec), "--source", "model", "--view", "lanes"], COLUMNS="80")
    assert_fits(text, 80)
    bands = read_bands(text, "thread")
    threads = FAMILIES[api].threads
    assert all(rows == [str(t) for t in range(threads)] for _, rows in bands)


@pytest.mark.parametrize("api, spec", CASES[::2], ids=IDS[::2])
def test_lane_marker_shows_without_colour(no_gpu, api, spec):
    lane = FAMILIES[api].threads - 1
    text = invoke([*_layout_args(spec), "--source", "model", "--thread", str(lane)], NO_COLOR="1", FORCE_COLOR="1")
    assert not ANSI.search(text)
    assert f"*{lane}." in text and f"'*' thread {lane} (--thread)" in " ".join(text.split())


def test_forced_colour_without_no_color_does_colour(no_gpu):
    text = invoke(["layout", "--frag", "accumulator", "--source", "model", "--lane", "3"], FORCE_COLOR="1")
    assert ANSI.search(text)  # so the NO_COLOR check above can fail


def test_table_written_to_a_file_fits_80_columns(no_gpu, tmp_path):
    out = tmp_path / "grid.txt"
    invoke(["layout", "--api", "wgmma", "--frag", "accumulator", "--shape", "m64n256k16", "--dtype", "f32",
            "--source", "model", "--out", str(out)], COLUMNS="300")
    text = out.read_text()
    assert_fits(text, 80)
    assert not ANSI.search(text)
    assert [c for cols, _ in read_bands(text, "r\\c") for c in cols] == [str(c) for c in range(256)]


# ---- a real process: the encodings and locales a terminal may have -------------------------------------
def _run(args, **env):
    dropped = ("LC_", "LANG", "PYTHONIOENCODING", "PYTHONUTF8", "NO_COLOR", "FORCE_COLOR")
    base = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    base.update({"FRAGLAB_NO_GPU": "1", "COLUMNS": "80", "LANG": "C.UTF-8", **env})
    done = subprocess.run([sys.executable, "-m", "fraglab", *args], env=base, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-600:]
    assert b"Traceback" not in done.stderr
    return done.stdout


ASCII_ENVS = [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C"}, {"LANG": "C"}]
ENV_IDS = ["PYTHONIOENCODING=ascii", "LC_ALL=C", "LANG=C"]


@pytest.mark.parametrize("env", ASCII_ENVS, ids=ENV_IDS)
def test_list_in_an_ascii_environment_is_ascii(env):
    out = _run(["list"], **env)
    text = out.decode("ascii")  # raises on any non-ASCII byte
    assert_fits(text, 80)
    assert "---" in text and "88 nvcuda::wmma fragments" in text


@pytest.mark.parametrize("env", ASCII_ENVS, ids=ENV_IDS)
def test_grid_and_atlas_in_an_ascii_environment_are_ascii(env):
    text = _run(["layout", "--frag", "matrix_a", "--lane", "5"], **env).decode("ascii")
    assert_fits(text, 80)
    assert "*5." in text
    assert_fits(_run(["atlas", "show"], **env).decode("ascii"), 80)


def test_every_family_in_an_ascii_pipe():
    for api, spec in CASES[::2]:
        text = _run([*_layout_args(spec), "--source", "model", "--view", "lanes"],
                    PYTHONIOENCODING="ascii").decode("ascii")
        assert_fits(text, 80)


def test_utf8_environment_keeps_box_drawing():
    text = _run(["list", "--api", "mma"]).decode("utf-8")
    assert "\u2500" in text and not ANSI.search(text)


def test_no_color_in_a_process_forced_to_colour():
    out = _run(["layout", "--frag", "matrix_b", "--lane", "2"], NO_COLOR="1", FORCE_COLOR="1")
    assert b"\x1b" not in out and b"*2." in out


@pytest.mark.parametrize("args", [["--help"], ["layout", "--help"], ["atlas", "show", "--help"]])
def test_help_in_a_c_locale_is_ascii(args):
    text = _run(args, LC_ALL="C").decode("ascii")
    assert "Usage:" in text
    assert_fits(text, 80)


@pytest.mark.parametrize("command", [["list"], ["atlas", "show"]])
def test_narrower_than_a_table_prints_rows_as_lines_with_names_whole(no_gpu, command):
    text = invoke(command, COLUMNS="60")  # too narrow for the tables side by side: no name may be cut
    assert_fits(text, 60)
    words = set(text.replace(";", " ").split())
    assert {"matrix_a", "matrix_b", "accumulator"} <= words
    for family in FAMILIES.values():
        if command == ["list"]:
            assert {s.shape for s in family.specs()} <= words
