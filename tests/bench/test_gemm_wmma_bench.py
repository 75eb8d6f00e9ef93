"""fraglab.bench: statistics, FLOP counting, rotation sizing, atomic JSON and plots (CPU only)."""

import json
import math

import numpy as np
import pytest

from fraglab import bench
import fraglab.bench.timing  # noqa: F401  (monkeypatched below)


def test_percentiles_match_numpy():
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0]
    for q in (0, 20, 50, 80, 100):
        assert bench.percentile(values, q) == pytest.approx(np.percentile(values, q))
    t = bench.summarize(values)
    assert (t.median_ms, t.reps) == (3.5, 6) and t.p20_ms < t.median_ms < t.p80_ms


def test_tflops():
    assert bench.tflops(1000, 1000, 1000, 1.0) == pytest.approx(2.0)     # 2e9 FLOP in 1 ms
    assert math.isnan(bench.tflops(10, 10, 10, 0.0))


def test_rotation_count_covers_twice_the_l2():
    l2 = 50 * 2**20
    assert bench.rotation_count(4 * 2**20, l2) == 25
    assert bench.rotation_count(512 * 2**20, l2) == 1
    assert bench.rotation_count(1, l2) == 64                      # capped
    with pytest.raises(ValueError):
        bench.rotation_count(0, l2)


def test_save_json_writes_whole_files_and_nan_as_null(tmp_path):
    path = tmp_path / "sub" / "r.json"
    bench.save_json({"x": np.float32(1.5), "nan": float("nan"), "arr": np.arange(3)}, path)
    assert json.loads(path.read_text()) == {"x": 1.5, "nan": None, "arr": [0, 1, 2]}


def test_the_json_path_check_is_the_writers_rule(tmp_path):
    # what the commands ask before timing (check_json_path) refuses what save_json would refuse after it
    from fraglab.bench.report import check_json_path
    from fraglab.errors import InputError
    for name in ("rows.png", "rows.svg", "rows.html", "rows.csv", "rows.txt"):
        with pytest.raises(InputError, match="--json"):
            check_json_path(tmp_path / name)
        with pytest.raises(InputError, match="--json"):
            bench.save_json({"x": 1}, tmp_path / name)
        assert not (tmp_path / name).exists()
    for name in ("rows.json", "rows", "rows.out"):   # .json, no suffix, or one no format owns
        check_json_path(tmp_path / name)
        bench.save_json({"x": 1}, tmp_path / name)
        assert json.loads((tmp_path / name).read_text()) == {"x": 1}


def test_save_json_leaves_nothing_behind_on_failure(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old")
    with pytest.raises(TypeError):
        bench.save_json({"bad": object()}, path)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.json"]


ROWS = [{"kernel": k, "m": s, "n": s, "k": s, "tflops": t}
        for k, s, t in [("a", 1024, 100.0), ("a", 2048, 300.0), ("b", 2048, 250.0), ("b", 1024, float("nan"))]]


def test_plot_tflops_writes_a_png(tmp_path):
    path = bench.plot_tflops(ROWS, tmp_path / "t.png", "title")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tflops_figure_has_one_line_per_kernel_and_skips_nan():
    fig = bench.tflops_figure(ROWS, "t")
    lines = fig.axes[0].get_lines()
    assert [l.get_label() for l in lines] == ["a", "b"]
    assert list(lines[1].get_ydata()) == [250.0]


def test_a_rows_label_names_its_line():
    rows = [dict(r, label="cuBLASLt fp8 (torch._scaled_mm)") if r["kernel"] == "b" else r for r in ROWS]
    fig = bench.tflops_figure(rows, "t")
    assert [l.get_label() for l in fig.axes[0].get_lines()] == ["a", "cuBLASLt fp8 (torch._scaled_mm)"]


def test_tflops_figure_draws_each_measured_ceiling_as_a_level_line():
    fig = bench.tflops_figure(ROWS, "t", {"wgmma burst": 900.0, "wgmma sustained": 820.0, "not measured": None})
    lines = fig.axes[0].get_lines()
    levels = {l.get_label(): set(l.get_ydata()) for l in lines[2:]}
    assert levels == {"wgmma burst: 900": {900.0}, "wgmma sustained: 820": {820.0}}
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "wgmma burst: 900" in legend and "a" in legend


def test_rows_table_formats_and_dashes_missing():
    from rich.console import Console

    table = bench.rows_table([{"kernel": "x", "tflops": 12.345, "status": "PASSED"}, {"kernel": "y"}],
                             [("kernel", "kernel", ""), ("tflops", "TF/s", ".1f"), ("status", "check", "")])
    console = Console(record=True, width=80)
    console.print(table)
    text = console.export_text()
    assert "12.3" in text and "PASSED" in text and text.count("-") >= 2


def test_size_label():
    assert bench.size_label({"m": 8, "n": 8, "k": 8}) == "8^3"
    assert bench.size_label({"m": 8, "n": 4, "k": 2}) == "8x4x2"


def test_interleaved_rounds_vary_the_order_and_pool_samples(monkeypatch):
    """Every round times every variant once; after the first, the order is shuffled, so a variant follows
    different neighbours (the power state a kernel starts in depends on the one before it)."""
    names = ["fused", "plain", "cublas", "unfused", "torch"]
    orders = bench.round_orders(names, 6)
    assert orders[0] == names and all(sorted(o) == sorted(names) for o in orders)
    assert orders == bench.round_orders(names, 6)  # seeded: a rerun times in the same order
    predecessors = {o[o.index("fused") - 1] for o in orders if o.index("fused") > 0}
    assert len(predecessors) >= 2

    calls = []

    chains = set()

    def fake_samples(fn, *, warmup, reps, rotate, chain):
        calls.append(fn())
        chains.add(chain)
        return [float(len(calls))] * reps

    monkeypatch.setattr(bench.timing, "time_cuda_samples", fake_samples)
    out = bench.time_interleaved({n: (lambda n=n: n) for n in names}, rounds=6, reps=2, chain=7)
    assert calls == [n for o in orders for n in o]
    assert all(t.reps == 12 for t in out.values())
    assert chains == {7}   # every round times chains of the length asked for


@pytest.mark.gpu
def test_a_chained_sample_runs_its_launches_back_to_back_and_times_each():
    """Each rep is `chain` calls between one event pair, their indices running on from rep to rep (mod rotate)."""
    import cupy as cp

    seen = []
    x, y = cp.ones(1 << 22, cp.float32), cp.empty(1 << 22, cp.float32)

    def copy(i):
        seen.append(i)
        cp.copyto(y, x)

    samples = bench.time_cuda_samples(copy, warmup=2, reps=3, rotate=5, chain=4)
    assert len(samples) == 3 and all(t > 0 for t in samples)
    assert seen[2:] == [(i * 4 + j) % 5 for i in range(3) for j in range(4)]
    with pytest.raises(ValueError, match="chain"):
        bench.time_cuda_samples(copy, reps=1, chain=0)


def test_baselines_that_compute_another_function_say_so():
    from fraglab.bench import wmma_suite as suite

    # torch's fused GELU is the tanh form: named so beside --act gelu, not beside gelu_tanh or relu
    labels, notes = suite.baseline_differences("f16", "gelu")
    assert labels == {"torch_addmm_act": suite.TORCH_GELU_LABEL} and any("gelu_tanh" in line for line in notes)
    assert suite.baseline_differences("f16", "gelu_tanh") == ({}, []) == suite.baseline_differences("bf16", "relu")
    labels, notes = suite.baseline_differences("e4m3", "relu")
    assert labels["cublas_gemmex"] == suite.FP8_BASELINE_LABELS["cublas_gemmex"] and "torch_addmm_act" not in labels
    assert any("fp8" in line for line in notes)
