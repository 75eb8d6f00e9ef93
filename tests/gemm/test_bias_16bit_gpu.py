"""A bias of the inputs' own 16-bit type on the GPU (marked gpu; skipped with the reason otherwise): read as it is
by the wgmma GEMM's tiles (one block, clusters, split-K, ping-pong) and the skinny GEMM, through a float32 copy per
launch by the WMMA kernel, added by the K = 0 road, through fraglab.torch.linear (forward, gradients, a CUDA graph
replayed after the bias changed in place). Against float64 of the 16-bit values; outputs poisoned (NaN)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="these tests drive fraglab from PyTorch (pip install fraglab[torch])")

import fraglab  # noqa: E402
import fraglab.torch as ft  # noqa: E402
from fraglab.gemm import torch_road  # noqa: E402
from fraglab.gemm.wmma import WmmaKernelSpec  # noqa: E402

# conftest.py's fixtures: CuPy, an sm_90 GPU and torch with a CUDA device, each skipping with its reason
pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("sm90", "torch")]
F = torch.nn.functional
TOL = {torch.float32: 2e-3, torch.float16: 3e-3, torch.bfloat16: 1.2e-2}
DTYPES = [torch.float16, torch.bfloat16]


def rand(*shape, dtype=torch.float16, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed + 7 * sum(shape))
    return torch.randn(*shape, device="cuda", generator=g).to(dtype)


def close(d, ref, dtype=torch.float32):
    d = d.double()
    assert torch.isfinite(d).all(), "an element left unwritten (NaN poison) or overflowed"
    err = ((d - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    assert err <= TOL[dtype], f"relative error {err:.2e}"


def relu_of(a, b, bias):
    pre = a.double() @ b.double() + bias.double()
    return pre.clamp_min(0), pre


_CODES = {torch.float16: "f16", torch.bfloat16: "bf16"}


def _road_of(m, n, k, dtype):
    """The torch road's plan of this signature's latest call."""
    roads = [r for r in torch_road._ROADS.values()
             if r and (r.plan.m, r.plan.n, r.plan.k, r.plan.dtype) == (m, n, k, _CODES[dtype])]
    assert roads, "the call did not take the torch road"
    return roads[-1]


@pytest.mark.parametrize("dtype", DTYPES, ids=["half", "bfloat"])
@pytest.mark.parametrize("m,n,k,tile,b_cols", [
    (8, 200, 1040, "skinny", True), (31, 136, 520, "skinny", False),   # K split over a cluster, tiles past N
    (64, 264, 4096, "64x64pk2", True), (128, 136, 4096, "128x64k2", False),   # split-K clusters
    (200, 264, 136, "128x256", False), (130, 136, 72, "64x64p", True),         # one block; ping-pong
    (200, 264, 136, "128x128c2", True), (200, 264, 136, "128x128c2x2", False)])  # B (and A) multicast
def test_a_16_bit_bias_is_read_as_it_is(dtype, m, n, k, tile, b_cols):
    a = rand(m, k, dtype=dtype)
    b = rand(n, k, dtype=dtype, seed=1).t() if b_cols else rand(k, n, dtype=dtype, seed=1)
    bias = rand(n, dtype=dtype, seed=2) * 4   # large enough that a dropped or misplaced bias shows
    out = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    z = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    d, z = fraglab.gemm(a, b, bias=bias, act="relu", save_z=True, out=out, z_out=z, tile=tile)
    ref, pre = relu_of(a, b, bias)
    close(d, ref, dtype)
    close(z, pre)
    road = _road_of(m, n, k, dtype)
    assert road.spec.bias_dtype == _CODES[dtype]
    assert (road.spec.tile.startswith("skinny") if tile == "skinny" else road.spec.tile == tile)


@pytest.mark.parametrize("dtype", DTYPES, ids=["half", "bfloat"])
def test_the_wmma_kernel_reads_a_float32_copy_made_at_each_launch(dtype):
    import cupy as cp

    from fraglab.gemm import api

    m, n, k = 96, 72, 64
    a, b, bias = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype, seed=1), rand(n, dtype=dtype, seed=2) * 4
    run = api.prepare(a, b, bias=bias, act="relu", kernel="wmma")
    assert isinstance(run.kernel_spec, WmmaKernelSpec) and run.plan.bias_dtype == _CODES[dtype]
    for seed in (3, 4):   # the bias changed in place: the next launch reads it as it is then
        bias.copy_(rand(n, dtype=dtype, seed=seed) * 4)
        d = run()
        torch.cuda.synchronize()
        close(torch.as_tensor(d, device="cuda") if isinstance(d, cp.ndarray) else d, relu_of(a, b, bias)[0])


def test_bf16_bits_from_cupy_take_a_bias_of_bf16_bits():
    import cupy as cp

    m, n, k = 64, 136, 72
    a, b, bias = rand(m, k, dtype=torch.bfloat16), rand(k, n, dtype=torch.bfloat16, seed=1), \
        rand(n, dtype=torch.bfloat16, seed=2) * 4
    bits = [cp.asarray(x.view(torch.int16).cpu().numpy().view(np.uint16)) for x in (a, b, bias)]
    ref = relu_of(a, b, bias)[0].cpu()
    for kernel in ("wgmma", "wmma"):
        d = fraglab.gemm(*bits[:2], bias=bits[2], act="relu", input_dtype="bf16", kernel=kernel)
        close(torch.from_numpy(cp.asnumpy(d)), ref)


@pytest.mark.parametrize("arrays", ["torch", "cupy"])
def test_k_zero_adds_a_16_bit_bias(arrays):
    import cupy as cp

    m, n = 6, 8
    bias = rand(n, seed=2) * 4
    if arrays == "cupy":
        a, b, bias_in = cp.empty((m, 0), cp.float16), cp.empty((0, n), cp.float16), cp.asarray(bias)
    else:
        a, b = torch.empty(m, 0, device="cuda", dtype=torch.float16), torch.empty(0, n, device="cuda",
                                                                                  dtype=torch.float16)
        bias_in = bias
    d = fraglab.gemm(a, b, bias=bias_in, act="relu")
    got = torch.as_tensor(cp.asnumpy(d) if arrays == "cupy" else d.cpu())
    torch.testing.assert_close(got.double(), bias.double().clamp_min(0).cpu().expand(m, n), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", DTYPES, ids=["half", "bfloat"])
@pytest.mark.parametrize("m", [8, 200])   # the skinny GEMM, the wgmma GEMM
def test_linear_takes_its_16_bit_bias_as_it_is(dtype, m):
    x, w, bias = rand(m, 256, dtype=dtype), rand(136, 256, dtype=dtype, seed=1), rand(136, dtype=dtype, seed=2) * 4
    with torch.no_grad():
        y = ft.linear(x, w, bias, act="relu")
    close(y, F.relu(F.linear(x.double(), w.double(), bias.double())), dtype)
    assert _road_of(m, 136, 256, dtype).plan.bias_dtype == _CODES[dtype]   # no float32 copy made for the call
    other = torch.float16 if dtype == torch.bfloat16 else torch.bfloat16   # another type: converted first
    with torch.no_grad():
        y = ft.linear(x, w, bias.to(other), act="relu")
    close(y, F.relu(F.linear(x.double(), w.double(), bias.to(other).double())), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["half", "bfloat"])
def test_linear_gradient_of_a_16_bit_bias(dtype):
    x = rand(40, 128, dtype=dtype).requires_grad_()
    w = torch.nn.Parameter(rand(72, 128, dtype=dtype, seed=1))
    bias = torch.nn.Parameter(rand(72, dtype=dtype, seed=2))
    weights = rand(40, 72, dtype=torch.float32, seed=3)
    ours = torch.autograd.grad((ft.linear(x, w, bias, act="gelu").float() * weights).sum(), [x, w, bias])
    wide = [t.detach().double().requires_grad_() for t in (x, w, bias)]
    y64 = F.gelu(F.linear(*wide))
    theirs = torch.autograd.grad((y64 * weights.double()).sum(), wide)
    for mine, reference, leaf in zip(ours, theirs, (x, w, bias)):
        assert mine.dtype == leaf.dtype and mine.shape == leaf.shape
        assert (mine.double() - reference).abs().max().item() <= 3e-2 * reference.abs().max().item()


@pytest.mark.parametrize("m", [8, 64])   # the skinny GEMM; the split-K wgmma tile
def test_a_graph_replays_with_the_bias_as_it_is_at_replay(m):
    x, w, bias = rand(m, 4096), rand(256, 4096, seed=1), rand(256, seed=2) * 4
    with torch.no_grad():
        ft.linear(x, w, bias, act="relu")   # compile and plan outside the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y = ft.linear(x, w, bias, act="relu")
        x.copy_(rand(m, 4096, seed=5))
        bias.copy_(rand(256, seed=7) * 4)
        graph.replay()
        torch.cuda.synchronize()
    close(y, F.relu(F.linear(x.double(), w.double(), bias.double())), torch.float16)
