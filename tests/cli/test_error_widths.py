"""Every error fits 80 columns: each command, found by walking the app, is given a bad value for each option that
takes one (a choice, a fragment field, a number, an atlas) at COLUMNS=80 and must answer with one message under
one `fraglab: error:` head, wrapped at word boundaries, naming the option, exit 2, no traceback. Long lists of
choices are cut and say where the rest are; long arguments are shortened, a path keeping its file name."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from cli_errors import error_message
from fraglab.apis import get_family
from fraglab.cli.common import value_kind
from fraglab.cli.main import app
from fraglab.files import clean_path, clean_text

runner = CliRunner(env={"COLUMNS": "80", "FRAGLAB_NO_GPU": "1", "NO_COLOR": "1"})


def fraglab(args: list[str]):
    return runner.invoke(app, args, prog_name="fraglab")

# What each command needs besides the bad option, so that the bad value is what it stumbles on.
BASE = {
    "layout": ["--api", "mma", "--frag", "matrix_a"],
    "where": ["--api", "mma", "--frag", "matrix_a", "--row", "0", "--col", "0"],
    "what": ["--api", "mma", "--frag", "matrix_a", "--thread", "0", "--slot", "0"],
    "export": ["--to", "cute", "--api", "mma", "--frag", "matrix_a"],
    "diff": ["--api", "mma", "--frag", "matrix_a"],
    "check": ["--cute", "(8,4):(1,8)", "--api", "mma", "--frag", "matrix_a"],
    "explain": ["kernel.cu"],
    "figures": ["--out", "figs"],
    "atlas diff": ["a.json", "b.json"],
    "atlas show": ["a.json"],
}
# Per option, the family under which its value is checked (wgmma's shared-memory fields, ldmatrix's count) ...
FAMILY_FOR = {
    "--swizzle": ["--api", "wgmma", "--frag", "matrix_b", "--dtype", "f16"],
    "--major": ["--api", "wgmma", "--frag", "matrix_b", "--dtype", "f16"],
    "--num": ["--api", "ldmatrix"],
}
# ... and per command and option, the baseline where the command's own one does not reach the value.
BASE_FOR = {
    ("smem", "--fragment"): ["--layout", "(64,64):(64,1)", "--access", "ld.b128"],
    ("smem", "--tile"): ["--layout", "wgmma.128B.k"],
    **{("smem", o): ["--layout", "(64,64):(64,1)"] for o in ("--dtype", "--access", "--instruction", "--source",
                                                              "--format")},
}
# Options any text is a fine value for (a file to write, a C++ name, an include folder): nothing to refuse.
ANY_VALUE = {"--out", "--json", "--plot", "--include", "--name"}


def leaf_commands():
    found = []

    def walk(command, path):
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in sorted(subs.items()):
                walk(sub, [*path, name])
        else:
            found.append((path, command))

    walk(typer.main.get_command(app), [])
    return found


LEAVES = leaf_commands()


def bad_invocations(path, command):
    """(args, option) for every valued option of `command` given a value it cannot take."""
    key = " ".join(path)
    for param in command.params:
        if param.param_type_name != "option" or getattr(param, "is_flag", False) or param.opts[0] in ANY_VALUE:
            continue
        kind, _ = value_kind(command, param)
        bad = {"int": "x", "float": "x"}.get(kind, "bogus")
        base = BASE_FOR.get((key, param.opts[0]), BASE.get(key, []))
        if param.opts[0] in FAMILY_FOR and "--api" in base:  # its "--api mma --frag matrix_a" replaced
            at = base.index("--api")
            base = [*base[:at], *FAMILY_FOR[param.opts[0]], *base[at + 4:]]
        yield [*path, *base, param.opts[0], bad], param


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kernel.cu").write_text("__global__ void k() {}\n")
    return tmp_path


VALUED = [(p, c) for p, c in LEAVES if any(bad_invocations(p, c))]  # verify and atlas capture take no value


@pytest.mark.parametrize("path,command", VALUED, ids=[" ".join(p) for p, _ in VALUED])
def test_every_bad_value_gets_one_message_within_80_columns(path, command, in_tmp):
    for args, param in bad_invocations(path, command):
        result = fraglab(args)
        assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
        assert result.exit_code == 2, (args, result.output)
        message = error_message(result.output)  # one head, continuation lines indented, every line <= 80
        names = [*param.opts, *param.secondary_opts]
        assert any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", message) for n in names), (args, message)


@pytest.mark.parametrize("args", [["atlas", "show", "missing.json"], ["atlas", "diff", "missing.json"],
                                  ["explain", "missing.cu"]])
def test_a_missing_file_argument_gets_one_message_naming_it(args, in_tmp):
    result = fraglab(args)
    assert result.exit_code == 2, result.output
    assert args[-1] in error_message(result.output)


def _shapes(api: str, frag: str) -> list[str]:
    return list(dict.fromkeys(s.shape for s in get_family(api).specs() if s.frag == frag))


@pytest.mark.parametrize("args,choices,see", [
    (["layout", "--api", "wgmma", "--frag", "accumulator", "--shape", "m64n9k16"],
     lambda: _shapes("wgmma", "accumulator"), ["list", "--api", "wgmma"]),
    (["export", "--to", "cute", "--api", "wgmma", "--frag", "accumulator", "--shape", "m64n9k16"],
     lambda: _shapes("wgmma", "accumulator"), ["list", "--api", "wgmma"]),
    (["nonsense"], lambda: sorted(typer.main.get_command(app).commands), ["--help"]),
])
def test_a_long_list_of_choices_is_cut_and_says_where_the_rest_are(args, choices, see, in_tmp):
    result = fraglab(args)
    assert result.exit_code == 2
    message = error_message(result.output)
    valid = choices()
    shown = [c for c in valid if re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", message)]
    assert 0 < len(shown) < len(valid), message
    found = re.search(r"\.\.\. \((\d+) more; see (fraglab [^)]*)\)", message)
    assert found and int(found.group(1)) == len(valid) - len(shown), message
    assert found.group(2) == " ".join(["fraglab", *see])
    listing = fraglab(see)  # the command named shows every choice the message left out
    assert listing.exit_code == 0
    assert all(re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", listing.output) for c in valid)


def test_a_short_list_of_choices_is_shown_whole_and_once(in_tmp):
    message = error_message(fraglab(["layout", "--api", "mma", "--frag", "matrix_a", "--dtype", "bogus"]).output)
    for dtype in ("f16", "bf16", "s8", "u8"):
        assert len(re.findall(rf"(?<![\w-]){dtype}(?![\w-])", message)) == 1, message
    assert "more; see" not in message


def test_a_long_path_keeps_its_file_name_and_a_long_word_its_head(in_tmp):
    folder = in_tmp / ("deep" * 30) / "er"
    folder.mkdir(parents=True)
    path = folder / "atlas_sm90.json"
    message = error_message(fraglab(["layout", "--frag", "matrix_a", "--atlas", str(path)]).output)
    assert "atlas_sm90.json" in message and str(in_tmp)[:10] in message and "\u2026" in message, message
    assert "deep" * 30 not in message
    word = "head" + "x" * 500 + "tail"
    message = error_message(fraglab(["layout", "--frag", word]).output)
    assert "tail" not in message and "\u2026" in message, message
    # the shortened argument keeps both quotes and is never broken across lines (the unwrapped message has no
    # space inside it)
    assert re.search(r"'headx+\u2026'", message), message


@pytest.mark.parametrize("text,limit", [("/very/long/" + "folder/" * 20 + "atlas_sm90.json", 40),
                                        ("C:\\data\\" + "sub\\" * 30 + "atlas.json", 30),
                                        ("/nowhere/" + "y" * 5000, 64)])
def test_clean_path_keeps_the_tail_within_the_limit(text, limit):
    short = clean_path(text, limit)
    assert len(short) == limit and short.count("\u2026") == 1
    head, tail = short.split("\u2026")
    assert text.startswith(head) and text.endswith(tail) and len(head) >= 1
    name = re.split(r"[/\\]", text)[-1]
    assert tail.endswith(name) if len(name) < limit // 2 else tail == text[-len(tail):]


def test_clean_path_leaves_short_paths_and_words_alone_and_cleans_them():
    assert clean_path("a/b.json", 40) == "a/b.json"
    assert clean_path("x" * 50, 20) == clean_text("x" * 50, 20) == "x" * 19 + "\u2026"
    assert "\x1b" not in clean_path("/tmp/\x1b[31mred/" + "z" * 100 + "/a.json", 30)
