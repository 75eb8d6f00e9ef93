"""Where the CUDA headers are: one search, used by the GPU runtime (CuPy) and the offline compiler alike."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

from ..errors import CompileError


def include_candidates() -> list[Path]:
    """Folders that may hold the CUDA headers, best first."""
    out: list[Path] = []
    for var in ("FRAGLAB_CUDA_INCLUDE", "CUDA_PATH", "CUDA_HOME"):
        val = os.environ.get(var)
        if val:
            out.append(Path(val) if var == "FRAGLAB_CUDA_INCLUDE" else Path(val) / "include")
    out.append(Path("/usr/local/cuda/include"))
    for site in sys.path:
        for sub in ("nvidia/cu13/include", "nvidia/cuda_runtime/include", "nvidia/cu12/include"):
            out.append(Path(site) / sub)
    return list(dict.fromkeys(out))


@lru_cache(maxsize=1)
def include_dirs() -> list[str]:
    """A folder that really holds crt/mma.h (CuPy's own include path may hold mma.h without it)."""
    tried = include_candidates()
    for path in tried:
        if (path / "crt" / "mma.h").is_file() and (path / "cuda_fp16.h").is_file():
            return [str(path)]
    raise CompileError(
        "no CUDA include folder with crt/mma.h was found; tried: " + ", ".join(str(p) for p in tried)
        + ". Install the wheel nvidia-cuda-crt (pip install fraglab[cuda13]) or set FRAGLAB_CUDA_INCLUDE."
    )


def wheel_include_dir() -> str | None:
    """The include folder of the nvidia-cuda-* pip wheels (crt/mma.h inside), or None when they are absent."""
    try:
        import nvidia  # namespace package of the nvidia-cuda-* wheels
    except ImportError:
        return None
    for root in nvidia.__path__:
        for sub in ("cu13/include", "cuda_runtime/include"):
            path = Path(root) / sub
            if (path / "crt" / "mma.h").is_file():
                return str(path)
    return None


__all__ = ["include_candidates", "include_dirs", "wheel_include_dir"]
