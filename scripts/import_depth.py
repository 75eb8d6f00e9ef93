"""Longest chain of intra-package imports made at module import time (function-level imports excluded).

Usage: python3 scripts/import_depth.py [package_dir] [--all]   (default: fraglab). Prints the depth and the chain;
--all also follows imports inside functions (the lazy ones, which run on first call).
Only the modules an import statement names count (`from ..layouts.spec import X` is one edge, to
fraglab.layouts.spec); the package __init__ files Python runs on the way are left out, since every submodule
import runs them and they would add the same floors to every chain.
"""

from __future__ import annotations

import ast
import sys
from functools import lru_cache
from pathlib import Path


def module_names(root: Path) -> dict[str, Path]:
    names = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def top_level_imports(path: Path, name: str, is_package: bool, known: set[str], lazy: bool = False) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    package = name if is_package else name.rpartition(".")[0]

    def add(target: str) -> None:
        if target in known and target != name:
            out.add(target)

    nodes = ast.walk(tree) if lazy else tree.body  # module level only; `if TYPE_CHECKING:` blocks do not run
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            add(target)
            for alias in node.names:  # `from . import gpu` imports the submodule
                add(f"{target}.{alias.name}")
    return out


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--all"]
    root = Path(args[0] if args else "fraglab").resolve()
    names = module_names(root)
    graph = {n: top_level_imports(p, n, p.name == "__init__.py", set(names), "--all" in sys.argv)
             for n, p in names.items()}

    @lru_cache(maxsize=None)
    def chain(n: str, stack: frozenset = frozenset()) -> tuple[str, ...]:
        best: tuple[str, ...] = ()
        for dep in graph[n]:
            if dep in stack:
                continue  # a cycle: Python tolerates it through partially initialised modules
            sub = chain(dep, stack | {n})
            if len(sub) > len(best):
                best = sub
        return (n, *best)

    longest = max((chain(n) for n in graph), key=len)
    print(f"import depth {len(longest)} modules{' (lazy imports included)' if '--all' in sys.argv else ''}: {' -> '.join(longest)}")


if __name__ == "__main__":
    main()
