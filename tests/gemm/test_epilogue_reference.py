"""The numpy epilogue reference against hand-computed values (CPU only)."""

import math

import numpy as np
import pytest

from fraglab.gemm.reference import (ACT_KINDS, BIAS_MODES, TOLERANCES, act_cpp, activate, bias_cpp, check_result,
                                  epilogue_cpp, reference_gemm)

# Values from the definitions (Phi(1) = 0.841344746..., e = 2.718281828...), not from the code under test.
HAND = {
    ("relu", -2.0): 0.0, ("relu", 3.0): 3.0,
    ("leaky_relu", -2.0): -0.02, ("leaky_relu", 3.0): 3.0,
    ("gelu", 1.0): 0.8413447460685429, ("gelu", -1.0): -0.15865525393145707, ("gelu", 0.0): 0.0,
    ("gelu_tanh", 1.0): 0.8411919906082768, ("gelu_tanh", -1.0): -0.15880800939172324,
    ("silu", 1.0): 0.7310585786300049, ("silu", -1.0): -0.2689414213699951,
    ("sigmoid", 0.0): 0.5, ("sigmoid", 2.0): 0.8807970779778823,
    ("tanh", 0.5): 0.46211715726000974, ("tanh", -0.5): -0.46211715726000974,
    ("none", -7.25): -7.25,
}


@pytest.mark.parametrize("act,x", list(HAND))
def test_activation_hand_values(act, x):
    assert activate(np.array([x]), act)[0] == pytest.approx(HAND[(act, x)], rel=1e-12, abs=1e-15)


def test_leaky_slope_is_a_parameter():
    assert activate(np.array([-2.0]), "leaky_relu", leaky_slope=0.3)[0] == pytest.approx(-0.6)


@pytest.mark.parametrize("act", ACT_KINDS)
def test_nan_in_nan_out(act):
    assert np.isnan(activate(np.array([np.nan]), act)[0])


# Limits at +-inf: what the kernel must produce too.
INF_LIMITS = {"none": (-math.inf, math.inf), "relu": (0.0, math.inf), "leaky_relu": (-math.inf, math.inf),
              "gelu": (0.0, math.inf), "gelu_tanh": (0.0, math.inf), "silu": (0.0, math.inf),
              "sigmoid": (0.0, 1.0), "tanh": (-1.0, 1.0)}


@pytest.mark.parametrize("act", ACT_KINDS)
def test_infinity_limits(act):
    y = activate(np.array([-np.inf, np.inf]), act)
    assert tuple(y) == INF_LIMITS[act]


def test_far_tails_are_finite_and_tiny():
    y = activate(np.array([-40.0]), "gelu")
    assert np.isfinite(y[0]) and -1e-300 < y[0] <= 0.0


A = np.array([[1.0, 2.0], [3.0, 4.0]])
B = np.array([[5.0, 6.0], [7.0, 8.0]])       # A @ B = [[19, 22], [43, 50]]
C = np.array([[1.0, 0.0], [0.0, 1.0]])


def test_reference_alpha_beta_c():
    d, z = reference_gemm(A, B, c=C, alpha=0.5, beta=2.0)
    np.testing.assert_array_equal(z, [[11.5, 11.0], [21.5, 27.0]])
    np.testing.assert_array_equal(d, z)


@pytest.mark.parametrize("mode,bias,expected", [
    ("per_m", [1.0, -1.0], [[20.0, 23.0], [42.0, 49.0]]),
    ("per_n", [1.0, -1.0], [[20.0, 21.0], [44.0, 49.0]]),
    ("full", [[1.0, 2.0], [3.0, 4.0]], [[20.0, 24.0], [46.0, 54.0]]),
])
def test_reference_bias_modes(mode, bias, expected):
    d, z = reference_gemm(A, B, bias=np.array(bias), bias_mode=mode)
    np.testing.assert_array_equal(z, expected)


def test_reference_activation_applies_to_pre_and_z_keeps_pre():
    d, z = reference_gemm(A, -B, bias=np.array([20.0, 0.0]), bias_mode="per_n", act="relu")
    np.testing.assert_array_equal(z, [[1.0, -22.0], [-23.0, -50.0]])
    np.testing.assert_array_equal(d, [[1.0, 0.0], [0.0, 0.0]])


def test_reference_widens_half_inputs_exactly():
    a = np.array([[0.1]], dtype=np.float16)
    d, _ = reference_gemm(a, np.array([[1.0]], dtype=np.float16))
    assert d[0, 0] == float(np.float16(0.1)) and d.dtype == np.float64


@pytest.mark.parametrize("mode,bias", [("per_n", [1.0, 2.0, 3.0]), ("per_m", [[1.0, 2.0]]), ("full", [1.0, 2.0])])
def test_reference_rejects_bias_of_wrong_shape(mode, bias):
    with pytest.raises(ValueError, match="bias"):
        reference_gemm(A, B, bias=np.array(bias), bias_mode=mode)


def test_reference_rejects_shapes_that_do_not_chain():
    with pytest.raises(ValueError, match="chain"):
        reference_gemm(np.ones((2, 3)), np.ones((2, 3)))


def test_cpp_names():
    assert act_cpp("gelu_tanh") == "fraglab::ActKind::GELUTanh"
    assert bias_cpp("per_m") == "fraglab::BiasMode::PerM"
    assert epilogue_cpp("leaky_relu", "full", True, False) == \
        "fraglab::Epilogue<fraglab::ActKind::LeakyReLU, fraglab::BiasMode::Full, true, false>"
    names = {epilogue_cpp(a, b, c, z) for a in ACT_KINDS for b in BIAS_MODES for c in (0, 1) for z in (0, 1)}
    assert len(names) == len(ACT_KINDS) * len(BIAS_MODES) * 4


def test_cpp_names_follow_the_enum_order_of_epilogue_cuh():
    from fraglab.runtime.build import kernels_dir

    text = (kernels_dir() / "gemm" / "epilogue.cuh").read_text()
    enum_acts = text.split("enum class ActKind : int {")[1].split("}")[0].replace("= 0", "").replace(" ", "")
    assert [act_cpp(a).rsplit("::", 1)[1] for a in ACT_KINDS] == enum_acts.split(",")
    enum_bias = text.split("enum class BiasMode : int {")[1].split("}")[0].replace("= 0", "").replace(" ", "")
    assert [bias_cpp(b).rsplit("::", 1)[1] for b in BIAS_MODES] == enum_bias.split(",")


@pytest.mark.parametrize("bad", [lambda: act_cpp("swish"), lambda: bias_cpp("per_k")])
def test_cpp_names_reject_unknown_choices(bad):
    with pytest.raises(ValueError, match="valid choices"):
        bad()


def test_check_result_passes_close_and_fails_far():
    ref = np.array([[1.0, -2.0], [4.0, 0.5]])
    tol = TOLERANCES["f16"]
    ok, max_abs, rel = check_result(ref + 0.5 * tol * 4.0, ref, "f16")
    assert ok and rel == pytest.approx(0.5 * tol)
    ok, _, rel = check_result(ref + 2.0 * tol * 4.0, ref, "f16")
    assert not ok and rel == pytest.approx(2.0 * tol)


def test_check_result_fails_a_poisoned_element():
    ref = np.ones((3, 3))
    d = ref.copy()
    d[1, 2] = np.nan
    ok, max_abs, _ = check_result(d, ref, "bf16")
    assert not ok and math.isinf(max_abs)


def test_check_result_requires_the_same_non_finite_values():
    ref = np.array([np.nan, np.inf, -np.inf, 1.0])
    assert check_result(ref.copy(), ref, "f32")[0]
    assert not check_result(np.array([1.0, np.inf, -np.inf, 1.0]), ref, "f32")[0]
    assert not check_result(np.array([np.nan, -np.inf, -np.inf, 1.0]), ref, "f32")[0]


def test_check_result_scales_by_pre_activation_when_given():
    d_ref = np.array([0.5, 1.0])            # e.g. sigmoid outputs of a large pre-activation
    d = d_ref + 0.01
    assert not check_result(d, d_ref, "f16")[0]
    assert check_result(d, d_ref, "f16", z_ref=np.array([100.0, 50.0]))[0]


def test_check_result_rejects_unknown_dtype_and_shape_mismatch():
    with pytest.raises(ValueError, match="valid choices"):
        check_result(np.ones(2), np.ones(2), "f64")
    assert check_result(np.ones((2, 2)), np.ones((2, 3)), "f16")[0] is False


# ---- a 16-bit D: one more rounding, and f16's overflow to infinity

def _bf16(x):
    """float64 -> nearest-even bf16, back in float64 (as the cast kernel and the wgmma store round)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def test_a_d_rounded_to_f16_passes_only_as_f16():
    ref = np.random.default_rng(0).uniform(-1, 1, 512) * np.geomspace(1e-3, 1e3, 512)
    d = ref.astype(np.float16).astype(np.float64)
    assert not check_result(d, ref, "f32")[0]                   # SIMT's 1e-4 is tighter than f16's rounding
    ok, _, rel = check_result(d, ref, "f32", out_dtype="f16")
    assert ok and rel == 0.0                                     # nothing beyond one rounding


def test_a_d_rounded_to_bf16_passes_only_as_bf16():
    ref = np.random.default_rng(1).uniform(-1, 1, 512)
    d = _bf16(ref)
    assert not check_result(d, ref, "f16")[0]                   # 2^-8 rounding exceeds the 1e-3 tolerance
    assert check_result(d, ref, "f16", out_dtype="bf16")[0]
    assert not check_result(d, ref, "f16", out_dtype="f16")[0]   # bf16's rounding is not f16's


@pytest.mark.parametrize("out_dtype", ["f16", "bf16"])
def test_a_wrong_16_bit_value_still_fails(out_dtype):
    ref = np.random.default_rng(2).uniform(-1, 1, 256)
    d = ref.astype(np.float16).astype(np.float64) if out_dtype == "f16" else _bf16(ref)
    i = int(np.argmax(np.abs(ref)))
    d[i] = ref[i] * (1 + 4 * (2.0 ** -11 if out_dtype == "f16" else 2.0 ** -8))   # four roundings off
    assert not check_result(d, ref, "f16", out_dtype=out_dtype)[0]
    d[i] = np.nan                                                  # unwritten
    ok, max_abs, _ = check_result(d, ref, "f16", out_dtype=out_dtype)
    assert not ok and math.isinf(max_abs)


def test_f16_overflow_to_infinity_is_ieee_not_a_failure():
    ref = np.array([70000.0, -1e5, 65519.0, 1.0])
    with np.errstate(over="ignore"):
        d = ref.astype(np.float16).astype(np.float64)             # inf, -inf, 65504, 1
    assert np.isinf(d[:2]).all() and d[2] == 65504.0
    assert check_result(d, ref, "f16", out_dtype="f16")[0]
    assert not check_result(d, ref, "f16")[0]                     # as f32, an infinity is wrong
    assert not check_result(np.array([np.inf, np.inf, 65504.0, 1.0]), ref, "f16", out_dtype="f16")[0]  # sign
    assert not check_result(np.array([np.inf, 1.0]), np.array([60000.0, 1.0]), "f16", out_dtype="f16")[0]


def test_f16_subnormal_rounding_is_allowed():
    ref = np.random.default_rng(3).uniform(1e-7, 3e-7, 64)           # below 2^-14: f16 subnormals
    d = ref.astype(np.float16).astype(np.float64)
    assert check_result(d, ref, "f16", out_dtype="f16")[0]
    assert not check_result(d + 2.0 ** -24, ref, "f16", out_dtype="f16")[0]   # a whole subnormal step more


def test_check_result_rejects_an_unknown_out_dtype():
    with pytest.raises(ValueError, match="out_dtype"):
        check_result(np.ones(2), np.ones(2), "f16", out_dtype="f8")


def test_reference_scales_rows_and_columns_before_the_epilogue():
    """The rowwise fp8 recipe: scale_a[m] * (A @ B)[m, n] * scale_b[n], then alpha, C, bias, activation."""
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, (5, 7)), rng.uniform(-1, 1, (7, 3))
    sa, sb = rng.uniform(0.5, 2, 5), rng.uniform(0.5, 2, 3)
    c, bias = rng.uniform(-1, 1, (5, 3)), rng.uniform(-1, 1, 3)
    d, z = reference_gemm(a, b, c=c, bias=bias, bias_mode="per_n", act="relu", alpha=0.5, beta=2.0,
                          scale_a=sa, scale_b=sb)
    expected = np.array([[0.5 * sa[i] * sb[j] * sum(a[i, t] * b[t, j] for t in range(7)) + 2.0 * c[i, j] + bias[j]
                          for j in range(3)] for i in range(5)])
    np.testing.assert_allclose(z, expected, rtol=1e-12)
    np.testing.assert_allclose(d, np.maximum(expected, 0), rtol=1e-12)
    # (M, 1) and (1, N), as torch._scaled_mm takes them, are the same factors
    d2, _ = reference_gemm(a, b, c=c, bias=bias, bias_mode="per_n", act="relu", alpha=0.5, beta=2.0,
                           scale_a=sa[:, None], scale_b=sb[None, :])
    np.testing.assert_array_equal(d, d2)
    with pytest.raises(ValueError, match="together"):
        reference_gemm(a, b, scale_a=sa)
    with pytest.raises(ValueError, match="M = 5 and N = 3"):
        reference_gemm(a, b, scale_a=sb, scale_b=sa)


def test_epilogue_cpp_names_the_scaled_policy():
    from fraglab.gemm.epilogue import epilogue_cpp

    plain = epilogue_cpp("relu", "per_n", False, False)
    assert plain.endswith("false, false>") and epilogue_cpp("relu", "per_n", False, False, True) == plain[:-1] + ", true>"
