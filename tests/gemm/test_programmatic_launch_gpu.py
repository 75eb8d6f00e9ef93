"""Programmatic dependent launch on the GPU (marked gpu; skipped with the reason otherwise). The wgmma and skinny
GEMMs start while the previous kernel in the stream ends: before `griddepcontrol.wait` they touch no global memory
but L2 prefetches of the weight. So a GEMM must read a weight, an input, C and a bias exactly as the previous kernel
left them, even when that kernel writes them, and must not write D before the previous kernel has read it; chains
of GEMMs back to back (without a synchronise between them) and CUDA graphs of them are checked against float64.
Buffers a kernel is to overwrite are poisoned (NaN) first, so a stale read shows."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="these tests drive fraglab from PyTorch (pip install fraglab[torch])")

import fraglab  # noqa: E402
from fraglab.gemm import api  # noqa: E402

pytestmark = pytest.mark.gpu
# (M, N, K) of the reading GEMM: the skinny GEMM (B by TMA, by copies), a split-K cluster, a persistent wgmma tile
READERS = [(8, 4096, 4096), (16, 11008, 4096), (64, 4096, 4096), (256, 1024, 2048)]


@pytest.fixture(scope="module", autouse=True)
def programmatic(sm90, torch):   # conftest's: an sm_90 GPU, torch with a CUDA device
    from fraglab.runtime import gpu

    if not gpu.programmatic_launch_available():
        pytest.skip("cuLaunchKernelEx is not available (or FRAGLAB_PROGRAMMATIC_LAUNCH=0): launches are plain")


def rand(*shape, seed=0, scale=1.0):
    g = torch.Generator(device="cuda").manual_seed(seed + 7 * sum(shape))
    return (torch.randn(*shape, device="cuda", generator=g) * scale).half()


def close(d, ref, tol=3e-3):
    d = d.double()
    assert torch.isfinite(d).all(), "a stale (NaN-poisoned) value was read, or an element left unwritten"
    err = ((d - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    assert err <= tol, f"relative error {err:.2e}"


@pytest.mark.parametrize("m,kernel", [(8, "skinny"), (256, "wgmma")])
def test_the_gemms_launch_programmatically(m, kernel):
    a, w = rand(m, 256), rand(512, 256, seed=1)
    prepared = api.prepare(a, w.t(), out_dtype=torch.float16)
    assert prepared.kernel_spec.tile.startswith("skinny") == (kernel == "skinny")
    assert prepared._launch_on.__self__.programmatic   # the PackedLaunch the prepared call launches


@pytest.mark.parametrize("m,n,k", READERS)
def test_a_weight_the_previous_gemm_writes_is_read_as_written(m, n, k):
    # GEMM 1 writes the weight W (N x K) the next GEMM reads as its column-major B; W is NaN until GEMM 1 lands,
    # and GEMM 1 is slow (K 4096) while GEMM 2 prefetches W's first K-blocks into L2 as it starts.
    p, q = rand(n, 4096, seed=3, scale=0.05), rand(4096, k, seed=4, scale=0.05)
    a = rand(m, k, seed=5)
    w = torch.full((n, k), float("nan"), device="cuda", dtype=torch.float16)
    for _ in range(3):
        w.fill_(float("nan"))
        fraglab.gemm(p, q, out=w)
        d = fraglab.gemm(a, w.t(), act="relu", out_dtype=torch.float16)
        torch.cuda.synchronize()
        close(d, torch.relu(a.double() @ (p.double() @ q.double()).half().double().t()))


@pytest.mark.parametrize("m,n,k", READERS)
def test_a_row_major_weight_and_the_input_written_just_before(m, n, k):
    b = torch.full((k, n), float("nan"), device="cuda", dtype=torch.float16)
    a = torch.full((m, k), float("nan"), device="cuda", dtype=torch.float16)
    b_values, a_values = rand(k, n, seed=6), rand(m, k, seed=7)
    bias = torch.rand(n, device="cuda")
    torch.mul(b_values, 1, out=b)   # elementwise kernels: the GEMM follows a kernel, not a copy engine's memcpy
    torch.mul(a_values, 1, out=a)
    d = fraglab.gemm(a, b, bias=bias, act="gelu_tanh", out_dtype=torch.float16)
    torch.cuda.synchronize()
    ref = torch.nn.functional.gelu(a_values.double() @ b_values.double() + bias.double(), approximate="tanh")
    close(d, ref)


@pytest.mark.parametrize("m,n,k", READERS)
def test_d_is_not_written_before_the_previous_gemm_read_it(m, n, k):
    # GEMM 1 reads X (M x K); GEMM 2, launched right behind it, writes its D (M x K) into X
    x, w1 = rand(m, k, seed=8), rand(n, k, seed=9, scale=0.05)
    x_before = x.clone()
    first = fraglab.gemm(x, w1.t(), out_dtype=torch.float16)
    fraglab.gemm(rand(m, 512, seed=11), rand(512, k, seed=12), out=x)
    torch.cuda.synchronize()
    close(first, x_before.double() @ w1.double().t())


@pytest.mark.parametrize("m", [1, 8, 32, 64, 128])
def test_a_chain_of_layers_back_to_back_and_in_a_graph(m):
    # x -> (x W1^T) -> relu((.) W2^T + b) -> (.) W3^T: each GEMM's input is the last one's D, no synchronise
    hidden = 1024
    ws = [rand(2048, hidden, seed=13, scale=0.03), rand(1024, 2048, seed=14, scale=0.03),
          rand(hidden, 1024, seed=15, scale=0.03)]
    bias = torch.rand(1024, device="cuda")

    def layers(x):
        for _ in range(3):
            h = fraglab.gemm(x, ws[0].t(), out_dtype=torch.float16)
            h = fraglab.gemm(h, ws[1].t(), bias=bias, act="relu", out_dtype=torch.float16)
            x = fraglab.gemm(h, ws[2].t(), out_dtype=torch.float16)
        return x

    def reference(x):
        x = x.double()
        for _ in range(3):
            h = (x @ ws[0].double().t()).half().double()
            h = torch.relu(h @ ws[1].double().t() + bias.double()).half().double()
            x = (h @ ws[2].double().t()).half().double()
        return x

    x = rand(m, hidden, seed=16)
    close(layers(x), reference(x), tol=1e-2)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = layers(x)
    x.copy_(rand(m, hidden, seed=17))
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    close(out, reference(x), tol=1e-2)
