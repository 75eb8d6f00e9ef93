"""fraglab for torch users on the GPU (marked gpu; skipped with the reason otherwise): the torch road against a
float64 reference, Parameters, strides without copies and the errors for what TMA cannot describe, empty sizes,
streams, CUDA graphs (torch's and CuPy's, with and without out=), torch.compile (fullgraph, reduce-overhead),
opcheck, and training gradients against torch's float64 autograd. Outputs the test allocates are poisoned (NaN)."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch", reason="these tests drive fraglab from PyTorch (pip install fraglab[torch])")

import fraglab  # noqa: E402
import fraglab.torch as ft  # noqa: E402  (registers torch.ops.fraglab.gemm)
from fraglab.gemm import torch_road  # noqa: E402
from fraglab.gemm.validate import GemmArgumentError  # noqa: E402

pytestmark = pytest.mark.gpu
F = torch.nn.functional
TOL = {torch.float32: 2e-3, torch.float16: 3e-3, torch.bfloat16: 1.2e-2}


@pytest.fixture(scope="module", autouse=True)
def sm90():
    from fraglab.runtime import gpu

    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    if gpu.compute_capability() != 90:
        pytest.skip("the torch road runs the wgmma GEMM, which needs an sm_90 GPU (H100/H200)")


def rand(*shape, dtype=torch.float16, seed=0, scale=1.0):
    g = torch.Generator(device="cuda").manual_seed(seed + 7 * sum(shape))
    return (torch.randn(*shape, device="cuda", generator=g) * scale).to(dtype)


def act64(x, act):
    return fraglab.gemm.torch_road.activation(torch, x, act)


def close(d, ref, dtype=None):
    """max |d - ref| <= TOL * max |ref| (ref in float64)."""
    d = d.double()
    assert torch.isfinite(d).all(), "an element left unwritten (NaN poison) or overflowed"
    scale = ref.abs().max().clamp_min(1e-30)
    err = ((d - ref).abs().max() / scale).item()
    assert err <= TOL[dtype or torch.float32], f"relative error {err:.2e}"


def expect(a, b, c=None, beta=0.0, bias=None, bias_mode="per_n", act="none", alpha=1.0):
    pre = alpha * a.double() @ b.double()
    if c is not None:
        pre = pre + beta * c.double()
    if bias is not None:
        pre = pre + (bias.double()[:, None] if bias_mode == "per_m" else bias.double())
    return act64(pre, act), pre


# ---------------------------------------------------------------------------------------------
# The road

@pytest.mark.parametrize("dtype,act,bias_mode,out_dtype,b_cols", [
    (torch.float16, "relu", "per_n", torch.float16, True), (torch.bfloat16, "gelu", "full", torch.float32, False),
    (torch.float16, "none", "per_m", torch.float32, True)])
def test_torch_road_matches_float64(dtype, act, bias_mode, out_dtype, b_cols):
    m, n, k = 200, 136, 72
    a = rand(m, k, dtype=dtype)
    b = rand(n, k, dtype=dtype, seed=1).t() if b_cols else rand(k, n, dtype=dtype, seed=1)
    bias = {"per_n": rand(n, dtype=torch.float32, seed=2), "per_m": rand(m, dtype=torch.float32, seed=2),
            "full": rand(m, n, dtype=torch.float32, seed=2)}[bias_mode]
    c = rand(m, n, dtype=torch.float32, seed=3)
    d, z = fraglab.gemm(a, b, c=c, beta=0.5, bias=bias, bias_mode=bias_mode, act=act, alpha=1.5, save_z=True,
                        out_dtype=out_dtype)
    ref, pre = expect(a, b, c, 0.5, bias, bias_mode, act, 1.5)
    assert isinstance(d, torch.Tensor) and d.dtype == out_dtype and z.dtype == torch.float32
    close(d, ref, out_dtype)
    close(z, pre)
    road = [r for r in torch_road._ROADS.values() if r and r.plan.m == m and r.plan.act == act]
    assert road and road[0].spec is not None, "the call did not take the torch road"
    out = torch.full((m, n), float("nan"), device="cuda", dtype=out_dtype)
    assert fraglab.gemm(a, b, c=c, beta=0.5, bias=bias, bias_mode=bias_mode, act=act, alpha=1.5, out=out) is out
    close(out, ref, out_dtype)


def test_parameters_are_taken_with_and_without_grad():
    w = torch.nn.Parameter(rand(64, 128))
    bias = torch.nn.Parameter(rand(64, dtype=torch.float32))
    x = rand(48, 128)
    for context in (torch.no_grad(), torch.enable_grad()):
        with context:
            d = fraglab.gemm(x, w.t(), bias=bias, act="relu")
        close(d, expect(x, w.t(), bias=bias, act="relu")[0])
    w32 = torch.nn.Parameter(rand(64, 128, dtype=torch.float32))   # float32: the SIMT kernel, through CuPy
    close(fraglab.gemm(rand(48, 128, dtype=torch.float32), w32.t()), expect(rand(48, 128, dtype=torch.float32),
                                                                             w32.t())[0])


# ---------------------------------------------------------------------------------------------
# Strides, empty sizes

def test_strided_a_b_and_out_run_without_copies():
    m, n, k = 128, 64, 512
    wide_a, wide_w = rand(m, 520), rand(n, 520, seed=1)
    a, b = wide_a[:, :k], wide_w[:, :k].t()   # A's rows 520 apart; B column-major, its columns 520 apart
    buffer = torch.full((m, n + 8), float("nan"), device="cuda", dtype=torch.float16)
    out = buffer[:, :n]
    assert fraglab.gemm(a, b, bias=rand(n, dtype=torch.float32, seed=2), act="silu", out=out) is out
    close(out, expect(a, b, bias=rand(n, dtype=torch.float32, seed=2), act="silu")[0], torch.float16)
    assert torch.isnan(buffer[:, n:]).all(), "the row pitch was not honoured: D's padding was written"
    rows_b = rand(k, n + 16, seed=3)[:, :n]   # row-major B with a pitch
    close(fraglab.gemm(a, rows_b), expect(a, rows_b)[0])


def test_strided_cupy_arrays_run_without_copies():
    import cupy as cp

    a = cp.asarray(rand(64, 136))[:, :128]
    b = cp.asarray(rand(128, 72, seed=1))[:, :64]
    d = fraglab.gemm(a, b, kernel="wgmma")
    close(torch.as_tensor(d, device="cuda"), expect(torch.as_tensor(a, device="cuda"),
                                                    torch.as_tensor(b, device="cuda"))[0])


def test_what_tma_cannot_describe_is_one_error():
    base = rand(520, 520)
    with pytest.raises(GemmArgumentError, match="16-byte aligned"):
        fraglab.gemm(base[1:513, 3:515], rand(512, 64))
    column_major_a = rand(64, 32).t()    # a (32 x 64) with unit stride along M: read as it is for 16-bit types
    close(fraglab.gemm(column_major_a, rand(64, 16)), expect(column_major_a, rand(64, 16))[0])
    with pytest.raises(GemmArgumentError, match=r"column-major.*a\.contiguous\(\)"):
        fraglab.gemm(column_major_a.to(torch.float8_e4m3fn), rand(16, 64).to(torch.float8_e4m3fn).t())


@pytest.mark.parametrize("m,n,k", [(0, 64, 32), (48, 0, 32), (48, 64, 0)])
@pytest.mark.parametrize("arrays", ["torch", "cupy"])
def test_empty_sizes_as_torch_addmm(m, n, k, arrays):
    a, b = rand(m, k), rand(k, n, seed=1)
    c, bias = rand(m, n, dtype=torch.float32, seed=2), rand(n, dtype=torch.float32, seed=3)
    ref = torch.sigmoid(torch.addmm(bias + 0.5 * c, a.float(), b.float(), beta=1.0))
    if arrays == "cupy":
        import cupy as cp

        d = torch.as_tensor(fraglab.gemm(cp.asarray(a), cp.asarray(b), c=cp.asarray(c), beta=0.5,
                                         bias=cp.asarray(bias), act="sigmoid"), device="cuda")
    else:
        d = fraglab.gemm(a, b, c=c, beta=0.5, bias=bias, act="sigmoid")
    assert tuple(d.shape) == (m, n)
    torch.testing.assert_close(d, ref, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Streams and CUDA graphs

def test_current_and_given_streams():
    a, b, bias = rand(256, 128), rand(128, 64, seed=1), rand(64, dtype=torch.float32, seed=2)
    ref = expect(a, b, bias=bias, act="relu")[0]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        d = fraglab.gemm(a, b, bias=bias, act="relu")
    side.synchronize()
    close(d, ref)
    other = torch.cuda.Stream()
    other.wait_stream(torch.cuda.current_stream())
    d = fraglab.gemm(a, b, bias=bias, act="relu", stream=other.cuda_stream)
    other.synchronize()
    close(d, ref)
    prepared = fraglab.gemm.api.prepare(a, b, bias=bias, act="relu")
    with torch.cuda.stream(side):
        result = prepared()
    side.synchronize()
    close(result, ref)


@pytest.mark.parametrize("m", [8, 256])   # the skinny GEMM, the wgmma GEMM
def test_calls_autograd_does_not_record_skip_the_operator_with_its_result(m):
    x, w, bias = rand(m, 512), rand(256, 512, seed=1), rand(256, dtype=torch.float32, seed=2)
    through_operator = torch.ops.fraglab.gemm(x, w.t(), None, bias, "per_n", "silu", 1.0, 0.0, 0.01, False,
                                              torch.float16)[0]
    with torch.no_grad():
        direct = ft.linear(x, w, bias, act="silu")
        assert direct.grad_fn is None
        assert torch.equal(direct, through_operator)               # the same kernel on the same inputs
        assert torch.equal(ft.gemm(x, w.t(), bias=bias, act="silu", out_dtype=torch.float16), through_operator)
        with pytest.raises(GemmArgumentError) as refused:          # the road's validation names the argument
            ft.gemm(x, rand(256, 511, seed=3).t())
        assert refused.value.argument == "b"
    w.requires_grad_()
    recorded = ft.linear(x, w, bias, act="silu")
    assert recorded.grad_fn is not None   # autograd's node: the operator took it
    torch.testing.assert_close(recorded.detach(), through_operator, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("with_out", [False, True])
@pytest.mark.parametrize("m,n,k", [(256, 96, 128), (48, 256, 8192)])   # the second: a split-K cluster
def test_torch_graph_capture_and_replay(with_out, m, n, k):
    a, b, bias = rand(m, k), rand(n, k, seed=1).t(), rand(n, dtype=torch.float32, seed=2)
    out = torch.empty(m, n, device="cuda", dtype=torch.float16) if with_out else None
    kwargs = dict(bias=bias, act="gelu_tanh", out_dtype=torch.float16) if not with_out else dict(
        bias=bias, act="gelu_tanh", out=out)
    fraglab.gemm(a, b, **kwargs)   # warm: compile and plan outside the capture
    torch.cuda.synchronize()
    if k == 8192:
        assert fraglab.gemm.api.prepare(a, b, **kwargs).kernel_spec.tile_config.cluster_k == 2
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        d = fraglab.gemm(a, b, **kwargs)
    a.copy_(rand(m, k, seed=5))
    b.copy_(rand(n, k, seed=6).t())
    bias.copy_(rand(n, dtype=torch.float32, seed=7))
    graph.replay()
    torch.cuda.synchronize()
    eager = fraglab.gemm(a, b, bias=bias, act="gelu_tanh", out_dtype=torch.float16)
    assert torch.equal(d, eager)
    close(d, expect(a, b, bias=bias, act="gelu_tanh")[0], torch.float16)


@pytest.mark.parametrize("with_out", [False, True])
@pytest.mark.parametrize("arrays", ["cupy", "torch"])
def test_cupy_stream_capture_and_replay(with_out, arrays):
    import cupy as cp

    a, b = rand(256, 128), rand(128, 64, seed=1)
    bias = rand(64, dtype=torch.float32, seed=2)
    if arrays == "cupy":
        a, b, bias = cp.asarray(a), cp.asarray(b), cp.asarray(bias)
        out = cp.empty((256, 64), dtype=cp.float32) if with_out else None
    else:
        out = torch.empty(256, 64, device="cuda") if with_out else None
    stream = cp.cuda.Stream(non_blocking=True)
    run = lambda: fraglab.gemm(a, b, bias=bias, act="relu", out=out, stream=stream)  # noqa: E731
    run()   # warm: compile, plan, and the pools hold a block of D's size on this stream
    stream.synchronize()
    stream.begin_capture()
    d = run()
    graph = stream.end_capture()
    new = rand(256, 128, seed=9)
    if arrays == "cupy":
        a[...] = cp.asarray(new)
    else:
        a.copy_(new)
    torch.cuda.synchronize()
    graph.launch(stream)
    stream.synchronize()
    eager = fraglab.gemm(a, b, bias=bias, act="relu")
    assert bool((torch.as_tensor(d, device="cuda") == torch.as_tensor(eager, device="cuda")).all())


# ---------------------------------------------------------------------------------------------
# The registered operator: opcheck, torch.compile

def test_opcheck_on_the_gpu():
    a, b = rand(64, 72), rand(40, 72, seed=1).t()
    torch.library.opcheck(torch.ops.fraglab.gemm.default, (a, b, None, rand(40, dtype=torch.float32, seed=2),
                                                           "per_n", "relu", 1.0, 0.0, 0.01, True, torch.float16))


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        import fraglab.torch as ft

        self.up = ft.Linear(128, 256, act="gelu", device="cuda", dtype=torch.float16)
        self.down = ft.Linear(256, 128, act="none", device="cuda", dtype=torch.float16)

    def forward(self, x):
        return x + self.down(self.up(x))


def test_compile_fullgraph_and_reduce_overhead():
    import torch._dynamo

    torch._dynamo.reset()
    torch.manual_seed(0)
    model, x = Block(), rand(4, 32, 128)
    explained = torch._dynamo.explain(model)(x)
    assert explained.graph_break_count == 0
    eager = model(x)
    compiled = torch.compile(model, fullgraph=True)
    torch.testing.assert_close(compiled(x), eager, rtol=0, atol=0)
    graphed = torch.compile(model, fullgraph=True, mode="reduce-overhead")
    with torch.no_grad():   # inference, where CUDA graphs are meant: no Z is kept
        for step in range(3):
            xs = rand(4, 32, 128, seed=step)
            torch.testing.assert_close(graphed(xs).clone(), model(xs), rtol=0, atol=0)
    x = x.clone().requires_grad_()
    grads = torch.autograd.grad(compiled(x).float().sum(), [x, *model.parameters()])
    expect_grads = torch.autograd.grad(model(x).float().sum(), [x, *model.parameters()])
    for mine, reference in zip(grads, expect_grads):
        torch.testing.assert_close(mine, reference, rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------
# Training: gradients against torch's float64 autograd

@pytest.mark.parametrize("act,with_bias,k", [("relu", True, 72), ("gelu_tanh", True, 72), ("silu", True, 72),
                                             ("none", False, 72), ("tanh", True, 30)])
def test_linear_gradients_against_float64_autograd(act, with_bias, k):
    import fraglab.torch as ft

    m, n = 37, 40   # odd M; K = 30 is not a multiple of 8: the WMMA kernel through CuPy
    x = rand(m, k, scale=0.5).requires_grad_()
    w = torch.nn.Parameter(rand(n, k, seed=1, scale=0.3))
    bias = torch.nn.Parameter(rand(n, dtype=torch.float32, seed=2)) if with_bias else None
    weights = rand(m, n, dtype=torch.float32, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # K = 30: the KernelFallback notice
        y = ft.linear(x, w, bias, act=act)
        leaves = [t for t in (x, w, bias) if t is not None]
        ours = torch.autograd.grad((y.float() * weights).sum(), leaves)
    wide = [t.detach().double().requires_grad_() for t in leaves]
    y64 = act64(F.linear(wide[0], wide[1], wide[2] if with_bias else None), act)
    close(y, y64.detach(), torch.float16)
    theirs = torch.autograd.grad((y64 * weights.double()).sum(), wide)
    for mine, reference, leaf in zip(ours, theirs, leaves):
        assert mine.dtype == leaf.dtype and mine.shape == leaf.shape
        scale = reference.abs().max().item()
        assert (mine.double() - reference).abs().max().item() <= 2e-2 * scale


def test_linear_module_trains_in_half_as_torch_linear_does():
    torch.manual_seed(1)
    layer = ft.Linear(64, 32, act="relu").cuda().half()   # a float16 bias: read as it is by the epilogue
    plain = torch.nn.Linear(64, 32).cuda().half()
    plain.load_state_dict(layer.state_dict())
    optimisers = [torch.optim.SGD(m.parameters(), lr=0.5) for m in (layer, plain)]
    x, target = rand(128, 64), rand(128, 32, seed=4).relu()
    losses = []
    for _ in range(10):
        step = []
        for model, optimiser, act in ((layer, optimisers[0], lambda v: v), (plain, optimisers[1], F.relu)):
            loss = F.mse_loss(act(model(x)).float(), target.float())
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            step.append(loss.item())
        losses.append(step)
    assert layer.bias.grad.dtype == torch.float16 and layer.weight.grad.dtype == torch.float16
    for ours, theirs in losses:
        assert abs(ours - theirs) <= 0.02 * theirs
    assert losses[-1][0] < losses[0][0]
    torch.testing.assert_close(layer.weight, plain.weight, rtol=0.02, atol=2e-3)


# ---------------------------------------------------------------------------------------------
# Swapped schedules (rule swap_ab: the kernel computes D^T, the call's A in the kernel's B map)

@pytest.mark.parametrize("m,n,k", [(80, 4096, 4096), (160, 6144, 4096)])   # a split-K cluster, one block a tile
def test_swapped_schedule_one_shot_calls_follow_new_addresses(m, n, k):
    """One-shot calls whose x, bias and D move from call to call (the road's own launch rewrites the tensor maps:
    the call's A lives in the kernel's B map there), then a CUDA graph of one, then the weight's gradient."""
    w, bias = rand(n, k, seed=1, scale=0.05), rand(n, dtype=torch.float16, seed=2)   # nn.Linear's, as they are
    from fraglab.gemm.api import prepare

    plan = prepare(rand(m, k), w.t(), bias=bias, bias_mode="per_n", act="relu",
                                    out=torch.empty(m, n, device="cuda", dtype=torch.float16))
    assert plan.kernel_spec.tile_config.swap_ab, plan.kernel_spec.tile
    for seed in range(3):
        x = rand(m, k, seed=10 + seed)
        d = ft.linear(x, w, bias, act="relu")
        close(d, expect(x, w.t(), bias=bias.float(), act="relu")[0], torch.float16)
    x = rand(m, k, seed=20)
    ft.linear(x, w, bias, act="relu")
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        d = ft.linear(x, w, bias, act="relu")
    x.copy_(rand(m, k, seed=21))
    graph.replay()
    torch.cuda.synchronize()
    close(d, expect(x, w.t(), bias=bias.float(), act="relu")[0], torch.float16)
    w.requires_grad_()
    x.requires_grad_()
    y = ft.linear(x, w, bias, act="none")
    grad = rand(m, n, seed=22)
    y.backward(grad)
    close(w.grad, grad.double().t() @ x.detach().double(), torch.float16)
    close(x.grad, grad.double() @ w.detach().double(), torch.float16)
