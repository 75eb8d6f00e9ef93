"""Verification: for one fragment, do the three probe methods, the family's model and the atlas agree?"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .layout import UNKNOWN, Layout
from .spec import FragmentSpec

if TYPE_CHECKING:
    from .atlas import Atlas


@dataclass
class VerifyRow:
    spec: FragmentSpec
    methods: str = "agree"   # agree | differ
    model: str = "agrees"    # agrees | differs | not modelled | not claimed
    atlas: str = "agrees"    # agrees | differs | not in atlas | no atlas
    duplicates: int = 0
    ignored: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _slots_equal(a: Layout, b: Layout, where) -> bool:
    return bool(((a.row == b.row) & (a.col == b.col) | ~where).all())


def _reads_agree(a: Layout, b: Layout) -> bool:
    # a method that cannot see reads (wgmma's accumulator `mma`: its D is written, not read) leaves them UNKNOWN
    known = (a.mma_reads != UNKNOWN) & (b.mma_reads != UNKNOWN)
    return bool(((a.mma_reads == b.mma_reads) | ~known).all())


def check_combination(spec: FragmentSpec, measured: dict[str, Layout], arch: int,
                      atlas: "Atlas | None") -> VerifyRow:
    """Cross-check the three methods, the model and the atlas for one fragment."""
    # the family's own first method stands where WMMA has `load` (mma.sync and wgmma: the identity MMA)
    primary = "load" if "load" in measured else next(m for m in spec.family.methods if m in measured)
    load = measured[primary]
    mma, onehot = measured.get("mma"), measured.get("onehot")
    reads_from = onehot if onehot is not None else load
    row = VerifyRow(spec, duplicates=load.duplicate_slots, ignored=reads_from.ignored_slots)
    if mma is not None and onehot is not None and not (mma.same_map(onehot) and _reads_agree(mma, onehot)):
        row.problems.append("mma and onehot disagree on what the MMA reads")
    if onehot is not None and not _slots_equal(load, onehot, onehot.mma_reads == 1):
        row.problems.append("load and onehot disagree on a slot the MMA reads")
    if load.missing_elements:
        row.problems.append(f"{load.missing_elements} elements have no holder after load")
    family = spec.family
    model = family.model(spec, primary)
    # Once per element, unless a fully-read model says otherwise (mma m8n8k4 .f16: four MMAs, one per quad pair).
    reads_per_element = model.holder_count() if model is not None and (model.mma_reads == 1).all() else 1
    if onehot is not None and (onehot.holder_count() != reads_per_element).any():
        row.problems.append("the MMA does not read every element as often as the model says (once)")
    if row.problems:
        row.methods = "differ"
    if model is None:
        row.model = "not modelled"
    elif not family.model_claims(arch):
        row.model = "not claimed"
    elif model.row.shape == load.row.shape:
        known = model.mma_reads != UNKNOWN
        reads_ok = bool(((model.mma_reads == reads_from.mma_reads) | ~known).all())
        if not (model.same_map(load) and reads_ok):
            row.model = "differs"
            row.problems.append("the PTX model differs from the measurement")
    else:
        row.model = "differs"
        row.problems.append(f"the model has {model.num_elements} slots per thread, the GPU {load.num_elements}")
    if atlas is None:
        row.atlas = "no atlas"
    elif atlas.arch != arch:
        row.atlas = f"atlas is sm_{atlas.arch}"
    elif spec.key not in atlas.entries:
        row.atlas = "not in atlas"
    else:
        for method, lay in measured.items():
            recorded = atlas.raw_layout(spec, method)
            if recorded is None or not (lay.same_map(recorded) and (lay.mma_reads == recorded.mma_reads).all()):
                row.atlas = "differs"
                row.problems.append(f"{method} differs from the bundled atlas")
                break
    return row


__all__ = ["VerifyRow", "check_combination"]
