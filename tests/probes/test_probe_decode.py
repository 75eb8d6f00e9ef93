"""Decoding of synthetic probe outputs (tests/probe_sim.py stands in for the GPU)."""

import numpy as np
import pytest

from fraglab.apis.wmma import wmma_catalogue
from fraglab.layouts.spec import FragmentSpec
from fraglab.layouts.layout import NO_ELEMENT, Layout
from fraglab.apis.wmma import model_layout
from fraglab.errors import ProbeError
from fraglab.probes.codes import POISON, digits, passes_needed, undigits, unpack_slots

from probe_sim import simulate_load, simulate_mma, simulate_onehot

CATALOGUE = wmma_catalogue()


def truth_for(spec: FragmentSpec) -> Layout:
    """The model's map, with the MMA reading the first copy of each element and ignoring the rest."""
    model = model_layout(spec)
    reads = np.where(model.mma_reads == 1, 1, 0).astype(np.int8)
    return Layout(spec, "load", model.source, model.row, model.col, reads)


def scrambled(spec: FragmentSpec, seed: int) -> Layout:
    """A random permutation of elements over slots, so decoding cannot lean on a regular pattern."""
    rng = np.random.default_rng(seed)
    base = truth_for(spec)
    cells = base.row * spec.cols + base.col
    perm = rng.permutation(spec.rows * spec.cols)
    cells = perm[cells]
    return Layout(spec, "load", base.source, cells // spec.cols, cells % spec.cols, base.mma_reads)


@pytest.mark.parametrize("spec", CATALOGUE, ids=lambda s: s.key)
def test_every_method_decodes_the_true_map(spec):
    truth = scrambled(spec, seed=hash(spec.key) % 1000)
    plan, out = simulate_load(truth)
    row, col, _ = plan.decode(out)
    assert np.array_equal(row, truth.row) and np.array_equal(col, truth.col)

    read = truth.mma_reads == 1
    for simulate in (simulate_mma, simulate_onehot):
        plan, out = simulate(truth)
        row, col, reads = plan.decode(out)
        assert np.array_equal(reads, truth.mma_reads), simulate.__name__
        assert np.array_equal(np.where(read, truth.row, NO_ELEMENT), row), simulate.__name__
        assert np.array_equal(np.where(read, truth.col, NO_ELEMENT), col), simulate.__name__


def test_duplicates_and_ignored_slots_are_seen():
    spec = FragmentSpec("wmma", "matrix_a", "m16n16k16", "f16", "row")
    truth = truth_for(spec)
    plan, out = simulate_onehot(truth)
    _, _, reads = plan.decode(out)
    assert (reads[:, 8:] == 0).all() and (reads[:, :8] == 1).all()
    plan, out = simulate_load(truth)
    row, col, _ = plan.decode(out)
    decoded = Layout(spec, "load", truth.source, row, col, reads)
    assert decoded.duplicate_slots == 256
    assert decoded.holder_count().min() == 2


def test_multi_pass_codes_for_narrow_types():
    # bf16 holds integers exactly only to 256; a 32x16 operand needs two passes.
    spec = FragmentSpec("wmma", "matrix_a", "m32n8k16", "bf16", "col")
    plan, out = simulate_load(truth_for(spec))
    assert plan.passes == 2
    assert passes_needed(1024, 2) == 10 and passes_needed(256, 256) == 1 and passes_needed(257, 256) == 2
    codes = np.array([0, 1, 255, 256, 1023])
    assert np.array_equal(undigits(digits(codes, 16, 3), 16), codes)


def test_sub_byte_words_unpack_low_bits_first():
    raw = np.array([[0x87654321]], dtype=np.uint32).view(np.int32)
    assert unpack_slots(raw, 4, 8).tolist() == [[1, 2, 3, 4, 5, 6, 7, 8]]
    assert unpack_slots(np.array([[5]], dtype=np.int32), 1, 32)[0, :3].tolist() == [1, 0, 1]


def test_unwritten_output_is_an_error():
    spec = FragmentSpec("wmma", "accumulator", "m16n16k16", "f32", "row")
    plan, out = simulate_load(truth_for(spec))
    out = out.copy()
    out[5] = POISON
    with pytest.raises(ProbeError, match="unwritten"):
        plan.decode(out)


def test_onehot_seen_twice_is_an_error():
    spec = FragmentSpec("wmma", "accumulator", "m16n16k16", "f32", "row")
    plan, out = simulate_onehot(truth_for(spec))
    out = out.reshape(32 * 8, 256).copy()
    out[0, 200] = 1  # lane 0 slot 0 would show at two elements
    with pytest.raises(ProbeError, match="lane 0 slot 0"):
        plan.decode(out.reshape(-1))


def test_a_slot_stored_to_two_places_is_an_error():
    spec = FragmentSpec("wmma", "accumulator", "m16n16k16", "f32", "col")
    plan, out = simulate_load(truth_for(spec))
    out = out.copy()
    out[1] = out[0]
    with pytest.raises(ProbeError, match="appears at"):
        plan.decode(out)
