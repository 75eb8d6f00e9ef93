"""fraglab.gemm's public call on the CPU: out_dtype, the f32-then-cast road of the WMMA and SIMT kernels, stream=,
arrays that are not CuPy's (torch, __cuda_array_interface__, DLPack) and host arrays refused by name.

No GPU: numpy arrays with a `.data.ptr` stand in for CuPy arrays, a small namespace stands in for CuPy, and the
launchers are replaced by recorders, so what `prepare` plans and in which order (and on which stream) the
launches go is visible. The kernels themselves are tested on the GPU (test_gemm_api_gpu.py).
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from fraglab.gemm import api, cast, schedule
from fraglab.gemm import simt as gemm_simt
from fraglab.gemm import wgmma as gemm_wgmma
from fraglab.gemm import wmma as gemm_wmma
from fraglab.memo import BoundedMemo
from fraglab.gemm.validate import GemmArgumentError, resolve_out_dtype, stream_handle, validate_gemm_args
from fraglab.runtime import gpu


# ---------------------------------------------------------------------------------------------
# A CuPy stand-in

class _Mem:
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


class DeviceArray(np.ndarray):
    """A numpy array posing as a CuPy one: `.data.ptr` is its address."""

    @property
    def data(self):
        return _Mem(self.__array_interface__["data"][0])

    def get(self):
        return np.asarray(self)


def device(x) -> DeviceArray:
    return np.ascontiguousarray(x).view(DeviceArray)


class FakeStream:
    """Records entering and leaving; `events` is shared with the fake CuPy."""

    def __init__(self, events, name="stream"):
        self.events, self.name = events, name

    def __enter__(self):
        self.events.append(f"enter {self.name}")
        return self

    def __exit__(self, *exc):
        self.events.append(f"exit {self.name}")
        return False


def make_fake_cupy(events):
    class Stream(FakeStream):
        pass

    class ExternalStream(FakeStream):
        def __init__(self, handle):
            super().__init__(events, f"external {handle}")
            self.handle = handle

    Stream.null = Stream(events, "null")

    def empty(shape, dtype):
        events.append(f"empty {np.dtype(dtype).name}")
        return np.empty(shape, dtype).view(DeviceArray)

    def asarray(x):
        events.append("asarray")
        return device(x.host)

    def from_dlpack(x):
        events.append("from_dlpack")
        return device(x.host)

    def ascontiguousarray(x):
        events.append("ascontiguousarray")
        return device(x)

    capture = types.SimpleNamespace(on=False)   # whether the (one) stream is being captured into a graph

    def stream_is_capturing(handle):
        events.append(f"capturing? {handle}")
        return capture.on

    return types.SimpleNamespace(ndarray=DeviceArray, float32=np.float32, float16=np.float16, uint16=np.uint16,
                                 int16=np.int16, empty=empty, asarray=asarray, from_dlpack=from_dlpack,
                                 ascontiguousarray=ascontiguousarray, zeros=np.zeros, capture=capture,
                                 cuda=types.SimpleNamespace(Stream=Stream, ExternalStream=ExternalStream,
                                                            get_current_stream=lambda: types.SimpleNamespace(ptr=77),
                                                            runtime=types.SimpleNamespace(
                                                                streamIsCapturing=stream_is_capturing)))


@pytest.fixture
def fake(monkeypatch):
    """CuPy replaced by the stand-in on an sm_90 with 132 SMs; launches recorded in `fake.events`."""
    events = []
    cp = make_fake_cupy(events)
    monkeypatch.setattr(gpu, "_CUPY", cp)
    monkeypatch.setattr(api, "_COMPUTE_CAPABILITY", 90)
    monkeypatch.setattr(api, "_SM_COUNT", 132)
    monkeypatch.setattr(api, "_SPECS", BoundedMemo(api._make_spec, 1024))
    monkeypatch.setattr(api, "_SIGNATURE_ROADS", BoundedMemo(lambda key: None, 512))   # no plan from another test
    monkeypatch.setattr(api, "_STREAM_TYPES", ())
    monkeypatch.setattr(cast, "_BF16", None)   # this stand-in has no bfloat16: bf16 travels as uint16 bits
    # the wgmma road's tests: no M goes to the skinny GEMM (tests/gemm/test_skinny.py has that road)
    monkeypatch.setattr(schedule, "choose_kernel", lambda *args, **kwargs: "wgmma")
    launched = []

    def recorder(name):
        def launch(*args, **kwargs):
            events.append(name)
            launched.append((name, args, kwargs))
        return launch

    wgmma_recorder = recorder("wgmma")
    monkeypatch.setattr(gemm_wgmma, "bind", lambda *args, **kwargs: lambda: wgmma_recorder(*args, **kwargs))
    monkeypatch.setattr(gemm_wmma, "launch", recorder("wmma"))
    monkeypatch.setattr(gemm_simt, "launch", recorder("simt"))
    monkeypatch.setattr(cast, "launch", lambda x, y, out_dtype: (events.append(f"cast {out_dtype}"),
                                                                 launched.append(("cast", (x, y, out_dtype), {}))))

    def widen(x, y, in_dtype):   # the 16-bit bias widened for the WMMA kernel: float16's values, as the pass gives them
        events.append(f"widen {in_dtype}")
        np.copyto(y, np.asarray(x).astype(np.float32))

    monkeypatch.setattr(cast, "widen", widen)
    return types.SimpleNamespace(cp=cp, events=events, launched=launched)


def _ab(m=64, k=32, n=48, dtype=np.float16):
    rng = np.random.default_rng(0)
    return device(rng.uniform(-1, 1, (m, k)).astype(dtype)), device(rng.uniform(-1, 1, (k, n)).astype(dtype))


def test_a_column_major_b_goes_to_wgmma_as_it_is_and_to_wmma_as_a_row_major_copy(fake):
    import fraglab

    a, b = _ab(256, 64, 128)
    b_cols = np.asfortranarray(np.asarray(b)).view(DeviceArray)   # K x N, column-major (w.T of an N x K w)
    d = fraglab.gemm(a, b_cols, kernel="wgmma")
    name, args, _ = fake.launched[-1]
    assert name == "wgmma" and args[0].b_order == "F" and args[2] is b_cols and "ascontiguousarray" not in fake.events
    assert d.shape == (256, 128)
    fraglab.gemm(a, b_cols, kernel="wmma")
    name, args, _ = fake.launched[-1]
    assert name == "wmma" and args[2].flags.c_contiguous and np.array_equal(np.asarray(args[2]), np.asarray(b))
    assert fake.events.count("ascontiguousarray") == 1
    fraglab.gemm(a, b, kernel="wgmma")   # row-major B: the MN-major kernel
    assert fake.launched[-1][1][0].b_order == "C"


# ---------------------------------------------------------------------------------------------
# out_dtype: the one validator

@pytest.mark.parametrize("value,expected", [
    (None, "f32"), ("f32", "f32"), ("float32", "f32"), ("f16", "f16"), ("float16", "f16"), ("bf16", "bf16"),
    ("bfloat16", "bf16"), (np.float16, "f16"), (np.dtype("float32"), "f32"),
])
def test_out_dtype_names_resolve(value, expected):
    a, b = _ab(8, 8, 8)
    assert validate_gemm_args(a, b, out_dtype=value).out_dtype == expected


def test_a_torch_dtype_resolves_without_torch():
    class TorchDtype:      # str(torch.bfloat16) == "torch.bfloat16"
        def __str__(self):
            return "torch.bfloat16"

    assert resolve_out_dtype(TorchDtype()) == "bf16"


@pytest.mark.parametrize("value", ["f64", "fp8", "F16", "half", np.float64, 3, object()])
def test_a_bad_out_dtype_is_named_with_the_choices(value):
    a, b = _ab(8, 8, 8)
    with pytest.raises(GemmArgumentError) as info:
        validate_gemm_args(a, b, out_dtype=value)
    assert info.value.argument == "out_dtype" and "f32, f16, bf16" in str(info.value)


@pytest.mark.parametrize("out_dtype,out,kw,expected", [
    (None, np.float16, {}, "f16"),                         # out decides
    ("float16", np.float16, {}, "f16"),                    # agreeing names are fine
    (None, np.float32, {}, "f32"),
    ("bf16", np.uint16, {}, "bf16"),                       # bf16 bit patterns, said by out_dtype
    (None, np.uint16, {"input_dtype": "bf16"}, "bf16"),     # ... or by bits inputs
])
def test_out_decides_the_output_type(out_dtype, out, kw, expected):
    a, b = _ab(8, 8, 8, np.uint16 if kw else np.float16)
    plan = validate_gemm_args(a, b, out=np.zeros((8, 8), out), out_dtype=out_dtype, **kw)
    assert plan.out_dtype == expected


@pytest.mark.parametrize("out_dtype,out,argument,fragment", [
    ("bf16", np.float16, "out_dtype", "contradicts out's dtype float16"),
    ("f16", np.float32, "out_dtype", "contradicts out's dtype float32"),
    ("f16", np.uint16, "out_dtype", "contradicts out's dtype uint16"),
    (None, np.uint16, "out", "out_dtype='bf16'"),          # uint16 alone says nothing
    (None, np.float64, "out", "float32, float16 or bfloat16"),
    ("f32", np.float64, "out", "float32, float16 or bfloat16"),
])
def test_a_contradicting_or_bad_out_is_named(out_dtype, out, argument, fragment):
    a, b = _ab(8, 8, 8)
    with pytest.raises(GemmArgumentError) as info:
        validate_gemm_args(a, b, out=np.zeros((8, 8), out), out_dtype=out_dtype)
    assert info.value.argument == argument and fragment in str(info.value)


def test_z_out_is_checked_by_the_one_validator():
    a, b = _ab(8, 8, 8)
    with pytest.raises(GemmArgumentError) as info:
        validate_gemm_args(a, b, save_z=True, z_out=np.zeros((8, 8), np.float16))
    assert info.value.argument == "z_out" and "float32" in str(info.value)
    out = np.zeros((8, 8), np.float32)
    with pytest.raises(GemmArgumentError, match="same array as out"):
        validate_gemm_args(a, b, save_z=True, out=out, z_out=out)
    assert validate_gemm_args(a, b, save_z=False, z_out=np.zeros((8, 8), np.float16)).save_z is False  # unused


def test_plans_of_one_signature_are_shared_and_immutable():
    a, b = _ab(8, 8, 8)
    first, second = validate_gemm_args(a, b, act="relu"), validate_gemm_args(a, b, act="relu")
    assert first is second and validate_gemm_args(a, b, act="gelu") is not first
    with pytest.raises(Exception):
        first.act = "gelu"


# ---------------------------------------------------------------------------------------------
# stream=

class _TorchStream:
    def __init__(self, handle):
        self.cuda_stream = handle


class _ProtocolStream:
    def __cuda_stream__(self):
        return (0, 77)


class _CupyLike:
    pass


@pytest.mark.parametrize("stream,expected", [
    (None, None), (0, 0), (12345, 12345), (np.int64(7), 7), (_TorchStream(99), 99), (_ProtocolStream(), 77),
])
def test_stream_handles(stream, expected):
    assert stream_handle(stream, (_CupyLike,)) == expected


def test_a_cupy_stream_passes_as_it_is():
    s = _CupyLike()
    assert stream_handle(s, (_CupyLike,)) is s


@pytest.mark.parametrize("stream", [-1, True, 1.5, "default", object(), _TorchStream(None), _TorchStream(-3)])
def test_a_bad_stream_is_named(stream):
    with pytest.raises(GemmArgumentError) as info:
        stream_handle(stream, (_CupyLike,))
    assert info.value.argument == "stream" and "torch.cuda.Stream" in str(info.value)


# ---------------------------------------------------------------------------------------------
# What prepare plans: the kernel, D's type, and the cast of the kernels that store f32

def _launched(fake):
    return [name for name, _, _ in fake.launched]


@pytest.mark.parametrize("out_dtype", ["f16", "bf16"])
def test_wgmma_stores_16_bit_d_itself(fake, out_dtype):
    a, b = _ab()
    run = api.prepare(a, b, act="relu", out_dtype=out_dtype)
    assert isinstance(run.kernel_spec, gemm_wgmma.WgmmaKernelSpec) and run.kernel_spec.out_dtype == out_dtype
    assert not run.cast and run.d.dtype == {"f16": np.float16, "bf16": np.uint16}[out_dtype]
    assert run() is run.d
    assert _launched(fake) == ["wgmma"] and fake.launched[0][1][3] is run.d   # the kernel writes D itself


@pytest.mark.parametrize("kernel,dtype,out_dtype,family", [
    ("wmma", np.float16, "f16", "wmma"), ("wmma", np.float16, "bf16", "wmma"),
    ("simt", np.float32, "f16", "simt"), ("auto", np.float32, "bf16", "simt"),
])
def test_wmma_and_simt_compute_f32_then_cast(fake, kernel, dtype, out_dtype, family):
    a, b = _ab(dtype=dtype)
    run = api.prepare(a, b, act="gelu", kernel=kernel, out_dtype=out_dtype)
    assert run.cast and run.plan.out_dtype == out_dtype
    assert run.d.dtype == {"f16": np.float16, "bf16": np.uint16}[out_dtype]
    run()
    assert _launched(fake) == [family, "cast"]                 # the cast follows the GEMM, on its stream
    scratch = fake.launched[0][1][3]
    assert scratch.dtype == np.float32 and scratch.shape == run.d.shape and scratch is not run.d
    x, y, cast_to = fake.launched[1][1]
    assert x is scratch and y is run.d and cast_to == out_dtype


def test_f32_d_needs_no_cast_on_any_kernel(fake):
    for kernel, dtype in (("wmma", np.float16), ("wgmma", np.float16), ("simt", np.float32)):
        a, b = _ab(dtype=dtype)
        run = api.prepare(a, b, kernel=kernel)
        assert not run.cast and run.d.dtype == np.float32, kernel
    a, b = _ab()
    out = device(np.zeros((64, 48), np.float16))
    run = api.prepare(a, b, kernel="wmma", out=out)   # out decides: f16, so the cast writes into it
    assert run.cast and run() is out and fake.launched[-1][1][1] is out


def test_another_gpu_takes_wmma_and_the_cast(fake, monkeypatch):
    monkeypatch.setattr(api, "_COMPUTE_CAPABILITY", 80)
    a, b = _ab()
    run = api.prepare(a, b, out_dtype="f16")
    assert isinstance(run.kernel_spec, gemm_wmma.WmmaKernelSpec) and run.cast


def test_bf16_bit_inputs_give_a_bits_d(fake):
    a, b = _ab(dtype=np.uint16)
    run = api.prepare(a, b, input_dtype="bf16", out_dtype="bf16", kernel="wmma")
    assert run.d.dtype == np.uint16 and run.plan.dtype == "bf16" and run.cast


def test_a_bf16_d_follows_the_inputs_then_this_cupys_bfloat16(fake, monkeypatch):
    stand_in = np.dtype(np.int16)   # what this CuPy would call bfloat16 (a 2-byte type that is not float16)
    monkeypatch.setattr(cast, "_BF16", stand_in)
    a, b = _ab(dtype=np.uint16)
    assert api.prepare(a, b, input_dtype="bf16", out_dtype="bf16").d.dtype == np.uint16   # bits in, bits out
    a, b = _ab()
    assert api.prepare(a, b, out_dtype="bf16").d.dtype == stand_in                        # f16 in: CuPy's bf16
    monkeypatch.setattr(cast, "_BF16", None)
    assert api.prepare(a, b, out_dtype="bf16").d.dtype == np.uint16                       # none: bits


def test_specs_are_shared_between_calls(fake):
    a, b = _ab()
    first = api.prepare(a, b, act="relu", out_dtype="f16").kernel_spec
    assert api.prepare(a, b, act="relu", out_dtype="f16").kernel_spec is first
    assert api.prepare(a, b, act="relu", out_dtype="bf16").kernel_spec is not first


def _counting_validation(monkeypatch):
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return validate_gemm_args(*args, **kwargs)

    monkeypatch.setattr(api, "validate_gemm_args", counted)
    return calls


def test_a_seen_signature_is_validated_once_and_launched_on_each_calls_arrays(fake, monkeypatch):
    calls = _counting_validation(monkeypatch)
    a, b = _ab()
    bias = device(np.zeros(48, np.float32))
    first = api.prepare(a, b, bias=bias, act="relu", out_dtype="f16")
    a2, b2 = _ab()   # the same shapes, strides and dtypes at other addresses
    second = api.prepare(a2, b2, bias=bias, act="relu", out_dtype="f16")
    assert len(calls) == 1 and second.plan is first.plan and second.kernel_spec is first.kernel_spec
    second()
    spec, a_bound, b_bound, d_bound = fake.launched[-1][1][:4]
    assert a_bound is a2 and b_bound is b2 and d_bound is second.d and second.d is not first.d
    assert fake.launched[-1][2]["bias"] is bias
    # another signature (a column-major B of the same shape) is validated on its own
    api.prepare(a, device(np.asarray(b).T.copy()).T, bias=bias, act="relu", out_dtype="f16")
    assert len(calls) == 2


def test_a_seen_signature_at_a_misaligned_address_takes_the_full_road(fake):
    from fraglab.gemm.validate import KernelFallback

    a, b = _ab()
    assert isinstance(api.prepare(a, b, act="relu").kernel_spec, gemm_wgmma.WgmmaKernelSpec)
    flat = device(np.zeros(a.size + 8, np.float16))
    shifted = flat[1:1 + a.size].reshape(a.shape)   # the same shape, strides and dtype, 2 bytes off 16
    assert shifted.strides == a.strides and shifted.data.ptr % 16
    with pytest.warns(KernelFallback, match="WMMA"):
        run = api.prepare(shifted, b, act="relu")
    assert isinstance(run.kernel_spec, gemm_wmma.WmmaKernelSpec)


def test_a_seen_signature_still_refuses_what_a_first_call_refuses(fake):
    a, b = _ab(m=48, k=48, n=48)
    api.prepare(a, b, out=device(np.zeros((48, 48), np.float16)))
    with pytest.raises(GemmArgumentError, match="^out: must not be the same array as b"):
        api.prepare(a, b, out=b)   # out's shape and dtype as before; now it is b
    api.prepare(a, b, alpha=1.0)
    with pytest.raises(GemmArgumentError, match="^alpha"):
        api.prepare(a, b, alpha=True)   # a key equal to 1.0's
    with pytest.raises(GemmArgumentError, match="^act"):
        api.prepare(a, b, act=["relu"])   # unhashable: no signature, the full road names it


def test_signatures_another_kernel_takes_are_remembered_as_the_full_road(fake, monkeypatch):
    calls = _counting_validation(monkeypatch)
    a, b = _ab(dtype=np.float32)
    for _ in range(2):
        assert api.prepare(a, b).kernel_spec == gemm_simt.choose_rung(64, 48, 32)
    # the first call: the signature's check, then the full road's; the second: the full road's alone
    assert len(calls) == 3
    assert list(api._SIGNATURE_ROADS.values()) == [False]


def test_cupy_arrays_never_reach_the_conversions(fake, monkeypatch):
    def refuse(*args):
        raise AssertionError("converted a CuPy array")

    monkeypatch.setattr(api, "_from_foreign", refuse)
    a, b = _ab()
    api.prepare(a, b, c=device(np.zeros((64, 48), np.float32)), beta=1.0, bias=device(np.zeros(48, np.float32)),
                out=device(np.zeros((64, 48), np.float32)), save_z=True, z_out=device(np.zeros((64, 48), np.float32)))
    assert "asarray" not in fake.events and "from_dlpack" not in fake.events


# ---------------------------------------------------------------------------------------------
# stream= through prepare(...)() and gemm

def test_the_kernel_and_the_cast_run_inside_the_stream(fake):
    a, b = _ab()
    run = api.prepare(a, b, kernel="wmma", out_dtype="f16")
    s = fake.cp.cuda.Stream(fake.events, "s")
    fake.events.clear()
    run(s)
    assert fake.events == ["enter s", "wmma", "cast f16", "exit s"]


@pytest.mark.parametrize("stream,name", [(1234, "external 1234"), (_TorchStream(555), "external 555"),
                                         (0, "null")])
def test_handles_become_cupy_streams(fake, stream, name):
    a, b = _ab()
    run = api.prepare(a, b)
    fake.events.clear()
    run(stream)
    assert fake.events == [f"enter {name}", "wgmma", f"exit {name}"]


def test_cupy_14_wraps_a_handle_through_the_stream_protocol(fake, monkeypatch):
    """Where CuPy has Stream.from_external (14+, which deprecates ExternalStream), an int handle goes through it as
    a CUDA-stream-protocol object carrying that handle."""
    wrapped = []

    def from_external(obj):
        wrapped.append(obj.__cuda_stream__())
        return fake.cp.cuda.Stream(fake.events, f"from_external {obj.__cuda_stream__()[1]}")

    monkeypatch.setattr(fake.cp.cuda.Stream, "from_external", staticmethod(from_external), raising=False)
    a, b = _ab()
    run = api.prepare(a, b)
    fake.events.clear()
    run(_TorchStream(777))
    assert wrapped == [(0, 777)]
    assert fake.events == ["enter from_external 777", "wgmma", "exit from_external 777"]


def test_gemm_allocates_and_launches_on_its_stream(fake):
    a, b = _ab()
    s = fake.cp.cuda.Stream(fake.events, "s")
    api.gemm(a, b, kernel="wmma", out_dtype="bf16", save_z=True, stream=s)
    assert fake.events[0] == "enter s" and fake.events[-1] == "exit s"
    allocated = [e for e in fake.events[1:-1] if not e.startswith("capturing?")]   # asked on the same stream
    assert allocated == ["empty uint16", "empty float32", "empty float32", "wmma", "cast bf16"]  # D, Z, scratch


def test_a_bad_stream_launches_nothing(fake):
    a, b = _ab()
    with pytest.raises(GemmArgumentError) as info:
        api.gemm(a, b, stream="fast")
    assert info.value.argument == "stream" and fake.launched == []


# ---------------------------------------------------------------------------------------------
# Arrays that are not CuPy's

class CaiArray:
    """An object with only __cuda_array_interface__ (as numba's device arrays)."""

    def __init__(self, host):
        self.host = host

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.host.shape, "typestr": self.host.dtype.str, "data": (1 << 20, False), "version": 3}


class DlpackArray:
    def __init__(self, host, device_type=2):
        self.host, self.device_type = host, device_type

    def __dlpack__(self, stream=None):
        raise AssertionError("the fake CuPy reads .host")

    def __dlpack_device__(self):
        return (self.device_type, 0)


def _fake_torch_module(monkeypatch, events):
    torch = types.ModuleType("torch")
    torch.bfloat16, torch.int16, torch.float16, torch.float32 = "bfloat16", "int16", "float16", "float32"

    def from_dlpack(x):
        events.append("torch.from_dlpack")
        return Tensor(np.asarray(x), is_cuda=True)

    torch.from_dlpack = from_dlpack
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


class Tensor:
    """Poses as torch.Tensor: module 'torch', is_cuda, data_ptr, dtype, view(dtype)."""

    def __init__(self, host, *, is_cuda=True, dtype=None):
        self.host, self.is_cuda = host, is_cuda
        self.dtype = dtype or host.dtype.name

    requires_grad = False

    def data_ptr(self):
        return self.host.__array_interface__["data"][0]

    def detach(self):
        return Tensor(self.host, is_cuda=self.is_cuda, dtype=self.dtype)

    def view(self, dtype):
        if dtype == "bfloat16":
            return Tensor(self.host, dtype="bfloat16")
        return Tensor(self.host.view(np.dtype(dtype)))


Tensor.__module__ = "torch"


def test_numpy_arrays_are_refused_by_name(fake):
    a, b = _ab()
    host = np.zeros((64, 48), np.float32)
    for argument, kw in (("a", dict(a=np.asarray(a))), ("b", dict(b=np.asarray(b))), ("c", dict(c=host, beta=1.0)),
                         ("bias", dict(bias=np.zeros(48, np.float32))), ("out", dict(out=host)),
                         ("z_out", dict(z_out=host, save_z=True))):
        args = {"a": a, "b": b, **kw}
        with pytest.raises(GemmArgumentError) as info:
            api.prepare(args.pop("a"), args.pop("b"), **args)
        assert info.value.argument == argument, argument
        assert "host memory" in str(info.value) and "CuPy" in str(info.value) and "numpy.ndarray" in str(info.value)


def test_a_cuda_array_interface_object_is_viewed_without_a_copy(fake):
    a, b = _ab()
    run = api.prepare(CaiArray(np.asarray(a)), b, out_dtype="f16")
    assert fake.events.count("asarray") == 1 and run.plan.m == 64 and isinstance(run.d, DeviceArray)


def test_dlpack_objects_on_the_gpu_are_taken_and_on_the_host_refused(fake):
    a, b = _ab()
    run = api.prepare(DlpackArray(np.asarray(a)), DlpackArray(np.asarray(b), device_type=13))
    assert fake.events.count("from_dlpack") == 2 and run.plan.k == 32
    with pytest.raises(GemmArgumentError) as info:
        api.prepare(a, DlpackArray(np.asarray(b), device_type=1))
    assert info.value.argument == "b" and "host memory" in str(info.value)
    with pytest.raises(GemmArgumentError) as info:
        api.prepare(a, DlpackArray(np.asarray(b), device_type=7))
    assert info.value.argument == "b" and "device type 7" in str(info.value)


def test_what_is_not_an_array_is_named(fake):
    a, _ = _ab()
    with pytest.raises(GemmArgumentError) as info:
        api.prepare(a, [[1.0]])
    assert info.value.argument == "b" and "__cuda_array_interface__" in str(info.value)


def test_one_foreign_object_given_twice_is_still_the_same_array(fake):
    a, b = _ab(8, 8, 8, np.float32)
    same = CaiArray(np.asarray(a))
    with pytest.raises(GemmArgumentError, match="must not be the same array as a"):
        api.prepare(same, b, out=same)


def test_torch_tensors_in_give_torch_tensors_out(fake, monkeypatch):
    _fake_torch_module(monkeypatch, fake.events)
    a, b = _ab()
    d, z = api.prepare(Tensor(np.asarray(a)), Tensor(np.asarray(b)), save_z=True)()
    assert type(d) is Tensor and type(z) is Tensor and fake.events.count("torch.from_dlpack") == 2
    assert d.dtype == "float32" and d.host.shape == (64, 48)
    out = Tensor(np.zeros((64, 48), np.float16))
    assert api.prepare(Tensor(np.asarray(a)), Tensor(np.asarray(b)), out=out)() is out   # out comes back itself
    # a CuPy A keeps CuPy results even when other arguments are tensors
    assert isinstance(api.prepare(a, Tensor(np.asarray(b)))(), DeviceArray)


def test_a_torch_cpu_tensor_is_refused_by_name(fake, monkeypatch):
    _fake_torch_module(monkeypatch, fake.events)
    a, b = _ab()
    with pytest.raises(GemmArgumentError) as info:
        api.prepare(a, b, bias=Tensor(np.zeros(48, np.float32), is_cuda=False))
    assert info.value.argument == "bias" and "host memory" in str(info.value)


def test_torch_bf16_travels_as_bits_without_a_cupy_bfloat16(fake, monkeypatch):
    _fake_torch_module(monkeypatch, fake.events)
    a, b = _ab(dtype=np.uint16)
    ta, tb = Tensor(np.asarray(a), dtype="bfloat16"), Tensor(np.asarray(b), dtype="bfloat16")
    run = api.prepare(ta, tb, out_dtype="bf16", kernel="wmma")
    assert run.plan.dtype == "bf16"                                 # input_dtype inferred from the tensors
    assert type(run.d) is Tensor and run.d.dtype == "bfloat16"      # D's bits handed back as a bfloat16 tensor
    out = Tensor(np.zeros((64, 48), np.uint16), dtype="bfloat16")
    assert api.prepare(ta, tb, out=out, kernel="wmma").plan.out_dtype == "bf16"   # out's bf16 decides


@pytest.mark.skipif("torch" not in sys.modules and __import__("importlib").util.find_spec("torch") is None,
                    reason="torch is not installed (the fake-tensor tests above cover the logic)")
def test_a_real_torch_cpu_tensor_is_refused_by_name(fake):
    import torch

    a, _ = _ab()
    with pytest.raises(GemmArgumentError) as info:
        api.prepare(a, torch.zeros((32, 48), dtype=torch.float16))
    assert info.value.argument == "b" and "host memory" in str(info.value)


# ---------------------------------------------------------------------------------------------
# The cast kernel's build, and the suite's D helpers

def test_cast_kernels_are_named_per_output_type():
    assert cast.BUILD.entry == "gemm/cast.cu"
    assert cast.BUILD.name_expressions == ("fraglab::cast_f32<__half>", "fraglab::cast_f32<__nv_bfloat16>",
                                           "fraglab::widen_to_f32<__half>", "fraglab::widen_to_f32<__nv_bfloat16>")
    assert cast.grid(1) == 1 and cast.grid(cast.THREADS + 1) == 2 and cast.grid(1 << 40) == cast.MAX_BLOCKS


def test_the_suite_checks_a_16_bit_d_with_its_rounding():
    from fraglab.bench import wmma_suite

    class Cp:
        uint16, float16, float32, nan = np.uint16, np.float16, np.float32, np.nan

        @staticmethod
        def empty(shape, dtype):
            return np.empty(shape, dtype).view(DeviceArray)

    rng = np.random.default_rng(5)
    a32, b32 = rng.uniform(-1, 1, (40, 24)).astype(np.float32), rng.uniform(-1, 1, (24, 56)).astype(np.float32)
    inputs = {"a": device(a32.astype(np.float16)), "b": device(b32.astype(np.float16)), "c": None, "bias": None,
              "bits": False}
    exact = a32.astype(np.float16).astype(np.float64) @ b32.astype(np.float16).astype(np.float64)
    for out_dtype in ("f16", "bf16"):
        d = Cp.empty((40, 56), api.d_dtype(Cp, out_dtype, inputs["a"]))
        assert d.dtype == (np.float16 if out_dtype == "f16" else np.uint16)
        kw = dict(dtype="f16", act="none", bias_mode="none", alpha=1.0, beta=0.0, leaky_slope=0.0,
                  out_dtype=out_dtype)
        if out_dtype == "f16":
            d[...] = exact.astype(np.float16)
        else:
            bits = exact.astype(np.float32).view(np.uint32)
            d[...] = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        assert wmma_suite.check_against_reference(Cp, inputs, d, None, **kw)["status"] == "PASSED", out_dtype
        if out_dtype == "bf16":   # judged as an f32 D, bf16's 2^-8 rounding exceeds the 1e-3 tolerance
            assert wmma_suite.check_against_reference(Cp, inputs, d, None, **dict(kw, out_dtype="f32"))["status"] \
                == "FAILED"
        wmma_suite.poison(Cp, d)
        assert np.isnan(wmma_suite.host_float64(d, out_dtype, d.dtype == np.uint16)).all()
        assert wmma_suite.check_against_reference(Cp, inputs, d, None, **kw)["status"] == "FAILED"


def test_d_is_allocated_in_relaxed_capture_mode_while_the_stream_captures(fake, monkeypatch):
    """Under a CuPy stream capture, the pool may have to cudaMalloc D: allowed only in relaxed capture mode."""
    import contextlib

    @contextlib.contextmanager
    def relaxed():
        fake.events.append("relaxed")
        yield
        fake.events.append("strict")

    monkeypatch.setattr(gpu, "relaxed_capture", relaxed)
    a, b = device(np.ones((16, 16), np.float16)), device(np.ones((16, 16), np.float16))
    api.gemm(a, b)
    assert "relaxed" not in fake.events and "capturing? 77" in fake.events
    fake.cp.capture.on = True
    fake.events.clear()
    api.gemm(a, b)
    assert fake.events.index("relaxed") < fake.events.index("empty float32") < fake.events.index("strict")
    fake.events.clear()
    api.gemm(a, b, out=device(np.empty((16, 16), np.float32)))   # nothing allocated: nothing asked
    assert "relaxed" not in fake.events and not any(e.startswith("capturing?") for e in fake.events)


@pytest.mark.parametrize("m,n,k", [(0, 16, 8), (16, 0, 8)])
def test_empty_m_or_n_launch_nothing(fake, m, n, k):
    d = api.gemm(device(np.ones((m, k), np.float16)), device(np.ones((k, n), np.float16)), act="relu")
    assert d.shape == (m, n) and not fake.launched


def test_k_zero_is_the_epilogue_alone(fake):
    from fraglab.gemm.reference import activate

    c = device(np.linspace(-2, 2, 48, dtype=np.float32).reshape(6, 8))
    bias = device(np.linspace(-1, 1, 8, dtype=np.float32))
    fake.cp.asnumpy = np.asarray
    fake.cp.asarray = device
    d = api.gemm(device(np.ones((6, 0), np.float16)), device(np.ones((0, 8), np.float16)), c=c, beta=0.5,
                 bias=bias, act="gelu")
    np.testing.assert_allclose(np.asarray(d), activate(0.5 * np.asarray(c, np.float64) + np.asarray(bias), "gelu"),
                               rtol=1e-6, atol=1e-7)
    assert not fake.launched


def test_a_row_pitch_goes_to_the_wgmma_bind(fake):
    wide = device(np.ones((16, 40), np.float16))
    a = wide[:, :32]
    b = device(np.ones((32, 16), np.float16))
    out = device(np.empty((16, 24), np.float32))[:, :16]
    api.gemm(a, b, out=out)
    name, args, kwargs = fake.launched[-1]
    assert name == "wgmma" and (kwargs["lda"], kwargs["ldb"], kwargs["ldd"]) == (40, 0, 24)
    with pytest.raises(GemmArgumentError, match="leading dimension"):
        api.gemm(a, b, kernel="wmma")


def test_a_tensor_that_requires_grad_is_viewed_detached(fake, monkeypatch):
    """DLPack refuses tensors that require grad (a Parameter): the view is of the detached tensor, same memory."""
    _fake_torch_module(monkeypatch, fake.events)
    a, b = _ab()

    class Parameter(Tensor):
        __module__ = "torch.nn.parameter"
        requires_grad = True

        def __dlpack__(self, *args, **kwargs):
            raise BufferError("Can't export tensors that require gradient")

    def from_dlpack(x):
        x.__dlpack__()   # what CuPy does first
        fake.events.append("from_dlpack")
        return device(x.host)

    fake.cp.from_dlpack = from_dlpack
    Tensor.__dlpack__ = lambda self, *args, **kwargs: None
    try:
        run = api.prepare(a, Parameter(np.asarray(b)))
    finally:
        del Tensor.__dlpack__
    assert run.plan.n == 48 and "from_dlpack" in fake.events


def test_a_forced_tile_names_its_kernel_family():
    from fraglab.gemm import api, wgmma, wmma

    assert api.requested_kernel("auto", None) == "auto"
    for tile in ("128x192c2", "64x64p", "64x128pc2", "128x256"):
        assert tile not in wmma.ALIGNED_TILES and api.requested_kernel("auto", tile) == "wgmma", tile
    # names both families have go to WMMA unless the wgmma kernel is asked for
    shared = set(wmma.ALIGNED_TILES) & set(wgmma.ALL_TILES)
    assert shared == {"128x64", "256x128"}
    assert {api.requested_kernel("auto", t) for t in shared} == {"wmma"}
    assert {api.requested_kernel("wgmma", t) for t in shared} == {"wgmma"}


# ---------------------------------------------------------------------------------------------
# A 16-bit bias: per column, of the inputs' own type (nn.Linear's bias as it is)

@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_a_16_bit_bias_reaches_wgmma_as_it_is(fake, dtype):
    a, b = _ab(64, 32, 48)
    bias = device(np.linspace(-1, 1, 48).astype(dtype))
    run = api.prepare(a, b, bias=bias, act="relu", kernel="wgmma")
    assert run.plan.bias_dtype == ("f16" if dtype == np.float16 else "f32")
    assert run.kernel_spec.bias_dtype == run.plan.bias_dtype
    run()
    name, args, kwargs = fake.launched[-1]
    assert name == "wgmma" and kwargs["bias"] is bias and not any(e.startswith("widen") for e in fake.events)


def test_the_wmma_kernel_gets_a_float32_copy_of_a_16_bit_bias_at_each_launch(fake):
    a, b = _ab(64, 32, 48)
    bias = device(np.linspace(-1, 1, 48).astype(np.float16))
    run = api.prepare(a, b, bias=bias, act="relu", kernel="wmma")
    assert run.plan.bias_dtype == "f16"
    for scale in (1.0, -2.0):   # the bias changed in place between launches: each launch reads it as it is then
        bias[...] = np.linspace(-1, 1, 48).astype(np.float16) * np.float16(scale)
        fake.events.clear()
        run()
        assert fake.events == ["widen f16", "wmma"]   # the copy first, on the same stream
        given = fake.launched[-1][2]["bias"]
        assert given.dtype == np.float32 and given is not bias
        np.testing.assert_array_equal(np.asarray(given), np.asarray(bias, np.float32))


@pytest.mark.parametrize("inputs,bias_dtype,mode,fragment", [
    (np.float16, np.float16, "per_m", "expected float32"),
    (np.float16, np.float16, "full", "expected float32"),
    (np.float16, np.float64, "per_n", "expected float32 or the inputs' own float16"),
    (np.float32, np.float16, "per_n", "expected float32"),
    (np.uint16, np.float16, "per_n", "expected float32 or the inputs' own bfloat16"),
])
def test_a_bias_of_another_type_is_named(inputs, bias_dtype, mode, fragment):
    a, b = _ab(8, 8, 8, dtype=inputs)
    shape = {"per_n": (8,), "per_m": (8,), "full": (8, 8)}[mode]
    bias = device(np.zeros(shape, bias_dtype))
    with pytest.raises(GemmArgumentError, match="bias: has dtype") as info:
        validate_gemm_args(a, b, bias=bias, bias_mode=mode, input_dtype="bf16" if inputs == np.uint16 else None)
    assert fragment in str(info.value)
    if fragment.endswith("float32"):
        assert "inputs' own" not in str(info.value)


def test_bf16_bits_take_a_bias_of_bf16_bits():
    a, b = _ab(8, 8, 8, dtype=np.uint16)
    plan = validate_gemm_args(a, b, bias=device(np.zeros(8, np.uint16)), input_dtype="bf16")
    assert plan.dtype == "bf16" and plan.bias_dtype == "bf16" and plan.bias_mode == "per_n"
    with pytest.raises(GemmArgumentError, match="bias: has dtype uint16"):   # bits are bf16 only when the inputs are
        validate_gemm_args(*_ab(8, 8, 8), bias=device(np.zeros(8, np.uint16)))
