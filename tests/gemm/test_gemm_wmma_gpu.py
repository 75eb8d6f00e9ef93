"""The WMMA GEMM on the GPU against the float64 reference (marked gpu; skipped with the reason without one).

Outputs are poisoned (NaN) before every run, so an element the kernel never writes fails the check.
"""

import itertools

import numpy as np
import pytest

from fraglab.gemm.cast import bf16_dtype
from fraglab.gemm.reference import ACT_KINDS, BIAS_MODES, check_result, reference_gemm

pytestmark = pytest.mark.gpu


def _spec(m, n, k, dtype, **kw):
    from fraglab.gemm import wmma as gemm_wmma
    return gemm_wmma.spec_for(dtype, m, n, k, aligned=gemm_wmma.is_aligned(k, n, ()), **kw)


@pytest.fixture(scope="module", autouse=True)
def precompiled(cp):
    """Compile the instantiations these tests use in parallel first (else ~1.5 s each, one after another)."""
    from fraglab.gemm import wmma as gemm_wmma

    specs = [_spec(m, n, k, dt, act="relu", bias_mode="per_n") for m, n, k in SIZES for dt in ("f16", "bf16")]
    for i, (act, bias_mode, has_c, save_z) in enumerate(COMBOS):
        m, n, k = _combo_shape(i)
        specs.append(_spec(m, n, k, _combo_dtype(i), act=act, bias_mode=bias_mode, has_c=has_c, save_z=save_z))
    seconds = gemm_wmma.precompile(specs)
    print(f"precompiled {len(set(specs))} WMMA instantiations in {seconds:.1f} s")


def _inputs(cp, m, n, k, dtype, seed, *, bias_mode="none", has_c=False, bits=False):
    """Random inputs on the GPU plus their exact float64 copies on the host."""
    from fraglab.bench import wmma_suite

    rng = np.random.default_rng(seed)
    a32 = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b32 = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    if dtype == "f16":
        a, b = cp.asarray(a32.astype(np.float16)), cp.asarray(b32.astype(np.float16))
    else:
        a, b = wmma_suite.to_bf16_bits(cp, cp.asarray(a32)), wmma_suite.to_bf16_bits(cp, cp.asarray(b32))
        bf = None if bits else bf16_dtype(cp)
        if bf is not None:
            a, b = a.view(bf), b.view(bf)
        bits = bf is None
    host = {"a": wmma_suite.host_float64(a, dtype, bits), "b": wmma_suite.host_float64(b, dtype, bits)}
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32) if has_c else None
    shape = {"none": None, "per_m": (m,), "per_n": (n,), "full": (m, n)}[bias_mode]
    bias = rng.uniform(-1, 1, shape).astype(np.float32) if shape else None
    return a, b, c, bias, host, ("bf16" if bits else None)


def _run_and_check(cp, m, n, k, dtype="f16", *, act="none", bias_mode="none", has_c=False, save_z=False, seed=0,
                   alpha=1.0, beta=None, offset_a=False, bits=False):
    import fraglab

    a, b, c, bias, host, input_dtype = _inputs(cp, m, n, k, dtype, seed, bias_mode=bias_mode, has_c=has_c, bits=bits)
    if offset_a:  # same values, base pointer 2 bytes past a 16-byte boundary: the generic path
        flat = cp.empty(m * k + 1, dtype=a.dtype)
        flat[1:] = a.ravel()
        a = flat[1:].reshape(m, k)
    beta = (0.75 if has_c else 0.0) if beta is None else beta
    out = cp.full((m, n), cp.nan, dtype=cp.float32)
    res = fraglab.gemm(a, b, c=cp.asarray(c) if c is not None else None,
                       bias=cp.asarray(bias) if bias is not None else None, bias_mode=bias_mode, act=act,
                       alpha=alpha, beta=beta, leaky_slope=0.05, save_z=save_z, out=out, input_dtype=input_dtype, kernel="wmma")
    d, z = res if save_z else (res, None)
    assert d is out
    d_ref, z_ref = reference_gemm(host["a"], host["b"], c=c if has_c else None, bias=bias, bias_mode=bias_mode,
                                  act=act, alpha=alpha, beta=beta, leaky_slope=0.05)
    ok, max_abs, rel = check_result(d.get(), d_ref, dtype, z_ref=z_ref)
    assert ok, f"D {m}x{n}x{k} {dtype} {act} {bias_mode} C={has_c} Z={save_z}: max abs {max_abs:.3e}, rel {rel:.3e}"
    if save_z:
        ok, max_abs, rel = check_result(z.get(), z_ref, dtype)
        assert ok, f"Z {m}x{n}x{k}: max abs {max_abs:.3e}, rel {rel:.3e}"


SIZES = [
    (1, 1, 1), (1, 8, 8), (8, 1, 8), (3, 5, 7), (17, 33, 9), (31, 45, 19),    # tiny, odd, K below one step
    (129, 257, 40), (128, 128, 32), (130, 264, 72),                           # just over a tile, aligned edges
    (256, 512, 1000), (200, 136, 1032), (64, 8, 4104),                        # K tails, skinny N
    (3, 1024, 16), (1024, 3, 24), (4099, 16, 8),                              # skinny M / N
    (257, 513, 129), (1000, 1000, 1000), (2048, 2112, 256),                   # odd, the 256x128 tile
]


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("m,n,k", SIZES)
def test_sizes(cp, m, n, k, dtype):
    _run_and_check(cp, m, n, k, dtype, act="relu", bias_mode="per_n", seed=m * 7 + n * 3 + k)


@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (200, 136, 1032)])
def test_misaligned_base_pointer_takes_the_generic_path(cp, m, n, k):
    _run_and_check(cp, m, n, k, "f16", act="gelu", bias_mode="full", has_c=True, offset_a=True)


def test_bf16_as_bit_patterns(cp):
    _run_and_check(cp, 100, 72, 48, "bf16", act="silu", bias_mode="per_m", bits=True)


COMBOS = list(itertools.product(ACT_KINDS, BIAS_MODES, (False, True), (False, True)))


@pytest.mark.parametrize("act,bias_mode,has_c,save_z", COMBOS)
def test_every_epilogue_combination(cp, act, bias_mode, has_c, save_z):
    # alternate the 16-byte path (K, N multiples of 8) and the generic one so both see every epilogue
    i = COMBOS.index((act, bias_mode, has_c, save_z))
    m, n, k = _combo_shape(i)
    _run_and_check(cp, m, n, k, _combo_dtype(i), act=act, bias_mode=bias_mode, has_c=has_c, save_z=save_z, seed=i,
                   alpha=1.25)


def _combo_shape(i):
    return (70, 72, 40) if i % 2 == 0 else (33, 45, 19)


def _combo_dtype(i):
    return "f16" if i % 4 < 2 else "bf16"


@pytest.mark.parametrize("act", ACT_KINDS)
@pytest.mark.parametrize("m,n,k", [(40, 48, 32), (37, 45, 21)])
def test_nan_and_inf_propagate(cp, act, m, n, k):
    import fraglab

    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    a[2, 3] = np.nan                  # row 2 of D becomes NaN
    b[:, 5] = np.float16(np.inf)      # column 5: +-inf products of both signs -> NaN
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    c[7, 9] = np.nan
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    bias[11] = np.inf
    bias[12] = -np.inf
    out = cp.full((m, n), 123.0, dtype=cp.float32)
    fraglab.gemm(cp.asarray(a), cp.asarray(b), c=cp.asarray(c), bias=cp.asarray(bias), bias_mode="per_n", act=act,
                 beta=1.0, out=out, kernel="wmma")
    with np.errstate(invalid="ignore"):
        d_ref, z_ref = reference_gemm(a, b, c=c, bias=bias, bias_mode="per_n", act=act, beta=1.0)
    assert np.isnan(d_ref[2]).all() and np.isnan(d_ref[7, 9])
    ok, max_abs, rel = check_result(out.get(), d_ref, "f16", z_ref=z_ref)
    assert ok, f"{act}: max abs {max_abs}, rel {rel}"


def test_save_z_returns_both_and_beta_zero_ignores_nan_in_c(cp):
    import fraglab

    a = cp.asarray(np.random.default_rng(1).uniform(-1, 1, (48, 40)).astype(np.float16))
    b = cp.asarray(np.random.default_rng(2).uniform(-1, 1, (40, 56)).astype(np.float16))
    c = cp.full((48, 56), cp.nan, dtype=cp.float32)
    d, z = fraglab.gemm(a, b, c=c, beta=0.0, act="relu", save_z=True, kernel="wmma")
    ref = a.get().astype(np.float64) @ b.get().astype(np.float64)
    assert np.isfinite(d.get()).all()
    assert check_result(z.get(), ref, "f16")[0] and check_result(d.get(), np.maximum(ref, 0), "f16")[0]


def test_host_arrays_are_refused_by_name(cp):
    import fraglab
    from fraglab.gemm.validate import GemmArgumentError

    a = np.ones((16, 16), np.float16)
    with pytest.raises(GemmArgumentError) as info:
        fraglab.gemm(a, cp.asarray(a))
    assert info.value.argument == "a" and "CuPy" in str(info.value)


def test_forced_tiles_agree(cp):
    import fraglab

    a = cp.asarray(np.random.default_rng(3).uniform(-1, 1, (384, 512)).astype(np.float16))
    b = cp.asarray(np.random.default_rng(4).uniform(-1, 1, (512, 640)).astype(np.float16))
    ref = a.get().astype(np.float64) @ b.get().astype(np.float64)
    for tile in ("256x128", "128x64"):
        assert check_result(fraglab.gemm(a, b, tile=tile, kernel="wmma").get(), ref, "f16")[0], tile
