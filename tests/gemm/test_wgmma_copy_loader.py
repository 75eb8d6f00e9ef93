"""The copy loader's launch on the CPU: which parameters a launch packs for it (addresses, row pitches in bytes,
the operand bits the kernel reads), the limit of its 32-bit pitch, rows that end mid-chunk left on TMA, and the
spec's checks. The kernel itself: test_wgmma_copy_loader_gpu.py."""

from __future__ import annotations

import numpy as np
import pytest

from fraglab.gemm import wgmma


COPIED = wgmma.PARAM_INDEX["b"] + 3   # the operand bits, after B's address and the two row pitches


class _Recorded:
    """gpu.PackedLaunch stand-in: the parameters it was given."""

    def __init__(self, kernel, blocks, threads, params, shared_mem=0, programmatic=False):
        self.params, self.programmatic = params, programmatic


@pytest.fixture
def packed(monkeypatch):
    from fraglab.runtime import gpu

    monkeypatch.setattr(gpu, "PackedLaunch", _Recorded)
    monkeypatch.setattr(wgmma, "_kernel", lambda spec: None)
    monkeypatch.setattr(wgmma, "_MAPS", {})

    class Maps(dict):
        def __missing__(self, key):   # no driver here: any map is 128 zero bytes
            return wgmma._NO_MAP

    monkeypatch.setattr(wgmma, "_MAPS", Maps())

    def launch(spec, m, n, k, lda=0, ldb=0):
        key = (spec, m, n, k, 0xA000, 0xB000, 0xD000, 0, 0, 0, 1.0, 0.0, 0.01, 132, lda, ldb, 0, 0, 0, 0, 0, 0, 0, 0)
        recorded = wgmma._packed_launch(key)
        assert recorded.programmatic   # the kernel waits for the previous grid: launched to overlap its end
        return recorded.params
    return launch


def test_the_launch_packs_addresses_pitches_and_operand_bits(packed):
    index = wgmma.PARAM_INDEX
    spec = wgmma.WgmmaKernelSpec("f16", tile="128x192", out_dtype="f16", store="tma", a_load="copy", b_load="copy")
    assert spec.copied_operands == 3
    params = packed(spec, 3000, 3000, 3000)
    assert (int(params[index["a"]]), int(params[index["b"]])) == (0xA000, 0xB000)
    # row pitches in bytes: A's rows are K = 3000 halves, B's (row-major) N = 3000; both operands copied
    assert [int(v) for v in params[index["b"] + 1:index["b"] + 4]] == [6000, 6000, 3]
    assert params[index["a"]].dtype == np.uint64 and params[index["b"] + 1].dtype == np.int32
    # A column-major (rows of M), B column-major (rows of K), rows given a pitch of their own
    spec = wgmma.WgmmaKernelSpec("bf16", tile="128x128", b_order="F", a_order="F", a_load="copy")
    assert [int(v) for v in packed(spec, 1000, 520, 72)[index["b"] + 1:index["b"] + 4]] == [2000, 144, 1]
    assert [int(v) for v in packed(spec, 1000, 520, 72, lda=1032, ldb=80)[index["b"] + 1:index["b"] + 4]] == [2064, 160, 1]
    # the TMA path packs the same slots with no operand bits
    assert int(packed(wgmma.WgmmaKernelSpec("f16"), 64, 64, 64)[COPIED]) == 0


def test_a_pitch_past_32_bits_is_refused(packed):
    spec = wgmma.WgmmaKernelSpec("f16", tile="128x128", a_load="copy")
    with pytest.raises(ValueError, match="too long for the copy loader"):
        packed(spec, 256, 64, 2 ** 30)   # rows of A: 2^31 bytes
    assert int(packed(spec, 256, 64, 2 ** 30 - 8)[COPIED]) == 1


def test_rows_that_end_mid_chunk_stay_on_tma(packed):
    """A view of a wider array may end its rows mid-16-byte-chunk (K = 1001 halves in rows of 1008): the copy
    loader moves whole chunks, so that operand's bit is dropped and TMA loads it."""
    spec = wgmma.WgmmaKernelSpec("f16", tile="128x128", a_load="copy", b_load="copy")
    assert int(packed(spec, 300, 520, 1001, lda=1008)[COPIED]) == 2     # A (rows of K) on TMA, B copied
    spec = wgmma.WgmmaKernelSpec("f16", tile="128x128", b_order="F", a_load="copy", b_load="copy")
    assert int(packed(spec, 300, 520, 1001, lda=1008, ldb=1008)[COPIED]) == 0   # B's rows are K long too
    assert int(packed(spec, 300, 520, 1000)[COPIED]) == 3


def test_the_loaders_are_launch_parameters_checked_by_the_spec():
    copy = wgmma.WgmmaKernelSpec("bf16", tile="128x128", a_load="copy")
    assert copy.copied_operands == 1
    assert wgmma.WgmmaKernelSpec("bf16", tile="128x128", b_load="copy").copied_operands == 2
    assert copy.name() == wgmma.WgmmaKernelSpec("bf16", tile="128x128").name()   # one instantiation serves both
    # a clustered tile multicasts B: one clear error; and the loaders' names are checked like the other settings
    with pytest.raises(ValueError, match="copy loader.*one-block tile"):
        wgmma.WgmmaKernelSpec("f16", tile="128x256c2", b_load="copy")
    # the copy threads fill one K-block a stage (the kernel compiles them out of a tile of two: nothing would load)
    with pytest.raises(ValueError, match="64x128pkb2.*2 K-blocks a stage.*copy loader"):
        wgmma.WgmmaKernelSpec("f16", tile="64x128pkb2", a_load="copy")
    assert wgmma.WgmmaKernelSpec("f16", tile="64x128p", a_load="copy").copied_operands == 1
    with pytest.raises(ValueError, match="a_load 'cp'.*tma, copy"):
        wgmma.WgmmaKernelSpec("f16", a_load="cp")
