"""The torch road (gemm/torch_road.py) on the CPU: the stride rules as torch tensors meet them (one clear error
naming the fix for what no kernel takes), empty sizes, and the per-call path with a stub launch: a signature is
validated and planned once, a set of pointers bound once, D and Z come from torch.empty, K = 0 gives
act(beta * C + bias) as torch.addmm does. The kernels: test_torch_gpu.py."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the torch road needs PyTorch (pip install fraglab[torch])")

from fraglab.gemm import torch_road  # noqa: E402
from fraglab.gemm.validate import GemmArgumentError, tensor_core_kernel  # noqa: E402

H = torch.float16


def t(*shape, dtype=H):
    return torch.randn(*shape).to(dtype)


# ---------------------------------------------------------------------------------------------
# Strides

def test_row_pitch_of_a_b_and_out_is_read_not_copied():
    wide = t(64, 520)
    plan = torch_road.signature_plan(wide[:, :512], t(48, 512).t(), out=torch.empty(64, 72)[:, :48])
    assert (plan.lda, plan.ldb, plan.ldd, plan.b_order) == (520, 0, 72, "F")
    plan = torch_road.signature_plan(t(64, 512), t(512, 72)[:, :64])   # row-major B with a pitch
    assert (plan.ldb, plan.b_order) == (72, "C")
    plan = torch_road.signature_plan(t(64, 512), t(72, 512)[:64].t())   # column-major B, rows 512 apart (dense)
    assert (plan.ldb, plan.b_order) == (0, "F")
    plan = torch_road.signature_plan(t(64, 512), t(80, 520)[:64, :512].t())   # column-major B with a pitch
    assert (plan.ldb, plan.b_order) == (520, "F")
    assert plan.strided and not torch_road.signature_plan(t(8, 8), t(8, 8)).strided
    plan = torch_road.signature_plan(t(32, 64).t(), t(32, 16))   # column-major A (x.t()): read as it is
    assert (plan.a_order, plan.lda, plan.m, plan.k) == ("F", 0, 64, 32)
    plan = torch_road.signature_plan(t(32, 72)[:, :64].t(), t(32, 16))   # column-major A, columns 72 apart
    assert (plan.a_order, plan.lda) == ("F", 72) and plan.strided


@pytest.mark.parametrize("make,argument,fragment", [
    (lambda: dict(a=torch.empty(64, 32, dtype=torch.float8_e4m3fn).t(),
                  b=torch.empty(16, 64, dtype=torch.float8_e4m3fn).t()), "a", "K-major"),   # 8-bit: no transpose
    (lambda: dict(a=t(16, 64)[:, ::2], b=t(32, 16)), "a", "unit stride"),
    (lambda: dict(a=t(16, 37)[:, :32], b=t(32, 16)), "a", "16 bytes"),   # a row pitch of 74 bytes
    (lambda: dict(a=t(16, 32), b=t(32, 40)[:, ::2]), "b", "unit stride"),
    (lambda: dict(a=t(16, 32), b=t(32, 16), c=torch.randn(16, 21)[:, :16], beta=1.0), "c", "16 bytes"),
    (lambda: dict(a=t(16, 32), b=t(32, 16), bias=torch.randn(32)[::2]), "bias", "unit stride"),
    (lambda: dict(a=t(16, 32), b=t(32, 16), bias=torch.randn(16, 21)[:, :16]), "bias", "16 bytes"),
    (lambda: dict(a=t(16, 32), b=t(32, 16), out=torch.empty(16, 16).t()), "out", "column-major"),
    (lambda: dict(a=t(16, 40)[:, :32], b=t(32, 16), kernel="wmma"), "kernel", "wgmma"),
    (lambda: dict(a=t(16, 32).expand(16, 32)[:, :1].expand(16, 32), b=t(32, 16)), "a", "unit stride"),
])
def test_what_no_kernel_takes_is_one_error_naming_the_fix(make, argument, fragment):
    with pytest.raises(GemmArgumentError) as info:
        torch_road.signature_plan(**make())
    assert info.value.argument == argument and fragment in str(info.value)
    assert "contiguous" in str(info.value)   # the fix: a contiguous copy


def test_a_strided_operand_that_tma_cannot_place_is_an_error_not_a_fallback():
    # base[1:513, 3:515]: the pitch is fine, the start is 6 bytes past a 16-byte boundary
    with pytest.raises(GemmArgumentError) as info:
        tensor_core_kernel("auto", 90, 512, 512, (0x1000 + 6, 0x2000), "f16", strided=True)
    assert "16-byte aligned" in str(info.value) and "contiguous" in str(info.value)
    with pytest.raises(GemmArgumentError):
        tensor_core_kernel("auto", 80, 512, 512, (0, 0), "f16", strided=True)   # no TMA before sm_90
    assert tensor_core_kernel("auto", 90, 512, 512, (0x1000, 0x2000), "f16", strided=True) == ("wgmma", None)
    assert tensor_core_kernel("auto", 90, 500, 512, (0, 0), "f16")[0] == "wmma"   # dense: the fallback stays


@pytest.mark.parametrize("m,n,k", [(0, 16, 8), (16, 0, 8), (16, 16, 0), (0, 0, 0)])
def test_empty_sizes_are_planned(m, n, k):
    plan = torch_road.signature_plan(t(m, k), t(k, n), bias=torch.randn(n), act="relu")
    assert (plan.m, plan.n, plan.k) == (m, n, k)


def test_tensor_views_carry_bit_patterns():
    assert torch_road.TensorView(t(4, 8, dtype=torch.bfloat16)).bits == "bf16"
    assert torch_road.TensorView(torch.empty(4, 16, dtype=torch.float8_e4m3fn)).bits == "e4m3"
    view = torch_road.TensorView(t(4, 8)[:, :6])
    assert view.shape == (4, 6) and view.strides == (16, 2) and view.dtype.itemsize == 2
    plan = torch_road.signature_plan(t(16, 32, dtype=torch.bfloat16), t(32, 16, dtype=torch.bfloat16),
                                     out_dtype="bf16")
    assert plan.dtype == "bf16" and plan.out_dtype == "bf16"


# ---------------------------------------------------------------------------------------------
# The per-call path, with a stub launch

@pytest.fixture
def stub_road(monkeypatch):
    """The road planned for CPU tensors (no GPU here), launches recorded instead of run."""
    made, bound, launched = [], [], []

    class StubLaunch:
        def __init__(self, pointers):
            self.pointers = pointers

        def launch_on(self, handle):
            launched.append((self.pointers, handle))

    def plan_road(torch_, a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out, z_out, kernel,
                  input_dtype, tile, out_dtype):
        plan = torch_road.signature_plan(a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out,
                                         z_out, kernel, input_dtype, out_dtype)
        made.append(plan)
        road = torch_road.TorchRoad(torch_, plan, None, torch.device("cpu"), alpha, beta, leaky_slope, 1)
        road.device_index = 0
        road.launches = torch_road.BoundedMemo(lambda p: bound.append(p) or StubLaunch(p), 64)
        return road

    monkeypatch.setattr(torch_road, "_plan_road", plan_road)
    monkeypatch.setattr(torch_road, "_RAW_STREAM", lambda index: 1234)
    monkeypatch.setattr(torch_road, "_ROADS", torch_road.BoundedMemo(lambda key: None, 512))
    return made, bound, launched


def call(a, b, **kw):
    args = dict(c=None, bias=None, bias_mode=None, act="none", alpha=1.0, beta=0.0, leaky_slope=0.01, save_z=False,
                out=None, z_out=None, kernel="auto", input_dtype=None, tile=None, stream=None, out_dtype=None)
    args.update(kw)
    return torch_road.torch_gemm(torch, a, b, *args.values())


def test_a_signature_is_planned_once_and_pointers_bound_once(stub_road):
    made, bound, launched = stub_road
    a, b, bias = t(32, 64), t(48, 64).t(), torch.randn(48)
    for _ in range(3):
        d, z = call(a, b, bias=bias, act="relu", save_z=True, out_dtype="f16")
    assert len(made) == 1 and d.shape == (32, 48) and d.dtype == torch.float16 and z.dtype == torch.float32
    assert launched[-1][1] == 1234   # torch's current stream
    pointers = launched[-1][0]
    assert pointers[:2] == (a.data_ptr(), b.data_ptr()) and pointers[4] == bias.data_ptr() and pointers[3] == 0
    out = torch.empty(32, 48, dtype=torch.float16)
    assert call(a, b, bias=bias, act="relu", out=out, out_dtype="f16") is out
    assert len(made) == 2 and launched[-1][0][2] == out.data_ptr()
    call(a, b, bias=bias, act="relu", out=out, out_dtype="f16")
    assert bound.count(launched[-1][0]) == 1   # the second call with the same pointers reused the bound launch


def test_other_arrays_and_aliases_leave_the_road(stub_road):
    a = t(16, 16)
    assert call(a, [[1.0]]) is None   # not a tensor: the CuPy road names it
    with pytest.raises(GemmArgumentError, match="same array as a"):
        call(a, t(16, 16), out=a, out_dtype="f16")
    call(a, t(16, 16), out=t(16, 16), out_dtype="f16")   # a signature planned with a separate out ...
    assert call(a, t(16, 16), out=a, out_dtype="f16") is None   # ... leaves the road when out is a: CuPy's names it


def test_misaligned_pointers_leave_the_road_or_fail_when_strided(stub_road):
    base = t(40, 528)
    assert call(base.reshape(-1)[1:1 + 16 * 16].view(16, 16), t(16, 16)) is None   # dense: the WMMA kernel
    with pytest.raises(GemmArgumentError, match="16-byte aligned"):
        call(base[1:17, 3:19], t(16, 16))


@pytest.mark.parametrize("act", ["none", "relu", "gelu", "sigmoid"])
def test_k_zero_is_the_epilogue_of_nothing(stub_road, act):
    c, bias = torch.randn(6, 8), torch.randn(6)
    d, z = call(t(6, 0), t(0, 8), c=c, beta=0.5, bias=bias, bias_mode="per_m", act=act, save_z=True)
    pre = torch.addmm(0.5 * c + bias[:, None], torch.empty(6, 0), torch.empty(0, 8))
    torch.testing.assert_close(z, pre)
    torch.testing.assert_close(d, torch_road.activation(torch, pre, act))
    assert not stub_road[2]   # no kernel launched


def test_empty_m_or_n_give_empty_d(stub_road):
    assert call(t(0, 8), t(8, 16)).shape == (0, 16)
    assert call(t(8, 8), t(8, 0), save_z=True)[1].shape == (8, 0)
