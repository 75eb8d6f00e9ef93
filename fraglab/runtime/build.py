"""How a kernel build is described (no GPU needed): KernelBuild names the entry source file (relative to the
kernels folder, e.g. "apis/wmma.cu"), the template instantiations to compile (`name_expressions`) and extra
NVRTC options. fraglab.runtime.gpu compiles it with CuPy; fraglab.runtime.nvrtc_offline compiles the very same
build with NVRTC from pip wheels, so CI catches a broken kernel.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..errors import CompileError

PACKAGE_DIR = Path(__file__).resolve().parent.parent
# A wheel carries kernels/ inside the package as fraglab/_kernels (pyproject's force-include); an editable
# install and a source checkout read the top-level kernels/ beside the package.
WHEEL_KERNELS_DIR = PACKAGE_DIR / "_kernels"
CHECKOUT_KERNELS_DIR = PACKAGE_DIR.parent / "kernels"


@lru_cache(maxsize=1)
def kernels_dir() -> Path:
    """The one folder every .cu/.cuh is read from, whichever way fraglab was installed."""
    for candidate in (WHEEL_KERNELS_DIR, CHECKOUT_KERNELS_DIR):
        if (candidate / "gemm" / "epilogue.cuh").is_file():
            return candidate
    raise CompileError(f"fraglab's CUDA sources are missing: neither {WHEEL_KERNELS_DIR} (a wheel) nor "
                       f"{CHECKOUT_KERNELS_DIR} (a checkout or editable install) holds them; reinstall fraglab")


def include_dirs() -> tuple[Path, Path]:
    """Folders on the include path: kernels/ (entries include "wing/file.cu") and gemm/ (epilogue.cuh)."""
    return kernels_dir(), kernels_dir() / "gemm"


def source_files() -> list[Path]:
    """Every CUDA source and header fraglab compiles, in a stable order."""
    return sorted(p for p in kernels_dir().rglob("*") if p.suffix in (".cu", ".cuh") and p.is_file())


@lru_cache(maxsize=1)
def sources_hash() -> str:
    """Hash of every .cu/.cuh under kernels/: folded into the options so an edited header never reuses a
    stale binary from CuPy's disk cache."""
    digest = hashlib.sha256()
    for path in source_files():
        digest.update(path.relative_to(kernels_dir()).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class KernelBuild:
    entry: str                      # file under kernels/, e.g. "apis/wmma.cu"
    name_expressions: tuple[str, ...]
    options: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return kernels_dir() / self.entry

    def source_text(self) -> str:
        # Include by name so compiler errors point at kernels/<wing>/<file>:<line>.
        return f'#include "{self.entry}"\n'

    def include_dirs(self) -> list[Path]:
        """kernels/, the entry's own folder, and gemm/ (the shared epilogue.cuh)."""
        return list(dict.fromkeys((*include_dirs(), self.path.parent)))

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


__all__ = ["KernelBuild", "Sm90aBuild", "SM90A", "kernels_dir", "source_files", "sources_hash"]
