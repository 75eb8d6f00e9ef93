"""Help and errors in fraglab's own words at 80 columns, under whatever typer is installed (the lowest-versions CI
run gives the lowest supported one): every command's --help, found by walking the app (commands added later
are covered), and the parser's errors for every valued option."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from cli_errors import error_message
from fraglab.cli.common import option_row, value_kind
from fraglab.cli.main import app

runner = CliRunner(env={"COLUMNS": "80", "FRAGLAB_NO_GPU": "1", "NO_COLOR": "1"})
VALIDATION_WORDS = ("Value error", "Input should be", "unable to parse", "is not one of", "is not a valid",
                    "Invalid value for", "Try '")


def commands():
    """(path, click command) of every command and group, found by walking the app."""
    found = []

    def walk(command, path):
        found.append((path, command))
        for name, sub in sorted((getattr(command, "commands", None) or {}).items()):
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


COMMANDS = commands()
IDS = [" ".join(p) or "fraglab" for p, _ in COMMANDS]


@pytest.mark.parametrize("path,command", COMMANDS, ids=IDS)
def test_help_fits_80_columns_in_fraglabs_words(path, command):
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    text = result.output
    assert text.startswith("Usage: ")
    for line in text.splitlines():
        assert len(line) <= 80, line
    assert not re.search(r"[\u2500-\u257f]", text)  # no boxes drawn around panels
    words = " ".join(text.split())
    for param in command.params:
        if param.param_type_name != "option" or getattr(param, "hidden", False):
            continue
        kind, choices = value_kind(command, param)
        # every option name and choice appears whole: nothing is broken inside a word
        for name in [*param.opts, *param.secondary_opts]:
            assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", words), name
        for choice in choices:
            assert re.search(rf"(?<![\w-]){re.escape(choice)}(?![\w-])", words), choice
        line = next(l for l in text.splitlines() if l.strip().startswith(param.opts[0]))
        after = line.strip()[len(" / ".join([", ".join(param.opts)] + [", ".join(param.secondary_opts)] * bool(param.secondary_opts))):]
        assert not after.strip().startswith("<"), line  # typer's <type> or <a|b|c> metavars
        if kind == "flag":  # a flag shows no value
            assert not re.match(r"\s+[A-Z]+\b(?![a-z])", after) or after.strip()[:1].islower(), line
        else:
            assert re.match(r" (N|X|PATH|TEXT|WORD)\b", after), line
        if choices:  # listed once: either the option's own help names them, or one '(one of: ...)' does
            description = option_row(command, param)[1]
            assert description.count(choices[-1]) >= 1
            assert description.count("(one of:") <= 1


@pytest.mark.parametrize("path,command", [c for c in COMMANDS if not getattr(c[1], "commands", None)],
                         ids=[i for i, c in zip(IDS, COMMANDS) if not getattr(c[1], "commands", None)])
def test_bad_values_are_refused_in_one_line_in_fraglabs_words(path, command):
    for param in command.params:
        if param.param_type_name != "option" or getattr(param, "is_flag", False):
            continue
        kind, choices = value_kind(command, param)
        bad = {"int": ["4.0", "x", "1e3"], "float": ["x"], "choice": ["bogus"]}.get(kind, [])
        for value in bad:
            result = runner.invoke(app, [*path, param.opts[0], value])
            assert result.exit_code == 2, (path, param.opts[0], value, result.output)
            message = error_message(result.output)
            assert message.startswith(f"fraglab: error: invalid {param.opts[0]} '{value}'"), message
            assert not any(w in result.output for w in VALIDATION_WORDS), result.output
            if choices:
                assert result.output.count(choices[0]) == 1 and all(c in result.output for c in choices)


def test_num_4_point_0_is_refused_not_taken_as_4():
    result = runner.invoke(app, ["layout", "--api", "ldmatrix", "--num", "4.0"])
    assert result.exit_code == 2
    assert result.output == "fraglab: error: invalid --num '4.0': a whole number is needed, e.g. 4\n"


@pytest.mark.parametrize("args,expected", [
    (["layout", "--nmu", "3"], "fraglab: error: unknown option '--nmu' for "),
    (["export"], "fraglab: error: missing --to: one of cute, triton, header, tikz"),
    (["layout", "--out"], "fraglab: error: --out needs a value"),
    (["nonsense"], "fraglab: error: unknown command 'nonsense': valid commands are "),
    (["layout", "stray"], "fraglab: error: unexpected argument 'stray'"),
])
def test_parser_errors_are_one_line_in_fraglabs_words(args, expected):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert error_message(result.output).startswith(expected), result.output
    assert not any(w in result.output for w in VALIDATION_WORDS)


@pytest.mark.parametrize("args", [["layout", "--frag", "x" * 5000], ["layout", "--frag", "matrix_a", "--atlas", "x" * 5000],
                                  ["atlas", "show", "/nowhere/" + "y" * 5000], ["export", "--to", "cute", "--name", "z" * 5000]])
def test_a_long_argument_is_shortened_in_the_error(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and error_message(result.output), result.output[:300]
    assert len(result.output) < 300 and not any(c * 65 in result.output for c in "xyz")


@pytest.mark.parametrize("args", [["verify"], ["gemm", "--size", "64"], ["atlas", "capture", "--out", "x.json"]])
def test_gpu_errors_fit_80_columns_and_verbose_says_why(args):
    plain = CliRunner(env={"COLUMNS": "80"}).invoke(app, args)
    assert plain.exit_code == 1 and plain.output.count("\n") == 1 and len(plain.output.rstrip("\n")) <= 80
    assert plain.output.startswith("fraglab: error: ")


def test_version_and_verbose_are_flags():
    result = runner.invoke(app, ["--help"])
    assert re.search(r"^  --version +Print", result.output, re.M)
    assert re.search(r"^  --verbose +Say", result.output, re.M)
    assert runner.invoke(app, ["--version"]).output.startswith("fraglab ")


def _on_a_tty(args: list[str]) -> bytes:
    """What a command writes to a terminal (a pty), with NO_COLOR set."""
    import pty

    env = {**os.environ, "NO_COLOR": "1", "FRAGLAB_NO_GPU": "1", "COLUMNS": "80", "TERM": "xterm"}
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "fraglab", *args], stdin=follower, stdout=follower,
                            stderr=follower, env=env, close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks)


@pytest.mark.parametrize("args", [["peak"], ["gemm", "--size", "64"], ["gemm", "--wgmma"]])
def test_no_cursor_escapes_before_a_one_line_error_on_a_tty(args):
    if sys.platform == "win32":
        pytest.skip("no pty on Windows")
    out = _on_a_tty(args)
    assert b"\x1b" not in out, out
    assert out.strip().startswith(b"fraglab: error: ") and out.strip().count(b"\n") == 0, out


@pytest.mark.parametrize("args", [
    ["what", "--frag", "accumulator", "--thread", "5", "--slot", "3"],
    ["what", "--api", "wgmma", "--frag", "accumulator", "--shape", "m64n256k16", "--thread", "100", "--slot", "3"],
    ["where", "--api", "wgmma", "--frag", "accumulator", "--shape", "m64n256k16", "--row", "63", "--col", "255"],
])
def test_answers_fit_80_columns(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 80 for line in result.output.splitlines()), result.output
    assert "holds" in result.output or "held by" in result.output
