"""A column-major A (unit stride along M) on the CPU: validation reads its order and leading dimension, the wgmma
spec and schedule carry it, TMA's 16-byte rows need M a multiple of 8, and e4m3 (K-major only) is one error naming
the fix. numpy arrays stand in for device arrays (validation reads shapes, strides and dtypes only)."""

import numpy as np
import pytest

from fraglab.gemm import wgmma
from fraglab.gemm.validate import GemmArgumentError, is_aligned, tensor_core_kernel, validate_gemm_args


def test_a_column_major_a_is_planned_with_its_order_and_pitch():
    a = np.asfortranarray(np.ones((64, 32), np.float16))
    plan = validate_gemm_args(a, np.ones((32, 16), np.float16), kernel="wgmma")
    assert (plan.a_order, plan.lda, plan.m, plan.k) == ("F", 0, 64, 32)
    wide = np.asfortranarray(np.ones((72, 32), np.float16))[:64]   # columns 72 elements (144 bytes) apart
    plan = validate_gemm_args(wide, np.ones((32, 16), np.float16), kernel="wgmma")
    assert (plan.a_order, plan.lda) == ("F", 72) and plan.strided
    plan = validate_gemm_args(np.ones((64, 32), np.float16), np.ones((32, 16), np.float16))
    assert plan.a_order == "C"
    with pytest.raises(GemmArgumentError, match="16 bytes"):   # columns 70 elements apart: 140 bytes
        validate_gemm_args(np.asfortranarray(np.ones((70, 32), np.float16))[:64], np.ones((32, 16), np.float16))


def test_an_e4m3_column_major_a_is_one_error_naming_the_fix():
    a = np.asfortranarray(np.zeros((64, 32), np.uint8))
    b = np.asfortranarray(np.zeros((32, 16), np.uint8))
    with pytest.raises(GemmArgumentError) as info:
        validate_gemm_args(a, b, input_dtype="e4m3")
    assert info.value.argument == "a" and "K-major" in str(info.value) and "contiguous" in str(info.value)
    assert validate_gemm_args(np.ascontiguousarray(a), b, input_dtype="e4m3").a_order == "C"
    with pytest.raises(ValueError, match="A must be row-major"):
        wgmma.WgmmaKernelSpec("e4m3", b_order="F", a_order="F")


def test_tma_rows_of_a_column_major_a_are_m_long():
    assert is_aligned(64, 64, (0,), m=0) and is_aligned(64, 64, (0,), m=136)
    assert not is_aligned(64, 64, (0,), m=131)
    assert tensor_core_kernel("auto", 90, 64, 64, (0,), m=136) == ("wgmma", None)
    family, notice = tensor_core_kernel("auto", 90, 64, 64, (0,), m=131)
    assert family == "wmma" and "M=131" in notice and "\n" not in notice
    with pytest.raises(GemmArgumentError, match="contiguous"):   # a pitch only TMA takes: no fallback
        tensor_core_kernel("auto", 90, 64, 64, (0,), strided=True, m=131)


def test_a_order_is_a_launch_parameter_not_an_instantiation():
    row, col = (wgmma.spec_for("f16", 3008, 3072, 1024, a_order=o) for o in ("C", "F"))
    assert row.name() == col.name() and row.a_order == "C" and col.a_order == "F"
    assert all(s.a_order == "C" for s in wgmma.all_specs())   # the compile test's set is unchanged by A's order
    with pytest.raises(ValueError, match="a_order 'T'"):
        wgmma.WgmmaKernelSpec("f16", a_order="T")
