"""`fraglab gemm --bench --shapes NAME`: named sets of GEMM shapes people run (the projections of LLMs at the batch
sizes of decode and prefill, and at serving batches of 80-256 rows; ragged sizes; decode M), each timed through `fraglab.gemm`'s one road against cuBLAS
(`torch.mm`) and cuBLASLt with the epilogue fused (`torch._addmm_activation`), on the same inputs.

The sets are data and CPU-testable; `run_shapes` needs a GPU and torch. The weight is B: column-major by default
(`w.T` of an nn.Linear-style row-major (N, K) weight), as models keep it. Timing: CUDA events per launch behind a
GPU spin (fraglab.bench.timing), kernels interleaved in rounds, inputs rotated over enough copies that one pass
is twice the L2 (so a decode GEMM reads its weight from DRAM, as in a model, not from L2).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

# Llama-3-style projections: hidden size, K/V width (8 KV heads x 128), FFN width; gate and up fused into one GEMM
MODELS = {"8B": (4096, 1024, 14336), "70B": (8192, 1024, 28672)}
LLM_M = (1, 16, 128, 2048, 8192)
BATCH_M = (80, 96, 160, 192, 256)   # serving batches between and past the decode set's M
DECODE_M = (1, 8, 16, 32, 64, 128)
DECODE_NK = (4096, 11008, 14336)


@dataclass(frozen=True)
class Shape:
    label: str     # what the shape is, e.g. "70B gate_up" or "ragged"
    m: int
    n: int
    k: int

    @property
    def weight_bytes_f16(self) -> int:
        return self.n * self.k * 2


def projections(model: str) -> list[tuple[str, int, int]]:
    """(name, N, K) of one layer's GEMMs: fused QKV, attention output, fused gate+up, down."""
    hidden, kv, ffn = MODELS[model]
    return [("qkv", hidden + 2 * kv, hidden), ("o", hidden, hidden), ("gate_up", 2 * ffn, hidden),
            ("down", hidden, ffn)]


def _llm() -> list[Shape]:
    return [Shape(f"{model} {name}", m, n, k) for model in MODELS for m in LLM_M
            for name, n, k in projections(model)]


def _batch() -> list[Shape]:
    return [Shape(f"{model} {name}", m, n, k) for model in MODELS for m in BATCH_M
            for name, n, k in projections(model)]


def _ragged() -> list[Shape]:
    sizes = ((3000, 3000, 3000), (1000, 1000, 1000), (5000, 3000, 2000), (4095, 4096, 4096), (3072, 3072, 3072),
             (4096, 4096, 4096), (8192, 8192, 8192))
    return [Shape("ragged" if (m, n, k) not in ((4096,) * 3, (8192,) * 3) else "aligned", m, n, k)
            for m, n, k in sizes]


def _decode() -> list[Shape]:
    return [Shape("decode", m, n, k) for m in DECODE_M for n in DECODE_NK for k in DECODE_NK]


SHAPE_SETS = {"llm": _llm, "ragged": _ragged, "decode": _decode, "batch": _batch}


def shape_set(name: str) -> list[Shape]:
    from ..errors import check_choice
    check_choice(name, tuple(SHAPE_SETS), "--shapes")
    return SHAPE_SETS[name]()


TUNED_MARK = " *"   # shown after a tile the tuning table chose (fraglab/gemm/tuning.py), not the rules
SHAPE_COLUMNS = (("label", "shape", ""), ("m", "M", "d"), ("n", "N", "d"), ("k", "K", "d"), ("tile", "tile", ""),
                 ("fraglab", "fraglab", ".0f"), ("cublas", "cuBLAS", ".0f"), ("lt_fused", "Lt fused", ".0f"),
                 ("vs_cublas", "/cuBLAS", ".2f"), ("vs_lt_fused", "/Lt", ".2f"), ("weight_tbs", "W TB/s", ".2f"),
                 ("vs_read", "/read", ".2f"))
# Up to this M the weight's read bounds the GEMM (f16 on an H100 turns from memory- to compute-bound near M ~ 295:
# 989 TFLOP/s over 3.35 TB/s), so each such row also times a bare read of the same weight (fraglab.bench.memory's
# ldg reader): `vs_read` is fraglab's share of that read's rate, 1.0 being the weight read as fast as anything reads it
READ_MAX_M = 128


def _reps(m: int, n: int, k: int) -> int:
    est_ms = 2.0 * m * n * k / 5e14 * 1e3 + 0.005   # at ~500 TFLOP/s, at least a launch
    return int(min(60, max(6, 40 / est_ms)))


MAX_CHAIN = 1000   # launches per event pair in a chained timing


def check_chain(chain) -> int:
    """The launches per event pair of a chained timing: a whole number from 1 to MAX_CHAIN (InputError)."""
    from ..errors import InputError

    if isinstance(chain, bool) or not isinstance(chain, int) or not 1 <= chain <= MAX_CHAIN:
        raise InputError(f"--chain: launches back to back per event pair, a whole number from 1 to {MAX_CHAIN}, "
                         f"not {chain!r}", argument="--chain")
    return chain


def chain_title(chain: int) -> str:
    """What a table's title adds for a chained timing (nothing for an event pair per launch)."""
    return f", chains of {chain} launches per event pair" if chain > 1 else ""


def chained_reps(reps: int, chain: int) -> int:
    """Samples per round for chains of `chain` launches: fewer, since each already averages `chain` launches."""
    return reps if chain == 1 else max(6, -(-reps * 4 // chain))


def ratio(x, y):
    return x / y if x and y else None


def operand_sets(torch, gen, s: Shape, tdt, b_order: str, bias_mode: str, bias_in_input_type: bool = False):
    """(sets, [(A, B, bias f32 or None, the bias in the inputs' type or None)]): enough sets that one pass over
    them is twice the L2 (at most 6 GB); the weight made N x K and given as B column-major ("F", its transpose) or
    row-major ("C", a K x N copy); random values in [-0.5, 0.5) and a bias in [0, 1)."""
    from .. import bench as benchmod

    per_set = (s.m * s.k + s.n * s.k) * 2
    sets = min(benchmod.rotation_count(per_set), max(1, (6 << 30) // per_set))
    xs = []
    for _ in range(sets):
        a = (torch.rand(s.m, s.k, generator=gen, device="cuda") - 0.5).to(tdt)
        w = (torch.rand(s.n, s.k, generator=gen, device="cuda") - 0.5).to(tdt)
        b = w.t() if b_order == "F" else w.t().contiguous()
        bias = {"none": None, "per_n": (s.n,), "per_m": (s.m,), "full": (s.m, s.n)}[bias_mode]
        bias = torch.rand(*bias, generator=gen, device="cuda") if bias else None
        xs.append((a, b, bias, bias.to(tdt) if bias_in_input_type and bias is not None else None))
    return sets, xs


def run_shapes(shapes: list[Shape], *, dtype: str = "f16", act: str = "relu", bias_mode: str = "per_n",
               out_dtype: str = "f16", b_order: str = "F", chain: int = 1, progress=None) -> dict:
    """Time each shape: fraglab.gemm (its schedule's tile), torch.mm and, for a per-column bias with ReLU or GELU,
    torch._addmm_activation. Rows hold TFLOP/s (2MNK / median time), the ratios, and the weight's bytes per second
    (N x K x 2 bytes / time, what bounds a decode GEMM). `chain` > 1: each sample is that many launches back to
    back over the rotated sets between one event pair (fraglab.bench.timing), its time per launch."""
    check_chain(chain)
    import torch

    from .. import bench as benchmod
    from ..gemm import tuning
    from ..gemm.api import prepare
    from ..runtime import gpu

    from .memory import Reader

    cp = gpu.cupy()
    info = gpu.device_info()
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    odt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[out_dtype]
    fused_baseline = bias_mode == "per_n" and act in ("relu", "gelu")
    task = progress.add_task(f"gemm --shapes ({len(shapes)})", total=len(shapes)) if progress else None
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(25)
    for s in shapes:
        sets, xs = operand_sets(torch, gen, s, tdt, b_order, bias_mode, fused_baseline)
        d = torch.empty(s.m, s.n, device="cuda", dtype=odt)
        runs = [prepare(a, b, bias=bias, bias_mode=None if bias is None else bias_mode, act=act, out=d)
                for a, b, bias, _ in xs]
        fns = {"fraglab": lambda i: runs[i](), "cublas": lambda i: torch.mm(xs[i][0], xs[i][1])}
        if fused_baseline:
            fns["lt_fused"] = lambda i: torch._addmm_activation(xs[i][3], xs[i][0], xs[i][1], use_gelu=act == "gelu")
        if s.m <= READ_MAX_M:   # the weight's own bytes, whichever order B has
            weights = [cp.asarray(b if b.is_contiguous() else b.t()).ravel() for _, b, _, _ in xs]
            fns["read"] = Reader("ldg", weights, info["sm_count"])
        timings = benchmod.time_interleaved(fns, rounds=3, reps=chained_reps(_reps(s.m, s.n, s.k), chain),
                                            rotate=sets, chain=chain)
        tuned = tuning.tuned_tile(runs[0].plan, lambda: str(info.get("gpu_name", ""))) is not None
        row = {"label": s.label, "m": s.m, "n": s.n, "k": s.k, "tile": runs[0].kernel_spec.tile, "tuned": tuned,
               "kernel": type(runs[0].kernel_spec).__name__, "sets": sets}
        for name, t in timings.items():
            row[name] = benchmod.tflops(s.m, s.n, s.k, t.median_ms)
            row[f"{name}_ms"] = t.median_ms
        row["vs_cublas"] = ratio(row["fraglab"], row["cublas"])
        row["vs_lt_fused"] = ratio(row["fraglab"], row.get("lt_fused"))
        row["weight_tbs"] = s.weight_bytes_f16 / (row["fraglab_ms"] * 1e-3) / 1e12
        row.pop("read", None)   # a TFLOP/s of a read means nothing: its rate and fraglab's share of it instead
        if "read_ms" in row:
            row["read_tbs"] = s.weight_bytes_f16 / (row["read_ms"] * 1e-3) / 1e12
            row["vs_read"] = row["read_ms"] / row["fraglab_ms"]
        rows.append(row)
        xs = runs = d = fns = None
        torch.cuda.empty_cache()
        cp.get_default_memory_pool().free_all_blocks()
        if progress:
            progress.advance(task)
    return {"rows": rows, "device": info, "dtype": dtype, "act": act, "bias": bias_mode,
            "out_dtype": out_dtype, "b_order": b_order, "chain": chain}


SMALL_M = 16                 # decode batches whose GEMM is the weight's stream: judged in bytes per second
WEIGHT_PEAK_SHARE = 0.78     # of DRAM's peak, the weight read at M <= SMALL_M (2.6 of an H100's 3.35 TB/s)


def summarize(rows: list[dict], memory_peak_tbs: float | None = None) -> dict:
    """How a timed set stands: the shapes at or above cuBLAS and cuBLASLt fused (ratio >= 1) and the lowest ratio
    with its shape; at M <= SMALL_M the weight's bytes per second (lowest, median, and with the GPU's DRAM peak
    known, how many reach WEIGHT_PEAK_SHARE of it)."""
    summary: dict = {"shapes": len(rows), "tuned": sum(bool(r.get("tuned")) for r in rows)}
    for key in ("vs_cublas", "vs_lt_fused"):
        timed = [r for r in rows if r.get(key) is not None]
        if timed:
            worst = min(timed, key=lambda r: r[key])
            summary[key] = {"at_or_above": sum(r[key] >= 1.0 for r in timed), "of": len(timed),
                            "lowest": worst[key], "lowest_shape": [worst["m"], worst["n"], worst["k"]]}
    rates = [r["weight_tbs"] for r in rows if r["m"] <= SMALL_M and r.get("weight_tbs")]
    if rates:
        small = {"of": len(rates), "lowest": min(rates), "median": statistics.median(rates)}
        if memory_peak_tbs:
            small["peak_tbs"] = memory_peak_tbs
            small["at_share"] = sum(x >= WEIGHT_PEAK_SHARE * memory_peak_tbs for x in rates)
        reads = [r for r in rows if r["m"] <= SMALL_M and r.get("read_tbs")]
        if reads:
            worst = min(reads, key=lambda r: r["vs_read"])
            small["read"] = {"of": len(reads), "median_tbs": statistics.median(r["read_tbs"] for r in reads),
                             "vs_read_median": statistics.median(r["vs_read"] for r in reads),
                             "vs_read_lowest": worst["vs_read"],
                             "lowest_shape": [worst["m"], worst["n"], worst["k"]]}
        summary["weight_tbs_small_m"] = small
    return summary


def summary_lines(summary: dict) -> list[str]:
    """summarize()'s result as the lines printed under the table."""
    lines = []
    for key, name in (("vs_cublas", "cuBLAS (torch.mm)"), ("vs_lt_fused", "cuBLASLt fused (torch._addmm_activation)")):
        part = summary.get(key)
        if part:
            m, n, k = part["lowest_shape"]
            lines.append(f"fraglab >= {name} at {part['at_or_above']} of {part['of']} shapes; lowest "
                         f"{part['lowest']:.2f}x at {m}x{n}x{k}")
    small = summary.get("weight_tbs_small_m")
    if small:
        line = (f"weight read at M <= {SMALL_M}: lowest {small['lowest']:.2f} TB/s, median {small['median']:.2f} over "
                f"{small['of']} shapes")
        if "peak_tbs" in small:
            line += (f"; >= {WEIGHT_PEAK_SHARE:.0%} of this GPU's {small['peak_tbs']:.2f} TB/s at {small['at_share']} of "
                     f"{small['of']}")
        lines.append(line)
        read = small.get("read")
        if read:
            m, n, k = read["lowest_shape"]
            lines.append(f"a bare read of the same weights (peak --memory's ldg) at M <= {SMALL_M}: median "
                         f"{read['median_tbs']:.2f} TB/s; fraglab at {read['vs_read_median']:.2f}x its rate at the "
                         f"median, lowest {read['vs_read_lowest']:.2f}x at {m}x{n}x{k}")
    if summary.get("tuned"):
        lines.append(f"{TUNED_MARK.strip()} {summary['tuned']} of {summary['shapes']} shapes ran the tile the tuning "
                     f"table holds for them (fraglab gemm --tune), not the rules'")
    return lines


__all__ = ["Shape", "SHAPE_SETS", "SHAPE_COLUMNS", "MODELS", "projections", "shape_set", "run_shapes", "summarize",
           "summary_lines", "operand_sets", "TUNED_MARK", "SMALL_M", "WEIGHT_PEAK_SHARE", "READ_MAX_M"]
