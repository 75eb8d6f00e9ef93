"""`fraglab gemm --tune` on the GPU: the tuner times the rules' tile and the candidates on correct results only, and
fraglab.gemm follows a table's tile for its problem (and the result stays right)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from fraglab.bench.shapes import Shape
from fraglab.bench.tune import tune_shapes
from fraglab.cli.main import app
from fraglab.gemm import reference, tuning

pytestmark = pytest.mark.gpu


def test_the_tuner_times_the_rules_tile_beside_the_candidates(sm90, torch):
    shape = Shape("tune", 64, 1024, 512)
    result = tune_shapes([shape], b_order="F", candidates=("128x128", "64x64p", "64x128p", "skinny"))
    (row,) = result["rows"]
    rule = row["rule_tile"]
    assert f"rules: {rule}" in row["times_us"] and "torch.mm" in row["times_us"]
    timed = set(row["times_us"]) - {f"rules: {rule}", "torch.mm"}
    assert timed | set(row["skipped"]) == {"128x128", "64x64p", "64x128p", "skinny"} - {rule}
    assert all(0.5 < t < 10_000 for t in row["times_us"].values()), row
    (key, found), = result["found"].items()
    assert (key.m, key.n, key.k, key.b_order, key.a_order) == (64, 1024, 512, "F", "C")
    if found is None:   # the rules' tile was within the margin of the best
        assert not row["recorded"] and row["best_tile"] == rule
    else:
        assert row["recorded"] and found.tile == row["best_tile"] != rule
        assert found.us < found.schedule_us * (1 - result["margin"])


def test_the_tuner_times_chains_when_asked_and_notes_it(sm90, torch, monkeypatch):
    from fraglab import bench as benchmod

    chains = []
    timed = benchmod.time_interleaved
    monkeypatch.setattr(benchmod, "time_interleaved", lambda *a, **k: chains.append(k["chain"]) or timed(*a, **k))
    result = tune_shapes([Shape("tune", 8, 1024, 1024)], b_order="F", candidates=("64x64p",), chain=3, margin=-100.0)
    assert chains == [3] and result["chain"] == 3
    (found,) = result["found"].values()   # margin -100: the one candidate is recorded whatever its time
    assert found is not None and found.tile == "64x64p" and found.epilogue.endswith(", chains of 3")


def test_fraglab_gemm_runs_the_table_s_tile_and_stays_right(sm90, torch, tmp_path, monkeypatch):
    from fraglab.gemm import api
    from fraglab.runtime import gpu

    m, n, k = 64, 1536, 768
    gen = torch.Generator(device="cuda").manual_seed(3)
    a = (torch.rand(m, k, generator=gen, device="cuda") - 0.5).half()
    b = (torch.rand(n, k, generator=gen, device="cuda") - 0.5).half().t()   # column-major B
    bias = torch.rand(n, generator=gen, device="cuda")
    # the table first: a process reads it when it first plans a problem's signature
    path = tmp_path / "t.json"
    key = tuning.TuningKey(gpu.device_info()["gpu_name"], "f16", m, n, k, "C", "F", "f16")
    path.write_text(tuning.to_json({key: tuning.TunedTile("128x128", 10.0, "64x64p", 11.0)}))
    monkeypatch.setenv(tuning.ENV, str(path))
    tuned = api.prepare(a, b, bias=bias, bias_mode="per_n", act="relu", out_dtype="f16", kernel="wgmma")
    assert api.rules_tile(tuned.plan) != "128x128"   # (M 64: a one-row tile by the rules)
    assert tuned.kernel_spec.tile == "128x128"
    d = tuned().float().cpu().numpy()
    want, _ = reference.reference_gemm(a.cpu().numpy(), b.cpu().numpy(), bias=bias.cpu().numpy(), bias_mode="per_n",
                                       act="relu")
    assert np.abs(d - want).max() <= 2e-3 * np.abs(want).max()


def test_cli_tune_writes_a_table_fraglab_reads_and_keeps_other_entries(sm90, torch, tmp_path):
    path = tmp_path / "t.json"
    other = tuning.TuningKey("another GPU", "f16", 8, 4096, 4096, "C", "F", "f16")
    path.write_text(tuning.to_json({other: tuning.TunedTile("skinny", 17.0, "64x64p", 18.0)}))
    res = CliRunner().invoke(app, ["gemm", "--tune", "--m", "64", "--n", "1024", "--k", "512", "--act", "relu",
                                   "--bias", "per_n", "--out-dtype", "f16", "--tuning", str(path)],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    table = tuning.read(path)   # valid by the file's own rules
    assert other in table
    assert "problems tuned" in res.output and "64" in res.output
    assert json.loads(path.read_text())["format"] == tuning.FORMAT


@pytest.mark.parametrize("m, n, k, order", [(8, 1000, 2048, "F"), (48, 520, 1536, "C")])
def test_every_skinny_variant_runs_right_through_fraglab_gemm(sm90, torch, m, n, k, order):
    """What `--tune` may record for the skinny GEMM: each split, cluster and load of B, asked for by name, gives the
    float64 result (D poisoned first), edges in N included (N not a multiple of the 64-column tile)."""
    from fraglab.gemm import api, skinny

    gen = torch.Generator(device="cuda").manual_seed(m)
    a = (torch.rand(m, k, generator=gen, device="cuda") - 0.5).half()
    w = (torch.rand(n, k, generator=gen, device="cuda") - 0.5).half()
    b = w.t() if order == "F" else w.t().contiguous()
    bias = torch.rand(n, generator=gen, device="cuda")
    want, _ = reference.reference_gemm(a.cpu().numpy(), b.cpu().numpy(), bias=bias.cpu().numpy(), bias_mode="per_n",
                                       act="relu")
    names = skinny.variant_tiles(m, n, k, order)
    assert len(names) >= 8
    for name in names:
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        run = api.prepare(a, b, bias=bias, bias_mode="per_n", act="relu", out=d, kernel="wgmma", tile=name)
        assert run.kernel_spec.tile == name
        got = run().float().cpu().numpy()
        assert np.isfinite(got).all(), name
        assert np.abs(got - want).max() <= 2e-3 * np.abs(want).max(), name
