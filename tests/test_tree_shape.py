"""The tree guards its own shape: the wings import only downward (import-linter's layers contract in
pyproject.toml), every import is declared and every declared dependency used (deptry), no module is over 600
lines, and the layouts wing reaches its families and views through registration."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 600


def _tool(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("importlinter", reason="import-linter is a dev dependency: pip install -e '.[dev]'")
    # --no-cache: a copy in a temp folder must not reuse the checkout's cached graph
    code = "import sys; from importlinter.cli import lint_imports_command as c; sys.argv = ['lint-imports', '--no-cache']; c()"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"})


def _copy_tree(tmp_path: Path) -> Path:
    """pyproject.toml and fraglab/ (sources only) in a temp folder, to plant a fault in."""
    shutil.copytree(ROOT / "fraglab", tmp_path / "fraglab", ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


# ---- the layer contract -------------------------------------------------------------------------------------

def test_the_wings_keep_the_layer_contract():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 kept, 0 broken" in result.stdout


@pytest.mark.parametrize("module, planted", [
    ("layouts/spec.py", "from ..apis import FAMILIES as _UPWARD"),            # at module level
    ("layouts/layout.py", "def _upward():\n    from ..show import figure\n"),  # lazily, inside a function
    ("runtime/build.py", "from ..gemm import epilogue as _UPWARD"),
])
def test_an_upward_import_breaks_the_contract(tmp_path, module, planted):
    tree = _copy_tree(tmp_path)
    path = tree / "fraglab" / module
    path.write_text(path.read_text() + "\n\n" + planted + "\n")
    result = _lint_imports(tree)
    assert result.returncode != 0, f"lint-imports kept the contract with {planted!r} planted in {module}"
    assert "BROKEN" in result.stdout and f"fraglab.{module[:-3].replace('/', '.')}" in result.stdout


def test_layouts_reaches_families_and_views_through_registration_only():
    """The bottom of the family chain, imported alone in a new interpreter, has its families and views."""
    code = ("import fraglab.layouts.layout as L, fraglab.layouts.spec as S\n"
            "spec = S.FragmentSpec('wmma', 'matrix_a', 'm16n16k16', 'f16', 'row')\n"
            "print(spec.threads, spec.family.api, sorted(L._VIEWS), 'matplotlib' in __import__('sys').modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["32", "wmma", "['figure',", "'table']", "False"]


# ---- module size --------------------------------------------------------------------------------------------

def test_no_module_is_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in sorted((ROOT / "fraglab").rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


# ---- declared dependencies ------------------------------------------------------------------------------------

def _deptry(cwd: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("deptry", reason="deptry is a dev dependency: pip install -e '.[dev]'")
    return _tool("deptry", "fraglab", "--no-ansi", cwd=cwd)


def test_every_import_is_declared_and_every_dependency_used():
    result = _deptry(ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def test_an_undeclared_import_is_caught(tmp_path):
    tree = _copy_tree(tmp_path)
    path = tree / "fraglab" / "files.py"
    path.write_text(path.read_text() + "\n\ndef _undeclared():\n    import yaml\n")
    result = _deptry(tree)
    assert result.returncode != 0 and "DEP001 'yaml'" in result.stdout + result.stderr
