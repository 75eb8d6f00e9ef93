"""A bias of the inputs' own 16-bit type (nn.Linear's bias as it is), per column, read by the wgmma and skinny GEMMs:
the one rule (epilogue.check_bias_dtype), the instantiations it adds and their names. CPU only."""

from __future__ import annotations

import dataclasses

import pytest

from fraglab.gemm import skinny, wgmma
from fraglab.gemm.epilogue import BIAS_DTYPES, BIAS_MODES, check_bias_dtype, epilogue_cpp


@pytest.mark.parametrize("bias_dtype", BIAS_DTYPES)
@pytest.mark.parametrize("bias_mode", BIAS_MODES)
@pytest.mark.parametrize("dtype", ["f16", "bf16", "e4m3"])
def test_the_rule(bias_dtype, bias_mode, dtype):
    allowed = bias_dtype == "f32" or (bias_mode == "per_n" and bias_dtype == dtype)
    if allowed:
        assert check_bias_dtype(bias_dtype, bias_mode, dtype) == bias_dtype
    else:
        with pytest.raises(ValueError, match="takes a float32 bias"):
            check_bias_dtype(bias_dtype, bias_mode, dtype)


def test_a_bias_type_outside_the_choices_is_named():
    with pytest.raises(ValueError, match="bias_dtype"):
        check_bias_dtype("f64", "per_n", "f16")


@pytest.mark.parametrize("make", [
    lambda **kw: wgmma.WgmmaKernelSpec("f16", "relu", **kw),
    lambda **kw: skinny.SkinnyKernelSpec("f16", "relu", **kw),
])
def test_specs_keep_to_the_rule(make):
    assert make(bias_mode="per_n", bias_dtype="f16").bias_dtype == "f16"
    for mode, bias_dtype in (("per_m", "f16"), ("full", "f16"), ("per_n", "bf16")):
        with pytest.raises(ValueError, match="takes a float32 bias"):
            make(bias_mode=mode, bias_dtype=bias_dtype)


@pytest.mark.parametrize("bias_dtype,cpp", [("f16", "__half"), ("bf16", "__nv_bfloat16")])
def test_the_names_differ_in_the_epilogues_bias_type_alone(bias_dtype, cpp):
    for spec in (wgmma.WgmmaKernelSpec(bias_dtype, "gelu", "per_n", True, True, "64x64pk2", out_dtype="f16",
                                       store="tma", b_order="F"),
                 skinny.SkinnyKernelSpec(bias_dtype, "gelu", "per_n", True, True, "f16", "F", "4x1n64")):
        f32_name = spec.name()
        name = dataclasses.replace(spec, bias_dtype=bias_dtype).name()
        assert name != f32_name and cpp not in f32_name.split("Epilogue<")[1].split(">")[0]
        assert name.replace(f", false, false, {cpp}>", ">") == f32_name   # the scale flags spelled out, then the type


def test_epilogue_names_spell_out_the_flags_before_the_bias_type():
    assert epilogue_cpp("relu", "per_n", False, False, bias_dtype="f16").endswith("false, false, false, false, __half>")
    assert epilogue_cpp("relu", "per_n", False, False, row_col_scale=True).endswith("false, false, true>")


@pytest.mark.parametrize("module", [wgmma, skinny])
def test_every_16_bit_bias_instantiation_is_a_per_column_twin_of_a_float32_one(module):
    specs = module.all_specs()
    sixteen = {s for s in specs if s.bias_dtype != "f32"}
    twins = {dataclasses.replace(s, bias_dtype=s.dtype) for s in specs
             if s.bias_dtype == "f32" and s.bias_mode == "per_n" and s.dtype in ("f16", "bf16")}
    assert sixteen == twins and sixteen
    assert len({s.name() for s in specs}) == len(specs)
