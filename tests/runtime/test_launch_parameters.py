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
