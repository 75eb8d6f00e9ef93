"""The packed kernel parameters of PackedLaunch (runtime/gpu.py), the bounded memo tables (fraglab/memo.py) and
the DRAM peak device_info reports from the driver's attributes: numpy only, no GPU."""

from __future__ import annotations

import ctypes
import types

import numpy as np
import pytest

from fraglab.memo import BoundedMemo
from fraglab.runtime import gpu
from fraglab.runtime.gpu import pack_parameters

_MAP = np.dtype((np.void, 128))


def _struct(fill: int) -> np.void:
    return np.frombuffer(bytes((fill + i) % 256 for i in range(128)), dtype=_MAP)[0]


# The wgmma GEMM's order: three tensor maps, three int32, three float32, four pointers; then odd mixes.
PARAMETER_LISTS = [
    (_struct(1), _struct(2), _struct(3), np.int32(4096), np.int32(-7), np.int32(1), np.float32(1.5),
     np.float32(-0.25), np.float32(0.01), np.uint64(0x7F00_0000_1000), np.uint64(0), np.uint64(2**64 - 1),
     np.uint64(12345)),
    (np.int8(-3), np.float64(2.5), np.int16(7), _struct(9), np.uint8(255), np.int32(1)),
    (np.float32(3.0),),
]


@pytest.mark.parametrize("params", PARAMETER_LISTS, ids=["wgmma", "mixed", "one"])
def test_each_address_holds_its_parameter_bytes(params):
    buffer, addresses = pack_parameters(params)
    assert addresses.dtype == np.uint64 and len(addresses) == len(params)
    lo, hi = buffer.ctypes.data, buffer.ctypes.data + buffer.nbytes
    spans = []
    for p, address in zip(params, addresses.tolist()):
        assert lo <= address and address + p.nbytes <= hi             # inside the buffer that is kept alive
        assert ctypes.string_at(address, p.nbytes) == p.tobytes()     # what cuLaunchKernel will copy
        natural = 64 if p.nbytes >= 64 else p.nbytes
        assert address % natural == 0, f"{p.dtype} at {address % 64} mod 64"
        spans.append((address, address + p.nbytes))
    spans.sort()
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))   # no two overlap


def test_packing_copies_the_values():
    x = np.zeros(1, dtype=np.int32)
    buffer, addresses = pack_parameters((x[0],))
    x[0] = 99    # the scalar was copied when packed: later changes to its source do not reach the launch
    assert ctypes.string_at(int(addresses[0]), 4) == np.int32(0).tobytes()


def test_bounded_memo_makes_once_and_starts_over_when_full():
    made = []

    def make(key):
        made.append(key)
        return key * 10

    memo = BoundedMemo(make, 3)
    assert [memo[k] for k in (1, 2, 1, 3, 2)] == [10, 20, 10, 30, 20]
    assert made == [1, 2, 3]                 # hits do not call make
    assert memo[4] == 40 and dict(memo) == {4: 40}   # the fourth key found the table full
    assert memo.get(1) is None and made == [1, 2, 3, 4]   # .get is a plain lookup: it never makes


def test_bounded_memo_keeps_nothing_when_make_raises():
    def make(key):
        if key < 0:
            raise ValueError("negative")
        return key

    memo = BoundedMemo(make, 2)
    memo[1], memo[2]
    with pytest.raises(ValueError):
        memo[-1]
    assert dict(memo) == {1: 1, 2: 2}        # neither cleared nor holding the failed key


def _driver_reporting(attributes):
    class CUDARuntimeError(Exception):
        pass

    def get(attribute, device):
        value = attributes[attribute]
        if isinstance(value, Exception):
            raise CUDARuntimeError(str(value))
        return value

    return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(
        deviceGetAttribute=get, CUDARuntimeError=CUDARuntimeError)))


def test_dram_peak_is_two_transfers_per_memory_clock_across_the_bus():
    # an H100 80GB HBM3 reports a 2619 MHz memory clock and a 5120-bit bus: 3.35 TB/s, its data sheet's figure
    peak = gpu._memory_peak_tbs(_driver_reporting({36: 2_619_000, 37: 5120}), 0)
    assert abs(peak - 3.352) < 1e-3
    assert gpu._memory_peak_tbs(_driver_reporting({36: 0, 37: 5120}), 0) is None
    assert gpu._memory_peak_tbs(_driver_reporting({36: ValueError("not supported"), 37: 5120}), 0) is None


# ---------------------------------------------------------------------------------------------
# Programmatic dependent launch: cuLaunchKernelEx's config through ctypes

def test_launch_config_layout_is_cuda_bindings():
    cu = pytest.importorskip("cuda.bindings.driver", reason="cuda-bindings (fraglab[dev]) gives cuda.h's layout")
    theirs = cu.CUlaunchConfig()
    theirs.gridDimX, theirs.gridDimY, theirs.gridDimZ = 264, 1, 1
    theirs.blockDimX, theirs.blockDimY, theirs.blockDimZ = 384, 1, 1
    theirs.sharedMemBytes = 232448
    theirs.hStream = cu.CUstream(0x7F00_1234_5670)
    attribute = cu.CUlaunchAttribute()
    attribute.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    attribute.value.programmaticStreamSerializationAllowed = 1
    theirs.attrs = [attribute]
    theirs.numAttrs = 1

    read = gpu.LaunchConfig.from_buffer_copy(ctypes.string_at(theirs.getPtr(), ctypes.sizeof(gpu.LaunchConfig)))
    assert (read.gridDimX, read.blockDimX, read.sharedMemBytes, read.hStream, read.numAttrs) == (
        264, 384, 232448, 0x7F00_1234_5670, 1)
    assert read.attrs[0].id == gpu.ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    assert read.attrs[0].value.programmatic_stream_serialization_allowed == 1

    mine, mine_attribute = gpu.programmatic_launch_config(264, 384, 232448)
    mine.hStream = 0x7F00_1234_5670
    same_bytes = ctypes.sizeof(gpu.LaunchConfig) - 16   # up to the attrs pointer (each side's own array)
    assert ctypes.string_at(ctypes.addressof(mine), same_bytes) == ctypes.string_at(theirs.getPtr(), same_bytes)
    assert ctypes.string_at(ctypes.addressof(mine_attribute), ctypes.sizeof(gpu.LaunchAttribute)) == \
        ctypes.string_at(attribute.getPtr(), ctypes.sizeof(gpu.LaunchAttribute))


class _Recorder:
    """Stands in for libcuda's cuLaunchKernelEx and CuPy's launchKernel: records what each was given."""

    def __init__(self, status=0):
        self.calls, self.status = [], status

    def __call__(self, config, function, params, extra):
        self.calls.append(("ex", config.gridDimX, config.blockDimX, config.sharedMemBytes, config.hStream,
                           config.numAttrs, config.attrs[0].id, function, params))
        return self.status

    def launchKernel(self, function, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        self.calls.append(("plain", gx, bx, smem, stream, function, params))


@pytest.fixture
def stand_ins(monkeypatch):
    ex, plain = _Recorder(), _Recorder()

    class DriverError(Exception):
        pass

    monkeypatch.setattr(gpu, "_LAUNCH_EX", ex)
    driver = types.SimpleNamespace(launchKernel=plain.launchKernel, CUDADriverError=DriverError)
    monkeypatch.setattr(gpu, "_CUPY", types.SimpleNamespace(cuda=types.SimpleNamespace(driver=driver)))
    return ex, plain, DriverError


def _kernel(address=0xF00D):
    return types.SimpleNamespace(kernel=types.SimpleNamespace(ptr=address))


def test_programmatic_launches_go_through_launch_ex_on_the_given_stream(stand_ins, monkeypatch):
    ex, plain, _ = stand_ins
    monkeypatch.delenv(gpu.PROGRAMMATIC_SWITCH, raising=False)
    launch = gpu.PackedLaunch(_kernel(), 132, 384, (np.int32(7), np.float32(0.5)), 4096, programmatic=True)
    assert launch.programmatic
    launch.launch_on(0xABC0)
    launch.launch_on(0xDEF0)
    assert plain.calls == []
    assert [c[4] for c in ex.calls] == [0xABC0, 0xDEF0]   # the stream of each launch, not the first one's
    assert ex.calls[0][:4] == ("ex", 132, 384, 4096)
    assert ex.calls[0][5:8] == (1, gpu.ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, 0xF00D)
    assert ex.calls[0][8] == int(launch._addresses.ctypes.data)


def test_plain_launches_and_the_switch_keep_cuLaunchKernel(stand_ins, monkeypatch):
    ex, plain, _ = stand_ins
    gpu.PackedLaunch(_kernel(), 8, 128, (np.int32(1),), 0).launch_on(0x10)
    monkeypatch.setenv(gpu.PROGRAMMATIC_SWITCH, "0")
    switched_off = gpu.PackedLaunch(_kernel(), 8, 128, (np.int32(1),), 0, programmatic=True)
    assert not switched_off.programmatic
    switched_off.launch_on(0x20)
    assert ex.calls == [] and [c[4] for c in plain.calls] == [0x10, 0x20]


def test_a_failed_launch_ex_raises_the_driver_error(stand_ins, monkeypatch):
    ex, _, driver_error = stand_ins
    ex.status = 1   # CUDA_ERROR_INVALID_VALUE
    monkeypatch.delenv(gpu.PROGRAMMATIC_SWITCH, raising=False)
    with pytest.raises(driver_error):
        gpu.PackedLaunch(_kernel(), 1, 32, (np.int32(1),), 0, programmatic=True).launch_on(0)


def test_without_libcuda_programmatic_launches_stay_plain(monkeypatch):
    monkeypatch.setattr(gpu, "_LAUNCH_EX", False)   # what _launch_ex() caches where libcuda cannot be loaded
    monkeypatch.delenv(gpu.PROGRAMMATIC_SWITCH, raising=False)
    assert not gpu.PackedLaunch(_kernel(), 1, 32, (np.int32(1),), 0, programmatic=True).programmatic


@pytest.mark.parametrize("value", ["yes", "2", "", "off"])
def test_a_switch_value_other_than_0_or_1_is_one_error_naming_it(stand_ins, monkeypatch, value):
    from fraglab.errors import InputError

    monkeypatch.setenv(gpu.PROGRAMMATIC_SWITCH, value)
    with pytest.raises(InputError, match="FRAGLAB_PROGRAMMATIC_LAUNCH.*choose 1 .* or 0") as refused:
        gpu.PackedLaunch(_kernel(), 1, 32, (np.int32(1),), 0, programmatic=True)
    assert refused.value.argument == gpu.PROGRAMMATIC_SWITCH and refused.value.exit_code == 2
    assert not gpu.PackedLaunch(_kernel(), 1, 32, (np.int32(1),), 0).programmatic   # plain launches never ask
    monkeypatch.setenv(gpu.PROGRAMMATIC_SWITCH, "1")
    assert gpu.PackedLaunch(_kernel(), 1, 32, (np.int32(1),), 0, programmatic=True).programmatic
