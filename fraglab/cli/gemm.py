"""`fraglab gemm` (WMMA and SIMT GEMMs with a fused epilogue) and `fraglab peak`; registered by fraglab.cli.main.

Parsing only: the work is in fraglab.bench.wmma_suite.run_suite (which launches through fraglab.gemm.api),
fraglab.bench.simt_ladder.run_ladder and fraglab.bench.peak.measure; tables, JSON and plots come from
fraglab.bench.report.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import CheckFailed, InputError
from ..errors import check_choice
from ..bench.report import check_json_path
from ..files import check_target, is_stdout
from ..gemm.epilogue import ACT_KINDS, BIAS_MODES
from ..gemm.validate import OUT_DTYPES

DEFAULT_BENCH_SIZES = (1024, 2048, 4096, 8192)
DEFAULT_CHECK_SIZES = (1000, 1024)
WMMA_DTYPES = ("f16", "bf16")
WGMMA_DTYPES = ("f16", "bf16", "e4m3")   # e4m3: B column-major, as 8-bit wgmma reads it
B_ORDERS = ("C", "F")                    # --b-order: B row-major, or column-major (a transposed N x K weight)

SIMT_COLUMNS = (("size", "M x N x K", ""), ("kernel", "kernel", ""), ("status", "check", ""),
                ("rel_err", "rel err", ".1e"), ("ms", "ms", ".4f"), ("tflops", "TFLOP/s", ".2f"),
                ("pct_cublas", "% cuBLAS", ".1f"))


def fail(message: str, argument: str | None = None) -> None:
    """Bad input: one line and exit 2, through the CLI's one handler."""
    raise InputError(message, argument=argument)


_choice = check_choice  # the one choice check (InputError naming the option and the choices)


def parse_sizes(size: Optional[str], m: Optional[int], n: Optional[int], k: Optional[int],
                default: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """--size 1024,2048 (squares) or --m/--n/--k (one problem; a missing one takes --m's value)."""
    if size is not None and any(v is not None for v in (m, n, k)):
        fail("give either --size or --m/--n/--k, not both")
    if size is not None:
        try:
            values = [int(s) for s in size.replace(" ", "").split(",") if s]
        except ValueError:
            fail(f"invalid --size {size!r}: a comma-separated list of positive integers, e.g. 1024,2048")
        if not values or min(values) < 1:
            fail(f"invalid --size {size!r}: a comma-separated list of positive integers, e.g. 1024,2048")
        return [(v, v, v) for v in values]
    if all(v is None for v in (m, n, k)):
        return [(v, v, v) for v in default]
    first = next(v for v in (m, n, k) if v is not None)
    dims = tuple(v if v is not None else first for v in (m, n, k))
    for name, v in zip(("--m", "--n", "--k"), dims):
        if v < 1:
            fail(f"invalid {name} {v}: must be a positive integer")
    return [dims]


def _check_plot(plot: Optional[Path]) -> None:
    """--plot: a file name ending in .png, .svg or .pdf (matplotlib's format by suffix)."""
    if plot is not None and plot.suffix.lower() not in (".png", ".svg", ".pdf"):
        fail(f"invalid --plot {str(plot)!r}: the suffix must be .png, .svg or .pdf")
    check_target(plot, "--plot")


def _label(row: dict) -> dict:
    from ..bench.report import size_label
    return dict(row, size=size_label(row)) if {"m", "n", "k"} <= row.keys() else row


def _json_on_stdout(json_path: Optional[Path]) -> bool:
    """--json -: stdout carries the JSON alone, so the tables and summary lines go to stderr."""
    return json_path is not None and is_stdout(json_path)


def _print_table(rows: list[dict], columns, title: str, err: bool = False) -> None:
    from rich.console import Console

    from ..bench.report import rows_table
    console = Console(stderr=err)
    if not console.is_terminal:  # logs and pipes: wide enough that no column is cut
        console = Console(stderr=err, width=max(console.width, 132))
    console.print(rows_table([_label(r) for r in rows], columns, title))


def gemm_command(
    wmma: Annotated[bool, typer.Option("--wmma/--simt", help="Tensor-core WMMA GEMM (f16/bf16) or the FP32 SIMT ladder")] = True,
    wgmma: Annotated[bool, typer.Option("--wgmma", help="Hopper wgmma GEMM (f16/bf16, sm_90), checked and timed like --wmma")] = False,
    m: Annotated[Optional[int], typer.Option("--m", help="Rows of A and D (one problem; see --size)")] = None,
    n: Annotated[Optional[int], typer.Option("--n", help="Columns of B and D")] = None,
    k: Annotated[Optional[int], typer.Option("--k", help="Columns of A, rows of B")] = None,
    size: Annotated[Optional[str], typer.Option(help="Square sizes, comma-separated, e.g. 1024,2048,4096")] = None,
    dtype: Annotated[str, typer.Option(help="--wmma/--wgmma input type: f16 | bf16, or e4m3 with --wgmma (f32 accumulation)")] = "f16",
    out_dtype: Annotated[str, typer.Option("--out-dtype", help="--wmma/--wgmma: type of D, f32 | f16 | bf16 (Z stays "
                                           "f32; the check allows the 16-bit rounding)")] = "f32",
    act: Annotated[str, typer.Option(help="Activation: " + " | ".join(ACT_KINDS))] = "none",
    bias: Annotated[str, typer.Option(help="Bias: none | per_m (length M) | per_n (length N) | full (M x N)")] = "none",
    alpha: Annotated[float, typer.Option(help="Scale of A @ B")] = 1.0,
    beta: Annotated[float, typer.Option(help="Scale of C (a random f32 C is used when beta != 0)")] = 0.0,
    save_z: Annotated[bool, typer.Option("--save-z", help="Also store the pre-activation Z")] = False,
    leaky_slope: Annotated[float, typer.Option(help="Slope of leaky_relu below 0")] = 0.01,
    check: Annotated[bool, typer.Option("--check", help="Compare with the float64 reference (default when --bench is not given)")] = False,
    bench: Annotated[bool, typer.Option("--bench", help="Time against cuBLAS, cuBLAS + unfused epilogue and torch (CUDA events, medians)")] = False,
    json_path: Annotated[Optional[Path], typer.Option("--json", help="Save every row (and the device) as JSON")] = None,
    plot: Annotated[Optional[Path], typer.Option(help="Save a TFLOP/s chart (png, svg or pdf by suffix)")] = None,
    kernel: Annotated[Optional[str], typer.Option(help="--simt: run only this rung of the ladder")] = None,
    tile: Annotated[Optional[str], typer.Option(help="--wmma: force the block tile (256x128 | 128x64); with --wgmma, one of fraglab.gemm.wgmma.ALL_TILES (128x256, 128x128, ...); default by size")] = None,
    b_order: Annotated[Optional[str], typer.Option("--b-order", help="--wmma/--wgmma: B in memory, C (row-major K x N) or F (column-major: the transpose of a row-major N x K weight); default C, and F for e4m3")] = None,
    shapes: Annotated[Optional[str], typer.Option("--shapes", help="With --bench: time a named set of shapes through fraglab.gemm against cuBLAS and cuBLASLt fused: llm (8B and 70B projections at M = 1, 16, 128, 2048, 8192), ragged, decode, batch (the projections at M = 80, 96, 160, 192, 256); B column-major unless --b-order C")] = None,
    tune: Annotated[bool, typer.Option("--tune", help="Time every launcher tile on --shapes NAME or --m/--n/--k (or --size) on this GPU and record where one beats the schedule's rules: fraglab.gemm then takes it for that problem (f16/bf16)")] = False,
    tuning_path: Annotated[Optional[Path], typer.Option("--tuning", help="With --tune: the tuning table to update (default: $FRAGLAB_GEMM_TUNING, else ~/.cache/fraglab/gemm-tuning.json, the one fraglab.gemm reads)")] = None,
    chain: Annotated[Optional[int], typer.Option("--chain", help="With --bench --shapes or --tune: time chains of N launches back to back between one event pair (as a model's layers run: a kernel may start while the one before it ends), per launch; default 1, an event pair per launch")] = None,
):
    """Run the GEMM with a fused epilogue: check it against float64 and/or benchmark it."""
    check_json_path(json_path)   # before minutes of timing, not after
    _choice(act, ACT_KINDS, "--act")
    _choice(bias, BIAS_MODES, "--bias")
    _choice(out_dtype, OUT_DTYPES, "--out-dtype")
    if tune:
        for bad, option in ((bench or check, "--bench/--check"), (not wmma, "--simt"), (wgmma, "--wgmma"),
                            (tile is not None, "--tile"), (plot is not None, "--plot"), (kernel is not None, "--kernel")):
            if bad:
                fail(f"--tune times every tile of fraglab.gemm's wgmma road itself: not with {option}",
                     argument="--tune")
        if shapes is not None and any(v is not None for v in (size, m, n, k)):
            fail("--tune takes --shapes NAME or --m/--n/--k (or --size), not both", argument="--tune")
        _tune_command(shapes, parse_sizes(size, m, n, k, ()) if shapes is None else [], dtype=dtype, act=act,
                      bias=bias, out_dtype=out_dtype, b_order=b_order, tuning_path=tuning_path, json_path=json_path,
                      chain=1 if chain is None else chain)
        return
    if tuning_path is not None:
        fail("--tuning names the table --tune updates: give it with --tune", argument="--tuning")
    if shapes is not None:
        _shapes_command(shapes, dtype=dtype, act=act, bias=bias, out_dtype=out_dtype, b_order=b_order, bench=bench,
                        check=check, wmma=wmma, sized=any(v is not None for v in (size, m, n, k)), tile=tile,
                        json_path=json_path, chain=1 if chain is None else chain)
        return
    if chain is not None:
        fail("--chain times the launches of --bench --shapes NAME or --tune: give it with them", argument="--chain")
    if not check and not bench:
        check = True
    sizes = parse_sizes(size, m, n, k, DEFAULT_BENCH_SIZES if bench else DEFAULT_CHECK_SIZES)
    _check_plot(plot)
    if wgmma and not wmma:
        fail("--wgmma and --simt exclude each other")
    if b_order is not None and not wmma:
        fail("--b-order applies to --wmma and --wgmma")
    if wmma:
        _choice(dtype, WGMMA_DTYPES if wgmma else WMMA_DTYPES, "--dtype")
        if b_order is not None:
            _choice(b_order, B_ORDERS, "--b-order")
            if dtype == "e4m3" and b_order != "F":
                fail("--b-order C: e4m3 operands are K-major only, so B is column-major (F)", argument="--b-order")
        if kernel is not None:
            fail("--kernel picks a rung of the SIMT ladder: use it with --simt")
        if wgmma:
            from ..gemm.wgmma import ALL_TILES
            from ..runtime import gpu
            if tile is not None:   # a bad argument is named before the GPU is looked for
                _choice(tile, tuple(ALL_TILES), "--tile")
            gpu.cupy()  # GpuUnavailable: one line, before any work
            if gpu.compute_capability() != 90:
                fail(f"--wgmma needs an sm_90 GPU (H100/H200); this one is sm_{gpu.compute_capability()}")
        else:
            from ..gemm.wmma import ALIGNED_TILES
            if tile is not None:
                _choice(tile, ALIGNED_TILES, "--tile")
    elif tile is not None:
        fail("--tile applies to --wmma only")
    elif dtype != "f16":
        fail("--dtype applies to --wmma; the SIMT ladder is float32")
    elif out_dtype != "f32":
        fail("--out-dtype applies to --wmma and --wgmma; the SIMT ladder writes float32")

    from .. import bench as benchmod
    from ..runtime import gpu

    if not wmma and kernel is not None:  # a bad argument is named before the GPU is looked for
        from ..gemm import simt as gemm_simt
        _choice(kernel, tuple(gemm_simt.RUNGS), "--kernel")
    gpu.cupy()  # no usable GPU: one line, before a progress bar draws anything on a terminal
    family = ("wgmma" if wgmma else "wmma") if wmma else "simt"
    with benchmod.progress(transient=True) as prog:
        if wmma:
            from ..bench.wmma_suite import CHECK_COLUMNS, RATIO_COLUMNS, run_suite, summary_columns
            result = run_suite(sizes, dtype=dtype, act=act, bias_mode=bias, alpha=alpha, beta=beta,
                               leaky_slope=leaky_slope, save_z=save_z, check=check, bench=bench, tile=tile,
                               progress=prog, kernel=family, out_dtype=out_dtype, b_order=b_order)
            rows = result["rows"]
        else:
            from ..bench.simt_ladder import run_ladder
            from ..gemm import simt as gemm_simt
            if kernel is not None:
                _choice(kernel, tuple(gemm_simt.RUNGS), "--kernel")
            rows = run_ladder(sizes, kernel=kernel, check=check, bench=bench, act=act, bias_mode=bias,
                              beta=beta, save_z=save_z, alpha=alpha, leaky_slope=leaky_slope, progress=prog)
            result = {"rows": rows}

    title = (f"{('WGMMA ' if wgmma else 'WMMA ') + dtype if wmma else 'SIMT f32'} GEMM, "
             f"D {out_dtype if wmma else 'f32'}, act={act}, bias={bias}, beta={beta}" + (", save Z" if save_z else ""))
    err = _json_on_stdout(json_path)
    if wmma:
        if check:
            _print_table(rows, CHECK_COLUMNS, title + ": check against float64", err=err)
        if bench:
            ceiling, sustained = result.get("ceiling_tflops"), result.get("ceiling_sustained_tflops")
            _print_table(result["summary"], summary_columns(family),
                         title + ": TFLOP/s (2MNK / median time)", err=err)
            note = f"{result['ceiling_label']}, measured in this run: {ceiling:.0f} TFLOP/s burst" if ceiling else ""
            if ceiling and sustained:
                note += f", {sustained:.0f} sustained under the power limit"
            _print_table(result["summary"], RATIO_COLUMNS, "Ratios" + (f" (ceiling: {note})" if note else ""))
            for line in result.get("notes", ()):
                typer.echo(line, err=err)
            if result.get("calls"):
                from ..bench.call_timing import CALL_COLUMNS, CALLS
                _print_table(result["calls"], CALL_COLUMNS,
                             f"One-shot call, us per call ({CALLS} back to back, one synchronise)",
                             err=err)
    else:
        _print_table(rows, SIMT_COLUMNS, title, err=err)
    if json_path is not None:
        try:
            from ..runtime import gpu
            result.setdefault("device", gpu.device_info())
        except Exception:
            pass
        benchmod.save_json({"command": "gemm", "wmma": wmma,
                            "kernel": family, "dtype": dtype if wmma else "f32",
                            "out_dtype": out_dtype, "act": act,
                            "bias": bias, "alpha": alpha, "beta": beta, "save_z": save_z, **result}, json_path)
    if plot is not None and bench:
        label = result.get("ceiling_label")
        ceilings = {f"{label} (burst)": result.get("ceiling_tflops"),
                    f"{label} (sustained)": result.get("ceiling_sustained_tflops")} if wmma else None
        benchmod.plot_tflops(rows, plot, title, ceilings)
    failed = [r for r in rows if r.get("status") == "FAILED"]
    if failed:
        raise CheckFailed(f"{len(failed)} check(s) FAILED (tolerances: fraglab.gemm.reference.TOLERANCES)")


def _shapes_command(name: str, *, dtype: str, act: str, bias: str, out_dtype: str, b_order: Optional[str],
                    bench: bool, check: bool, wmma: bool, sized: bool, tile: Optional[str], json_path,
                    chain: int = 1) -> None:
    """`--bench --shapes NAME`: the named set through fraglab.gemm against cuBLAS and cuBLASLt fused."""
    from ..bench.shapes import (SHAPE_COLUMNS, SHAPE_SETS, TUNED_MARK, chain_title, check_chain, run_shapes,
                                shape_set, summarize, summary_lines)

    _choice(name, tuple(SHAPE_SETS), "--shapes")
    for bad, message in ((not bench or check, "--shapes times a set: give it with --bench (and without --check)"),
                         (not wmma, "--shapes runs fraglab.gemm's tensor-core road: not with --simt"),
                         (sized, "--shapes names its own sizes: not with --size/--m/--n/--k"),
                         (tile is not None, "--shapes takes each shape's scheduled tile: not with --tile")):
        if bad:
            fail(message, argument="--shapes")
    _choice(dtype, WMMA_DTYPES, "--dtype")
    if b_order is not None:
        _choice(b_order, B_ORDERS, "--b-order")
    check_chain(chain)
    from ..runtime import gpu
    gpu.cupy()  # GpuUnavailable: one line, before any work
    from .. import bench as benchmod
    with benchmod.progress(transient=True) as prog:
        result = run_shapes(shape_set(name), dtype=dtype, act=act, bias_mode=bias, out_dtype=out_dtype,
                            b_order=b_order or "F", chain=chain, progress=prog)
    err = _json_on_stdout(json_path)
    shown = [dict(r, tile=r["tile"] + TUNED_MARK) if r.get("tuned") else r for r in result["rows"]]
    _print_table(shown, SHAPE_COLUMNS,
                 f"--shapes {name}: {dtype}, D {out_dtype}, act={act}, bias={bias}, B {b_order or 'F'}; TFLOP/s"
                 + chain_title(chain),
                 err=err)
    summary = summarize(result["rows"], result["device"].get("memory_peak_tbs"))
    from ..show.terminal import output_width
    width = output_width()
    for line in summary_lines(summary):   # the terminal's width, 80 at most when piped
        typer.echo(textwrap.fill(line, width, subsequent_indent="  ", break_on_hyphens=False), err=err)
    if json_path is not None:
        benchmod.save_json({"command": "gemm --shapes", "shapes": name, **result, "summary": summary}, json_path)


def _tune_command(name: Optional[str], sizes: list[tuple[int, int, int]], *, dtype: str, act: str, bias: str,
                  out_dtype: str, b_order: Optional[str], tuning_path: Optional[Path], json_path,
                  chain: int = 1) -> None:
    """`--tune`: every launcher tile against the rules' on each shape; the winners into the tuning table."""
    from ..bench.shapes import SHAPE_SETS, Shape, chain_title, check_chain, shape_set
    from ..bench.tune import TUNE_COLUMNS, tune_shapes
    from ..files import check_suffix, clean_path, report_written, target_path, write_output
    from ..gemm import tuning

    if name is not None:
        _choice(name, tuple(SHAPE_SETS), "--shapes")
    elif not sizes:
        fail("--tune needs the problems to time: --shapes NAME, --m/--n/--k or --size", argument="--tune")
    _choice(dtype, tuning.DTYPES, "--dtype")
    if b_order is not None:
        _choice(b_order, B_ORDERS, "--b-order")
    check_chain(chain)
    target = tuning_path if tuning_path is not None else tuning.active_path()
    if target is None:
        fail(f"{tuning.ENV} is off, so fraglab.gemm reads no table: give --tuning FILE", argument="--tuning")
    if is_stdout(target):
        fail("--tuning names a file the table is kept in, not -", argument="--tuning")
    check_suffix(target, "json", "--tuning")   # the writer's rules, before minutes of timing
    target = target_path(target, "gemm-tuning.json")   # a folder holds the table under its default name
    table = tuning.read(target)   # a bad table is refused before minutes of timing, and left as it is
    from ..runtime import gpu
    gpu.cupy()  # GpuUnavailable: one line, before any work
    from .. import bench as benchmod
    problems = shape_set(name) if name is not None else [Shape("tune", *s) for s in sizes]
    with benchmod.progress(transient=True) as prog:
        result = tune_shapes(problems, dtype=dtype, act=act, bias_mode=bias, out_dtype=out_dtype,
                             b_order=b_order or "F", chain=chain, progress=prog)
    err = _json_on_stdout(json_path)
    _print_table(result["rows"], TUNE_COLUMNS,
                 f"--tune: {dtype}, D {out_dtype}, act={act}, bias={bias}, B {b_order or 'F'}; us per launch"
                 + chain_title(chain),
                 err=err)
    recorded = sum(r["recorded"] for r in result["rows"])
    written = write_output(target, tuning.to_json(tuning.merged(table, result["found"])),
                           default_name="gemm-tuning.json", argument="--tuning", fmt="json")
    typer.echo(f"{recorded} of {len(result['rows'])} problems tuned (a tile more than {result['margin']:.0%} faster "
               f"than the rules'); the others keep the rules' tile", err=err)
    report_written(written)
    if written is not None and Path(written).resolve() != (tuning.active_path() or Path()).resolve():
        typer.echo(f"fraglab.gemm reads {tuning.ENV}'s table: export {tuning.ENV}={clean_path(str(written))} "
                   f"to use this one", err=True)
    if json_path is not None:
        found = [{"key": vars(k), "tuned": None if v is None else vars(v)} for k, v in result["found"].items()]
        benchmod.save_json({"command": "gemm --tune", "shapes": name, **{k: v for k, v in result.items()
                                                                       if k != "found"}, "found": found}, json_path)


def peak_command(
    probe: Annotated[Optional[list[str]], typer.Option(help="Probe kernel(s) to run, e.g. peak_wmma_f16_f32 or "
                                                        "peak_wgmma_m64n256k16_f16_f32_ss (default: every probe this "
                                                        "GPU runs; the wgmma ones need sm_90)")] = None,
    iters: Annotated[int, typer.Option(help="MMA loop iterations per warp (wgmma: per warpgroup, 4 wgmmas each)")] = 8192,
    sustain: Annotated[float, typer.Option(help="Seconds to run each probe before timing it: 0 = burst rate of a cool GPU; "
                                           "3 = the rate kept up under the power limit, as during a long GEMM")] = 0.0,
    sass: Annotated[bool, typer.Option("--sass/--no-sass", help="Check each probe's SASS (needs nvcc or cuda-bindings, and cuobjdump)")] = True,
    json_path: Annotated[Optional[Path], typer.Option("--json", help="Save the rows (and the device) as JSON")] = None,
    memory: Annotated[bool, typer.Option("--memory", help="The DRAM read ceilings instead: one buffer read once per launch, "
                                         "by size (what a decode GEMM's weight read is judged against)")] = False,
    sizes: Annotated[Optional[str], typer.Option(help="With --memory: comma-separated sizes, MiB (e.g. 32) or f16 "
                                                 "weights N x K (e.g. 4096x14336); default the decode set's weights "
                                                 "and 1024 MiB")] = None,
    reader: Annotated[Optional[list[str]], typer.Option(help="With --memory: ldg (a full grid of 16-byte loads) or "
                                                        "bulk (cp.async.bulk into a shared-memory ring, as the GEMMs "
                                                        "stream); default both")] = None,
    plot: Annotated[Optional[Path], typer.Option(help="With --memory: save a TB/s-by-size chart (png, svg or pdf "
                                                 "by suffix)")] = None,
):
    """Tensor-core rate ceilings: register-only WMMA (f16/bf16/tf32/u8) and mma.sync, and on sm_90 wgmma m64n256
    (f16/bf16 with shared-memory or register A, e4m3): the ceiling each GEMM is judged against. With --memory, the
    DRAM read ceilings by size."""
    from .. import bench as benchmod
    from ..bench import peak

    if memory:
        return _memory_ceilings(probe, sizes, reader, json_path, plot)
    for option, given in (("--sizes", sizes is not None), ("--reader", bool(reader)), ("--plot", plot is not None)):
        if given:
            fail(f"{option} goes with --memory (the DRAM read ceilings); the tensor-core probes take --probe")
    for p in probe or []:
        _choice(p, peak.PROBE_NAMES, "--probe")
    if iters < 1:
        fail(f"invalid --iters {iters}: must be a positive integer")
    if not sustain >= 0 or sustain > 600:
        fail(f"invalid --sustain {sustain}: seconds between 0 and 600")
    check_json_path(json_path)
    from ..runtime import gpu
    gpu.cupy()  # no usable GPU: one line, before a progress bar draws anything on a terminal
    with benchmod.progress(transient=True) as prog:
        rows = peak.measure(probe or None, iters=iters, sustain_s=sustain, progress=prog)
    info = gpu.device_info()
    checks = {}
    if sass:
        try:
            checks = peak.sass_checks(info["compute_capability"], [r["kernel"] for r in rows])
        except Exception as exc:  # no compiler or disassembler here: say so in the table
            typer.echo(f"fraglab: SASS not checked ({exc.__class__.__name__}: {str(exc).splitlines()[0]})", err=True)
    for r in rows:
        c = checks.get(r["kernel"])
        r["sass"] = ("ok: " if c.ok else "SUSPECT: ") + c.note if c else "-"
        r["sass_ok"] = c.ok if c else None
    _print_table(rows, peak.COLUMNS, f"Tensor-core rate ceilings on {info['gpu_name']}",
                 err=_json_on_stdout(json_path))
    if json_path is not None:
        benchmod.save_json({"command": "peak", "device": info, "rows": rows}, json_path)


def _memory_ceilings(probe: Optional[list[str]], sizes: Optional[str], reader: Optional[list[str]],
                     json_path: Optional[Path], plot: Optional[Path]) -> None:
    """`fraglab peak --memory`: fraglab.bench.memory's readers at each size, as a table (and JSON, and a chart)."""
    from .. import bench as benchmod
    from ..bench import memory, report

    if probe:
        fail("--probe names tensor-core probes; with --memory choose --reader (ldg, bulk) and --sizes")
    chosen = memory.parse_sizes(sizes) if sizes is not None else memory.default_sizes()
    readers = memory.parse_readers(reader)
    check_json_path(json_path)
    _check_plot(plot)
    from ..runtime import gpu
    gpu.cupy()  # no usable GPU: one line, before a progress bar draws anything on a terminal
    readers = memory.runnable(readers, gpu.compute_capability(), asked=bool(reader))
    with benchmod.progress(transient=True) as prog:
        rows = memory.measure(chosen, readers, progress=prog)
    info = gpu.device_info()
    peak_tbs = info.get("memory_peak_tbs")
    title = f"DRAM read ceilings on {info['gpu_name']}" + (f" (peak {peak_tbs:.2f} TB/s)" if peak_tbs else "")
    _print_table(rows, memory.COLUMNS, title, err=_json_on_stdout(json_path))
    if json_path is not None:
        benchmod.save_json({"command": "peak --memory", "device": info, "rows": rows}, json_path)
    if plot is not None:
        report.save_figure(report.read_rate_figure(rows, title, peak_tbs), plot, "dram_read")


def register(app: typer.Typer) -> None:
    app.command("gemm")(gemm_command)
    app.command("peak")(peak_command)
