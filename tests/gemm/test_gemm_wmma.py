"""The WMMA launcher's mapping from options to instantiations, and argument validation (CPU only)."""

import numpy as np
import pytest

from fraglab.gemm import wmma as gemm_wmma
from fraglab.bench import wmma_suite
from fraglab.gemm.reference import ACT_KINDS, BIAS_MODES
from fraglab.gemm.validate import GemmArgumentError, validate_gemm_args


def test_spec_name_is_the_exact_template_instantiation():
    spec = gemm_wmma.spec_for("f16", 8192, 8192, 8192, act="relu", bias_mode="per_n")
    assert spec.name() == ("fraglab::gemm_wmma_kernel<fraglab::WmmaTile<256, 128, 64, 64, 64, 3, 8, -1, -1>, "
                           "fraglab::Epilogue<fraglab::ActKind::ReLU, fraglab::BiasMode::PerN, false, false>, "
                           "true, __half>")
    assert spec.build().entry == "gemm/wmma.cu" and spec.build().name_expressions == (spec.name(),)


def test_unaligned_problems_use_the_generic_tile_and_bf16_type():
    spec = gemm_wmma.spec_for("bf16", 8191, 8191, 8191, act="gelu", bias_mode="full", has_c=True, save_z=True,
                              aligned=False)
    assert spec.tile == gemm_wmma.GENERIC_TILE and not spec.aligned
    assert spec.name().endswith("fraglab::BiasMode::Full, true, true>, false, __nv_bfloat16>")


@pytest.mark.parametrize("m,n,tile", [(8192, 8192, "256x128"), (4096, 4096, "256x128"), (2048, 2048, "256x128"),
                                      (1024, 1024, "128x64"), (25344, 128, "256x128"), (25088, 128, "128x64")])
def test_choose_tile_wants_three_quarters_of_a_wave_of_big_tiles(m, n, tile):
    # 25344/256 = 99 blocks of 256x128 >= 0.75 * 132; 25088/256 = 98 is not; 2048^3 gives 128 blocks
    assert gemm_wmma.choose_tile(m, n, sm_count=132) == tile


@pytest.mark.parametrize("k,n,ptrs,aligned", [(64, 64, (256, 512), True), (60, 64, (256,), False),
                                              (64, 65, (256,), False), (64, 64, (256, 258), False),
                                              (8, 8, (0, 16), True)])
def test_is_aligned(k, n, ptrs, aligned):
    assert gemm_wmma.is_aligned(k, n, ptrs) is aligned


def test_all_specs_cover_every_epilogue_for_every_dtype_and_path():
    specs = gemm_wmma.all_specs()
    names = [s.name() for s in specs]
    assert len(set(names)) == len(names)
    combos = {(s.dtype, s.act, s.bias_mode, s.has_c, s.save_z, s.tile, s.aligned) for s in specs}
    for dtype in ("f16", "bf16"):
        for act in ACT_KINDS:
            for bias in BIAS_MODES:
                for has_c in (False, True):
                    for save_z in (False, True):
                        for tile in gemm_wmma.ALIGNED_TILES:
                            assert (dtype, act, bias, has_c, save_z, tile, True) in combos
                        assert (dtype, act, bias, has_c, save_z, gemm_wmma.GENERIC_TILE, False) in combos


def test_spec_for_never_returns_something_outside_all_specs():
    names = {s.name() for s in gemm_wmma.all_specs()}
    rng = np.random.default_rng(0)
    for _ in range(200):
        m, n, k = (int(v) for v in rng.integers(1, 20000, 3))
        spec = gemm_wmma.spec_for(str(rng.choice(["f16", "bf16"])), m, n, k, act=str(rng.choice(ACT_KINDS)),
                                  bias_mode=str(rng.choice(BIAS_MODES)), has_c=bool(rng.integers(2)),
                                  save_z=bool(rng.integers(2)), aligned=bool(rng.integers(2)))
        assert spec.name() in names


def test_kernel_spec_rejects_bad_choices():
    with pytest.raises(ValueError, match="dtype"):
        gemm_wmma.WmmaKernelSpec("f32")
    with pytest.raises(ValueError, match="unaligned"):
        gemm_wmma.WmmaKernelSpec("f16", tile="256x128", aligned=False)


@pytest.mark.parametrize("tile", list(gemm_wmma.TILES.values()))
def test_tiles_fit_shared_memory_and_divide_evenly(tile):
    assert tile.smem_bytes <= 163 * 1024           # sm_80's per-block maximum (sm_90: 227 KiB)
    assert tile.threads % 32 == 0 and (tile.bm * tile.bk // 8) % tile.threads == 0
    assert (tile.bk * tile.bn // 8) % tile.threads == 0
    assert gemm_wmma.grid_blocks(tile.bm + 1, tile.bn, tile) == 2


# ---- argument validation, with numpy arrays standing in for CuPy ones

def _ab(m=4, k=8, n=6, dtype=np.float16):
    return np.ones((m, k), dtype), np.ones((k, n), dtype)


def _err(**kw):
    a, b = kw.pop("a", None), kw.pop("b", None)
    if a is None:
        a, b = _ab()
    with pytest.raises(GemmArgumentError) as info:
        validate_gemm_args(a, b, **kw)
    return info.value


def test_valid_arguments_resolve_a_plan():
    a, b = _ab()
    plan = validate_gemm_args(a, b, bias=np.ones(6, np.float32), act="gelu", c=np.ones((4, 6), np.float32), beta=0.5)
    assert (plan.kernel, plan.dtype, plan.m, plan.n, plan.k) == ("wmma", "f16", 4, 6, 8)
    assert plan.bias_mode == "per_n" and plan.has_c and not plan.save_z


def test_b_may_be_column_major_and_the_plan_says_so():
    a = np.ones((4, 8), np.float16)
    w = np.ones((6, 8), np.float16)            # a row-major N x K weight: b = w.T is K x N, column-major
    assert validate_gemm_args(a, w.T).b_order == "F"
    assert validate_gemm_args(a, np.ones((8, 6), np.float16)).b_order == "C"
    assert validate_gemm_args(a, np.ones((8, 1), np.float16)).b_order == "C"   # both orders: row-major wins


def test_e4m3_bits_plan_the_wgmma_kernel_with_a_column_major_b():
    a = np.ones((4, 32), np.uint8)
    w = np.ones((6, 32), np.uint8)            # N x K bytes, row-major: b = w.T
    plan = validate_gemm_args(a, w.T, input_dtype="e4m3")
    assert (plan.dtype, plan.kernel, plan.b_order) == ("e4m3", "wgmma", "F")
    assert validate_gemm_args(a, np.ones((32, 1), np.uint8), input_dtype="e4m3").b_order == "F"  # both orders
    for kwargs, argument, fragment in ((dict(b=np.ones((32, 6), np.uint8)), "b", "K-major"),
                                       (dict(b=w.T, kernel="wmma"), "kernel", "e4m3"),
                                       (dict(b=w.T, input_dtype=None), "a", "uint8")):
        with pytest.raises(GemmArgumentError) as err:
            validate_gemm_args(a, **{"input_dtype": "e4m3", **kwargs})
        assert err.value.argument == argument and fragment in str(err.value)


def test_e4m3_has_no_fallback_kernel():
    from fraglab.gemm.validate import tensor_core_kernel

    assert tensor_core_kernel("auto", 90, 64, 48, (0, 256), "e4m3") == ("wgmma", None)
    with pytest.raises(GemmArgumentError, match="sm_90"):
        tensor_core_kernel("auto", 89, 64, 48, (0, 256), "e4m3")
    with pytest.raises(GemmArgumentError, match="multiple of 16"):
        tensor_core_kernel("auto", 90, 40, 48, (0, 256), "e4m3")   # K = 40: 16-bit rows fine, 8-bit rows not
    assert tensor_core_kernel("auto", 90, 40, 48, (0, 256))[0] == "wgmma"


def test_e4m3_reference_decodes_the_ocp_values():
    from fraglab.gemm.reference import e4m3_to_float64

    # OCP 8-bit FP spec, E4M3: 1.0, -1.0, the largest normal 448, the smallest normal 2^-6, the smallest
    # subnormal 2^-9, -0, and NaN (S.1111.111)
    bits = np.array([0x38, 0xB8, 0x7E, 0x08, 0x01, 0x80, 0x7F, 0xFF], np.uint8)
    got = e4m3_to_float64(bits)
    assert list(got[:5]) == [1.0, -1.0, 448.0, 2.0 ** -6, 2.0 ** -9]
    assert got[5] == 0 and np.signbit(got[5]) and np.isnan(got[6:]).all()
    assert len(set(e4m3_to_float64(np.arange(256)).tolist()) - {float("nan")}) > 240   # distinct values


def test_the_e4m3_tolerance_passes_the_fp8_accumulator_and_fails_a_missing_k_step():
    from fraglab.gemm.reference import check_result, e4m3_to_float64

    rng = np.random.default_rng(1)
    bits = lambda shape: ((rng.integers(0, 2, shape) << 7) | (rng.integers(4, 11, shape) << 3)  # noqa: E731
                          | rng.integers(0, 8, shape)).astype(np.uint8)
    a, b = e4m3_to_float64(bits((257, 1024))), e4m3_to_float64(bits((264, 1024))).T
    ref = a @ b
    scale = np.abs(ref).max()
    assert check_result(ref + 1.7e-3 * scale, ref, "e4m3", k=1024)[0]   # measured on the H100 at this K
    missing = ref.copy()
    missing[5, 7] = a[5, 32:] @ b[32:, 7]                                # one k32 instruction's products left out
    assert not check_result(missing, ref, "e4m3", k=1024)[0]
    assert check_result(ref + 6.8e-3 * scale, ref, "e4m3", k=8192)[0]   # measured at K = 8192
    assert not check_result(ref + 6.8e-3 * scale, ref, "e4m3", k=1024)[0]


def test_beta_zero_ignores_c_and_f32_goes_to_simt():
    a, b = _ab(dtype=np.float32)
    plan = validate_gemm_args(a, b, c=np.ones((4, 6), np.float32))
    assert plan.kernel == "simt" and plan.dtype == "f32" and not plan.has_c


def test_bf16_inputs_are_recognised():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a, b = _ab(dtype=ml_dtypes.bfloat16)
    assert validate_gemm_args(a, b).dtype == "bf16"
    bits = np.ones((4, 8), np.uint16), np.ones((8, 6), np.uint16)
    assert validate_gemm_args(*bits, input_dtype="bf16").dtype == "bf16"


@pytest.mark.parametrize("kwargs,argument,fragment", [
    (dict(a=np.ones((4, 8), np.int32), b=np.ones((8, 6), np.int32)), "a", "float16"),
    (dict(a=np.ones((4, 8), np.float16), b=np.ones((7, 6), np.float16)), "b", "chain"),
    (dict(a=np.ones((4, 8), np.float16), b=np.ones((8, 6), np.float32)), "b", "differs"),
    (dict(a=np.ones((4, 16), np.float16)[:, ::2], b=np.ones((8, 6), np.float16)), "a", "contiguous"),
    # a column-major A: the wgmma kernel reads 16-bit ones as they are, not 8-bit ones (no transpose for e4m3)
    (dict(a=np.ones((8, 4), np.uint8).T, b=np.ones((6, 8), np.uint8).T, input_dtype="e4m3"), "a", "K-major"),
    (dict(a=np.ones((4, 8), np.float16), b=np.ones((8, 12), np.float16)[:, ::2]), "b", "unit stride"),
    (dict(a=np.ones((4, 8, 1), np.float16), b=np.ones((8, 6), np.float16)), "a", "2-D"),
    (dict(a=np.ones((4, 16), np.float16)[:, :8], b=np.ones((8, 6), np.float16), kernel="wmma"), "kernel",
     "leading dimension"),
    (dict(bias=np.ones(5, np.float32)), "bias", "(6,)"),
    (dict(bias=np.ones(6, np.float32), bias_mode="per_m"), "bias", "(4,)"),
    (dict(bias=np.ones((4, 6), np.float64), bias_mode="full"), "bias", "float32"),
    (dict(bias_mode="per_n"), "bias", "needs"),
    (dict(bias=np.ones(6, np.float32), bias_mode="none"), "bias", "bias_mode"),
    (dict(bias_mode="per_k"), "bias_mode", "per_m"),
    (dict(beta=0.5), "c", "beta"),
    (dict(beta=1.0, c=np.ones((6, 4), np.float32)), "c", "shape"),
    (dict(act="swish"), "act", "gelu"),
    (dict(kernel="cutlass"), "kernel", "wmma"),
    (dict(kernel="simt"), "a", "float32"),
    (dict(a=np.ones((4, 8), np.float32), b=np.ones((8, 6), np.float32), kernel="wmma"), "a", "float16"),
    (dict(alpha=float("nan")), "alpha", "finite"),
    (dict(out=np.ones((4, 6), np.float64)), "out", "float32"),   # float16 is a valid D now (out_dtype)
    (dict(out=np.ones((4, 6), np.float32).T), "out", "shape"),
    (dict(input_dtype="fp8"), "input_dtype", "bf16"),
])
def test_each_bad_argument_is_named(kwargs, argument, fragment):
    err = _err(**kwargs)
    assert err.argument == argument and fragment in str(err)
    assert isinstance(err, ValueError)


def test_gemm_without_gpu_says_why(no_gpu):
    import fraglab
    from fraglab.errors import GpuUnavailable

    a, b = _ab()
    with pytest.raises(GpuUnavailable, match="FRAGLAB_NO_GPU"):
        fraglab.gemm(a, b)


def test_summary_ratios_come_from_the_rows_they_name():
    rows = [{"kernel": "wmma_fused", "m": 8, "n": 8, "k": 8, "ms": 2.0, "tflops": 300.0, "status": "PASSED",
             "tile": "256x128"},
            {"kernel": "wmma_plain", "m": 8, "n": 8, "k": 8, "ms": 1.6, "tflops": 375.0},
            {"kernel": "cublas_gemmex", "m": 8, "n": 8, "k": 8, "ms": 1.0, "tflops": 600.0},
            {"kernel": "cublas_unfused", "m": 8, "n": 8, "k": 8, "ms": 3.0, "tflops": 200.0}]
    out = wmma_suite.summarize_size(rows, 600.0)
    assert out["fused_vs_cublas"] == pytest.approx(0.5)
    assert out["fused_speedup_vs_unfused"] == pytest.approx(1.5)
    assert out["fused_vs_ceiling"] == pytest.approx(0.5)
    assert out["epilogue_cost"] == pytest.approx(0.25)
    assert out["torch_addmm_act_tflops"] is None and out["tile"] == "256x128"
    assert out["fused_vs_sustained_ceiling"] is None
    assert wmma_suite.summarize_size(rows, None)["fused_vs_ceiling"] is None
    assert wmma_suite.summarize_size(rows, 600.0, 500.0)["fused_vs_sustained_ceiling"] == pytest.approx(0.6)


def test_a_wgmma_summary_reads_the_wgmma_rows_not_the_wmma_ones():
    rows = [{"kernel": "wmma_fused", "m": 8, "n": 8, "k": 8, "ms": 9.0, "tflops": 100.0, "status": "FAILED"},
            {"kernel": "wgmma_fused", "m": 8, "n": 8, "k": 8, "ms": 1.0, "tflops": 700.0, "status": "PASSED",
             "tile": "128x256"},
            {"kernel": "wgmma_plain", "m": 8, "n": 8, "k": 8, "ms": 0.8, "tflops": 875.0},
            {"kernel": "cublas_gemmex", "m": 8, "n": 8, "k": 8, "ms": 1.0, "tflops": 560.0},
            {"kernel": "torch_addmm_act", "m": 8, "n": 8, "k": 8, "ms": 1.0, "tflops": 875.0}]
    out = wmma_suite.summarize_size(rows, None, family="wgmma")
    assert out["check"] == "PASSED" and out["tile"] == "128x256" and out["family"] == "wgmma"
    assert out["fused_vs_cublas"] == pytest.approx(1.25) and out["fused_vs_torch"] == pytest.approx(0.8)
    assert out["epilogue_cost"] == pytest.approx(0.25) and out["wmma_fused_tflops"] == 100.0  # beside, for the plot
    keys = [key for key, _, _ in wmma_suite.summary_columns("wgmma")]
    assert keys.index("wgmma_fused_tflops") < keys.index("wmma_fused_tflops")
    assert "wgmma_fused_tflops" not in [key for key, _, _ in wmma_suite.summary_columns("wmma")]
