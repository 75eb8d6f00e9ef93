"""The check and benchmark suite behind `fraglab gemm --wmma`: the fused WMMA GEMM against its plain store,
cuBLAS GemmEx, cuBLAS + an unfused epilogue and torch, with the register-only ceiling measured in the run.
Rows go to fraglab.bench.report's tables, JSON and plot.
"""

from __future__ import annotations

from ..gemm.api import d_dtype, prepare
from ..gemm.cast import bf16_dtype
from ..gemm.reference import e4m3_to_float64

# ---------------------------------------------------------------------------------------------
# Check and benchmark suite behind `fraglab gemm --wmma` (rows for fraglab.bench's table/JSON/plot)

BASELINE_KERNELS = ("cublas_gemmex", "cublas_unfused", "torch_addmm_act")


def suite_kernels(family: str = "wmma") -> tuple[str, ...]:
    """Row names of one size: the family's fused and plain-store GEMM (wmma_* or wgmma_*), then the baselines."""
    return (f"{family}_fused", f"{family}_plain") + BASELINE_KERNELS


CHECK_ROWS_ABOVE = 2048  # larger M: check a random sample of rows against the float64 reference
CHECK_SAMPLE_ROWS = 96
INTERLEAVED_ROUNDS = 6   # rounds over the kernels, in varying order (fraglab.bench.time_interleaved)


def to_bf16_bits(cp, x32):
    """float32 -> bf16 bit patterns (uint16), rounding to nearest even."""
    bits = x32.view(cp.uint32)
    return ((bits + cp.uint32(0x7FFF) + ((bits >> 16) & cp.uint32(1))) >> 16).astype(cp.uint16)


def host_float64(x, dtype: str, bits: bool):
    """A device array back on the host in float64 (exactly: f16/bf16 widen without rounding, e4m3 bytes decode)."""
    import numpy as np

    h = x.get()
    if dtype == "e4m3":
        return e4m3_to_float64(h)
    if dtype == "bf16" and bits:
        return (h.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return h.astype(np.float64)


def poison(cp, x) -> None:
    """Fill with NaN (bf16's quiet NaN 0x7FC0 for uint16 bits), so an element a kernel never writes fails the check."""
    if x.dtype == cp.float32 or x.dtype == cp.float16:
        x.fill(cp.nan)
    else:
        x.view(cp.uint16).fill(0x7FC0)


def e4m3_bits(cp, rng, shape):
    """Random e4m3 bit patterns (uint8): any sign and mantissa, exponents 4..10 (magnitudes 2^-3 .. 15), no NaN."""
    sign = (rng.random(shape) < 0.5).astype(cp.uint8) << 7
    exponent = (rng.random(shape) * 7).astype(cp.uint8) + cp.uint8(4)
    return sign | (exponent << 3) | (rng.random(shape) * 8).astype(cp.uint8)


def make_inputs(cp, m: int, n: int, k: int, dtype: str, *, has_c: bool, bias_mode: str, seed: int,
                b_order: str | None = None):
    """One random input set (uniform in [-1, 1), never zeros; e4m3: see e4m3_bits, B column-major as 8-bit
    wgmma reads it; b_order "F": B column-major for 16-bit inputs too): dict a, b, c, bias, bits (bf16 as
    uint16), input_dtype (what fraglab.gemm is told)."""
    rng = cp.random.default_rng(seed)
    uni = lambda shape: rng.random(shape, dtype=cp.float32) * 2 - 1  # noqa: E731
    bits = False
    # b_order F: the same values stored as the transpose of a row-major N x K array
    column_major = (lambda x: cp.asfortranarray(x)) if b_order == "F" else (lambda x: x)  # noqa: E731
    if dtype == "e4m3":
        a, b = e4m3_bits(cp, rng, (m, k)), e4m3_bits(cp, rng, (n, k)).T
    elif dtype == "f16":
        a, b = uni((m, k)).astype(cp.float16), column_major(uni((k, n)).astype(cp.float16))
    else:
        bf = bf16_dtype(cp)   # the GEMM's own answer, so inputs and a bf16 D agree
        a, b = to_bf16_bits(cp, uni((m, k))), column_major(to_bf16_bits(cp, uni((k, n))))
        if bf is not None:
            a, b = a.view(bf), b.view(bf)
        else:
            bits = True
    c = uni((m, n)) if has_c else None
    shape = {"none": None, "per_m": (m,), "per_n": (n,), "full": (m, n)}[bias_mode]
    bias = uni(shape) if shape else None
    return {"a": a, "b": b, "c": c, "bias": bias, "bits": bits,
            "input_dtype": "e4m3" if dtype == "e4m3" else ("bf16" if bits else None)}


def _sample_rows(m: int, seed: int):
    import numpy as np

    if m <= CHECK_ROWS_ABOVE:
        return np.arange(m)
    rng = np.random.default_rng(seed)
    return np.unique(np.concatenate([[0, m - 1], rng.choice(m, CHECK_SAMPLE_ROWS, replace=False)]))


def check_against_reference(cp, inputs: dict, d, z, *, dtype: str, act: str, bias_mode: str, alpha: float,
                            beta: float, leaky_slope: float, seed: int = 0, out_dtype: str = "f32") -> dict:
    """Compare D (and Z) with the float64 reference on all rows, or on sampled rows of a large M; a 16-bit D
    (out_dtype) is allowed its one extra rounding (gemm.reference.check_result)."""
    from ..gemm.reference import check_result, reference_gemm

    m = d.shape[0]
    rows = _sample_rows(m, seed)
    a64 = host_float64(inputs["a"], dtype, inputs["bits"])[rows]
    b64 = host_float64(inputs["b"], dtype, inputs["bits"])
    c = inputs["c"].get()[rows] if inputs["c"] is not None else None
    bias = inputs["bias"].get() if inputs["bias"] is not None else None
    if bias is not None and bias_mode in ("per_m", "full"):
        bias = bias[rows]
    d_ref, z_ref = reference_gemm(a64, b64, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                                  leaky_slope=leaky_slope)
    d64 = host_float64(d, out_dtype, d.dtype == cp.uint16)[rows]
    k = inputs["a"].shape[1]
    ok, max_abs, rel = check_result(d64, d_ref, dtype, z_ref=z_ref, out_dtype=out_dtype, k=k)
    if z is not None:
        z_ok, z_abs, z_rel = check_result(z.get()[rows], z_ref, dtype, k=k)
        ok, max_abs, rel = ok and z_ok, max(max_abs, z_abs), max(rel, z_rel)
    return {"status": "PASSED" if ok else "FAILED", "max_err": max_abs, "rel_err": rel,
            "checked_rows": int(len(rows))}


def unfused_epilogue_kernel(cp, act: str, bias_mode: str, has_c: bool, save_z: bool):
    """The same epilogue as one CuPy elementwise kernel over cuBLAS's f32 output (the unfused baseline).
    Its activation is gemm/epilogue.cuh's, pasted in as the preamble, so both paths share one formula."""
    from ..gemm.epilogue import act_cpp
    from ..runtime.build import kernels_dir

    preamble = (kernels_dir() / "gemm" / "epilogue.cuh").read_text().replace("#pragma once", "")
    ins = ["float32 acc"] + (["float32 c"] if has_c else []) + (["float32 bias"] if bias_mode != "none" else [])
    ins += ["float32 alpha", "float32 beta", "float32 slope"]
    outs = ["float32 d"] + (["float32 z"] if save_z else [])
    body = "float pre = alpha * acc;" + (" pre = fmaf(beta, c, pre);" if has_c else "")
    body += (" pre += bias;" if bias_mode != "none" else "") + (" z = pre;" if save_z else "")
    body += f" d = fraglab::activate<{act_cpp(act)}>(pre, slope);"
    name = f"fraglab_unfused_{act}_{bias_mode}_{int(has_c)}{int(save_z)}"
    return cp.ElementwiseKernel(", ".join(ins), ", ".join(outs), body, name, preamble=preamble)


def cublas_gemmex(cp, a, b, d, dtype: str) -> None:
    """D (f32, row-major) = A @ B through cublasGemmEx: same input type, f32 output, f32 compute.
    Row-major trick: cuBLAS is column-major, so compute D^T = B^T A^T (a column-major B is read transposed)."""
    from cupy.cuda import cublas

    m, k = a.shape
    n = b.shape[1]
    in_type = 2 if dtype == "f16" else 14                     # CUDA_R_16F, CUDA_R_16BF
    compute = getattr(cublas, "CUBLAS_COMPUTE_32F", 68)
    algo = getattr(cublas, "CUBLAS_GEMM_DEFAULT", -1)
    one, zero = _HOST_SCALARS
    handle = cp.cuda.device.get_cublas_handle()
    b_transposed = not b.flags.c_contiguous   # column-major K x N: cuBLAS sees K x N, op T gives B^T
    cublas.gemmEx(handle, 1 if b_transposed else 0, 0, n, m, k, one.ctypes.data, b.data.ptr, in_type,
                  k if b_transposed else n, a.data.ptr, in_type, k,
                  zero.ctypes.data, d.data.ptr, 0, n, compute, algo)


def _host_scalars():
    import numpy as np
    return np.ones(1, np.float32), np.zeros(1, np.float32)


_HOST_SCALARS = _host_scalars()


def torch_available() -> bool:
    import importlib.util
    return importlib.util.find_spec("torch") is not None


def _reps_for(m: int, n: int, k: int) -> int:
    est_ms = 2.0 * m * n * k / 4e14 * 1e3   # at ~400 TFLOP/s
    return int(min(100, max(15, 150 / max(est_ms, 1e-3))))


def run_suite(sizes, *, dtype: str = "f16", act: str = "none", bias_mode: str = "none", beta: float = 0.0,
              alpha: float = 1.0, leaky_slope: float = 0.01, save_z: bool = False, check: bool = True,
              bench: bool = True, baselines: bool = True, tile: str | None = None, progress=None,
              kernel: str = "wmma", out_dtype: str = "f32", b_order: str | None = None) -> dict:
    """Check and time the fused WMMA GEMM and its baselines for each (m, n, k). kernel='wgmma' runs the Hopper
    wgmma GEMM through the same road; its rows are named wgmma_fused / wgmma_plain. out_dtype (f32 | f16 | bf16):
    the type the fused and plain rows (and the wmma_fused row beside wgmma) store D in; the check allows its
    rounding. The cuBLAS and torch baselines are unchanged. Every row records out_dtype. b_order "F": B
    column-major (the wgmma kernel reads it so; the WMMA kernel gets a row-major copy at planning time, cuBLAS
    reads it transposed); e4m3 always has it so.

    Returns {"rows": [...] one per (kernel, size), "summary": [...] one per size with the ratios,
    "ceiling_tflops" / "ceiling_sustained_tflops": the rate of the family's ceiling probe (register-only WMMA,
    or shared-memory wgmma m64n256) measured in this run before the sizes (burst) and after them (sustained),
    or None without bench, "ceiling_label": that probe's name, "device": provenance}.
    """
    from .. import bench as benchmod
    from ..runtime import gpu
    from . import peak
    cp = gpu.cupy()
    info = gpu.device_info()
    has_c = beta != 0
    ceiling = None
    ceilings = []
    probe_name = peak.CEILING_PROBES[kernel][dtype]  # each GEMM is judged by its own instruction's ceiling
    if bench:  # measured before and after the GEMMs: the clock drifts under sustained tensor-core load
        ceilings.append(peak.ceiling(dtype, peak.measure([probe_name], progress=progress), api=kernel))
        ceiling = ceilings[0]
    task = progress.add_task(f"gemm --wmma {dtype} {act} bias={bias_mode}", total=len(sizes)) if progress else None
    rows, per_size = [], []  # per_size: each size's rows, summarised once both ceilings are known
    calls = []               # per size: the one-shot call's cost from torch and CuPy (bench/call_timing.py)
    labels, notes = baseline_differences(dtype, act)
    for (m, n, k) in sizes:
        per_set = (m * k + k * n) * (1 if dtype == "e4m3" else 2) + (m * n * 4 if has_c else 0) + (m * n * 4 if bias_mode == "full" else 0)
        sets = min(benchmod.rotation_count(per_set), max(1, (4 << 30) // per_set)) if bench else 1
        inputs = [make_inputs(cp, m, n, k, dtype, has_c=has_c, bias_mode=bias_mode, seed=17 + s, b_order=b_order)
                  for s in range(sets)]
        d = cp.empty((m, n), dtype=d_dtype(cp, out_dtype, inputs[0]["a"]))   # as fraglab.gemm allocates D
        z = cp.empty((m, n), dtype=cp.float32) if save_z else None
        # One road: each input set is validated and planned once by fraglab.gemm.api; the timed calls only launch.
        fused_runs = [prepare(x["a"], x["b"], c=x["c"], bias=x["bias"], bias_mode=bias_mode, act=act, alpha=alpha,
                              beta=beta, leaky_slope=leaky_slope, save_z=save_z, out=d, z_out=z, kernel=kernel,
                              input_dtype=x["input_dtype"], tile=tile, out_dtype=out_dtype)
                      for x in inputs]
        fused = fused_runs[0].kernel_spec
        plain_runs = [prepare(x["a"], x["b"], out=d, kernel=kernel, input_dtype=x["input_dtype"],
                              tile=fused.tile if fused.aligned else None, out_dtype=out_dtype) for x in inputs]
        plain = plain_runs[0].kernel_spec

        def run_fused(i):
            fused_runs[i]()

        def run_plain(i):
            plain_runs[i]()

        base = {"m": m, "n": n, "k": k, "dtype": dtype, "out_dtype": out_dtype, "act": act, "bias": bias_mode,
                "beta": beta, "save_z": save_z,
                "b_order": "C" if inputs[0]["b"].flags.c_contiguous and dtype != "e4m3" else "F"}
        results: dict[str, dict] = {}
        fused_name, plain_name = suite_kernels(kernel)[:2]
        for name, fn, spec in ((fused_name, run_fused, fused), (plain_name, run_plain, plain)):
            row = dict(base, kernel=name, tile=spec.tile, aligned=spec.aligned, status="-", max_err=None,
                       rel_err=None)
            if check:
                poison(cp, d)  # an element the kernel never writes stays NaN and fails
                if z is not None:
                    poison(cp, z)
                fn(0)
                cp.cuda.runtime.deviceSynchronize()
                if name == fused_name:
                    row.update(check_against_reference(cp, inputs[0], d, z, dtype=dtype, act=act,
                                                       bias_mode=bias_mode, alpha=alpha, beta=beta,
                                                       leaky_slope=leaky_slope, out_dtype=out_dtype))
                else:  # the plain store: D = A @ B
                    row.update(check_against_reference(cp, {**inputs[0], "c": None, "bias": None}, d, None,
                                                       dtype=dtype, act="none", bias_mode="none", alpha=1.0,
                                                       beta=0.0, leaky_slope=leaky_slope, out_dtype=out_dtype))
            results[name] = row
        if bench:
            reps = _reps_for(m, n, k)
            fns = {fused_name: run_fused, plain_name: run_plain}
            if kernel == "wgmma" and baselines and dtype != "e4m3":  # the fused epilogue on WMMA, for the plot
                wmma_runs = [prepare(x["a"], x["b"], c=x["c"], bias=x["bias"], bias_mode=bias_mode, act=act,
                                     alpha=alpha, beta=beta, leaky_slope=leaky_slope, save_z=save_z, out=d,
                                     z_out=z, kernel="wmma", input_dtype="bf16" if x["bits"] else None,
                                     out_dtype=out_dtype)
                             for x in inputs]
                fns["wmma_fused"] = lambda i: wmma_runs[i]()
            if baselines and dtype == "e4m3":
                fns.update(_fp8_baseline_fns(cp, inputs, base, act, bias_mode, has_c, save_z, alpha, beta,
                                             leaky_slope))
            elif baselines:
                fns.update(_baseline_fns(cp, inputs, base, dtype, act, bias_mode, has_c, save_z, alpha, beta,
                                         leaky_slope))
            timings = benchmod.time_interleaved(fns, rounds=INTERLEAVED_ROUNDS, reps=max(3, reps // INTERLEAVED_ROUNDS),
                                                rotate=sets)
            for name, t in timings.items():
                results.setdefault(name, dict(base, kernel=name, status="-"))
                if name in labels:
                    results[name]["label"] = labels[name]
                results[name].update(ms=t.median_ms, p20_ms=t.p20_ms, p80_ms=t.p80_ms, reps=t.reps,
                                     tflops=benchmod.tflops(m, n, k, t.median_ms))
            if kernel == "wgmma" and fused_name in results:   # the door: one-shot calls from torch and CuPy
                from .call_timing import call_row
                calls.append(call_row(inputs[0], act=act, bias_mode=bias_mode, alpha=alpha, beta=beta,
                                      leaky_slope=leaky_slope, save_z=save_z, out_dtype=out_dtype, kernel=kernel,
                                      kernel_ms=results[fused_name].get("ms")))
            if baselines and "torch_addmm_act" not in fns and torch_available():
                note = ("torch has no fused fp8 GEMM + activation" if dtype == "e4m3"
                        else "cuBLASLt fuses only per_n bias + relu/gelu, without C")
                results["torch_addmm_act"] = dict(base, kernel="torch_addmm_act", status="-", note=note)
        rows.extend(results.values())
        per_size.append(list(results.values()))
        if progress:
            progress.advance(task)
        inputs = d = z = None  # release this size's buffers before the next size allocates
        cp.get_default_memory_pool().free_all_blocks()
    sustained = None
    if bench:  # the same probe after SUSTAIN_S s of itself: the power-capped state the long GEMMs ran in
        sustained = peak.ceiling(dtype, peak.measure([probe_name], sustain_s=peak.SUSTAIN_S), api=kernel)
        ceilings.append(sustained)
    summary = [summarize_size(size_rows, ceiling, sustained, family=kernel) for size_rows in per_size]
    return {"rows": rows, "summary": summary, "out_dtype": out_dtype, "ceiling_tflops": ceiling,
            "ceiling_sustained_tflops": sustained,
            "ceiling_probe": probe_name, "ceiling_label": peak.probe(probe_name).name,
            "ceiling_before_after": ceilings, "device": info, "notes": notes if bench else [], "calls": calls}


def _baseline_fns(cp, inputs, base, dtype, act, bias_mode, has_c, save_z, alpha, beta, leaky_slope) -> dict:
    """What a user would otherwise run: cuBLAS alone, cuBLAS + the epilogue as one CuPy elementwise
    kernel, and torch._addmm_activation (cuBLASLt's fused bias+ReLU/GELU) where it applies."""
    m, n = base["m"], base["n"]
    d0 = cp.empty((m, n), dtype=cp.float32)
    out = cp.empty((m, n), dtype=cp.float32)
    zout = cp.empty((m, n), dtype=cp.float32) if save_z else None
    ew = unfused_epilogue_kernel(cp, act, bias_mode, has_c, save_z)

    def bias_view(x):
        b = x["bias"]
        return b[:, None] if bias_mode == "per_m" else b

    def run_cublas(i):
        cublas_gemmex(cp, inputs[i]["a"], inputs[i]["b"], d0, dtype)

    def run_unfused(i):
        x = inputs[i]
        cublas_gemmex(cp, x["a"], x["b"], d0, dtype)
        args = [d0] + ([x["c"]] if has_c else []) + ([bias_view(x)] if bias_mode != "none" else [])
        args += [cp.float32(alpha), cp.float32(beta), cp.float32(leaky_slope), out]
        if save_z:
            args.append(zout)
        ew(*args)

    fns = {"cublas_gemmex": run_cublas, "cublas_unfused": run_unfused}
    if torch_available() and bias_mode == "per_n" and act in ("relu", "gelu", "gelu_tanh") and not has_c:
        try:
            fns["torch_addmm_act"] = _torch_fn(inputs, act)
        except Exception:  # a torch that cannot share these arrays: the row stays empty
            pass
    return fns


FP8_BASELINE_LABELS = {"cublas_gemmex": "cuBLASLt fp8 (torch._scaled_mm)",
                       "cublas_unfused": "cuBLASLt fp8 + CuPy epilogue"}
# torch._addmm_activation(use_gelu=True) computes the tanh form (H100, 2026-11-25: 5.5e-6 from
# gelu(approximate="tanh"), 4.7e-4 from the erf GELU, in f32), so beside --act gelu it is not the same function.
TORCH_GELU_LABEL = "torch_addmm_act (tanh GELU)"


def baseline_differences(dtype: str, act: str) -> tuple[dict[str, str], list[str]]:
    """Baselines that run something else than their key says: ({row key: label, which names its plot line},
    the lines printed under the bench tables)."""
    if dtype == "e4m3":   # the cuBLAS rows run cuBLASLt's fp8 GEMM
        return FP8_BASELINE_LABELS, ["cuBLAS rows: cuBLASLt's fp8 GEMM through torch._scaled_mm (cuBLAS GemmEx has "
                                     "no fp8)"]
    if act == "gelu":
        return {"torch_addmm_act": TORCH_GELU_LABEL}, [
            "torch: torch._addmm_activation's GELU is the tanh form; --act gelu_tanh times the same function"]
    return {}, []


def _fp8_baseline_fns(cp, inputs, base, act, bias_mode, has_c, save_z, alpha, beta, leaky_slope) -> dict:
    """e4m3 has no cuBLAS GemmEx: cuBLASLt's fp8 GEMM through torch._scaled_mm (unit scales, f16 D) as the
    "cuBLAS" row, and the same into f32 + the CuPy epilogue as "cuBLAS+ew". Empty without torch."""
    if not torch_available():
        return {}
    import torch

    m, n = base["m"], base["n"]
    one = torch.ones((), device="cuda")
    tin = [(torch.from_dlpack(x["a"]).view(torch.float8_e4m3fn), torch.from_dlpack(x["b"]).view(torch.float8_e4m3fn))
           for x in inputs]
    out = cp.empty((m, n), dtype=cp.float32)
    zout = cp.empty((m, n), dtype=cp.float32) if save_z else None
    ew = unfused_epilogue_kernel(cp, act, bias_mode, has_c, save_z)

    def run_cublas(i):
        torch._scaled_mm(*tin[i], scale_a=one, scale_b=one, out_dtype=torch.float16)

    def run_unfused(i):
        x = inputs[i]
        d0 = cp.from_dlpack(torch._scaled_mm(*tin[i], scale_a=one, scale_b=one, out_dtype=torch.float32))
        bias = x["bias"][:, None] if bias_mode == "per_m" else x["bias"]
        args = [d0] + ([x["c"]] if has_c else []) + ([bias] if bias_mode != "none" else [])
        args += [cp.float32(alpha), cp.float32(beta), cp.float32(leaky_slope), out]
        if save_z:
            args.append(zout)
        ew(*args)

    try:
        run_cublas(0)
        run_unfused(0)
    except Exception:   # a torch without fp8 GEMMs: the rows stay empty
        return {}
    return {"cublas_gemmex": run_cublas, "cublas_unfused": run_unfused}


def _torch_fn(inputs, act):
    """torch._addmm_activation on the same inputs, zero-copy through DLPack (its output is f16/bf16;
    its GELU is cuBLASLt's tanh form)."""
    import torch

    def to_torch(x):
        t = torch.from_dlpack(x)
        return t.view(torch.bfloat16) if inputs[0]["bits"] else t

    tin = [(to_torch(x["a"]), to_torch(x["b"])) for x in inputs]
    tin = [(a, b, torch.from_dlpack(x["bias"]).to(a.dtype)) for (a, b), x in zip(tin, inputs)]
    use_gelu = act != "relu"

    def run_torch(i):
        a_t, b_t, bias_t = tin[i]
        torch._addmm_activation(bias_t, a_t, b_t, use_gelu=use_gelu)

    run_torch(0)
    return run_torch


def summarize_size(rows: list[dict], ceiling: float | None, sustained_ceiling: float | None = None,
                   family: str = "wmma") -> dict:
    """One row per size: each kernel's time and TFLOP/s plus the ratios the targets are about."""
    by = {r["kernel"]: r for r in rows}
    first = rows[0]
    fused_name, plain_name = suite_kernels(family)[:2]
    fused_row = by.get(fused_name, {})
    out = {"m": first["m"], "n": first["n"], "k": first["k"], "family": family,
           "out_dtype": first.get("out_dtype", "f32"),
           "check": fused_row.get("status", "-"), "max_err": fused_row.get("max_err"),
           "rel_err": fused_row.get("rel_err"), "tile": fused_row.get("tile")}
    for name in suite_kernels(family) + (("wmma_fused",) if family != "wmma" else ()):
        r = by.get(name, {})
        out[f"{name}_ms"] = r.get("ms")
        out[f"{name}_tflops"] = r.get("tflops")

    def ratio(x, y):
        return x / y if x is not None and y else None

    fused_tflops, fused_ms = out[f"{fused_name}_tflops"], out[f"{fused_name}_ms"]
    out["fused_vs_cublas"] = ratio(fused_tflops, out["cublas_gemmex_tflops"])
    out["fused_vs_torch"] = ratio(fused_tflops, out["torch_addmm_act_tflops"])
    out["fused_speedup_vs_unfused"] = ratio(out["cublas_unfused_ms"], fused_ms)
    out["fused_vs_ceiling"] = ratio(fused_tflops, ceiling)
    out["fused_vs_sustained_ceiling"] = ratio(fused_tflops, sustained_ceiling)
    cost = ratio(fused_ms, out[f"{plain_name}_ms"])
    out["epilogue_cost"] = cost - 1 if cost is not None else None
    return out


# (key, header, format) of the two one-row-per-size tables `fraglab gemm --wmma/--wgmma --bench` prints
def summary_columns(family: str = "wmma") -> tuple:
    return (
        ("size", "M x N x K", ""),
        ("tile", "tile", ""),
        (f"{family}_fused_ms", "fused ms", ".4f"),
        (f"{family}_fused_tflops", f"{family} fused", ".1f"),
        (f"{family}_plain_tflops", "plain store", ".1f"),
        *((("wmma_fused_tflops", "wmma fused", ".1f"),) if family != "wmma" else ()),
        ("cublas_gemmex_tflops", "cuBLAS", ".1f"),
        ("cublas_unfused_tflops", "cuBLAS+ew", ".1f"),
        ("torch_addmm_act_tflops", "torch", ".1f"),
    )


RATIO_COLUMNS = (
    ("size", "M x N x K", ""),
    ("check", "check", ""),
    ("fused_vs_cublas", "fused/cuBLAS", ".2f"),
    ("fused_vs_torch", "fused/torch", ".2f"),
    ("fused_speedup_vs_unfused", "unfused/fused time", ".2f"),
    ("fused_vs_ceiling", "fused/ceiling", ".2f"),
    ("fused_vs_sustained_ceiling", "fused/sustained ceiling", ".2f"),
    ("epilogue_cost", "epilogue cost", "+.1%"),
)
CHECK_COLUMNS = (
    ("size", "M x N x K", ""), ("kernel", "kernel", ""), ("tile", "tile", ""), ("aligned", "aligned", ""),
    ("status", "check", ""), ("max_err", "max abs err", ".2e"), ("rel_err", "rel err", ".2e"),
    ("checked_rows", "rows checked", "d"),
)
