"""The one choice check (fraglab.errors.check_choice) every validator of a value-among-choices goes through."""

import pytest

from fraglab.errors import InputError, check_choice
from fraglab.gemm import skinny, wgmma, wmma
from fraglab.layouts import spec


def test_a_valid_value_comes_back_unchanged():
    assert check_choice("per_n", ("none", "per_n"), "bias_mode") == "per_n"
    assert check_choice(4, (1, 2, 4), "splits") == 4


def test_an_invalid_value_names_the_argument_the_value_and_every_choice():
    with pytest.raises(InputError) as caught:
        check_choice(3, (1, 2, 4), "splits")
    assert str(caught.value) == "invalid splits 3: valid choices are 1, 2, 4"
    assert caught.value.argument == "splits" and caught.value.exit_code == 2
    assert isinstance(caught.value, ValueError)   # kernel-spec callers that catch ValueError still do


def test_the_shown_name_and_value_replace_the_raw_ones_in_the_message_only():
    with pytest.raises(InputError) as caught:
        check_choice("x\x1b[31m", ("table", "json"), "format", name="--format", shown="x?[31m")
    assert str(caught.value) == "invalid --format 'x?[31m': valid choices are table, json"
    assert caught.value.argument == "format"


@pytest.mark.parametrize("call", [
    lambda: wgmma.WgmmaKernelSpec("f16", tile="7x7"),
    lambda: wmma.WmmaKernelSpec("f16", act="cube"),
    lambda: skinny.SkinnyKernelSpec("f16", splits=3),
    lambda: spec.get_family("wmma3"),
], ids=["wgmma tile", "wmma act", "skinny splits", "--api"])
def test_kernel_specs_and_the_api_choice_refuse_through_it(call):
    with pytest.raises(InputError, match="valid choices are"):
        call()
