"""Every fraglab command in README.md and docs/*.md that runs without a GPU is run, and where the docs show its
output (a `$ fraglab ...` line followed by what it prints) the output is compared with what the docs show.

The rule for what is run, so that commands added to the docs later are covered or skipped for a stated reason:
- every line of a fenced block that starts with `fraglab ` or `$ fraglab ` is a command (a trailing `\\`
  continues it; a `# ...` comment after it is dropped);
- a command is skipped when its subcommand needs a GPU by nature (NEEDS_GPU below), is too slow for CI (SLOW),
  reads an input file that is not there (an atlas captured on a GPU, a layout of the reader's), when the docs mark it
  with `<!-- docs-test: skip REASON -->` on the line before its block, or when, run here with FRAGLAB_NO_GPU=1,
  it refuses with fraglab's no-GPU error (exit 1, "no usable GPU" / "needs a GPU"): the skip names the reason;
- every other command must end with exit 0, or 1 with no error line (diff-like commands report differences
  that way), never with a usage error (2) or a traceback;
- shown output is compared line by line, in order: each non-empty line the docs show must match a line of the
  real output, where `...` in the docs stands for any text (whitespace runs compare equal).
Commands run in one temporary folder per document, in document order, with `my_gpu.json` there (a copy of the
bundled WMMA atlas, standing for what `fraglab atlas capture` writes)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NEEDS_GPU = ("gemm", "peak", "verify", "atlas capture", "bench")
# Runnable offline but too slow for every CI run, each with where it is tested instead.
SLOW = {"figures": "draws every fragment's figure (minutes); tests/show and tests/cli/test_cli_figures cover it"}
OUTPUT_OPTIONS = ("--out", "--json", "--plot")
SKIP_MARK = re.compile(r"<!--\s*docs-test:\s*skip\s*(.*?)\s*-->")
GPU_REFUSAL = re.compile(r"fraglab: error: .*(no usable GPU|needs a GPU)")


@dataclass
class DocCommand:
    doc: Path
    line: int
    text: str
    shown: list[str] = field(default_factory=list)  # output lines the docs show after a `$ ` command
    skip: str = ""


def _commands(doc: Path) -> list[DocCommand]:
    lines = doc.read_text().splitlines()
    found: list[DocCommand] = []
    in_block, skip_reason, i = False, "", 0
    while i < len(lines):
        line = lines[i]
        if line.strip().startswith("```"):
            if not in_block:
                previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
                mark = SKIP_MARK.search(previous)
                skip_reason = mark.group(1) or "marked in the docs" if mark else ""
            in_block = not in_block
            i += 1
            continue
        stripped = line.strip()
        if in_block and (stripped.startswith("fraglab ") or stripped.startswith("$ fraglab ")):
            start = i
            text = stripped[2:] if stripped.startswith("$ ") else stripped
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1] + " " + lines[i].strip()
            command = DocCommand(doc, start + 1, text.split("  #")[0].split(" # ")[0].strip(), skip=skip_reason)
            if stripped.startswith("$ "):
                while i + 1 < len(lines) and not lines[i + 1].strip().startswith(("```", "$ ")):
                    i += 1
                    command.shown.append(lines[i])
            found.append(command)
        i += 1
    return found


def _by_doc() -> dict[Path, list[DocCommand]]:
    return {doc: _commands(doc) for doc in DOCS if doc.exists()}


COMMANDS = _by_doc()


def _subcommand(text: str) -> str:
    words = [w for w in text.split()[1:] if not w.startswith("-")]
    return " ".join(words[:2])


def _needs_gpu(command: DocCommand, cwd: Path) -> str:
    """Why the command cannot run here (empty when it can): the rule in the module's docstring."""
    import shlex

    sub = _subcommand(command.text)
    for name in NEEDS_GPU:
        if sub == name or sub.startswith(name + " ") or command.text.split()[1:2] == [name]:
            return f"`fraglab {name}` needs a GPU"
    for name, why in SLOW.items():
        if command.text.split()[1:2] == [name]:
            return why
    if "--source gpu" in command.text:
        return "--source gpu needs a GPU"
    words = shlex.split(command.text)
    for k, word in enumerate(words[1:], 1):
        previous = words[k - 1]
        is_file = re.search(r"\.(json|gz|csv|txt|cuh|h|hpp|py|tex)$", word) and previous not in OUTPUT_OPTIONS
        if is_file and previous != words[0] and not (cwd / word).exists():
            return f"reads {word}, a file of the reader's own (an atlas from a GPU, a layout they wrote)"
    return ""


def _matches(shown: str, actual: str) -> bool:
    pieces = [" ".join(p.split()) for p in shown.split("...")]
    text = " ".join(actual.split())
    pos = 0
    for k, piece in enumerate(pieces):
        if not piece:
            continue
        found = text.find(piece, pos) if k else (0 if text.startswith(piece) else -1)
        if found < 0:
            return False
        pos = found + len(piece)
    return not pieces[-1] or text.endswith(pieces[-1]) or len(pieces) == 1 and text == pieces[0]


def compare(shown: list[str], actual: str) -> list[str]:
    """The shown lines that match no line of `actual` at or after the previous match."""
    real = actual.splitlines()
    missing, at = [], 0
    for line in shown:
        if not line.strip() or line.strip() == "...":
            continue
        hit = next((k for k in range(at, len(real)) if _matches(line, real[k])), None)
        if hit is None:
            missing.append(line)
        else:
            at = hit + 1
    return missing


def run(text: str, cwd: Path) -> subprocess.CompletedProcess:
    import shlex

    args = shlex.split(text)[1:]
    env = {**os.environ, "COLUMNS": "80", "FRAGLAB_NO_GPU": "1", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "fraglab", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_the_docs_hold_commands():
    assert sum(len(c) for c in COMMANDS.values()) > 20


def test_matcher():
    assert _matches("A: wmma ... (atlas H200)", "A: wmma accumulator m16n16k16 (atlas  H200)")
    assert not _matches("A: wmma ... (atlas H100)", "A: wmma accumulator m16n16k16 (atlas H200)")
    assert compare(["a", "...", "c"], "a\nb\nc") == [] and compare(["c", "a"], "a\nc") == ["a"]


@pytest.mark.parametrize("doc", sorted(COMMANDS), ids=lambda d: d.name)
def test_documented_commands_run_and_print_what_the_docs_show(doc, tmp_path):
    shutil.copy(ROOT / "fraglab" / "data" / "atlas_sm90.json", tmp_path / "my_gpu.json")
    problems, skipped, ran = [], [], 0
    for command in COMMANDS[doc]:
        where = f"{doc.name}:{command.line}: {command.text}"
        reason = command.skip or _needs_gpu(command, tmp_path)
        if reason:
            skipped.append(f"{where} ({reason})")
            continue
        result = run(command.text, tmp_path)
        output = result.stdout + result.stderr
        if result.returncode == 1 and GPU_REFUSAL.search(result.stderr):
            skipped.append(f"{where} (refuses without a GPU)")
            continue
        ran += 1
        if "Traceback" in output or result.returncode not in (0, 1) or (
                result.returncode == 1 and "fraglab: error:" in result.stderr):
            problems.append(f"{where}: exit {result.returncode}: {output.strip()[-300:]}")
            continue
        missing = compare(command.shown, result.stdout + result.stderr)
        if missing:
            problems.append(f"{where}: the docs show lines the command does not print, e.g. {missing[0]!r}")
    assert not problems, "\n".join(problems)
    if not ran and skipped:
        pytest.skip("every command here needs a GPU: " + "; ".join(skipped[:3]))


def test_docs_state_no_page_count_the_page_contradicts():
    """The page's layout count changes as families are added: where docs/export.md states one, it is today's."""
    from fraglab.export.select import page_layouts

    text = (ROOT / "docs" / "export.md").read_text()
    stated = [int(n) for n in re.findall(r"\((\d+) layouts today", text)]
    assert all(n == len(page_layouts()) for n in stated), stated
