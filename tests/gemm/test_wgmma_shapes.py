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


def test_batch_set_is_the_projections_at_serving_batches_between_the_other_sets():
    rows = shapes.shape_set("batch")
    assert len(rows) == 2 * 4 * 5 and {s.m for s in rows} == {80, 96, 160, 192, 256}
    llm = {(s.label, s.n, s.k) for s in shapes.shape_set("llm")}
    assert {(s.label, s.n, s.k) for s in rows} == llm   # the same eight projections
    # between the decode set's 128 rows and prefill: rows no 128-row tile divides
    assert all(s.m % 128 for s in rows if s.m != 256)


def test_unknown_set_is_an_input_error_naming_the_choices():
    with pytest.raises(InputError, match="--shapes.*llm, ragged, decode, batch"):
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
    (["--shapes", "llm", "--bench", "--json", "/"], "--json"),   # refused before any timing, GPU or not
    (["--shapes", "llm", "--bench", "--chain", "0"], "--chain"),
    (["--shapes", "llm", "--bench", "--chain", "1001"], "1000"),
    (["--shapes", "llm", "--bench", "--chain", "two"], "--chain"),
    (["--bench", "--size", "256", "--chain", "4"], "--shapes"),   # chains time the named sets only
    (["--tune", "--shapes", "decode", "--chain", "0"], "--chain"),   # the tuner times chains too: the same check
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


def _row(m, n, k, vs_cublas, vs_lt, tbs):
    return {"m": m, "n": n, "k": k, "vs_cublas": vs_cublas, "vs_lt_fused": vs_lt, "weight_tbs": tbs}


def test_the_summary_counts_shapes_at_or_above_each_baseline_and_names_the_lowest():
    rows = [_row(1, 4096, 4096, 1.20, 1.25, 2.70), _row(8, 4096, 4096, 0.90, None, 2.50),
            _row(16, 4096, 11008, 1.00, 0.97, 2.61), _row(64, 4096, 4096, 0.85, 0.88, 1.60)]
    summary = shapes.summarize(rows, memory_peak_tbs=3.35)
    assert summary["shapes"] == 4
    assert summary["vs_cublas"] == {"at_or_above": 2, "of": 4, "lowest": 0.85, "lowest_shape": [64, 4096, 4096]}
    # the row torch._addmm_activation did not time is left out of that count
    assert summary["vs_lt_fused"] == {"at_or_above": 1, "of": 3, "lowest": 0.88, "lowest_shape": [64, 4096, 4096]}
    small = summary["weight_tbs_small_m"]   # M <= 16 only: 2.70, 2.50, 2.61; 78 % of 3.35 is 2.613
    assert small["of"] == 3 and small["lowest"] == 2.50 and small["median"] == 2.61 and small["at_share"] == 1
    lines = shapes.summary_lines(summary)
    assert lines[0] == "fraglab >= cuBLAS (torch.mm) at 2 of 4 shapes; lowest 0.85x at 64x4096x4096"
    assert lines[1].startswith("fraglab >= cuBLASLt fused") and "1 of 3" in lines[1]
    assert "lowest 2.50 TB/s, median 2.61 over 3 shapes" in lines[2] and "3.35 TB/s at 1 of 3" in lines[2]


def test_the_summary_sets_the_small_m_rows_beside_a_bare_read_of_their_weight():
    rows = [{**_row(1, 4096, 4096, 1.0, 1.0, 1.9), "read_tbs": 2.4, "vs_read": 0.79},
            {**_row(8, 4096, 14336, 1.0, 1.0, 2.6), "read_tbs": 2.8, "vs_read": 0.93},
            {**_row(16, 14336, 14336, 1.0, 1.0, 2.9), "read_tbs": 3.0, "vs_read": 0.97},
            {**_row(64, 4096, 4096, 0.9, 0.9, 1.6), "read_tbs": 2.4, "vs_read": 0.67}]   # M 64: not in the count
    read = shapes.summarize(rows, memory_peak_tbs=3.35)["weight_tbs_small_m"]["read"]
    assert read == {"of": 3, "median_tbs": 2.8, "vs_read_median": 0.93, "vs_read_lowest": 0.79,
                    "lowest_shape": [1, 4096, 4096]}
    line = shapes.summary_lines(shapes.summarize(rows))[-1]
    assert line.startswith("a bare read of the same weights") and "median 2.80 TB/s" in line
    assert "0.93x its rate at the median, lowest 0.79x at 1x4096x4096" in line


def test_the_summary_leaves_out_what_was_not_measured():
    summary = shapes.summarize([_row(2048, 4096, 4096, 1.01, None, 0.3)])
    assert "vs_lt_fused" not in summary and "weight_tbs_small_m" not in summary   # no fused baseline, no small M
    assert shapes.summary_lines(summary) == ["fraglab >= cuBLAS (torch.mm) at 1 of 1 shapes; lowest 1.01x at "
                                             "2048x4096x4096"]
    no_peak = shapes.summarize([_row(8, 4096, 4096, 1.0, 1.0, 2.0)])["weight_tbs_small_m"]
    assert "at_share" not in no_peak and "peak_tbs" not in no_peak   # the driver did not give DRAM's peak
    assert "read" not in no_peak   # no bare read timed


def test_cli_prints_the_summary_within_the_width_under_the_table(monkeypatch):
    from fraglab.runtime import gpu

    rows = [{**_row(8, 4096, 4096, 0.93, 0.95, 1.80), "label": "decode", "tile": "skinny/k4", "fraglab": 2.0,
             "cublas": 2.1, "lt_fused": 2.1},
            {**_row(1, 14336, 14336, 1.04, 1.02, 2.90), "label": "decode", "tile": "skinny/k2", "fraglab": 3.0,
             "cublas": 2.9, "lt_fused": 2.9}]
    monkeypatch.setattr(gpu, "cupy", lambda: None)
    monkeypatch.setattr(shapes, "run_shapes", lambda *a, **k: {"rows": rows, "device": {"memory_peak_tbs": 3.35}})
    res = CliRunner().invoke(app, ["gemm", "--bench", "--shapes", "decode"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("fraglab >= cuBLAS (torch.mm)"))
    summary = lines[start:]
    assert "at 1 of 2 shapes; lowest 0.93x at 8x4096x4096" in " ".join(x.strip() for x in summary)
    assert "3.35 TB/s at 1 of 2" in " ".join(x.strip() for x in summary)   # 2.90 >= 0.78 x 3.35, 1.80 not
    assert all(len(line) <= 80 for line in summary) and any(line.startswith("  ") for line in summary)


@pytest.mark.gpu
def test_run_shapes_sets_small_m_rows_beside_a_bare_read_of_their_weight(sm90, torch):
    """Rows up to READ_MAX_M time a bare read of the weight beside fraglab; larger M do not. The read cannot be
    slower than a GEMM that also multiplies, nor faster than DRAM's peak (the weights are rotated past L2)."""
    small = shapes.Shape("decode", 8, 1024, 4096)
    large = shapes.Shape("prefill", shapes.READ_MAX_M + 128, 512, 512)
    result = shapes.run_shapes([small, large], b_order="F")
    first, second = result["rows"]
    assert "read" not in first and "read" not in second   # no TFLOP/s row for the read
    assert "vs_read" not in second and "read_tbs" not in second
    peak = result["device"]["memory_peak_tbs"] or 10.0
    assert 0.05 < first["read_tbs"] < peak, first
    assert first["vs_read"] == pytest.approx(first["read_ms"] / first["fraglab_ms"])
    assert 0.2 < first["vs_read"] < 1.5, first   # a GEMM reading the same bytes, give or take its launch's ramp
    summary = shapes.summarize(result["rows"], peak)
    assert summary["weight_tbs_small_m"]["read"]["of"] == 1


@pytest.mark.gpu
def test_run_shapes_times_chains_when_asked(sm90, torch, monkeypatch):
    from fraglab import bench as benchmod

    chains = []
    timed = benchmod.time_interleaved
    monkeypatch.setattr(benchmod, "time_interleaved", lambda *a, **k: chains.append(k["chain"]) or timed(*a, **k))
    result = shapes.run_shapes([shapes.Shape("decode", 8, 1024, 4096)], b_order="F", chain=3)
    assert chains == [3] and result["chain"] == 3
    row = result["rows"][0]
    assert row["fraglab_ms"] > 0 and row["cublas_ms"] > 0 and row["vs_cublas"] > 0


def test_chain_lengths_are_whole_numbers_in_range():
    assert shapes.check_chain(1) == 1 and shapes.check_chain(shapes.MAX_CHAIN) == shapes.MAX_CHAIN
    for bad in (0, -3, shapes.MAX_CHAIN + 1, True, 2.0, "4"):
        with pytest.raises(InputError, match="--chain") as caught:
            shapes.check_chain(bad)
        assert caught.value.argument == "--chain"


def test_cli_passes_the_chain_to_the_timing_and_says_so_above_the_table(monkeypatch):
    from fraglab.runtime import gpu

    asked = {}
    rows = [{**_row(8, 4096, 4096, 1.02, 1.05, 2.40), "label": "decode", "tile": "skinny/k4", "fraglab": 2.0,
             "cublas": 1.96, "lt_fused": 1.9}]

    def fake_run(*args, **kwargs):
        asked.update(kwargs)
        return {"rows": rows, "device": {}, "chain": kwargs["chain"]}

    monkeypatch.setattr(gpu, "cupy", lambda: None)
    monkeypatch.setattr(shapes, "run_shapes", fake_run)
    res = CliRunner().invoke(app, ["gemm", "--bench", "--shapes", "decode", "--chain", "24"], env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    assert asked["chain"] == 24 and "chains of 24 launches per event pair" in res.output
    res = CliRunner().invoke(app, ["gemm", "--bench", "--shapes", "decode"], env={"COLUMNS": "120"})
    assert asked["chain"] == 1 and "chains of" not in res.output   # an event pair per launch by default


def test_cli_marks_the_rows_a_tuning_table_chose_and_counts_them(monkeypatch):
    from fraglab.runtime import gpu

    rows = [{**_row(8, 4096, 4096, 0.93, 0.95, 1.80), "label": "decode", "tile": "skinny/k4", "fraglab": 2.0,
             "cublas": 2.1, "lt_fused": 2.1, "tuned": False},
            {**_row(128, 14336, 4096, 1.01, 1.02, 2.40), "label": "decode", "tile": "64x256p", "fraglab": 300.0,
             "cublas": 297.0, "lt_fused": 294.0, "tuned": True}]
    assert shapes.summarize(rows)["tuned"] == 1
    monkeypatch.setattr(gpu, "cupy", lambda: None)
    monkeypatch.setattr(shapes, "run_shapes", lambda *a, **k: {"rows": rows, "device": {}})
    res = CliRunner().invoke(app, ["gemm", "--bench", "--shapes", "decode"], env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    assert "64x256p *" in res.output and "skinny/k4 *" not in res.output
    assert "* 1 of 2 shapes ran the tile the tuning table holds" in " ".join(res.output.split())
    assert rows[1]["tile"] == "64x256p"   # the mark is for the table shown, not the rows saved
