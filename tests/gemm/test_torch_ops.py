"""torch.ops.fraglab.gemm and fraglab.torch.linear / Linear on the CPU: the fake function's shapes and types under
FakeTensorMode, every bad argument named, torch.library.opcheck, torch.compile without graph breaks, and the
gradients in float64 (the operator's CPU reference and its registered backward) against torch's own autograd of
the same function, for every activation and bias mode, on odd sizes. The kernels: test_torch_gpu.py."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch", reason="fraglab.torch needs PyTorch (pip install fraglab[torch])")

import fraglab.torch as ft  # noqa: E402
from fraglab.gemm.epilogue import ACT_KINDS, BIAS_MODES  # noqa: E402
from fraglab.gemm.validate import GemmArgumentError  # noqa: E402

F = torch.nn.functional
M, K, N = 5, 7, 3   # odd on purpose


def torch_act(x, act, slope=0.01):
    """The activation through torch's own functions (what autograd differentiates for the comparison)."""
    return {"none": lambda v: v, "relu": F.relu, "leaky_relu": lambda v: F.leaky_relu(v, slope), "gelu": F.gelu,
            "gelu_tanh": lambda v: F.gelu(v, approximate="tanh"), "silu": F.silu, "sigmoid": torch.sigmoid,
            "tanh": torch.tanh}[act](x)


def leaf(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return (torch.randn(*shape, generator=g, dtype=torch.float64) * 0.7).requires_grad_()


def bias_for(mode):
    return {"none": None, "per_n": leaf(N, seed=3), "per_m": leaf(M, seed=4), "full": leaf(M, N, seed=5)}[mode]


def broadcast(bias, mode):
    return 0 if bias is None else (bias[:, None] if mode == "per_m" else bias)


# ---------------------------------------------------------------------------------------------
# The fake function

@pytest.mark.parametrize("dtype,out_dtype,save_z,expect_d", [
    (torch.float16, None, False, torch.float32), (torch.float16, torch.float16, True, torch.float16),
    (torch.bfloat16, torch.bfloat16, True, torch.bfloat16), (torch.float32, None, True, torch.float32),
    (torch.float64, None, True, torch.float64)])
def test_fake_function_gives_shapes_and_dtypes(dtype, out_dtype, save_z, expect_d):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        a, b = torch.empty(37, 24, dtype=dtype), torch.empty(24, 40, dtype=dtype).t().contiguous().t()
        bias = torch.empty(40, dtype=torch.float32)
        d, z = torch.ops.fraglab.gemm(a, b, None, bias, "per_n", "gelu", 1.0, 0.0, 0.01, save_z, out_dtype)
    assert tuple(d.shape) == (37, 40) and d.dtype == expect_d
    assert tuple(z.shape) == ((37, 40) if save_z else (0,))
    assert z.dtype == (torch.float64 if dtype == torch.float64 else torch.float32)


def test_fake_function_with_empty_sizes():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        d, z = torch.ops.fraglab.gemm(torch.empty(0, 8, dtype=torch.float16), torch.empty(8, 16, dtype=torch.float16),
                                      None, None, "none", "relu", 1.0, 0.0, 0.01, True, None)
    assert tuple(d.shape) == (0, 16) and tuple(z.shape) == (0, 16)


@pytest.mark.parametrize("change,argument,fragment", [
    (dict(a=torch.ones(2, 3, 4, dtype=torch.float16)), "a", "2-D"),
    (dict(b=torch.ones(9, 3, dtype=torch.float16)), "b", "chain"),
    (dict(b=torch.ones(8, 3, dtype=torch.bfloat16)), "b", "differs"),
    (dict(a=torch.ones(5, 8, dtype=torch.int32), b=torch.ones(8, 3, dtype=torch.int32)), "a", "float16"),
    (dict(act="swish"), "act", "gelu"),
    (dict(bias_mode="per_k"), "bias_mode", "per_n"),
    (dict(bias_mode="per_n"), "bias", "(3,)"),
    (dict(bias=torch.ones(5), bias_mode="per_n"), "bias", "(3,)"),
    (dict(bias=torch.ones(3), bias_mode="none"), "bias", "no bias"),
    (dict(c=torch.ones(3, 5)), "c", "(5, 3)"),
    (dict(out_dtype=torch.int8), "out_dtype", "float16"),
])
def test_each_bad_argument_is_named(change, argument, fragment):
    args = dict(a=torch.ones(5, 8, dtype=torch.float16), b=torch.ones(8, 3, dtype=torch.float16), c=None, bias=None,
                bias_mode="none", act="relu", out_dtype=None)
    args.update(change)
    with pytest.raises(GemmArgumentError) as info:
        torch.ops.fraglab.gemm(args["a"], args["b"], args["c"], args["bias"], args["bias_mode"], args["act"], 1.0,
                               0.0, 0.01, False, args["out_dtype"])
    assert info.value.argument == argument and fragment in str(info.value)


def test_linear_arguments_are_named():
    x, w = torch.ones(4, 6), torch.ones(3, 6)
    for call, argument in ((lambda: ft.linear(x, w, act="swish"), "act"), (lambda: ft.linear(x, w[0]), "weight"),
                           (lambda: ft.linear(torch.ones(4, 5), w), "x"),
                           (lambda: ft.Linear(6, 3, act="mish"), "act")):
        with pytest.raises(GemmArgumentError) as info:
            call()
        assert info.value.argument == argument


# ---------------------------------------------------------------------------------------------
# opcheck, the reference, gradients

@pytest.mark.parametrize("bias_mode,act,save_z", [("per_n", "gelu", True), ("per_m", "relu", False),
                                                  ("full", "silu", True), ("none", "none", False)])
def test_opcheck(bias_mode, act, save_z):
    a, b, c = leaf(M, K), leaf(K, N, seed=1), leaf(M, N, seed=2)
    torch.library.opcheck(torch.ops.fraglab.gemm.default,
                          (a, b, c, bias_for(bias_mode), bias_mode, act, 1.5, 0.5, 0.02, save_z, None))


def test_opcheck_16_bit_inputs():
    a, b = torch.randn(6, 8).half(), torch.randn(10, 8).half().t()
    torch.library.opcheck(torch.ops.fraglab.gemm.default,
                          (a, b, None, torch.randn(10), "per_n", "relu", 1.0, 0.0, 0.01, True, torch.float16))


@pytest.mark.parametrize("act", ACT_KINDS)
def test_reference_matches_torch(act):
    a, b, c = leaf(M, K), leaf(K, N, seed=1), leaf(M, N, seed=2)
    bias = bias_for("per_m")
    d, z = ft.gemm(a, b, c=c, bias=bias, bias_mode="per_m", act=act, alpha=1.25, beta=-0.5, leaky_slope=0.1,
                   save_z=True)
    pre = 1.25 * a @ b - 0.5 * c + bias[:, None]
    torch.testing.assert_close(z, pre, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(d, torch_act(pre, act, 0.1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("act", ACT_KINDS)
@pytest.mark.parametrize("bias_mode", BIAS_MODES)
def test_operator_gradients_match_torch_autograd(act, bias_mode):
    a, b, c = leaf(M, K), leaf(K, N, seed=1), leaf(M, N, seed=2)
    bias = bias_for(bias_mode)
    inputs = [x for x in (a, b, c, bias) if x is not None]
    d, z = ft.gemm(a, b, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=0.75, beta=1.5, leaky_slope=0.2,
                   save_z=True)
    pre = 0.75 * a @ b + 1.5 * c + broadcast(bias, bias_mode)
    expect = torch_act(pre, act, 0.2)
    weights_d, weights_z = torch.randn_like(d), torch.randn_like(z)
    ours = torch.autograd.grad((d * weights_d).sum() + (z * weights_z).sum(), inputs)
    theirs = torch.autograd.grad((expect * weights_d).sum() + (pre * weights_z).sum(), inputs)
    for mine, reference in zip(ours, theirs):
        torch.testing.assert_close(mine, reference, rtol=1e-10, atol=1e-10)
    assert torch.autograd.gradcheck(lambda *xs: ft.gemm(a, b, c=c, bias=bias, bias_mode=bias_mode, act=act,
                                                        alpha=0.75, beta=1.5, leaky_slope=0.2), inputs)


def test_backward_recomputes_z_when_the_forward_kept_none():
    a, b = leaf(M, K), leaf(K, N, seed=1)
    d = ft.gemm(a, b, act="tanh")   # save_z False: the backward runs the GEMM again for Z
    ours = torch.autograd.grad(d.sum(), (a, b))
    theirs = torch.autograd.grad(torch.tanh(a @ b).sum(), (a, b))
    for mine, reference in zip(ours, theirs):
        torch.testing.assert_close(mine, reference, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("act", ACT_KINDS)
@pytest.mark.parametrize("with_bias", [False, True])
def test_linear_gradients_match_torch_autograd(act, with_bias):
    x, w = leaf(2, M, K), leaf(N, K, seed=1)
    bias = leaf(N, seed=3) if with_bias else None
    inputs = [t for t in (x, w, bias) if t is not None]
    y = ft.linear(x, w, bias, act=act)
    expect = torch_act(F.linear(x, w, bias), act)
    torch.testing.assert_close(y, expect, rtol=1e-12, atol=1e-12)
    weights = torch.randn_like(y)
    ours = torch.autograd.grad((y * weights).sum(), inputs)
    theirs = torch.autograd.grad((expect * weights).sum(), inputs)
    for mine, reference in zip(ours, theirs):
        torch.testing.assert_close(mine, reference, rtol=1e-10, atol=1e-10)
    assert torch.autograd.gradcheck(lambda *xs: ft.linear(*xs, act=act) if len(xs) == 3 else ft.linear(*xs, None, act),
                                    inputs)


def test_linear_module_is_torch_linear_plus_act():
    import inspect

    ours = inspect.signature(ft.Linear.__init__).parameters
    for name, parameter in inspect.signature(torch.nn.Linear.__init__).parameters.items():
        assert name in ours and ours[name].default == parameter.default
    torch.manual_seed(0)
    layer = ft.Linear(K, N, act="gelu", dtype=torch.float64)
    torch.manual_seed(0)
    plain = torch.nn.Linear(K, N, dtype=torch.float64)
    assert layer.state_dict().keys() == plain.state_dict().keys()
    torch.testing.assert_close(layer.weight, plain.weight)   # the same initialisation
    x = leaf(4, K)
    torch.testing.assert_close(layer(x), F.gelu(plain(x)))
    assert all(p.requires_grad for p in layer.parameters()) and "act=gelu" in repr(layer)
    layer(x).sum().backward()
    assert layer.weight.grad is not None and layer.bias.grad is not None


# ---------------------------------------------------------------------------------------------
# torch.compile

class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = ft.Linear(K, 6, act="silu", dtype=torch.float64)
        self.second = ft.Linear(6, N, bias=False, act="relu", dtype=torch.float64)

    def forward(self, x):
        return self.second(self.first(x)) + ft.gemm(x[:, :N], torch.eye(N, dtype=x.dtype), act="tanh")


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compile_fullgraph_has_no_graph_breaks_and_matches_eager(backend):
    import torch._dynamo

    torch._dynamo.reset()
    model, x = TwoLayers(), leaf(9, K)
    explained = torch._dynamo.explain(model)(x)
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    compiled = torch.compile(model, fullgraph=True, backend=backend)
    torch.testing.assert_close(compiled(x), model(x))
    grads = torch.autograd.grad(compiled(x).sum(), [x, *model.parameters()])
    expect = torch.autograd.grad(model(x).sum(), [x, *model.parameters()])
    for mine, reference in zip(grads, expect):
        torch.testing.assert_close(mine, reference)


# ---------------------------------------------------------------------------------------------
# Which calls may skip the operator's dispatch (ops.run: CUDA tensors that nothing but the kernel would see)

def test_untracked_calls_are_plain_tensors_without_gradients():
    from fraglab.torch.ops import untracked

    a, b = torch.randn(M, K), torch.randn(K, N)
    weight = torch.nn.Parameter(torch.randn(K, N))
    assert untracked([a, b])
    assert not untracked([a.requires_grad_(), b])                  # autograd must record the call
    with torch.no_grad():
        assert untracked([a, b]) and untracked([a, weight])        # nothing to record under no_grad
    with torch.inference_mode():
        assert untracked([torch.randn(M, K), b])
    assert not untracked([torch.randn(M, K), weight])              # a Parameter that requires grad, grad enabled


def test_subclasses_dispatch_modes_compiling_and_tracing_go_through_the_operator():
    from torch.utils._python_dispatch import TorchDispatchMode

    from fraglab.torch.ops import untracked

    class Tagged(torch.Tensor):
        pass

    class PassThrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    a, b = torch.randn(M, K), torch.randn(K, N)
    assert not untracked([a.as_subclass(Tagged), b])
    with PassThrough():
        assert not untracked([a, b])
    assert untracked([a, b])   # the mode is gone again

    compiled = torch.compile(lambda x: x + (1.0 if untracked([x]) else 2.0), backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(a), a + 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the tracer warns that a Python bool became a constant
        traced = torch.jit.trace(lambda x: x * (1.0 if untracked([x]) else 3.0), (a,))
    torch.testing.assert_close(traced(b.t().contiguous()), b.t() * 3.0)


def test_cpu_calls_keep_the_operator_and_its_reference():
    from fraglab.torch import ops

    a, b = leaf(M, K).detach(), leaf(K, N, seed=1).detach()
    d, z = ops.run(a, b, None, None, "none", "relu", 1.0, 0.0, 0.01, True, None)
    torch.testing.assert_close(z, a @ b)
    torch.testing.assert_close(d, F.relu(a @ b))
    d, z = ops.run(a, b, None, None, "none", "none", 2.0, 0.0, 0.01, False, None)
    assert z is None
    torch.testing.assert_close(d, 2.0 * (a @ b))


# ---------------------------------------------------------------------------------------------
# torch stays optional

def test_fraglab_and_its_cli_run_without_torch(tmp_path):
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text("import sys\nsys.modules['torch'] = None\n")   # `import torch` raises ImportError
    code = ("import sys, fraglab, fraglab.gemm.api, fraglab.gemm.torch_road\n"
            "assert sys.modules['torch'] is None\n"
            "try:\n    import fraglab.torch\nexcept ImportError as exc:\n    print('refused:', exc)\n"
            "from fraglab.cli.main import main\nsys.argv = ['fraglab', '--help']\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    print('exit', exc.code)\n")
    env = {"PYTHONPATH": f"{tmp_path}:{sys.path[0]}", "PATH": "/usr/bin:/bin", "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "refused: fraglab.torch needs PyTorch: pip install fraglab[torch]" in done.stdout, done.stderr
    assert "exit 0" in done.stdout and "Usage" in done.stdout, done.stdout + done.stderr
