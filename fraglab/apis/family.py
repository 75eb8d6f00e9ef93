"""Family: one instruction family (WMMA, mma.sync, ldmatrix, wgmma, ...) as data.

Adding a family is one module in fraglab/apis/ that builds a Family, plus its probe kernel, plus one line in
the registry (fraglab/apis/__init__.py). Resolve, verify, capture, list and the figures iterate the registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

if TYPE_CHECKING:
    from ..layouts.layout import Layout
    from ..layouts.spec import FragmentSpec
    from ..runtime.build import KernelBuild


@dataclass(frozen=True)
class Family:
    api: str                         # "wmma", "mma", "ldmatrix", "stmatrix", "movmatrix", "wgmma", "tcgen05"
    title: str                       # one line for `fraglab list`, e.g. "nvcuda::wmma fragments"
    threads: int                     # 32, or 128 for wgmma
    operands: tuple[str, ...]        # frag names, e.g. ("matrix_a", "matrix_b", "accumulator")
    methods: tuple[str, ...]         # measurement methods, e.g. ("load", "mma", "onehot")
    specs: Callable[[], "list[FragmentSpec]"]                        # the catalogue of this family
    model: Callable[["FragmentSpec", str], "Optional[Layout]"]       # PTX-documented model (spec, method)
    measure: Callable[["FragmentSpec", tuple[str, ...]], "dict[str, Layout]"]  # GPU probes (lazy GPU import)
    kernel_builds: Callable[[], "list[KernelBuild]"]                # every kernel this family can request
    min_sm: int = 70
    ptx: str = ""                    # PTX spelling, e.g. "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    # ---- optional hooks (None: the generic behaviour) ------------------------------------------------
    spec_min_sm: Optional[Callable[["FragmentSpec"], int]] = None   # per fragment, when it varies (WMMA bf16: 80)
    dims: Optional[Callable[["FragmentSpec"], tuple[int, int]]] = None  # (rows, cols); default A MxK, B KxN, C MxN
    slots: Optional[Callable[["FragmentSpec"], int]] = None         # slots per thread (for `fraglab list`)
    note: Optional[Callable[["FragmentSpec"], str]] = None          # a short note for `fraglab list`
    defaults: Mapping[str, Mapping[str, Any]] = None                # operand -> option -> default value
    model_archs: tuple[str, ...] = ()                               # architectures the model claims ("sm_90")
    capture: Optional[Callable[..., tuple[dict, dict]]] = None      # (specs, progress, source) -> (entries, refused, compile s)
    mma_views: Optional[Callable[[list], list[tuple]]] = None       # (A, B, C) triples the gallery draws
    mma_specs: Optional[Callable[..., tuple]] = None                # (shape, dtype, layout) -> (A, B, C) for --mma
    model_only: bool = False        # no probe (tcgen05: no sm_100 here): never measured, never in an atlas

    def model_claims(self, arch: int) -> bool:
        return f"sm_{arch}" in self.model_archs

    def default_for(self, operand: str, option: str) -> Any:
        return ((self.defaults or {}).get(operand) or {}).get(option)


__all__ = ["Family"]
