"""`fraglab gemm` and `fraglab peak`: parsing, one-line errors (exit 2), and output files, with the GPU work patched."""

import json

import pytest
from typer.testing import CliRunner

from fraglab.cli.main import app
from cli_errors import error_message

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, list(args))


@pytest.fixture
def fake_gpu(monkeypatch):
    """gemm and peak look for the GPU before they start (no progress bar before a no-GPU error): a stand-in."""
    from fraglab.runtime import gpu

    monkeypatch.setattr(gpu, "cupy", lambda: object())


@pytest.mark.parametrize("args,fragment", [
    (("gemm", "--act", "swish"), "invalid --act 'swish': valid choices are none, relu"),
    (("gemm", "--bias", "row"), "invalid --bias 'row': valid choices are none, per_m, per_n, full"),
    (("gemm", "--dtype", "f32"), "invalid --dtype 'f32': valid choices are f16, bf16"),
    (("gemm", "--size", "10,abc"), "invalid --size"),
    (("gemm", "--size", "0"), "invalid --size"),
    (("gemm", "--size", "64", "--m", "8"), "either --size or --m/--n/--k"),
    (("gemm", "--m", "-3"), "invalid --m -3"),
    (("gemm", "--kernel", "naive_coalesced"), "--kernel picks a rung"),
    (("gemm", "--tile", "64x64"), "invalid --tile '64x64'"),
    (("gemm", "--simt", "--tile", "128x64"), "--tile applies to --wmma"),
    (("gemm", "--bench", "--plot", "out.txt"), "invalid --plot"),
    (("gemm", "--out-dtype", "f64"), "invalid --out-dtype 'f64': valid choices are f32, f16, bf16"),
    (("gemm", "--wgmma", "--out-dtype", "float16"), "invalid --out-dtype 'float16'"),
    (("gemm", "--simt", "--out-dtype", "f16"), "--out-dtype applies to --wmma and --wgmma"),
    (("peak", "--probe", "wgmma"), "invalid --probe 'wgmma'"),
    (("peak", "--iters", "0"), "invalid --iters 0"),
    (("peak", "--sustain", "-1"), "invalid --sustain -1.0"),
    (("gemm", "--bench", "--json", "/"), "invalid --json '/'"),   # before the run, not after its minutes
    (("peak", "--json", "/"), "invalid --json '/'"),
    (("peak", "--memory", "--sizes", "lots"), "invalid --sizes 'lots': 'lots' is not a size"),
    (("peak", "--memory", "--reader", "tma"), "invalid --reader 'tma': valid choices are ldg, bulk"),
    (("peak", "--memory", "--probe", "peak_wmma_f16_f32"), "--probe names tensor-core probes"),
    (("peak", "--sizes", "32"), "--sizes goes with --memory"),
    (("peak", "--reader", "ldg"), "--reader goes with --memory"),
    (("peak", "--memory", "--json", "/"), "invalid --json '/'"),
    # a suffix of another format: refused before the timing as the writer would refuse it after (save_json's rule)
    (("gemm", "--bench", "--json", "rows.png"), "invalid --json 'rows.png': its suffix .png is for png"),
    (("gemm", "--bench", "--shapes", "decode", "--json", "decode.svg"), "use a name ending in .json"),
    (("gemm", "--tune", "--shapes", "decode", "--json", "t.html"), "invalid --json 't.html'"),
    (("peak", "--json", "peak.png"), "invalid --json 'peak.png'"),
    (("peak", "--memory", "--json", "m.csv"), "invalid --json 'm.csv'"),
    (("peak", "--memory", "--plot", "rates.txt"), "invalid --plot 'rates.txt'"),
    (("peak", "--plot", "rates.png"), "--plot goes with --memory"),
])
def test_bad_input_is_one_line_and_exit_2(args, fragment):
    res = _run(*args)
    assert res.exit_code == 2, res.output
    assert fragment in error_message(res.output)


def test_no_gpu_is_a_runtime_failure(no_gpu):
    res = _run("gemm", "--size", "64")
    assert res.exit_code == 1 and "no usable GPU" in res.output and "Traceback" not in res.output


def test_size_parsing():
    from fraglab.cli.gemm import parse_sizes

    assert parse_sizes("1024, 2048", None, None, None, ()) == [(1024, 1024, 1024), (2048, 2048, 2048)]
    assert parse_sizes(None, 100, None, 7, ()) == [(100, 100, 7)]
    assert parse_sizes(None, None, None, None, (5,)) == [(5, 5, 5)]


FAKE = {
    "rows": [{"kernel": "wmma_fused", "m": 64, "n": 64, "k": 64, "status": "PASSED", "max_err": 1e-6,
              "rel_err": 1e-7, "ms": 0.01, "tflops": 0.05, "tile": "128x128", "aligned": True},
             {"kernel": "cublas_gemmex", "m": 64, "n": 64, "k": 64, "status": "-", "ms": 0.02, "tflops": 0.03}],
    "summary": [{"m": 64, "n": 64, "k": 64, "check": "PASSED", "wmma_fused_tflops": 0.05, "fused_vs_cublas": 1.7}],
    "ceiling_tflops": 650.0, "ceiling_sustained_tflops": 540.0, "ceiling_label": "wmma f16->f32",
    "device": {"gpu_name": "fake"},
}


def test_wmma_bench_prints_the_table_and_writes_json_and_plot(monkeypatch, tmp_path, fake_gpu):
    from fraglab.bench import wmma_suite

    seen = {}

    def fake_suite(sizes, **kw):
        seen.update(kw, sizes=sizes)
        return FAKE

    monkeypatch.setattr(wmma_suite, "run_suite", fake_suite)
    res = _run("gemm", "--wmma", "--size", "64", "--act", "gelu", "--bias", "per_m", "--beta", "0.5", "--save-z",
               "--check", "--bench", "--json", str(tmp_path / "r.json"), "--plot", str(tmp_path / "r.png"))
    assert res.exit_code == 0, res.output
    assert seen["sizes"] == [(64, 64, 64)] and seen["act"] == "gelu" and seen["bias_mode"] == "per_m"
    assert seen["beta"] == 0.5 and seen["save_z"] and seen["check"] and seen["bench"]
    assert "1.70" in res.output and "PASSED" in res.output
    assert "wmma f16->f32, measured in this run: 650 TFLOP/s burst, 540 sustained" in res.output
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["act"] == "gelu" and saved["rows"][0]["kernel"] == "wmma_fused"
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_prints_the_suites_notes_under_the_tables(monkeypatch, fake_gpu):
    from fraglab.bench import wmma_suite

    note = "torch: a baseline that computes another function"
    monkeypatch.setattr(wmma_suite, "run_suite", lambda sizes, **kw: {**FAKE, "notes": [note]})
    res = _run("gemm", "--wmma", "--size", "64", "--bench", "--act", "gelu")
    assert res.exit_code == 0, res.output
    assert note in res.output and res.output.index(note) > res.output.index("Ratios")


def test_a_failed_check_exits_1(monkeypatch, fake_gpu):
    from fraglab.bench import wmma_suite

    failed = {**FAKE, "rows": [dict(FAKE["rows"][0], status="FAILED")]}
    monkeypatch.setattr(wmma_suite, "run_suite", lambda sizes, **kw: failed)
    res = _run("gemm", "--size", "64")
    assert res.exit_code == 1 and "FAILED" in res.output


def test_check_is_the_default_without_bench(monkeypatch, fake_gpu):
    from fraglab.bench import wmma_suite

    seen = {}
    monkeypatch.setattr(wmma_suite, "run_suite", lambda sizes, **kw: seen.update(kw) or FAKE)
    assert _run("gemm").exit_code == 0
    assert seen["check"] and not seen["bench"]


def test_peak_prints_rates_and_sass_verdicts(monkeypatch, tmp_path, fake_gpu):
    from fraglab.bench import peak
    from fraglab.runtime import gpu

    rows = [{"probe": "wmma f16->f32", "kernel": "peak_wmma_f16_f32", "shape": "m16n16k16", "tflops": 648.0,
             "unit": "TFLOP/s", "ms": 1.0}]
    seen = {}
    monkeypatch.setattr(peak, "measure", lambda kernels, iters, sustain_s, progress: seen.update(s=sustain_s) or rows)
    monkeypatch.setattr(peak, "sass_checks", lambda cc, kernels: {"peak_wmma_f16_f32": peak.SassCheck(
        "peak_wmma_f16_f32", 80, 0, True, "80 HMMA")})
    monkeypatch.setattr(gpu, "device_info", lambda: {"gpu_name": "H200", "compute_capability": 90})
    res = _run("peak", "--json", str(tmp_path / "p.json"))
    assert res.exit_code == 0, res.output
    assert seen["s"] == 0.0  # burst by default
    assert _run("peak", "--sustain", "2.5", "--no-sass").exit_code == 0 and seen["s"] == 2.5
    assert "648.0" in res.output and "ok: 80 HMMA" in res.output
    assert json.loads((tmp_path / "p.json").read_text())["rows"][0]["sass_ok"] is True


def test_peak_memory_runs_the_readers_asked_for_at_the_sizes_given(monkeypatch, tmp_path, fake_gpu):
    from fraglab.bench import memory
    from fraglab.runtime import gpu

    seen = {}

    def fake_measure(sizes, readers, progress=None):
        seen.update(sizes=[s.nbytes for s in sizes], readers=readers)
        return [memory.row(r, s, 0.0125, 0.012, 0.013, 4, 3.35) for s in sizes for r in readers]

    monkeypatch.setattr(memory, "measure", fake_measure)
    monkeypatch.setattr(gpu, "compute_capability", lambda: 90)
    monkeypatch.setattr(gpu, "device_info", lambda: {"gpu_name": "H100", "memory_peak_tbs": 3.35})
    res = _run("peak", "--memory", "--sizes", "4096x4096,1", "--json", str(tmp_path / "m.json"),
               "--plot", str(tmp_path / "m.png"))
    assert res.exit_code == 0, res.output
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert seen == {"sizes": [4096 * 4096 * 2, 1 << 20], "readers": ("ldg", "bulk")}
    assert "DRAM read ceilings on H100 (peak 3.35 TB/s)" in res.output
    assert "4096x4096 f16" in res.output and "2.68" in res.output   # 32 MiB in 12.5 us
    saved = json.loads((tmp_path / "m.json").read_text())
    assert saved["command"] == "peak --memory" and len(saved["rows"]) == 4
    # by default every reader this GPU runs; named, one it cannot run is refused in one line
    monkeypatch.setattr(gpu, "compute_capability", lambda: 80)
    assert _run("peak", "--memory", "--sizes", "1").exit_code == 0 and seen["readers"] == ("ldg",)
    res = _run("peak", "--memory", "--reader", "bulk")
    assert res.exit_code == 2 and "needs sm_90 or later" in error_message(res.output)


def test_peak_accepts_a_wgmma_probe_and_refuses_it_in_one_line_on_another_gpu(monkeypatch):
    from fraglab.runtime import gpu

    monkeypatch.setattr(gpu, "cupy", lambda: object())
    monkeypatch.setattr(gpu, "compute_capability", lambda: 80)
    res = _run("peak", "--probe", "peak_wgmma_m64n256k16_f16_f32_ss")
    assert res.exit_code == 1, res.output   # a name --probe accepts (exit 2 otherwise) that this GPU cannot run
    message = error_message(res.output)
    assert "needs an sm_90 GPU" in message and "this GPU is sm_80" in message


def test_simt_runs_the_ladder_and_prints_its_rows(monkeypatch, tmp_path, fake_gpu):
    from fraglab.bench import simt_ladder

    seen = {}

    def fake_ladder(sizes, **kw):
        seen.update(kw, sizes=sizes)
        return [{"kernel": "warp_tiled", "m": 512, "n": 512, "k": 512, "ms": 0.05, "tflops": 5.4,
                 "pct_cublas": 81.0, "status": "PASSED", "max_err": 1e-6, "rel_err": 2e-7}]

    monkeypatch.setattr(simt_ladder, "run_ladder", fake_ladder)
    res = _run("gemm", "--simt", "--size", "512", "--kernel", "warp_tiled", "--bench", "--act", "silu",
               "--json", str(tmp_path / "s.json"))
    assert res.exit_code == 0, res.output
    assert seen["kernel"] == "warp_tiled" and seen["act"] == "silu" and seen["sizes"] == [(512, 512, 512)]
    assert "warp_tiled" in res.output and "81.0" in res.output
    assert json.loads((tmp_path / "s.json").read_text())["dtype"] == "f32"


def test_simt_rejects_an_unknown_rung():
    res = _run("gemm", "--simt", "--kernel", "tensor_magic")
    assert res.exit_code == 2 and "invalid --kernel 'tensor_magic'" in res.output


def test_without_a_gpu_the_one_line_is_all_that_is_printed(no_gpu):
    # a progress bar opened before the GPU check used to leave a blank line ahead of the message when piped
    for args in (("gemm", "--size", "64"), ("gemm", "--simt", "--size", "64"), ("peak",)):
        res = _run(*args)
        assert res.exit_code == 1 and res.output.startswith("fraglab: error: no usable GPU"), args
        assert len(res.output.strip().splitlines()) == 1, args


@pytest.mark.parametrize("family", ["--wmma", "--wgmma"])
def test_out_dtype_reaches_the_suite_the_title_and_the_json(monkeypatch, tmp_path, family):
    from fraglab.bench import wmma_suite
    from fraglab.runtime import gpu

    seen = {}
    monkeypatch.setattr(wmma_suite, "run_suite", lambda sizes, **kw: seen.update(kw) or FAKE)
    monkeypatch.setattr(gpu, "cupy", lambda: object())
    monkeypatch.setattr(gpu, "compute_capability", lambda: 90)
    res = _run("gemm", family, "--size", "64", "--dtype", "bf16", "--out-dtype", "bf16", "--json",
               str(tmp_path / "r.json"))
    assert res.exit_code == 0, res.output
    assert seen["out_dtype"] == "bf16" and seen["kernel"] == family[2:]
    assert "GEMM, D bf16, act=none" in res.output.replace("\n", " ")
    assert json.loads((tmp_path / "r.json").read_text())["out_dtype"] == "bf16"
    _run("gemm", family, "--size", "64")
    assert seen["out_dtype"] == "f32"   # the default


def test_json_to_stdout_leaves_stdout_to_the_json_and_the_tables_to_stderr(monkeypatch, fake_gpu):
    """`--json -` is for a pipe (`| jq`): the tables and summary lines that stdout carries otherwise go to stderr."""
    from fraglab.bench import memory, peak, shapes
    from fraglab.runtime import gpu

    monkeypatch.setattr(gpu, "compute_capability", lambda: 90)
    monkeypatch.setattr(gpu, "device_info", lambda: {"gpu_name": "H100", "memory_peak_tbs": 3.35})
    monkeypatch.setattr(memory, "measure", lambda sizes, readers, progress=None: [
        memory.row(r, s, 0.0125, 0.012, 0.013, 4, 3.35) for s in sizes for r in readers])
    monkeypatch.setattr(peak, "measure", lambda kernels, iters, sustain_s, progress: [
        {"probe": "wmma f16->f32", "kernel": "peak_wmma_f16_f32", "shape": "m16n16k16", "tflops": 648.0,
         "unit": "TFLOP/s", "ms": 1.0}])
    rows = [{"label": "decode", "m": 8, "n": 4096, "k": 4096, "tile": "skinny/k4", "fraglab": 2.0, "cublas": 2.1,
             "lt_fused": 2.1, "vs_cublas": 0.95, "vs_lt_fused": 0.95, "weight_tbs": 1.9}]
    monkeypatch.setattr(shapes, "run_shapes", lambda *a, **k: {"rows": rows, "device": {"memory_peak_tbs": 3.35}})
    for args, table, command in ((("peak", "--memory", "--sizes", "32"), "DRAM read ceilings", "peak --memory"),
                                 (("peak", "--no-sass"), "Tensor-core rate ceilings", "peak"),
                                 (("gemm", "--bench", "--shapes", "decode"), "fraglab >= cuBLAS", "gemm --shapes")):
        res = _run(*args, "--json", "-")
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["command"] == command, args
        assert table in res.stderr, args
        # and without --json the table stays on stdout
        plain = _run(*args)
        assert table in plain.stdout and table not in plain.stderr, args
