"""`fraglab gemm --bench --shapes NAME`: the named shape sets (data) and the CLI's argument checks (CPU)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fraglab.bench import shapes
from fraglab.cli.main import app
from fraglab.errors import InputError


def test_llm_set_is_the_projections_of_8b_and_70b_at_five_batch_sizes():
    rows = shapes.shape_set("llm")
    assert len(rows) == 2 * 4 * 5
    assert {s.m for s in rows} == {1, 16, 128, 2048, 8192}
    got = {(s.label, s.n, s.k) for s in rows}
    # Llama-3 8B: hidden 4096, 8 KV heads of 128, FFN 14336; 70B: hidden 8192, FFN 28672 (public model configs)
    assert got == {("8B qkv", 6144, 4096), ("8B o", 4096, 4096), ("8B gate_up", 28672, 4096),
                   ("8B down", 4096, 14336), ("70B qkv", 10240, 8192), ("70B o", 8192, 8192),
                   ("70B gate_up", 57344, 8192), ("70B down", 8192, 28672)}


def test_ragged_and_decode_sets_hold_the_issue_shapes():
    ragged = {(s.m, s.n, s.k) for s in shapes.shape_set("ragged")}
    assert {(3000, 3000, 3000), (1000, 1000, 1000), (5000, 3000, 2000), (4095, 4096, 4096)} <= ragged
    assert {(4096, 4096, 4096), (8192, 8192, 8192)} <= ragged   # the aligned squares, re-measured beside them
    decode = shapes.shape_set("decode")
    assert len(decode) == 6 * 9 and {s.m for s in decode} == {1, 8, 16, 32, 64, 128}
    assert {s.n for s in decode} == {s.k for s in decode} == {4096, 11008, 14336}
    assert decode[0].weight_bytes_f16 == decode[0].n * decode[0].k * 2


def test_unknown_set_is_an_input_error_naming_the_choices():
    with pytest.raises(InputError, match="--shapes.*llm, ragged, decode"):
        shapes.shape_set("gpt")


@pytest.mark.parametrize("args, fragment", [
    (["--shapes", "gpt", "--bench"], "llm"),
    (["--shapes", "llm"], "--bench"),
    (["--shapes", "llm", "--bench", "--check"], "--bench"),
    (["--shapes", "llm", "--bench", "--simt"], "--simt"),
    (["--shapes", "llm", "--bench", "--size", "256"], "--size"),
    (["--shapes", "llm", "--bench", "--tile", "128x256"], "--tile"),
    (["--shapes", "llm", "--bench", "--dtype", "e4m3"], "--dtype"),
    (["--shapes", "llm", "--bench", "--b-order", "T"], "--b-order"),
])
def test_cli_refuses_bad_shapes_arguments_in_one_line(args, fragment):
    res = CliRunner().invoke(app, ["gemm", *args])
    assert res.exit_code == 2, res.output
    assert fragment in res.output and "Traceback" not in res.output


def test_cli_shapes_without_a_gpu_says_so(no_gpu):
    res = CliRunner().invoke(app, ["gemm", "--bench", "--shapes", "llm"])
    assert res.exit_code == 1 and "no usable GPU" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_ratio_is_none_without_both_numbers():
    assert shapes.ratio(2.0, 4.0) == 0.5
    assert shapes.ratio(2.0, None) is None and shapes.ratio(None, 3.0) is None
