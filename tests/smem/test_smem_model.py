"""The bank model against hand-worked cases (worked out here on paper, not taken from the code under test)."""

import numpy as np
import pytest

from fraglab.errors import InputError
from fraglab.smem.access import parse_access, raw_instruction
from fraglab.smem.analysis import analyze
from fraglab.smem.model import model_instruction, total_wavefronts

LANES = np.arange(32)


def model(access, addresses):
    return model_instruction(raw_instruction(parse_access(access), addresses))


def test_32_way_conflict_every_thread_bank_0():
    # thread t reads word 32*t: all 32 words live in bank 0, 32 distinct words -> 32 wavefronts
    m = model("ld.b32", LANES * 128)
    assert m.wavefronts == 32 and m.minimum == 1
    assert {b for t in range(32) for b in m.banks(t)} == {0}


def test_broadcast_one_word_is_one_wavefront():
    m = model("ld.b32", np.zeros(32, dtype=int))
    assert m.wavefronts == 1 and m.minimum == 1
    layers, shared = m.phases[0].layers()
    assert layers == [{0: 0}] and shared == {(0, 0): 32}


def test_two_threads_per_word_share_it():
    # threads 2k and 2k+1 read word k: 16 words in 16 banks
    assert model("ld.b32", (LANES // 2) * 4).wavefronts == 1


def test_b128_is_served_by_quarter_warps():
    # thread t reads 16 B at 16*t: each quarter warp covers 128 contiguous bytes -> 4 phases x 1
    m = model("ld.b128", LANES * 16)
    assert [list(p.threads) for p in m.phases] == [list(range(q, q + 8)) for q in range(0, 32, 8)]
    assert [p.wavefronts for p in m.phases] == [1, 1, 1, 1] and m.minimum == 4


def test_b128_conflict_stays_inside_its_quarter():
    # quarter q's 8 threads read rows 128 B apart (banks 0-3 each): 8-way per quarter = 32
    assert model("ld.b128", LANES * 128).wavefronts == 32
    # threads 8 apart hit the same banks but sit in different quarters: no conflict between them
    assert model("ld.b128", (LANES % 8) * 16 + (LANES // 8) * 1024).wavefronts == 4


def test_b64_is_served_by_half_warps():
    m = model("ld.b64", LANES * 8)
    assert [len(p.threads) for p in m.phases] == [16, 16] and m.wavefronts == 2


def test_ldmatrix_phases_are_its_eight_row_addresses():
    # x4 on a 64-column f16 row-major tile: the 8 rows of each matrix are 128 B apart -> 8-way in each of 4 phases
    r = analyze("(16,64):(64,1)", "f16", "ldmatrix.x4", source="model")
    first = r.models[0]
    assert [list(p.threads) for p in first.phases] == [list(range(8 * m, 8 * m + 8)) for m in range(4)]
    assert [p.wavefronts for p in first.phases] == [8, 8, 8, 8] and first.minimum == 4
    # thread 8m + r gives row r of matrix m: matrix 1 is rows 8-15 of the same columns (the mma A order)
    assert r.instructions[0].elements(9)[0] == (9, 0) and r.instructions[0].elements(16)[0] == (0, 8)


def test_ldmatrix_x1_ignores_threads_past_eight():
    m = model("ldmatrix.x1", LANES * 16)
    assert len(m.phases) == 1 and list(m.phases[0].threads) == list(range(8)) and m.wavefronts == 1


def test_swizzle_removes_ldmatrix_conflicts():
    # Sw<3,3,3>: row r's 16-byte chunk c lands at chunk c ^ (r % 8): the 8 rows cover all 32 banks
    r = analyze("Sw<3,3,3> o (64,64):(64,1)", "f16", "ldmatrix.x4", source="model")
    assert all(m.wavefronts == 4 == m.minimum for m in r.models)
    chunks = sorted(int(r.instructions[0].addresses[t]) % 128 // 16 for t in range(8))
    assert chunks == list(range(8))


def test_epilogue_accumulator_store():
    # m16n8 accumulator, slots (0,1) as one b32 of two halves: row g (8 rows), thread q writes word q of the
    # row's 16 bytes. Rows of 128 halves are 256 B apart -> banks 0-3 for every row: 8-way.
    acc = "mma.m16n8k16.accumulator.f32"
    plain = analyze("(64,128):(128,1)", "f16", "st.b32", fragment=acc, source="model")
    assert plain.models[0].wavefronts == 8 and len(plain.instructions) == 4 * 16 * 2
    # 8 halves of padding move each row by 4 banks: conflict-free
    padded = analyze("(64,128):(136,1)", "f16", "st.b32", fragment=acc, source="model")
    assert all(m.wavefronts == 1 for m in padded.models)


def test_fast_totals_match_the_per_instruction_model():
    for layout, access in [("(64,64):(64,1)", "ldmatrix.x4"), ("Sw<2,3,4> o (32,64):(64,1)", "ld.b64"),
                           ("(32,8):(64,1)", "ld.b128")]:
        r = analyze(layout, "f16", access, source="model")
        assert total_wavefronts(r.instructions) == (r.predicted, r.minimum)


def test_misaligned_16_byte_access_is_refused():
    # a row padded by 2 halves: row 1 starts at byte 132, not a 16-byte boundary
    with pytest.raises(InputError, match="misaligned 16-byte"):
        analyze("(8,64):(66,1)", "f16", "ld.b128", source="model")


def test_vector_split_by_a_swizzle_is_refused():
    # Sw<1,2,3> swaps 8-byte halves of 16-byte vectors: an ld.b128 of 8 halves is no longer contiguous
    with pytest.raises(InputError, match="misaligned"):
        analyze("Sw<1,2,3> o (8,64):(64,1)", "f16", "ld.b128", source="model")


def test_address_outside_the_tile_is_refused():
    # the m16n8 accumulator reaches row 15 of an 8-row tile
    with pytest.raises(InputError, match=r"reach \(15,7\), outside the 8x64 tile"):
        analyze("(8,64):(64,1)", "f16", "st.b32", fragment="mma.m16n8k16.accumulator.f32", source="model")
    with pytest.raises(InputError, match="not a whole number"):
        analyze("(8,12):(12,1)", "f16", "ldmatrix.x1", source="model")
