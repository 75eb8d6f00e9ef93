"""On a GPU: every WMMA fragment probed with every method, checked against each other, the model and the atlas."""

import json

import pytest
from typer.testing import CliRunner

from fraglab.layouts import atlas as atlas_mod
from fraglab.probes import run as probes
from fraglab.apis import make_spec
from fraglab.apis.wmma import wmma_catalogue
from fraglab.cli.main import app
from fraglab.layouts.verify import check_combination

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def captured():
    return probes.capture_atlas(apis=("wmma",))


@pytest.fixture(scope="module")
def arch():
    from fraglab.runtime import gpu

    return gpu.compute_capability()


def test_capture_has_provenance_and_refuses_nothing_silently(captured, arch):
    catalogue = {s.key for s in wmma_catalogue() if s.min_sm <= arch}
    assert set(captured.entries) | set(captured.refused) >= catalogue
    assert captured.provenance["compute_capability"] == arch and captured.provenance["gpu_name"]


@pytest.mark.parametrize("spec", wmma_catalogue(), ids=lambda s: s.key)
def test_methods_model_and_atlas_agree(spec, captured, arch):
    if spec.key in captured.refused:
        pytest.skip(f"refused on this GPU: {captured.refused[spec.key]}")
    measured = {m: captured.raw_layout(spec, m) for m in probes.METHODS}
    try:
        bundled = atlas_mod.load_bundled(arch)
    except atlas_mod.AtlasError:
        bundled = None
    row = check_combination(spec, measured, arch, bundled)
    assert row.ok, row.problems
    load = measured["load"]
    assert load.missing_elements == 0 and load.empty_slots == 0


def test_probe_outputs_are_not_constant(captured):
    # A probe that wrote the same code everywhere would decode to one element; the maps must spread out.
    lay = captured.raw_layout(make_spec("accumulator", "m16n16k16", "f32"), "load")
    assert len(set(zip(lay.row.ravel().tolist(), lay.col.ravel().tolist()))) == 256


def test_layout_cli_from_gpu():
    result = CliRunner().invoke(app, ["layout", "--frag", "matrix_a", "--source", "gpu", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["source"]["kind"] == "gpu" and doc["source"]["gpu_name"]
    assert sum(s["mma_reads"] is False for s in doc["slots"]) + sum(s["mma_reads"] is True for s in doc["slots"]) == 512


def test_verify_command_passes():
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["verify"])
    assert result.exit_code == 0, result.output
    assert "fragments agree" in result.output


def test_atlas_capture_command_writes_a_loadable_atlas(tmp_path):
    out = tmp_path / "atlas.json"
    result = CliRunner().invoke(app, ["atlas", "capture", "--out", str(out)])
    assert result.exit_code == 0, result.output
    again = atlas_mod.load(out)
    assert atlas_mod.diff(again, atlas_mod.load_bundled(again.arch)) == [] or again.arch != 90
