"""fraglab.gemm's public call on the GPU (marked gpu; skipped with the reason otherwise): a 16-bit D from every
kernel against the float64 reference, torch tensors in and out, and stream= honoured.

D is poisoned (NaN) where the test allocates it. The stream tests hold the stream in a spin kernel and only then
write A on it, so a GEMM (or a cast) launched on any other stream reads the old A and fails.
"""

import numpy as np
import pytest

from fraglab.gemm import api
from fraglab.gemm.reference import check_result, reference_gemm
from gemm_operands import bf16_values

pytestmark = pytest.mark.gpu

SPIN_CYCLES = 200_000_000   # ~0.1 s at 2 GHz: far longer than launching what follows


def _inputs(m, n, k, seed, dtype=np.float16):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    return a.astype(dtype), b.astype(dtype), bias


def _host_d(d, out_dtype):
    h = d.get()
    return bf16_values(h).astype(np.float64) if h.dtype == np.uint16 else h.astype(np.float64)


@pytest.mark.parametrize("kernel", ["wgmma", "wmma"])
@pytest.mark.parametrize("out_dtype", ["f16", "bf16"])
def test_a_16_bit_d_matches_float64(cp, kernel, out_dtype, request):
    import fraglab

    if kernel == "wgmma":
        request.getfixturevalue("sm90")
    a, b, bias = _inputs(300, 264, 200, seed=len(kernel) + len(out_dtype))
    d = fraglab.gemm(cp.asarray(a), cp.asarray(b), bias=cp.asarray(bias), act="gelu", alpha=1.5, kernel=kernel,
                     out_dtype=out_dtype)
    assert d.dtype.itemsize == 2 and d.shape == (300, 264)
    ref, z_ref = reference_gemm(a, b, bias=bias, bias_mode="per_n", act="gelu", alpha=1.5)
    ok, max_abs, rel = check_result(_host_d(d, out_dtype), ref, "f16", z_ref=z_ref, out_dtype=out_dtype)
    assert ok, f"{kernel} {out_dtype}: max abs {max_abs:.3e}, rel {rel:.3e}"


@pytest.mark.parametrize("kernel", ["wgmma", "wmma"])
def test_an_f16_out_given_is_written_whole(cp, kernel, request):
    import fraglab

    if kernel == "wgmma":
        request.getfixturevalue("sm90")
    a, b, _ = _inputs(131, 136, 72, seed=3)
    out = cp.full((131, 136), cp.nan, dtype=cp.float16)
    z = fraglab.gemm(cp.asarray(a), cp.asarray(b), out=out, kernel=kernel, save_z=True, act="relu")
    assert z[0] is out and z[1].dtype == cp.float32      # out decides D's type; Z stays f32
    ref, z_ref = reference_gemm(a, b, act="relu")
    assert check_result(out.get(), ref, "f16", z_ref=z_ref, out_dtype="f16")[0]
    assert check_result(z[1].get(), z_ref, "f16")[0]


def test_simt_casts_to_bf16_bits(cp):
    import fraglab

    a, b, bias = _inputs(77, 65, 33, seed=4, dtype=np.float32)
    d = fraglab.gemm(cp.asarray(a), cp.asarray(b), bias=cp.asarray(bias), act="silu", out_dtype="bf16")
    assert d.dtype.itemsize == 2
    ref, z_ref = reference_gemm(a, b, bias=bias, bias_mode="per_n", act="silu")
    assert check_result(_host_d(d, "bf16"), ref, "f32", z_ref=z_ref, out_dtype="bf16")[0]


def test_nan_survives_the_cast(cp):
    import fraglab

    a, b, _ = _inputs(40, 48, 32, seed=5)
    a[2, 3] = np.nan
    for out_dtype in ("f16", "bf16"):
        d = _host_d(fraglab.gemm(cp.asarray(a), cp.asarray(b), kernel="wmma", out_dtype=out_dtype), out_dtype)
        assert np.isnan(d[2]).all() and np.isfinite(np.delete(d, 2, axis=0)).all(), out_dtype


# ---------------------------------------------------------------------------------------------
# torch

def test_torch_tensors_in_give_torch_tensors_out(cp, torch):
    import fraglab

    a, b, bias = _inputs(96, 80, 64, seed=6)
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    d, z = fraglab.gemm(ta, tb, bias=torch.from_numpy(bias).cuda(), act="relu", save_z=True)
    assert isinstance(d, torch.Tensor) and isinstance(z, torch.Tensor)
    assert d.dtype == torch.float32 and d.is_cuda and tuple(d.shape) == (96, 80)
    torch.cuda.synchronize()
    ref, z_ref = reference_gemm(a, b, bias=bias, bias_mode="per_n", act="relu")
    assert check_result(d.cpu().numpy(), ref, "f16", z_ref=z_ref)[0]
    assert check_result(z.cpu().numpy(), z_ref, "f16")[0]


def test_torch_bf16_in_and_out(cp, torch):
    import fraglab

    a, b, _ = _inputs(64, 72, 48, seed=7, dtype=np.float32)
    ta, tb = torch.from_numpy(a).cuda().bfloat16(), torch.from_numpy(b).cuda().bfloat16()
    d = fraglab.gemm(ta, tb, out_dtype="bf16")
    assert isinstance(d, torch.Tensor) and d.dtype == torch.bfloat16
    ref, _ = reference_gemm(ta.float().cpu().numpy(), tb.float().cpu().numpy())
    assert check_result(d.float().cpu().numpy(), ref, "bf16", out_dtype="bf16")[0]
    out = torch.full((64, 72), float("nan"), device="cuda", dtype=torch.float16)
    assert fraglab.gemm(ta, tb, out=out) is out
    torch.cuda.synchronize()
    assert check_result(out.float().cpu().numpy(), ref, "bf16", out_dtype="f16")[0]


def test_a_torch_cpu_tensor_is_refused_by_name(cp, torch):
    import fraglab
    from fraglab.gemm.validate import GemmArgumentError

    a, b, _ = _inputs(16, 16, 16, seed=8)
    with pytest.raises(GemmArgumentError) as info:
        fraglab.gemm(torch.from_numpy(a).cuda(), torch.from_numpy(b))
    assert info.value.argument == "b" and "host memory" in str(info.value)


# ---------------------------------------------------------------------------------------------
# stream=

def _spin(cp, stream):
    kernel = cp.RawKernel(r'''
extern "C" __global__ void fraglab_test_spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
}''', "fraglab_test_spin")
    with stream:
        kernel((1,), (1,), (np.int64(SPIN_CYCLES),))


def _warm(cp, a, b, **kw):
    """Compile and cache what the timed-out part launches, so nothing slow happens while the stream is held."""
    import fraglab

    fraglab.gemm(cp.asarray(a), cp.asarray(b), **kw)
    cp.cuda.runtime.deviceSynchronize()


_STAGED = []   # sources of copies still queued behind a spin: freed early, the pool would hand them to the next
               # allocation on another stream (an H2D copy overwrote one before the queued copy read it)


def _held_a(cp, stream, a_new):
    """A of zeros now, a_new once the spin on `stream` ends (written on that stream)."""
    cp.cuda.runtime.deviceSynchronize()
    a = cp.zeros(a_new.shape, dtype=a_new.dtype)
    staged = cp.asarray(a_new)
    _STAGED.append(staged)
    cp.cuda.runtime.deviceSynchronize()
    _spin(cp, stream)
    with stream:
        a[...] = staged
    return a


@pytest.mark.parametrize("kernel,out_dtype", [("auto", "f32"), ("wmma", "f16"), ("simt", "bf16")])
def test_the_gemm_and_its_cast_run_on_the_given_stream(cp, kernel, out_dtype):
    import fraglab

    dtype = np.float32 if kernel == "simt" else np.float16
    a, b, _ = _inputs(128, 136, 64, seed=9, dtype=dtype)
    _warm(cp, a, b, kernel=kernel, out_dtype=out_dtype)
    stream = cp.cuda.Stream(non_blocking=True)
    held = _held_a(cp, stream, a)
    d = fraglab.gemm(held, cp.asarray(b), kernel=kernel, out_dtype=out_dtype, stream=stream)
    assert not stream.done          # still spinning: the GEMM is queued behind it
    stream.synchronize()            # that stream only
    ref, _ = reference_gemm(a, b)
    ok, max_abs, rel = check_result(_host_d(d, out_dtype), ref, "f32" if kernel == "simt" else "f16",
                                    out_dtype=out_dtype)
    assert ok, f"{kernel} {out_dtype}: max abs {max_abs:.3e} (the launch did not wait for the stream)"


def test_a_prepared_gemm_takes_an_int_handle(cp):
    from fraglab.gemm.api import prepare

    a, b, _ = _inputs(128, 128, 64, seed=10)
    _warm(cp, a, b, kernel="wmma", out_dtype="f16")
    stream = cp.cuda.Stream(non_blocking=True)
    held = _held_a(cp, stream, a)
    run = prepare(held, cp.asarray(b), out_dtype="f16", kernel="wmma")
    d = run(stream.ptr)
    assert not stream.done
    stream.synchronize()
    assert check_result(_host_d(d, "f16"), reference_gemm(a, b)[0], "f16", out_dtype="f16")[0]


def test_a_torch_stream_is_honoured(cp, torch):
    import fraglab

    a, b, _ = _inputs(128, 128, 64, seed=11)
    _warm(cp, a, b)
    stream = torch.cuda.Stream()
    held = _held_a(cp, api._cupy_stream(stream), a)   # the torch stream as CuPy sees it
    d = fraglab.gemm(held, cp.asarray(b), stream=stream)
    assert not stream.query()
    stream.synchronize()
    assert check_result(d.get(), reference_gemm(a, b)[0], "f16")[0]


def test_a_remembered_signature_still_checks_addresses_identity_and_argument_types(cp, sm90):
    """The CuPy road remembers a call's plan by its arrays' shapes, strides and dtypes (api._signature_road): the
    same signature with an address TMA cannot take falls back to WMMA with its notice, the same shapes with out
    being b are refused, and alpha True (== 1.0 as a key) is refused as it is on a first call."""
    import fraglab
    from fraglab.gemm.validate import KernelFallback

    a, b, bias = _inputs(64, 136, 72, seed=11)
    da, db, dbias = cp.asarray(a), cp.asarray(b), cp.asarray(bias)
    ref, _ = reference_gemm(a, b, bias=bias, bias_mode="per_n", act="relu")
    first = fraglab.gemm(da, db, bias=dbias, act="relu", out_dtype="f16")
    again = fraglab.gemm(da, db, bias=dbias, act="relu", out_dtype="f16")
    assert again.data.ptr != first.data.ptr   # a new D each call (the first is still held)
    for d in (first, again):
        assert check_result(_host_d(d, "f16"), ref, "f16", out_dtype="f16")[0]
    # A two bytes into a buffer: the same shape, strides and dtype, an address 16-byte TMA cannot take
    flat = cp.empty(a.size + 8, dtype=cp.float16)
    shifted = flat[1:1 + a.size].reshape(a.shape)
    shifted[...] = da
    assert shifted.strides == da.strides and shifted.data.ptr % 16
    with pytest.warns(KernelFallback, match="WMMA"):
        d = fraglab.gemm(shifted, db, bias=dbias, act="relu", out_dtype="f16")
    assert check_result(_host_d(d, "f16"), ref, "f16", out_dtype="f16")[0]
    out = cp.empty((64, 136), dtype=cp.float16)
    fraglab.gemm(da, db, bias=dbias, act="relu", out=out)
    square = cp.asarray(_inputs(64, 64, 64, seed=12)[0])
    fraglab.gemm(square, square, out=cp.empty((64, 64), dtype=cp.float16))
    with pytest.raises(api.GemmArgumentError, match="out"):
        fraglab.gemm(square, square, out=square)   # the same signature as the call above, out now being b
    with pytest.raises(api.GemmArgumentError, match="alpha"):
        fraglab.gemm(da, db, bias=dbias, act="relu", out_dtype="f16", alpha=True)
    with pytest.raises(api.GemmArgumentError, match="act"):
        fraglab.gemm(da, db, act=["relu"])   # unhashable: no signature, the full road names it
