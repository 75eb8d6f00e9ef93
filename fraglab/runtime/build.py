"""How a kernel build is described (no GPU needed): KernelBuild names the entry source file (relative to the
package folder, e.g. "apis/wmma.cu"), the template instantiations to compile (`name_expressions`) and extra
NVRTC options. fraglab.runtime.gpu compiles it with CuPy; fraglab.runtime.nvrtc_offline compiles the very same
build with NVRTC from pip wheels, so CI catches a broken kernel.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
# Folders on the include path: the package (entries include "wing/file.cu") and gemm/ (epilogue.cuh).
INCLUDE_DIRS = (PACKAGE_DIR, PACKAGE_DIR / "gemm")


def source_files() -> list[Path]:
    """Every CUDA source and header in the package, in a stable order."""
    return sorted(p for p in PACKAGE_DIR.rglob("*") if p.suffix in (".cu", ".cuh") and p.is_file())


@lru_cache(maxsize=1)
def sources_hash() -> str:
    """Hash of every .cu/.cuh under fraglab/: folded into the options so an edited header never reuses a
    stale binary from CuPy's disk cache."""
    digest = hashlib.sha256()
    for path in source_files():
        digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class KernelBuild:
    entry: str                      # file under fraglab/, e.g. "apis/wmma.cu"
    name_expressions: tuple[str, ...]
    options: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return PACKAGE_DIR / self.entry

    def source_text(self) -> str:
        # Include by name so compiler errors point at fraglab/<wing>/<file>:<line>.
        return f'#include "{self.entry}"\n'

    def include_dirs(self) -> list[Path]:
        """The package, the entry's own folder, and gemm/ (the shared epilogue.cuh)."""
        return list(dict.fromkeys((*INCLUDE_DIRS, self.path.parent)))

    def all_options(self, include_dirs: list[str], arch: str | None = None) -> tuple[str, ...]:
        """NVRTC options; `arch` (e.g. sm_90) only offline, since CuPy adds the device's own."""
        return (
            "-std=c++17",
            *((f"-arch={arch}",) if arch else ()),
            *(f"-I{d}" for d in self.include_dirs()),
            *(f"-I{d}" for d in include_dirs),
            f"-DFRAGLAB_SOURCES_HASH=0x{sources_hash()}ULL",
            *self.options,
        )


SM90A = "sm_90a"   # wgmma, setmaxnreg and TMA multicast exist only in the arch-specific target: sm_90 rejects them


@dataclass(frozen=True)
class Sm90aBuild(KernelBuild):
    """A build for sm_90a whatever arch is asked for, so CuPy on the GPU and NVRTC offline compile the same
    thing; `arch` compute_90a (the compile test's quick pass) stops at PTX."""

    def all_options(self, include_dirs: list[str], arch: str | None = None) -> tuple[str, ...]:
        return super().all_options(include_dirs, arch if arch == "compute_90a" else SM90A)


__all__ = ["KernelBuild", "Sm90aBuild", "SM90A", "PACKAGE_DIR", "source_files", "sources_hash"]
