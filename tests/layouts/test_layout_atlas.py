"""The layout data model (views, JSON/CSV round trips) and the bundled atlas."""

import json

import numpy as np
import pytest

from fraglab.layouts import atlas as atlas_mod
from fraglab.apis import make_spec
from fraglab.apis.wmma import wmma_catalogue
from fraglab.layouts.layout import Layout, LayoutFormatError, Source
from fraglab.apis.wmma import model_layout


def test_json_round_trip_keeps_everything():
    a = atlas_mod.load_bundled().layout(make_spec("matrix_a", "m16n16k16", "f16"))
    doc = json.loads(a.to_json())
    assert doc["api"] == "wmma" and doc["frag"] == "matrix_a" and doc["num_elements"] == 16
    assert doc["source"]["kind"] == "atlas" and doc["source"]["gpu_name"] == "NVIDIA H200"
    assert len(doc["slots"]) == 32 * 16
    first = doc["slots"][0]
    assert set(first) == {"thread", "slot", "row", "col", "mma_reads"}
    back = Layout.from_json(a.to_json())
    assert back.same_map(a) and np.array_equal(back.mma_reads, a.mma_reads) and back.spec == a.spec


def test_csv_round_trip_with_empty_and_unknown_slots():
    spec = make_spec("accumulator", "m16n16k16", "f32")
    base = model_layout(spec)
    row, col = base.row.copy(), base.col.copy()
    row[3, 2] = col[3, 2] = -1  # a slot holding nothing
    lay = Layout(spec, "mma", Source("gpu", {"gpu_name": "X"}), row, col, base.mma_reads)
    text = lay.to_csv()
    assert text.splitlines()[2] == "thread,slot,register,row,col,mma_reads"
    back = Layout.from_csv(text)
    assert back.same_map(lay) and back.method == "mma" and back.source.provenance["gpu_name"] == "X"
    assert back.empty_slots == 1 and back.missing_elements == 1


def test_layout_rejects_out_of_range_elements():
    spec = make_spec("accumulator", "m8n8k4", "f64")
    base = model_layout(spec)
    row = base.row.copy()
    row[0, 0] = 8
    with pytest.raises(LayoutFormatError):
        Layout(spec, "load", base.source, row, base.col, base.mma_reads)


def test_register_packing():
    assert model_layout(make_spec("matrix_a", "m16n16k16", "f16")).register_of_slot().tolist()[:4] == [0, 0, 1, 1]
    assert model_layout(make_spec("matrix_a", "m16n16k16", "u8")).register_of_slot().tolist() == [0] * 4 + [1] * 4
    assert set(model_layout(make_spec("matrix_a", "m8n8k128", "b1")).register_of_slot().tolist()) == {0}
    assert model_layout(make_spec("accumulator", "m8n8k4", "f64")).register_of_slot().tolist() == [0, 2]


def test_bundled_atlas_has_every_fragment_with_provenance():
    bundled = atlas_mod.load_bundled()
    prov = bundled.provenance
    for field in ("gpu_name", "compute_capability", "driver_version", "runtime_version", "nvrtc_version",
                  "cupy_version", "fraglab_version", "captured"):
        assert prov.get(field), field
    assert bundled.arch == 90
    keys = {s.key for s in bundled.specs()}
    assert {k for k in keys if k.startswith("wmma.")} == {s.key for s in wmma_catalogue()}
    assert not bundled.refused
    from fraglab.apis import catalogue

    assert keys <= {s.key for s in catalogue()}  # nothing recorded that the catalogue does not offer
    for spec in bundled.specs():  # each entry says which GPU measured it (the bundled atlas joins captures)
        source = bundled.source(spec.key).provenance
        assert source["compute_capability"] == 90 and source["gpu_name"].startswith("NVIDIA H"), spec.key


def test_bundled_atlas_holds_every_family_measured():
    from fraglab.apis import FAMILIES

    apis = {s.api for s in atlas_mod.load_bundled().specs()}
    assert apis == {api for api, family in FAMILIES.items() if not family.model_only}
    assert "tcgen05" not in apis and FAMILIES["tcgen05"].model_only  # model only: no sm_100 here


@pytest.mark.parametrize("spec", wmma_catalogue(), ids=lambda s: s.key)
def test_atlas_matches_the_model_where_the_model_claims_the_architecture(spec):
    bundled = atlas_mod.load_bundled()
    model = model_layout(spec)
    assert f"sm_{bundled.arch}" in model.source.provenance["architectures"]
    measured = bundled.layout(spec, "load")
    assert measured.same_map(model)
    known = model.mma_reads != -1
    assert (measured.mma_reads[known] == model.mma_reads[known]).all()
    # mma and onehot record what the MMA reads; they agree with each other
    assert bundled.layout(spec, "mma").same_map(bundled.layout(spec, "onehot"))


def test_atlas_diff_lists_each_changed_slot(tmp_path):
    bundled = atlas_mod.load_bundled()
    doc = bundled.to_dict()
    key = "wmma.accumulator.m16n16k16.f32.row"
    doc["entries"][key]["load"]["cells"][7][3] = 0
    other = atlas_mod.Atlas.from_dict(doc)
    lines = atlas_mod.diff(bundled, other)
    assert len(lines) == 1 and lines[0].startswith(f"{key} load: thread 7 slot 3")
    assert atlas_mod.diff(bundled, atlas_mod.Atlas.from_dict(bundled.to_dict())) == []


def test_atlas_save_and_load(tmp_path):
    bundled = atlas_mod.load_bundled()
    path = tmp_path / "copy.json"
    bundled.save(path)
    assert atlas_mod.diff(bundled, atlas_mod.load(path)) == []
    with pytest.raises(atlas_mod.AtlasError):
        atlas_mod.load(tmp_path / "missing.json")


def test_the_bundled_index_names_the_families_of_every_shipped_file():
    import gzip

    index = atlas_mod.bundled_index()
    files = [p for paths in atlas_mod.bundled_paths().values() for p in paths]
    assert sorted(index) == sorted(p.name for p in files)
    for path in files:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as handle:
            keys = json.load(handle)["entries"]
        assert index[path.name] == {key.split(".")[0] for key in keys}, path.name


def test_a_question_about_one_family_reads_only_the_files_that_hold_it(monkeypatch):
    read = []
    real_load = atlas_mod.load
    monkeypatch.setattr(atlas_mod, "load", lambda path, deep=True: read.append(path.name) or real_load(path, deep))
    atlas_mod._load_bundled_files.cache_clear()
    try:
        layout = atlas_mod.load_bundled(90, "wmma").layout(make_spec("matrix_a"))
        assert layout.num_elements == 16 and read == ["atlas_sm90.json"]
        everything = atlas_mod.load_bundled(90)
        assert {key.split(".")[0] for key in everything.entries} >= {"wmma", "mma", "wgmma", "ldmatrix"}
        assert sorted(read) == sorted(["atlas_sm90.json"] + [p.name for p in atlas_mod.bundled_paths()[90]])
    finally:
        atlas_mod._load_bundled_files.cache_clear()


def test_editing_an_atlas_document_leaves_the_cached_bundled_atlas_alone():
    # the bundled atlas is cached for the process: a document made from it must be the caller's own copy
    key = "wmma.matrix_a.m8n8k4.f64.row"
    doc = atlas_mod.load_bundled().to_dict()
    before = json.dumps(doc["entries"][key], sort_keys=True)
    doc["entries"][key]["mma"]["reads"][0] = "0"
    doc["provenance"]["gpu_name"] = "edited"
    again = atlas_mod.load_bundled().to_dict()
    assert json.dumps(again["entries"][key], sort_keys=True) == before
    assert again["provenance"]["gpu_name"] != "edited"
    assert atlas_mod.diff(atlas_mod.load_bundled(), atlas_mod.Atlas.from_dict(again)) == []
