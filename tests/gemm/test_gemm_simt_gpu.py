"""GPU tests of the FP32 SIMT GEMM ladder: every rung against the float64 reference, outputs poisoned first."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from fraglab.bench import simt_ladder
from fraglab.gemm import simt
from fraglab.runtime import gpu
from fraglab.gemm.reference import check_result, reference_gemm

_OK, _WHY = gpu.available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _OK, reason=f"no usable GPU: {_WHY}")]

SIZES = [(1, 1, 1), (7, 7, 7), (33, 33, 33), (127, 127, 127), (129, 129, 129), (1000, 1000, 1000),
         (1031, 20, 257),   # skinny: one column of tiles, ragged everywhere
         (9, 700, 1000)]    # skinny the other way, long K
# (act, bias_mode, has_c, save_z, alpha, beta)
EPILOGUES = [
    ("none", "none", False, False, 1.0, 0.0),
    ("relu", "per_n", True, False, 1.5, 0.5),
    ("gelu", "per_m", False, True, 1.0, 0.0),
    ("leaky_relu", "full", True, True, 0.75, -1.0),
]
MORE_ACTS = ["gelu_tanh", "silu", "sigmoid", "tanh"]
POISON = np.float32(np.nan)


def _inputs(m, n, k, bias_mode, has_c, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32) if has_c else None
    shape = {"none": None, "per_m": (m,), "per_n": (n,), "full": (m, n)}[bias_mode]
    bias = rng.uniform(-1, 1, shape).astype(np.float32) if shape else None
    return a, b, c, bias


@functools.lru_cache(maxsize=40)
def _case(m, n, k, act, bias_mode, has_c, alpha, beta, seed):
    """Inputs and float64 reference, shared by every rung tested on the same case."""
    a, b, c, bias = _inputs(m, n, k, bias_mode, has_c, seed)
    d_ref, z_ref = reference_gemm(a, b, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                                  leaky_slope=0.05)
    return a, b, c, bias, d_ref, z_ref


def _run_and_check(rung, m, n, k, act, bias_mode, has_c, save_z, alpha, beta, seed=0):
    cp = gpu.cupy()
    a, b, c, bias, d_ref, z_ref = _case(m, n, k, act, bias_mode, has_c, alpha, beta, seed)
    d = cp.full((m, n), POISON, dtype=cp.float32)
    z = cp.full((m, n), POISON, dtype=cp.float32) if save_z else None
    simt.launch(rung, cp.asarray(a), cp.asarray(b), d, c=None if c is None else cp.asarray(c),
                bias=None if bias is None else cp.asarray(bias), bias_mode=bias_mode, act=act, alpha=alpha,
                beta=beta, leaky_slope=0.05, z=z)
    cp.cuda.runtime.deviceSynchronize()
    ok, max_err, rel = check_result(cp.asnumpy(d), d_ref, "f32", z_ref=z_ref if save_z else None)
    assert ok, f"{rung} {m}x{n}x{k} {act}/{bias_mode}: D rel err {rel:.3g} (max abs {max_err:.3g})"
    if save_z:
        ok, max_err, rel = check_result(cp.asnumpy(z), z_ref, "f32")
        assert ok, f"{rung} {m}x{n}x{k} {act}/{bias_mode}: Z rel err {rel:.3g}"


@pytest.mark.parametrize("epilogue", EPILOGUES, ids=lambda e: f"{e[0]}-{e[1]}-c{int(e[2])}-z{int(e[3])}")
@pytest.mark.parametrize("size", SIZES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("rung", simt.RUNGS)
def test_rung_matches_reference(rung, size, epilogue):
    _run_and_check(rung, *size, *epilogue)


@pytest.mark.parametrize("act", MORE_ACTS)
@pytest.mark.parametrize("rung", simt.DISPATCH_RUNGS)
def test_dispatcher_rungs_with_the_other_activations(rung, act):
    _run_and_check(rung, 129, 127, 65, act, "per_n", True, True, 1.25, 0.5, seed=3)


@pytest.mark.parametrize("aligned", [False, True], ids=["misaligned", "aligned-pitch"])
@pytest.mark.parametrize("rung", simt.RUNGS)
def test_strided_views_stay_in_bounds(rung, aligned):
    """Views into wider parents: misaligned ones (base off 16 bytes, pitch not a multiple of 4) take the
    scalar paths, aligned ones the 16-byte paths with a pitch; nothing outside the views may change."""
    cp = gpu.cupy()
    m, n, k = 67, 45, 37
    a, b, c, bias = _inputs(m, n, k, "per_m", True, seed=5)
    d_ref, z_ref = reference_gemm(a, b, c=c, bias=bias, bias_mode="per_m", act="tanh", beta=2.0)
    a_off, a_pitch = (4, k + 7) if aligned else (1, k + 5)         # lda 44 / 42
    d_pitch, z_off, z_pitch = (n + 3, 4, n + 7) if aligned else (n + 1, 2, n + 4)
    a_parent = cp.zeros((m, a_pitch), dtype=cp.float32)
    a_parent[:, a_off:a_off + k] = cp.asarray(a)
    b_parent = cp.zeros((k, n + 3), dtype=cp.float32)                # ldb 48
    b_parent[:, :n] = cp.asarray(b)
    sentinel = np.float32(1234.5)
    d_parent = cp.full((m, d_pitch), sentinel, dtype=cp.float32)
    z_parent = cp.full((m, z_pitch), sentinel, dtype=cp.float32)
    d, z = d_parent[:, :n], z_parent[:, z_off:z_off + n]
    d[...] = POISON
    z[...] = POISON
    simt.launch(rung, a_parent[:, a_off:a_off + k], b_parent[:, :n], d, c=cp.asarray(c), bias=cp.asarray(bias),
                bias_mode="per_m", act="tanh", beta=2.0, z=z)
    cp.cuda.runtime.deviceSynchronize()
    ok, _, rel = check_result(cp.asnumpy(d), d_ref, "f32", z_ref=z_ref)
    assert ok, f"{rung}: D rel err {rel:.3g}"
    ok, _, rel = check_result(cp.asnumpy(z), z_ref, "f32")
    assert ok, f"{rung}: Z rel err {rel:.3g}"
    assert bool(cp.all(d_parent[:, n:] == sentinel)), f"{rung} wrote past D's columns"
    assert bool(cp.all(z_parent[:, :z_off] == sentinel)) and bool(cp.all(z_parent[:, z_off + n:] == sentinel)), \
        f"{rung} wrote outside Z's columns"


@pytest.mark.parametrize("rung", [r for r in simt.RUNGS if r not in ("smoke",) and not r.startswith("naive")])
def test_tiled_rungs_give_the_same_bits_twice(rung):
    """A missing barrier shows as a result that moves between identical runs."""
    cp = gpu.cupy()
    m, n, k = 515, 389, 1043
    a, b, _, _ = _inputs(m, n, k, "none", False, seed=7)
    a_d, b_d = cp.asarray(a), cp.asarray(b)
    outs = []
    for _ in range(3):
        d = cp.full((m, n), POISON, dtype=cp.float32)
        simt.launch(rung, a_d, b_d, d)
        outs.append(cp.asnumpy(d))
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], outs[2])
    assert not np.isnan(outs[0]).any()


def test_run_ladder_checks_every_rung_beside_cublas():
    rows = simt_ladder.run_ladder([(130, 66, 200)], bench=False, act="silu", bias_mode="per_n", beta=0.5, save_z=True)
    assert [r["kernel"] for r in rows] == ["cublas_sgemm", *simt.RUNGS]
    assert rows[0]["status"] == "-"             # plain SGEMM cannot apply the epilogue
    for row in rows[1:]:
        assert row["status"] == "PASSED", row
        assert row["rel_err"] is not None and row["rel_err"] <= 1e-4
        assert (row["m"], row["n"], row["k"]) == (130, 66, 200)


def test_run_ladder_times_one_rung_against_cublas():
    rows = simt_ladder.run_ladder([256], kernel=simt.TOP_RUNG, check=True, bench=True)
    assert [r["kernel"] for r in rows] == ["cublas_sgemm", simt.TOP_RUNG]
    cublas, top = rows
    assert cublas["status"] == "PASSED" and top["status"] == "PASSED"
    for row in rows:
        assert row["ms"] > 0 and row["reps"] >= 3
        assert row["tflops"] == pytest.approx(2 * 256**3 / (row["ms"] * 1e-3) / 1e12)
    assert top["pct_cublas"] == pytest.approx(100 * cublas["ms"] / top["ms"])
