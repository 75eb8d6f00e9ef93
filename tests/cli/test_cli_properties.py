"""Property test over the choice sets of every command: any mix of valid-looking choices ends cleanly.

Each command gets random combinations of the values its options accept somewhere (valid for some family
or operand, so most combinations make no sense together). Whatever the mix, the command must answer
(exit 0) or refuse in one line (exit 2 for bad input, 1 for a refused GPU/check): never a traceback.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fraglab.apis import FAMILIES, catalogue
from fraglab.cli.main import app
from cli_errors import error_message

runner = CliRunner(env={"COLUMNS": "100", "FRAGLAB_NO_GPU": "1"})
SPECS = catalogue()


def _values(name):
    found = sorted({str(getattr(s, name)) for s in SPECS if getattr(s, name) is not None})
    return found + ["bogus"]


SELECTION = {
    "--api": sorted(FAMILIES) + ["bogus"],
    "--frag": _values("frag"),
    "--shape": _values("shape") + ["m16n16", "m0n0k0"],
    "--dtype": _values("dtype"),
    "--layout": _values("layout"),
    "--num": ["1", "2", "3", "4", "8", "x"],
    "--swizzle": _values("swizzle"),
    "--major": _values("major"),
    "--source": ["auto", "atlas", "model", "gpu", "cloud"],
    "--method": ["load", "mma", "onehot", "store", "codes", "bogus"],
}
FLAGS = ["--trans", "--no-trans", "--mma"]
COMMAND_OPTIONS = {
    "layout": {**SELECTION, "--format": ["table", "json", "csv", "txt"], "--view": ["grid", "lanes", "cells"],
               "--lane": ["0", "5", "31", "127", "128", "-1"], "--color-by": ["lane", "slot", "register", "warp"]},
    "list": {"--api": SELECTION["--api"], "--format": ["table", "json", "csv"]},
    "gemm": {"--size": ["1", "64", "0", "-3", "x"], "--act": ["none", "relu", "gelu", "silu", "bogus"],
             "--bias": ["none", "per_n", "per_m", "bogus"], "--dtype": ["f16", "bf16", "f32", "e4m3"],
             "--out-dtype": ["f32", "f16", "bf16", "f64"]},
}
if "export" in [c.name for c in app.registered_commands]:
    COMMAND_OPTIONS["export"] = {**SELECTION, "--to": ["cute", "triton", "header", "latex"],
                                 "--format": ["text", "json", "bogus"]}
    COMMAND_OPTIONS["where"] = {**SELECTION, "--row": ["0", "3", "63", "300", "-1"], "--col": ["0", "7", "999"]}
    COMMAND_OPTIONS["what"] = {**SELECTION, "--lane": ["0", "31", "127", "500"], "--slot": ["0", "3", "127", "-2"]}


@st.composite
def invocations(draw):
    command = draw(st.sampled_from(sorted(COMMAND_OPTIONS)))
    options = COMMAND_OPTIONS[command]
    chosen = draw(st.lists(st.sampled_from(sorted(options)), max_size=6, unique=True))
    args = [command]
    for name in chosen:
        args += [name, draw(st.sampled_from(options[name]))]
    if command in ("layout", "export", "where", "what"):
        args += draw(st.lists(st.sampled_from(FLAGS), max_size=1))
    return args


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(invocations())
def test_every_combination_answers_or_refuses_in_one_line(args):
    result = runner.invoke(app, args)
    assert result.exit_code in (0, 1, 2), (args, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert "Traceback" not in result.output, (args, result.output)
    if result.exit_code != 0:
        lines = [ln for ln in result.output.splitlines() if ln.strip()]
        ours = [ln for ln in lines if ln.startswith("fraglab: error:")]
        # either our one message, or click's usage box for a malformed option (it names the option)
        assert len(ours) == 1 or any("Invalid value" in ln or "No such option" in ln or "Missing" in ln
                                     or "requires an argument" in ln for ln in lines), (args, result.output)
        if ours:
            assert error_message(result.output), (args, result.output)


@pytest.mark.parametrize("args", [
    ["layout", "--mma", "--dtype", "f32"],           # was a KeyError
    ["layout", "--major", "k", "--mma"],             # was a TypeError in the WMMA triple
    ["layout", "--api", "wgmma", "--frag", "accumulator", "--num", "4"],
    ["layout", "--api", "ldmatrix", "--swizzle", "128B"],
    ["layout", "--frag", "matrix_a", "--lane", "32"],
])
def test_known_nonsense_gets_one_line_and_exit_2(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and error_message(result.output), result.output
