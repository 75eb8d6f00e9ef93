"""Two texts that ran past (or broke inside a phrase at) 80 columns: NVRTC's own log printed under a CompileError,
and the header and legend above a layout's table. At COLUMNS=80 every line fits, nothing of the log is lost,
no control character reaches the terminal, and the header's phrases are broken between, never inside."""

import re

import pytest
from typer.testing import CliRunner

from fraglab.cli.common import COMPILE_LOG_HEAD, compile_log_text
from fraglab.cli.main import app
from fraglab.errors import CompileError

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what clean_text turns into '?' (newline aside)
PATH = "/home/someone/a/rather/deep/checkout/of/fraglab/" + "nested/" * 12 + "kernels/gemm/wgmma.cu"
LOG = "\n".join([
    "",
    f'{PATH}(412): error: identifier "fraglab_epilogue_with_a_name_long_enough_to_matter" is undefined',
    "          acc = fraglab_epilogue_with_a_name_long_enough_to_matter(acc, bias[col], alpha, beta, slope);",
    "                ^",
    f"{PATH}(530): warning #177-D: variable \"unused\" was declared but never referenced\x1b]0;owned\x07\x1b[2J",
    "\tshort line with a tab",
    "",
    '2 errors detected in the compilation of "wgmma.cu".',
    "",
])


def _compile_error_output(monkeypatch, columns="80"):
    from fraglab.bench import wmma_suite
    from fraglab.runtime import gpu

    def refused(sizes, **kw):
        raise CompileError("NVRTC could not compile fraglab/gemm/wgmma.cu", log=LOG)

    monkeypatch.setattr(gpu, "cupy", lambda: object())
    monkeypatch.setattr(wmma_suite, "run_suite", refused)
    result = CliRunner(env={"COLUMNS": columns, "NO_COLOR": "1"}).invoke(app, ["gemm", "--size", "64"])
    assert result.exit_code == 1, result.output
    return result.output


def _log_part(output: str) -> list[str]:
    lines = output.splitlines()
    return lines[lines.index(COMPILE_LOG_HEAD) + 1:]


def _squeezed(text: str) -> str:
    return "".join(text.split())


def test_the_compile_log_fits_80_columns_and_keeps_every_character(monkeypatch):
    output = _compile_error_output(monkeypatch)
    assert output.startswith("fraglab: error: NVRTC could not compile fraglab/gemm/wgmma.cu")
    assert all(len(line) <= 80 for line in output.splitlines()), [l for l in output.splitlines() if len(l) > 80]
    assert not CONTROL.search(output), repr(output)
    shown = _log_part(output)
    # nothing dropped: the log's characters, control characters as '?', only line breaks and indents added
    assert _squeezed("\n".join(shown)) == _squeezed(CONTROL.sub("?", LOG))
    assert "owned" in output and "2 errors detected" in output


def test_each_log_line_starts_a_line_and_its_wrapped_rest_is_indented(monkeypatch):
    shown = _log_part(_compile_error_output(monkeypatch))
    starts = [i for i, line in enumerate(shown) if line and not line.startswith(" ")]
    # the two long diagnostics and the summary each begin a line (grep PATH / 'errors detected' finds them)
    assert [shown[i][:12] for i in starts] == [PATH[:12], PATH[:12], "2 errors det"]
    assert all(line.startswith("  ") for line in shown[starts[0] + 1:starts[1]])
    assert all(line.startswith("  ") for line in shown[starts[1] + 1:starts[2]] if line)
    # a short line is kept as it was, its indentation too (the caret still points under the same column)
    assert "                ^" in shown
    assert " " * 8 + "short line with a tab" in shown   # the tab expanded to column 8, not turned into "?"


@pytest.mark.parametrize("width", [80, 60, 40])
def test_compile_log_text_wraps_to_narrower_widths_too(width):
    text = compile_log_text(LOG, width=width)
    lines = text.splitlines()
    assert lines[0] == COMPILE_LOG_HEAD and all(len(line) <= width for line in lines)
    assert _squeezed("\n".join(lines[1:])) == _squeezed(CONTROL.sub("?", LOG))
    assert lines[1] != "" and lines[-1] != ""   # the log's blank first and last lines are not printed


def test_a_compile_error_with_no_log_prints_no_log_head(monkeypatch):
    from fraglab.bench import wmma_suite
    from fraglab.runtime import gpu

    def refused(sizes, **kw):
        raise CompileError("NVRTC could not compile fraglab/gemm/wgmma.cu")

    monkeypatch.setattr(gpu, "cupy", lambda: object())
    monkeypatch.setattr(wmma_suite, "run_suite", refused)
    result = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["gemm", "--size", "64"])
    assert result.exit_code == 1 and COMPILE_LOG_HEAD not in result.output


# ---- the layout table's header and legend ----

TABLE_START = re.compile(r"(r\\c|thread|columns \d|slots \d)|\s+x0\b")   # the first line under the legend
HEADER_CASES = [
    # (arguments, phrases that must each stand whole on one line)
    (["--api", "ldmatrix", "--num", "4", "--trans"],
     ["slots: 256 (8 per thread x 32 threads);", "ignored by the MMA: n/a (no MMA reads this fragment);",
      "elements with no holder: 0"]),
    (["--api", "mma", "--shape", "m16n8k16", "--frag", "matrix_a", "--view", "lanes"],
     ["ignored by the MMA: 0;", "cell = row,col of x[slot] in that thread;",
      "rN under the slot = the 32-bit register it is packed in"]),
    (["--api", "wgmma", "--frag", "accumulator", "--shape", "m64n256k16"],
     ["slots: 16384 (128 per thread x 128 threads);", "elements with no holder: 0"]),
    (["--api", "mma", "--shape", "m16n8k16", "--frag", "matrix_a", "--source", "model", "--thread", "3"],
     ["ignored by the MMA: unknown (only a GPU can tell);", "(a model, not a measurement)",
      "one map for every method)", "cell = thread.slot: x[slot] of that thread holds the element;",
      "'*' thread 3 (--thread)"]),
]


@pytest.mark.parametrize("args,phrases", HEADER_CASES, ids=[" ".join(args) for args, _ in HEADER_CASES])
@pytest.mark.parametrize("columns", ["80", "60"])
def test_the_layout_header_breaks_between_phrases(no_gpu, args, phrases, columns):
    result = CliRunner(env={"COLUMNS": columns, "NO_COLOR": "1"}).invoke(app, ["layout", *args])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    width = int(columns)
    assert all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]
    head = lines[:next(i for i, line in enumerate(lines) if TABLE_START.match(line))]
    for phrase in phrases:
        if len(phrase) <= width:
            assert any(phrase in line for line in head), (phrase, head)
    assert not any(line != line.rstrip() for line in head)   # no line ends in the space of a broken phrase
    words = " ".join(" ".join(head).split())
    assert all(phrase in words for phrase in phrases)   # every phrase whole once the lines are joined
