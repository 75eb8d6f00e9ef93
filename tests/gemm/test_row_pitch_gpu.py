"""Row pitches on the GPU (marked gpu; skipped with the reason otherwise): C, a full bias, D and Z as views of
wider arrays, read and written in place by every kernel family (wgmma through CuPy and through torch, WMMA,
SIMT), against the float64 reference; and the torch road's one-shot launch when D, Z and A arrive at new
addresses on every call (kept alive, so nothing is reused).

The wide buffers of D and Z are poisoned (NaN) before the call: an element of the view left unwritten fails the
reference check, and the columns past the view (the pitch's padding) must still hold the poison afterwards.
"""

from __future__ import annotations

import numpy as np
import pytest

from fraglab.gemm import api
from fraglab.gemm import wgmma as gemm_wgmma
from fraglab.gemm.reference import check_result, reference_gemm

pytestmark = pytest.mark.gpu
M, N, K = 200, 72, 64        # M not a multiple of any tile; K and N multiples of 8 (the 16-byte paths)
PITCH = {"c": 80, "bias": 88, "d": 96, "z": 104}   # elements; every one a 16-byte multiple for f32 and f16


def host_problem(seed, dtype=np.float16, m=M):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, K)).astype(dtype)
    b = rng.uniform(-1, 1, (K, N)).astype(dtype)
    c = rng.uniform(-1, 1, (m, PITCH["c"])).astype(np.float32)         # C's view: c[:, :N]
    bias = rng.uniform(-1, 1, (m, PITCH["bias"])).astype(np.float32)   # the full bias' view: bias[:, :N]
    return a, b, c, bias


def poisoned(xp, rows, pitch, dtype):
    return xp.full((rows, pitch), np.nan, dtype=dtype)


def check(d_wide, z_wide, a, b, c, bias, act, dtype, out_dtype, beta=0.75):
    d_wide, z_wide = np.asarray(d_wide, np.float64), np.asarray(z_wide, np.float64)
    d_ref, z_ref = reference_gemm(a, b, c=c[:, :N], bias=bias[:, :N], bias_mode="full", act=act, beta=beta)
    ok, err, rel = check_result(d_wide[:, :N], d_ref, dtype, out_dtype=out_dtype, k=K)
    assert ok, f"D: max abs error {err:.3g} (relative {rel:.3g})"
    ok, err, rel = check_result(z_wide[:, :N], z_ref, dtype, k=K)
    assert ok, f"Z: max abs error {err:.3g} (relative {rel:.3g})"
    assert np.isnan(d_wide[:, N:]).all() and np.isnan(z_wide[:, N:]).all(), "a write past the view (the padding)"


@pytest.mark.parametrize("kernel,out_dtype", [("wgmma", "f32"), ("wgmma", "f16"), ("wmma", "f32"), ("wmma", "f16"),
                                              ("simt", "f32"), ("simt", "f16")])
def test_cupy_road_reads_and_writes_the_views_in_place(cp, kernel, out_dtype, request):
    if kernel == "wgmma":
        request.getfixturevalue("sm90")
    dtype = np.float32 if kernel == "simt" else np.float16
    a, b, c, bias = host_problem(1, dtype)
    d_wide = poisoned(cp, M, PITCH["d"], np.float32 if out_dtype == "f32" else np.float16)
    z_wide = poisoned(cp, M, PITCH["z"], np.float32)
    c_d, bias_d = cp.asarray(c), cp.asarray(bias)
    run = api.prepare(cp.asarray(a), cp.asarray(b), c=c_d[:, :N], beta=0.75, bias=bias_d[:, :N], bias_mode="full",
                      act="gelu", out=d_wide[:, :N], save_z=True, z_out=z_wide[:, :N], kernel=kernel)
    assert (run.plan.ldc, run.plan.ldbias, run.plan.ldd, run.plan.ldz) == tuple(PITCH.values())
    d, z = run()
    assert d.data.ptr == d_wide.data.ptr and z.data.ptr == z_wide.data.ptr   # the views themselves, no copy
    check(d_wide.get(), z_wide.get(), a, b, c, bias, "gelu", "f32" if kernel == "simt" else "f16", out_dtype)


def test_simt_reads_a_and_b_with_a_row_pitch(cp):
    rng = np.random.default_rng(5)
    a_wide = rng.uniform(-1, 1, (M, K + 12)).astype(np.float32)
    b_wide = rng.uniform(-1, 1, (K, N + 20)).astype(np.float32)
    d_wide = poisoned(cp, M, PITCH["d"], np.float32)
    a_d, b_d = cp.asarray(a_wide), cp.asarray(b_wide)
    run = api.prepare(a_d[:, :K], b_d[:, :N], act="relu", out=d_wide[:, :N], kernel="simt")
    assert (run.plan.lda, run.plan.ldb, run.plan.ldd) == (K + 12, N + 20, PITCH["d"])
    run()
    d_ref, _ = reference_gemm(a_wide[:, :K], b_wide[:, :N], act="relu")
    d = d_wide.get().astype(np.float64)
    assert check_result(d[:, :N], d_ref, "f32", k=K)[0] and np.isnan(d[:, N:]).all()


def test_wgmma_direct_stores_follow_the_row_pitch(cp, sm90):
    """The tiles that store D straight from registers (store='direct') write at D's pitch too."""
    a, b, c, bias = host_problem(2)
    spec = gemm_wgmma.spec_for("f16", M, N, K, act="silu", bias_mode="full", has_c=True, save_z=True,
                               store="direct")
    d_wide, z_wide = poisoned(cp, M, PITCH["d"], np.float32), poisoned(cp, M, PITCH["z"], np.float32)
    a_d, b_d, c_d, bias_d = (cp.asarray(x) for x in (a, b, c, bias))
    gemm_wgmma.bind(spec, a_d, b_d, d_wide[:, :N], c=c_d[:, :N], bias=bias_d[:, :N], z=z_wide[:, :N], beta=0.75,
                    ldd=PITCH["d"], ldc=PITCH["c"], ldbias=PITCH["bias"], ldz=PITCH["z"])()
    check(d_wide.get(), z_wide.get(), a, b, c, bias, "silu", "f16", "f32")


@pytest.mark.parametrize("out_dtype", ["f32", "f16"])
def test_torch_road_reads_and_writes_the_views_in_place(torch, sm90, out_dtype):
    a, b, c, bias = host_problem(3)
    dev = "cuda"
    d_wide = torch.full((M, PITCH["d"]), float("nan"), device=dev,
                        dtype=torch.float32 if out_dtype == "f32" else torch.float16)
    z_wide = torch.full((M, PITCH["z"]), float("nan"), device=dev)
    c_t, bias_t = torch.from_numpy(c).to(dev), torch.from_numpy(bias).to(dev)
    w = torch.from_numpy(np.ascontiguousarray(b.T)).to(dev)   # F.linear's weight: b = w.t(), column-major
    d, z = api.gemm(torch.from_numpy(a).to(dev), w.t(), c=c_t[:, :N], beta=0.75, bias=bias_t[:, :N],
                    bias_mode="full", act="gelu_tanh", out=d_wide[:, :N], save_z=True, z_out=z_wide[:, :N])
    assert d.data_ptr() == d_wide.data_ptr() and z.data_ptr() == z_wide.data_ptr()
    check(d_wide.double().cpu().numpy(), z_wide.double().cpu().numpy(), a, b, c, bias, "gelu_tanh", "f16", out_dtype)


def test_fresh_d_z_and_a_at_new_addresses_every_call(torch, sm90):
    """One-shot calls whose D and Z are kept alive (so each lands at a new address) and whose A changes: every
    result right, though the launch was bound once and its addresses rewritten."""
    from fraglab.gemm import torch_road

    rng = np.random.default_rng(4)
    w = torch.from_numpy(rng.uniform(-1, 1, (N, K)).astype(np.float16)).cuda()
    bias = torch.from_numpy(rng.uniform(-1, 1, N).astype(np.float32)).cuda()
    xs = [torch.from_numpy(rng.uniform(-1, 1, (M, K)).astype(np.float16)).cuda() for _ in range(4)]
    kept = []
    for step in range(12):   # A alternates among four tensors; D and Z are new each time
        kept.append((step % 4, *api.gemm(xs[step % 4], w.t(), bias=bias, act="relu", save_z=True)))
    roads = [road for road in torch_road._ROADS.values() if road and road.plan.m == M and road.plan.save_z]
    assert roads and all(road.moving is not None for road in roads)
    assert len({d.data_ptr() for _, d, _ in kept}) == len(kept)   # every D at its own address
    w64, b64 = w.double().cpu().numpy().T, bias.double().cpu().numpy()
    for index, d, z in kept:
        d_ref, z_ref = reference_gemm(xs[index].cpu().numpy(), w64, bias=b64, bias_mode="per_n", act="relu")
        assert check_result(d.cpu().numpy(), d_ref, "f16", k=K)[0]
        assert check_result(z.cpu().numpy(), z_ref, "f16", k=K)[0]
