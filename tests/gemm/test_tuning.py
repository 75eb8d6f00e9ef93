"""The tuning table (fraglab/gemm/tuning.py): its file's rules, where it is read from, and that fraglab.gemm's
plan takes a tuned tile for exactly the problem and GPU it was tuned on; `fraglab gemm --tune`'s argument checks.
CPU only; tests/gemm/test_tuning_gpu.py tunes on the GPU."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from fraglab.cli.main import app
from fraglab.gemm import tuning, wgmma
from fraglab.gemm.tuning import TunedTile, TuningError, TuningKey

GPU = "NVIDIA H100 80GB HBM3"


def _entry(**over):
    entry = {"gpu": GPU, "dtype": "f16", "m": 64, "n": 11008, "k": 4096, "a_order": "C", "b_order": "C",
             "out_dtype": "f16", "tile": "64x128p", "us": 37.3, "schedule_tile": "64x256p", "schedule_us": 38.4,
             "epilogue": "relu per_n", "measured": "2026-11-27T07:30:00Z"}
    entry.update(over)
    return entry


def _doc(*entries, **over):
    return {"format": tuning.FORMAT, "version": tuning.VERSION, "entries": list(entries), **over}


def test_a_table_reads_back_what_it_wrote():
    key = TuningKey(GPU, "bf16", 8, 4096, 4096, "C", "F", "f32")
    table = {key: TunedTile("skinny", 17.1, "64x64pk2", 17.6, "relu per_n", "2026-11-27T07:30:00Z"),
             TuningKey("other", "f16", 128, 14336, 4096, "F", "C", "f16"): TunedTile("128x128", 47.1, "64x64p", 48.6)}
    again = tuning.parse(json.loads(tuning.to_json(table)), "t.json")
    assert again == table
    assert json.loads(tuning.to_json(table))["format"] == "fraglab gemm tuning"


@pytest.mark.parametrize("over, fragment", [
    ({"tile": "64x100p"}, "entry 0: tile '64x100p' is not one of 128x256"),
    ({"tile": "128x256c2"}, "tile '128x256c2'"),                      # an experimental tile: not a launcher tile
    ({"tile": "skinny", "m": 129}, "tile 'skinny'"),                  # past the skinny GEMM's M
    ({"tile": "skinny", "a_order": "F"}, "tile 'skinny'"),            # it takes a row-major A only
    ({"tile": "skinny/k8", "k": 1024}, "tile 'skinny/k8'"),           # K 1024 in 8 shares: under 8 K-blocks each
    ({"tile": "skinny/1x4x2n64/k1/c1", "b_order": "C"}, "tile 'skinny/1x4x2n64"),   # the 8-warp grid: B column-major
    ({"tile": "128x224", "b_order": "C"}, "tile '128x224'"),          # 224 columns: B column-major only
    ({"dtype": "e4m3"}, "dtype 'e4m3' is not one of f16, bf16"),      # fp8 keeps the rules
    ({"m": 0}, "m must be a whole number"),
    ({"n": 2.5}, "n must be a whole number"),
    ({"k": True}, "k must be a whole number"),
    ({"k": tuning.MAX_SIZE + 1}, "k must be a whole number"),
    ({"b_order": "X"}, "b_order 'X'"),
    ({"out_dtype": None}, "out_dtype 'NoneType'"),
    ({"us": -1}, "us must be a positive number"),
    ({"schedule_us": float("nan")}, "schedule_us must be a positive number"),
    ({"gpu": ""}, "gpu must be a non-empty string"),
    ({"gpu": "H100\x1b[31m"}, "gpu holds control characters"),
    ({"gpu": "x" * (tuning.TEXT_LIMIT + 1)}, "gpu must be"),
    ({"epilogue": 3}, "epilogue must be a string"),
    ({"measured": "yesterday"}, "measured must be a UTC time"),
])
def test_each_field_is_checked_and_named(over, fragment):
    with pytest.raises(TuningError) as err:
        tuning.parse(_doc(_entry(m=1), _entry(**over)), "t.json")   # the second entry is the bad one
    assert str(err.value).startswith("tuning file t.json: entry 1: ")
    assert fragment.replace("entry 0", "entry 1") in str(err.value)
    assert err.value.exit_code == 2


def test_the_document_itself_is_checked():
    for doc, fragment in (([], "not a fraglab tuning table"), ({"format": "x"}, "not a fraglab tuning table"),
                          (_doc(version=2), "version must be 1"), (_doc(entries={}), "must be a list"),
                          (_doc("x"), "entry 0: not an object"),
                          (_doc(_entry(), _entry()), "entry 1: a second entry for the same problem")):
        with pytest.raises(TuningError, match=fragment):
            tuning.parse(doc, "t.json")
    too_many = _doc(*[_entry(m=i + 1) for i in range(tuning.MAX_ENTRIES + 1)])
    with pytest.raises(TuningError, match="at most"):
        tuning.parse(too_many, "t.json")


def test_reading_a_file_refuses_what_is_not_a_table_and_treats_a_missing_one_as_empty(tmp_path):
    assert tuning.read(tmp_path / "none.json") == {}
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TuningError, match="bad.json: not JSON"):
        tuning.read(bad)
    with pytest.raises(TuningError, match="is a folder"):
        tuning.read(tmp_path)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (tuning.MAX_FILE_BYTES + 1))
    with pytest.raises(TuningError, match="larger than"):
        tuning.read(big)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(TuningError, match="not a regular file"):
        tuning.read(fifo)   # refused, not read (a read would wait for a writer)
    odd = tmp_path / "odd\x1bname.json"   # a path's control characters never reach the terminal
    odd.write_text("[]")
    with pytest.raises(TuningError) as err:
        tuning.read(odd)
    assert "\x1b" not in str(err.value)


def test_the_active_table_is_the_environment_s_file_else_the_cache_one(tmp_path):
    home = {"XDG_CACHE_HOME": str(tmp_path)}
    assert tuning.active_path(home) == tmp_path / "fraglab" / "gemm-tuning.json" == tuning.default_path(home)
    for off in ("off", "", "none", "0", " OFF "):
        assert tuning.active_path({**home, tuning.ENV: off}) is None
    assert tuning.active_path({**home, tuning.ENV: str(tmp_path / "mine.json")}) == tmp_path / "mine.json"
    assert tuning.default_path({}).parts[-3:] == (".cache", "fraglab", "gemm-tuning.json")


class _Plan:   # the fields of gemm/validate.py GemmPlan a lookup reads
    def __init__(self, **over):
        fields = dict(dtype="f16", m=64, n=11008, k=4096, a_order="C", b_order="C", out_dtype="f16")
        fields.update(over)
        self.__dict__.update(fields)


def test_a_plan_finds_its_tile_for_its_exact_problem_and_gpu_only(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_doc(_entry())))
    env = {tuning.ENV: str(path)}
    asked = []

    def name():
        asked.append(1)
        return GPU

    assert tuning.tuned_tile(_Plan(), name, env) == "64x128p"
    for other in ({"m": 65}, {"n": 11000}, {"k": 4032}, {"b_order": "F"}, {"a_order": "F"}, {"out_dtype": "f32"},
                  {"dtype": "bf16"}):
        assert tuning.tuned_tile(_Plan(**other), name, env) is None, other
    assert tuning.tuned_tile(_Plan(), lambda: "NVIDIA H200", env) is None
    assert tuning.tuned_tile(_Plan(dtype="e4m3"), name, env) is None
    asked.clear()
    assert tuning.tuned_tile(_Plan(), name, {tuning.ENV: "off"}) is None
    assert tuning.tuned_tile(_Plan(), name, {tuning.ENV: str(tmp_path / "missing.json")}) is None
    assert not asked   # the GPU's name is asked for only where a table exists


def test_a_changed_file_is_read_again(tmp_path):
    path = tmp_path / "t.json"
    env = {tuning.ENV: str(path)}
    path.write_text(json.dumps(_doc(_entry())))
    assert tuning.tuned_tile(_Plan(), lambda: GPU, env) == "64x128p"
    path.write_text(json.dumps(_doc(_entry(tile="128x128", us=36.0))))
    os.utime(path, ns=(1, 2))   # a new stamp even within the file system's time resolution
    assert tuning.tuned_tile(_Plan(), lambda: GPU, env) == "128x128"
    path.write_text("{broken")
    os.utime(path, ns=(3, 4))
    with pytest.raises(TuningError, match="not JSON"):
        tuning.tuned_tile(_Plan(), lambda: GPU, env)


def test_merged_replaces_and_drops_a_tuned_problem_and_keeps_the_rest():
    mine = TuningKey(GPU, "f16", 64, 11008, 4096, "C", "C", "f16")
    other_gpu = TuningKey("NVIDIA H200", "f16", 64, 11008, 4096, "C", "C", "f16")
    lost = TuningKey(GPU, "f16", 128, 14336, 4096, "C", "C", "f16")
    old = {mine: TunedTile("64x128p", 37.3, "64x256p", 38.4), other_gpu: TunedTile("64x64p", 30.0, "64x256p", 31.0),
           lost: TunedTile("128x128", 47.0, "64x64p", 48.0)}
    new = tuning.merged(old, {mine: TunedTile("64x128p", 37.0, "64x256p", 38.5), lost: None})
    assert new == {mine: TunedTile("64x128p", 37.0, "64x256p", 38.5), other_gpu: old[other_gpu]}
    assert old[mine].us == 37.3   # the table given is left as it was


def test_candidates_are_the_launcher_tiles_and_the_skinny_gemm_where_it_applies():
    launcher = wgmma.launcher_tiles("C")   # a row-major B: not the tiles between the 64-column multiples
    assert tuning.candidate_tiles("f16", 32) == (*wgmma.TILES, "skinny")
    assert "128x224" in tuning.candidate_tiles("f16", 256, "C", 57344, 8192, "F")
    assert "128x224" not in launcher and set(launcher) < set(wgmma.TILES)
    assert tuning.candidate_tiles("bf16", 129, b_order="C") == launcher
    # a column-major A: not the swapped tiles (their kernel takes A as a K-major B)
    assert tuning.candidate_tiles("f16", 8, "F", b_order="C") == wgmma.launcher_tiles("C", "F")
    assert not any(wgmma.TILES[t].swap_ab for t in wgmma.launcher_tiles("C", "F"))
    assert any(wgmma.TILES[t].swap_ab for t in launcher)
    assert tuning.candidate_tiles("e4m3", 8) == ()
    # only what the compile test instantiates: no experimental tile (a table naming one would launch a kernel no
    # CPU test compiled)
    assert not set(tuning.candidate_tiles("f16", 8, "C", 4096, 4096, "C")) & set(wgmma.EXPERIMENTAL_TILES)
    # given N, K and B's order, the skinny GEMM's variants too: each a name fraglab.gemm's tile= takes
    full = tuning.candidate_tiles("f16", 8, "C", 4096, 4096, "C")
    assert full[:len(launcher) + 1] == (*launcher, "skinny") and "skinny/k1/c2/tma" in full
    assert len(set(full)) == len(full)
    assert tuning.candidate_tiles("f16", 129, "C", 4096, 4096, "C") == launcher


def test_a_table_may_name_a_skinny_variant_and_fraglab_gemm_plans_it(tmp_path, monkeypatch):
    from fraglab.gemm import api, skinny, validate

    entry = _entry(m=16, n=14336, tile="skinny/k1/c2/tma", schedule_tile="skinny")
    key, = tuning.parse(_doc(entry), "t.json")
    assert tuning.parse(json.loads(tuning.to_json(tuning.parse(_doc(entry), "t.json"))), "t.json")[key].tile == \
        "skinny/k1/c2/tma"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_doc(entry)))
    monkeypatch.setenv(tuning.ENV, str(path))
    monkeypatch.setattr(api, "_SM_COUNT", 132)
    monkeypatch.setattr(api, "_GPU_NAME", GPU)
    plan = validate.GemmPlan("wgmma", "f16", 16, 14336, 4096, "relu", "per_n", False, False, "f16", "C")
    rules = api._make_spec(("wgmma", plan, "skinny", True, "none"))
    assert (rules.splits, rules.cluster, rules.b_load) == (1, 4, "tma")   # the rules' clusters of 4
    tuned = api._make_spec(("wgmma", plan, None, True, "none"))
    assert isinstance(tuned, skinny.SkinnyKernelSpec) and tuned.tile == "skinny/k1/c2/tma"
    assert (tuned.splits, tuned.cluster, tuned.b_load, tuned.layout) == (1, 2, "tma", rules.layout)
    assert tuned.name() == rules.name()   # the same instantiation, another cluster size (a build option)


def test_fraglab_gemm_plans_the_tuned_tile_unless_a_call_names_one(tmp_path, monkeypatch):
    from fraglab.gemm import api, validate

    plan = validate.GemmPlan("wgmma", "f16", 64, 11008, 4096, "relu", "per_n", False, False, "f16", "C")
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_doc(_entry(tile="64x64p"))))
    monkeypatch.setenv(tuning.ENV, str(path))
    monkeypatch.setattr(api, "_SM_COUNT", 132)
    monkeypatch.setattr(api, "_GPU_NAME", GPU)
    assert api.rules_tile(plan) == "64x128pkb2"   # what the rules give (M 64, 172 tiles of 64x64)
    assert api._make_spec(("wgmma", plan, None, True, "none")).tile == "64x64p"
    assert api._make_spec(("wgmma", plan, "128x128", True, "none")).tile == "128x128"   # a named tile wins
    monkeypatch.setattr(api, "_GPU_NAME", "another GPU")
    assert api._make_spec(("wgmma", plan, None, True, "none")).tile == "64x128pkb2"
    small = validate.GemmPlan("wgmma", "f16", 8, 11008, 4096, "relu", "per_n", False, False, "f16", "C")
    assert api.rules_tile(small) == "skinny"
    path.write_text(json.dumps(_doc(_entry(m=8, tile="128x128"))))
    os.utime(path, ns=(5, 6))
    monkeypatch.setattr(api, "_GPU_NAME", GPU)
    assert api._make_spec(("wgmma", small, None, True, "none")).tile == "128x128"
    # fp8 with scales keeps the rules: no table is looked at
    asked = []
    monkeypatch.setattr(tuning, "tuned_tile", lambda *a: asked.append(a) or "64x64p")
    e4m3 = validate.GemmPlan("wgmma", "e4m3", 128, 4096, 4096, "none", "none", False, False, "bf16", "F")
    assert api._make_spec(("wgmma", e4m3, None, True, "rowwise")).tile != "64x64p" and not asked


@pytest.mark.parametrize("args, fragment", [
    (["--tune"], "--tune needs the problems to time"),
    (["--tune", "--shapes", "gpt"], "invalid --shapes 'gpt'"),
    (["--tune", "--shapes", "decode", "--m", "8"], "not both"),
    (["--tune", "--shapes", "decode", "--bench"], "not with --bench/--check"),
    (["--tune", "--shapes", "decode", "--simt"], "not with --simt"),
    (["--tune", "--shapes", "decode", "--tile", "128x128"], "not with --tile"),
    (["--tune", "--m", "8", "--n", "4096", "--k", "4096", "--dtype", "e4m3"], "invalid --dtype 'e4m3'"),
    (["--tune", "--m", "8", "--b-order", "X"], "invalid --b-order 'X'"),
    (["--tune", "--m", "8", "--tuning", "-"], "not -"),
    (["--tuning", "t.json", "--bench"], "give it with --tune"),
    (["--tune", "--m", "8", "--tuning", "t.png"], "its suffix .png is for png"),
    (["--tune", "--m", "8", "--tuning", "/"], "a filesystem root is not a file name"),
])
def test_cli_tune_refuses_bad_arguments_in_one_line(args, fragment, tmp_path):
    res = CliRunner().invoke(app, ["gemm", *args], env={"COLUMNS": "200", tuning.ENV: str(tmp_path / "t.json")})
    assert res.exit_code == 2, res.output
    assert fragment in " ".join(res.output.split()) and "Traceback" not in res.output


def test_cli_tune_refuses_a_bad_table_before_any_work_and_leaves_it(tmp_path):
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps(_doc(_entry(tile="nope"))))
    res = CliRunner().invoke(app, ["gemm", "--tune", "--m", "8", "--n", "4096", "--k", "4096", "--tuning", str(bad)],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 2 and "tile 'nope' is not one of" in " ".join(res.output.split()), res.output
    assert json.loads(bad.read_text())["entries"][0]["tile"] == "nope"


def test_cli_tune_without_a_gpu_says_so_and_writes_nothing(no_gpu, tmp_path):
    target = tmp_path / "t.json"
    res = CliRunner().invoke(app, ["gemm", "--tune", "--shapes", "decode", "--tuning", str(target)])
    assert res.exit_code == 1 and "no usable GPU" in res.output, res.output
    assert not target.exists()


def test_cli_tune_with_the_table_off_asks_for_a_file(tmp_path):
    res = CliRunner().invoke(app, ["gemm", "--tune", "--m", "8", "--n", "4096", "--k", "4096"],
                             env={"COLUMNS": "200", tuning.ENV: "off"})
    assert res.exit_code == 2 and "give --tuning FILE" in " ".join(res.output.split()), res.output


def test_cli_tune_into_a_folder_or_its_link_uses_the_table_s_default_name_there(no_gpu, tmp_path):
    # the writer's rule for a folder; here the GPU is missing, so it gets as far as reading the table there
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "gemm-tuning.json").write_text(json.dumps(_doc(_entry(tile="nope"))))
    link = tmp_path / "link"
    link.symlink_to(folder, target_is_directory=True)
    for given in (folder, link):
        res = CliRunner().invoke(app, ["gemm", "--tune", "--m", "8", "--tuning", str(given)], env={"COLUMNS": "200"})
        assert res.exit_code == 2 and "gemm-tuning.json: entry 0: tile 'nope'" in " ".join(res.output.split()), res.output
    (folder / "gemm-tuning.json").unlink()
    res = CliRunner().invoke(app, ["gemm", "--tune", "--m", "8", "--tuning", str(link)], env={"COLUMNS": "200"})
    assert res.exit_code == 1 and "no usable GPU" in res.output, res.output
    assert list(folder.iterdir()) == []   # nothing written without a GPU


def test_cli_tune_passes_a_chain_to_the_timing_and_says_so(monkeypatch, tmp_path):
    from fraglab.bench import tune
    from fraglab.runtime import gpu

    asked = {}

    def fake_tune(problems, **kwargs):
        asked.update(kwargs, problems=problems)
        return {"rows": [], "found": {}, "margin": tune.MARGIN, "chain": kwargs["chain"]}

    monkeypatch.setattr(gpu, "cupy", lambda: None)
    monkeypatch.setattr(tune, "tune_shapes", fake_tune)
    target = tmp_path / "t.json"
    res = CliRunner().invoke(app, ["gemm", "--tune", "--m", "8", "--n", "4096", "--k", "4096", "--chain", "24",
                                   "--tuning", str(target)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert asked["chain"] == 24 and [(p.m, p.n, p.k) for p in asked["problems"]] == [(8, 4096, 4096)]
    assert "chains of 24 launches per event pair" in " ".join(res.output.split())
    assert tuning.read(target) == {}   # nothing tuned: an empty table written
