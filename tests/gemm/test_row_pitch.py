"""Row pitches of C, a full bias, D and Z (issue 24) on the CPU: which kernel takes which leading dimension (the
rules of gemm/validate.py, numpy arrays and torch CPU tensors standing in), what reaches each launcher, and the
torch road's one-shot launch, whose addresses follow each call's arrays (a fresh D at a new address is rewritten
into the launch, not bound again). The kernels themselves: test_row_pitch_gpu.py."""

from __future__ import annotations

import numpy as np
import pytest

from fraglab.gemm import api
from fraglab.gemm import wgmma as gemm_wgmma
from fraglab.gemm import wmma as gemm_wmma
from fraglab.gemm.validate import GemmArgumentError, validate_gemm_args


def wide(rows, cols, pitch, dtype=np.float32):
    """A (rows, cols) view of a (rows, pitch) array: row pitch `pitch` elements."""
    return np.ones((rows, pitch), dtype)[:, :cols]


@pytest.mark.parametrize("kernel,dtype", [("wgmma", np.float16), ("wmma", np.float16), ("auto", np.float16),
                                          ("simt", np.float32)])
def test_every_kernel_takes_c_bias_out_and_z_with_a_row_pitch(kernel, dtype):
    a, b = np.ones((16, 32), dtype), np.ones((32, 24), dtype)
    plan = validate_gemm_args(a, b, c=wide(16, 24, 28), beta=0.5, bias=wide(16, 24, 32), bias_mode="full",
                              out=wide(16, 24, 36), save_z=True, z_out=wide(16, 24, 40), kernel=kernel)
    assert (plan.ldc, plan.ldbias, plan.ldd, plan.ldz) == (28, 32, 36, 40)
    assert not plan.strided   # C, bias, D and Z pitches do not need TMA: no kernel is ruled out by them


def test_dense_arrays_and_unread_ones_plan_no_pitch():
    a, b = np.ones((16, 32), np.float16), np.ones((32, 24), np.float16)
    plan = validate_gemm_args(a, b, c=np.ones((16, 24), np.float32), beta=1.0, bias=np.ones(24, np.float32))
    assert (plan.ldc, plan.ldbias, plan.ldd, plan.ldz) == (0, 0, 0, 0)
    # beta = 0 ignores C, and Z without save_z is not written: their pitches are not planned
    plan = validate_gemm_args(a, b, c=wide(16, 24, 28), beta=0.0, z_out=wide(16, 24, 40))
    assert (plan.has_c, plan.ldc, plan.ldz) == (False, 0, 0)


def test_a_and_b_pitches_still_need_wgmma_or_simt():
    a16, b16 = wide(16, 32, 40, np.float16), np.ones((32, 24), np.float16)
    with pytest.raises(GemmArgumentError) as info:
        validate_gemm_args(a16, b16, kernel="wmma")
    assert info.value.argument == "kernel" and "contiguous" in str(info.value) and "wgmma" in str(info.value)
    assert validate_gemm_args(a16, b16, kernel="wgmma").lda == 40
    plan = validate_gemm_args(wide(16, 32, 36), wide(32, 24, 28), kernel="simt")   # the SIMT kernels read lda, ldb
    assert (plan.kernel, plan.lda, plan.ldb) == ("simt", 36, 28)


@pytest.mark.parametrize("kwargs,argument,fragment", [
    (dict(c=np.ones((16, 27), np.float32)[:, :24], beta=1.0), "c", "16 bytes"),        # 108-byte rows
    (dict(bias=np.ones((16, 25), np.float32)[:, :24], bias_mode="full"), "bias", "16 bytes"),
    (dict(out=np.ones((16, 26), np.float32)[:, :24]), "out", "16 bytes"),
    (dict(save_z=True, z_out=np.ones((16, 30), np.float32)[:, :24]), "z_out", "16 bytes"),
    (dict(save_z=True, z_out=np.ones((24, 16), np.float32).T), "z_out", "column-major"),
    (dict(c=np.ones((16, 48), np.float32)[:, ::2], beta=1.0), "c", "unit stride"),
    (dict(bias=np.ones(48, np.float32)[::2]), "bias", "step"),
])
def test_what_no_kernel_takes_names_the_argument_and_the_fix(kwargs, argument, fragment):
    a, b = np.ones((16, 32), np.float16), np.ones((32, 24), np.float16)
    with pytest.raises(GemmArgumentError) as info:
        validate_gemm_args(a, b, **kwargs)
    assert info.value.argument == argument and fragment in str(info.value)
    assert "contiguous" in str(info.value)   # the fix: a contiguous copy


def test_the_pitches_reach_the_wgmma_bind_and_the_wmma_launch(monkeypatch):
    seen = {}
    monkeypatch.setattr(api, "_SM_COUNT", 132)
    monkeypatch.setattr(gemm_wgmma, "bind", lambda *args, **kwargs: seen.setdefault("wgmma", kwargs))
    monkeypatch.setattr(gemm_wmma, "launch", lambda *args, **kwargs: seen.setdefault("wmma", kwargs))
    a, b = np.ones((16, 32), np.float16), np.ones((32, 24), np.float16)
    c, bias, out, z = wide(16, 24, 28), wide(16, 24, 32), wide(16, 24, 36), wide(16, 24, 40)
    for kernel in ("wgmma", "wmma"):
        plan = validate_gemm_args(a, b, c=c, beta=1.0, bias=bias, out=out, save_z=True, z_out=z, kernel=kernel)
        launch = api._launcher(kernel, None, plan, a, b, out, c, bias, z, 1.0, 1.0, 0.01)
        if kernel == "wmma":
            launch()
        assert {key: seen[kernel][key] for key in ("ldc", "ldbias", "ldd", "ldz")} == dict(ldc=28, ldbias=32,
                                                                                          ldd=36, ldz=40), kernel
    # a 16-bit D from WMMA is cast from a dense f32 scratch: the kernel's D pitch is then N, not out's
    seen.clear()
    plan = validate_gemm_args(a, b, out=wide(16, 24, 40, np.float16), kernel="wmma")
    api._launcher("wmma", None, plan, a, b, np.empty((16, 24), np.float32), None, None, None, 1.0, 0.0, 0.01)()
    assert plan.ldd == 40 and seen["wmma"]["ldd"] == 0


# ---------------------------------------------------------------------------------------------
# The torch road: the same rules read from torch tensors, and the one-shot launch that follows the addresses

torch = pytest.importorskip("torch", reason="the torch road needs PyTorch (pip install fraglab[torch])")

from fraglab.gemm import torch_road  # noqa: E402


def test_torch_tensors_plan_the_same_pitches():
    h = torch.float16
    plan = torch_road.signature_plan(torch.ones(16, 32, dtype=h), torch.ones(24, 32, dtype=h).t(),
                                     c=torch.ones(16, 28)[:, :24], beta=1.0, bias=torch.ones(16, 32)[:, :24],
                                     bias_mode="full", out=torch.ones(16, 40, dtype=h)[:, :24], save_z=True,
                                     z_out=torch.ones(16, 44)[:, :24])
    assert (plan.ldc, plan.ldbias, plan.ldd, plan.ldz, plan.b_order) == (28, 32, 40, 44, "F")


class RecordingLaunch:
    """A PackedLaunch stand-in: what was rewritten, and the launches."""

    def __init__(self):
        self.rewrites, self.launches = [], []

    def set_pointer(self, index, address):
        self.rewrites.append(("pointer", index, address))

    def set_map_address(self, index, address):
        self.rewrites.append(("map", index, address))

    def launch_on(self, handle):
        self.launches.append(handle)


class Spec:
    """A wgmma spec (the skinny GEMM's has no tile_config): its store, bias mode and tile."""

    def __init__(self, store, bias_mode, tile="128x128"):
        self.store, self.bias_mode, self.tile_config = store, bias_mode, gemm_wgmma.ALL_TILES[tile]


def road_with(spec, binds):
    h = torch.float16
    plan = torch_road.signature_plan(torch.ones(16, 32, dtype=h), torch.ones(32, 24, dtype=h),
                                     bias=torch.ones(24), act="relu")

    class Road(torch_road.TorchRoad):
        def _bind(self, pointers, shared=True):
            binds.append((pointers, shared))
            return RecordingLaunch()
    return Road(torch, plan, spec, torch.device("cpu"), 1.0, 0.0, 0.01, 1)


def test_a_fresh_d_is_written_into_the_bound_launch_not_bound_again():
    index = gemm_wgmma.PARAM_INDEX
    binds = []
    road = road_with(Spec("tma", "per_n"), binds)
    first = (0x1000, 0x2000, 0x3000, 0, 0x4000, 0)   # (A, B, D, C, bias, Z)
    road.launch_one_shot(first, 7)
    assert binds == [(first, False)]   # bound once, outside the shared cache (its addresses will move)
    launch = road.moving
    road.launch_one_shot(first, 7)
    assert launch.rewrites == []       # the same arrays: nothing rewritten
    road.launch_one_shot((0x1000, 0x2000, 0x5000, 0, 0x4000, 0), 8)   # a fresh D
    assert sorted(launch.rewrites) == [("map", index["map_d"], 0x5000), ("pointer", index["d"], 0x5000)]
    launch.rewrites.clear()
    road.launch_one_shot((0x6000, 0x2000, 0x5000, 0, 0x7000, 0), 9)   # new activations and bias
    assert sorted(launch.rewrites) == [("map", index["map_a"], 0x6000), ("map", index["map_bias"], 0x7000),
                                       ("pointer", index["bias"], 0x7000)]
    assert len(binds) == 1 and launch.launches == [7, 7, 8, 9]


def test_a_swapped_kernel_moves_the_calls_a_in_its_b_map():
    """A swapped tile (TileConfig.swap_ab) takes the call's A as its B and B as its A: new activations move the
    kernel's B map, a new weight its A map."""
    index = gemm_wgmma.PARAM_INDEX
    road = road_with(Spec("tma", "per_n", "64x96pk2t"), [])
    road.launch_one_shot((0x1000, 0x2000, 0x3000, 0, 0x4000, 0), 1)
    launch = road.moving
    road.launch_one_shot((0x6000, 0x2000, 0x3000, 0, 0x4000, 0), 2)   # new activations
    assert launch.rewrites == [("map", index["map_b"], 0x6000)]
    launch.rewrites.clear()
    road.launch_one_shot((0x6000, 0x9000, 0x3000, 0, 0x4000, 0), 3)   # a new weight
    assert launch.rewrites == [("map", index["map_a"], 0x9000)]


def test_direct_stores_move_d_as_a_pointer_only_and_another_kernel_binds_per_pointers():
    binds = []
    road = road_with(Spec("direct", "none"), binds)
    road.launch_one_shot((0x1000, 0x2000, 0x3000, 0, 0, 0), 1)
    road.launch_one_shot((0x1000, 0x2000, 0x8000, 0, 0, 0), 1)
    assert road.moving.rewrites == [("pointer", gemm_wgmma.PARAM_INDEX["d"], 0x8000)]   # no D map to move
    skinny = road_with(None, [])
    skinny.movable = None   # a spec without the parameter table: bound per set of pointers, as prepare does
    skinny.launches = {(1, 2, 3, 0, 0, 0): RecordingLaunch()}
    skinny.launch_one_shot((1, 2, 3, 0, 0, 0), 5)
    assert skinny.launches[(1, 2, 3, 0, 0, 0)].launches == [5]
