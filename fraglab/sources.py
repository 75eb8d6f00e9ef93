"""Where the CUDA sources live and how a kernel build is described (no GPU needed).

A `KernelBuild` names the entry source file, the template instantiations to compile
(`name_expressions`) and extra NVRTC options. The GPU module compiles it with CuPy; the offline
checker compiles the very same build with NVRTC from pip wheels, so CI catches a broken kernel.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def kernels_dir() -> Path:
    """fraglab/kernels inside a wheel; the repository's top-level kernels/ in a source tree."""
    for candidate in (_PACKAGE_DIR / "kernels", _PACKAGE_DIR.parent / "kernels"):
        if (candidate / "probes.cu").is_file():
            return candidate
    raise FileNotFoundError(
        f"fraglab's CUDA sources were not found in {_PACKAGE_DIR / 'kernels'} or {_PACKAGE_DIR.parent / 'kernels'}; "
        "reinstall fraglab"
    )


@lru_cache(maxsize=1)
def sources_hash() -> str:
    """Hash of every kernel source: folded into the options so an edited header never reuses a stale binary."""
    digest = hashlib.sha256()
    root = kernels_dir()
    for path in sorted(root.glob("*.cu*")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class KernelBuild:
    entry: str                      # file in kernels/, e.g. "probes.cu"
    name_expressions: tuple[str, ...]
    options: tuple[str, ...] = ()

    def source_text(self) -> str:
        # Include by name so compiler errors point at kernels/<file>:<line>.
        return f'#include "{self.entry}"\n'

    def all_options(self, include_dirs: list[str], arch: str | None = None) -> tuple[str, ...]:
        """NVRTC options; `arch` (e.g. sm_90) only offline, since CuPy adds the device's own."""
        return (
            "-std=c++17",
            *((f"-arch={arch}",) if arch else ()),
            f"-I{kernels_dir()}",
            *(f"-I{d}" for d in include_dirs),
            f"-DFRAGLAB_SOURCES_HASH=0x{sources_hash()}ULL",
            *self.options,
        )
