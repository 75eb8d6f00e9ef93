"""Each activation of the fused epilogue, element by element, on pre-activations the GEMM computes exactly
(the GEMMs are marked gpu and skip with the reason otherwise; the check of the inputs runs anywhere).

The GEMM checks judge D against max|D| with a 1e-3 tolerance, which a wrong digit in an activation's
coefficients can pass. Here the inputs are multiples of 2^-5 (|A| <= 4, |B| <= 1, K = 16) and the bias a multiple
of 2^-12, so every product and sum is exact in f32 and the pre-activation the kernel sees equals the float64
reference's. What is left is the activation's own error, judged per element against ERROR_BOUND * max(1, |x|).
"""

import numpy as np
import pytest

from fraglab.gemm import api
from fraglab.gemm.reference import ACT_KINDS, activate

M, N, K = 1024, 64, 16
LEAKY_SLOPE = 0.0625   # a power of two: x * slope is exact
# |d - act(x)| <= bound * max(1, |x|). GELU: A&S 7.1.26 (|erf error| 1.5e-7) through rcp.approx / ex2.approx;
# the e^x-based kinds: ex2.approx on an argument rounded in f32 (its relative error grows with |argument|);
# tanh: libdevice's tanhf.
ERROR_BOUND = {"none": 0.0, "relu": 0.0, "leaky_relu": 0.0, "gelu": 4e-7, "gelu_tanh": 1e-6, "silu": 1e-6,
               "sigmoid": 1e-6, "tanh": 2e-7}
KERNELS = ("wgmma", "wmma", "simt")


def _dyadic(rng, shape, limit):
    """Uniform multiples of 2^-5 in [-limit, limit]."""
    return rng.integers(-limit * 32, limit * 32 + 1, shape) / 32.0


@pytest.fixture(scope="module")
def exact_inputs():
    rng = np.random.default_rng(2026)
    a = _dyadic(rng, (M, K), 4)
    b = _dyadic(rng, (K, N), 1)
    bias = rng.integers(-2**12, 2**12 + 1, N) / 2.0**12
    pre = a @ b + bias[None, :]
    return a, b, bias, pre


def test_the_inputs_are_exact_and_cover_every_regime(exact_inputs):
    """The pre-activations reach each activation's saturated tails and its curved middle, and f32 holds every
    partial sum exactly, so any kernel's summation order gives the float64 value."""
    a, b, bias, pre = exact_inputs
    assert pre.min() < -8 and pre.max() > 8
    assert np.count_nonzero(np.abs(pre) < 1) > 1000
    # Every product and bias is a multiple of 2^-12, and no partial sum can pass sum|a b| + |bias|: below 2^12,
    # every partial sum in any order is a multiple of 2^-12 under 2^12, which f32's 24 bits hold exactly.
    assert np.array_equal(a * 32, np.round(a * 32)) and np.array_equal(b * 32, np.round(b * 32))
    assert np.array_equal(bias * 2**12, np.round(bias * 2**12))
    assert (np.abs(a) @ np.abs(b) + np.abs(bias)).max() < 2**12


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("act", ACT_KINDS)
def test_each_activation_within_its_bound(cp, exact_inputs, act, kernel, request):
    from fraglab.runtime import gpu

    if kernel == "wgmma":
        request.getfixturevalue("sm90")
    if kernel == "wmma" and gpu.compute_capability() < 70:
        pytest.skip("WMMA needs sm_70 or newer")
    a, b, bias, pre = exact_inputs
    dtype = np.float32 if kernel == "simt" else np.float16
    assert np.array_equal(a.astype(dtype), a) and np.array_equal(b.astype(dtype), b)  # exact in the input type
    d = cp.full((M, N), np.nan, dtype=cp.float32)
    api.gemm(cp.asarray(a.astype(dtype)), cp.asarray(b.astype(dtype)), bias=cp.asarray(bias.astype(np.float32)),
             act=act, leaky_slope=LEAKY_SLOPE, kernel=kernel, out=d)
    got = d.get().astype(np.float64)
    want = activate(pre, act, LEAKY_SLOPE)
    err = np.abs(got - want) / np.maximum(1.0, np.abs(pre))
    worst = int(np.argmax(err))
    assert err.max() <= ERROR_BOUND[act], (
        f"{kernel} {act}: error {err.max():.2e} at x = {pre.flat[worst]!r} (got {got.flat[worst]!r}, "
        f"want {want.flat[worst]!r}); bound {ERROR_BOUND[act]:.0e}")
