"""`fraglab peak`: register-only tensor-core rates of the present GPU (bench/peak.cu).

Each probe keeps 2 A and 4 B fragments in registers (from two separate buffers) and runs 8 independent
accumulator chains; every accumulator element is summed into the stored result, so no MMA is dead.
These rates are the ceiling a WMMA / mma.sync GEMM is judged against. The SASS check counts the
tensor-core instructions per kernel and looks for register moves between them (the two pitfalls of
../shared/reference/gpu-facts.md: dropped HMMAs and A/B register shuffles).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..runtime.build import KernelBuild

PEAK_ITERS = 8192
WARPS_PER_BLOCK = 8
BLOCKS_PER_SM = 2
CHAINS = 8  # kPeakA x kPeakB accumulators per warp


@dataclass(frozen=True)
class PeakProbe:
    name: str             # row label
    kernel: str           # extern "C" name in bench/peak.cu
    api: str              # wmma | mma.sync
    shape: str            # m16n16k16 ...
    in_dtype: str         # numpy dtype name of A/B in memory ("bfloat16" handled as uint16 bits)
    acc_dtype: str        # numpy dtype name of the stored result
    flops_per_mma: int    # 2*m*n*k per warp-level MMA
    sass_op: str          # HMMA | IMMA
    sass_per_mma: int     # SASS tensor instructions per warp-level MMA
    a_elems: int          # elements of the A buffer (all fragments)
    b_elems: int
    out_per_warp: int     # stored elements per warp (mma.sync: per thread x 32)
    unit: str = "TFLOP/s"


PROBES: tuple[PeakProbe, ...] = (
    PeakProbe("wmma f16->f32", "peak_wmma_f16_f32", "wmma", "m16n16k16", "float16", "float32", 8192, "HMMA", 2,
              2 * 256, 4 * 256, 256),
    PeakProbe("wmma f16->f16", "peak_wmma_f16_f16", "wmma", "m16n16k16", "float16", "float16", 8192, "HMMA", 2,
              2 * 256, 4 * 256, 256),
    PeakProbe("wmma bf16->f32", "peak_wmma_bf16_f32", "wmma", "m16n16k16", "bfloat16", "float32", 8192, "HMMA", 2,
              2 * 256, 4 * 256, 256),
    PeakProbe("wmma tf32->f32", "peak_wmma_tf32_f32", "wmma", "m16n16k8", "float32", "float32", 4096, "HMMA", 4,
              2 * 128, 4 * 128, 256),
    PeakProbe("wmma u8->s32", "peak_wmma_u8_s32", "wmma", "m16n16k16", "uint8", "int32", 8192, "IMMA", 2,
              2 * 256, 4 * 256, 256, unit="TOP/s"),
    PeakProbe("mma.sync m16n8k16 f16->f32", "peak_mma_m16n8k16_f16_f32", "mma.sync", "m16n8k16", "uint32", "float32",
              4096, "HMMA", 1, 2 * 4 * 32, 4 * 2 * 32, 32 * 4),
)
PROBE_NAMES = tuple(p.kernel for p in PROBES)
CEILING_PROBE = {"f16": "peak_wmma_f16_f32", "bf16": "peak_wmma_bf16_f32"}  # what a WMMA GEMM is judged by

PEAK_BUILD = KernelBuild(entry="bench/peak.cu", name_expressions=PROBE_NAMES)


def probe(kernel: str) -> PeakProbe:
    for p in PROBES:
        if p.kernel == kernel:
            return p
    raise ValueError(f"invalid probe {kernel!r}: valid choices are {', '.join(PROBE_NAMES)}")


def total_flops(p: PeakProbe, blocks: int, iters: int) -> float:
    return float(blocks * WARPS_PER_BLOCK * iters * CHAINS * p.flops_per_mma)


# ---------------------------------------------------------------------------------------------
# SASS check (no GPU needed: NVRTC or nvcc makes the cubin, cuobjdump reads it)

_FUNC_RE = re.compile(r"^\s*Function : (\S+)\s*$")


def parse_sass(text: str) -> dict[str, list[str]]:
    """cuobjdump -sass output -> {function name: [instruction lines]}."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = _FUNC_RE.match(line)
        if m:
            current = m.group(1)
            out[current] = []
        elif current is not None and re.search(r"/\*[0-9a-f]{4,}\*/", line):
            out[current].append(line)
    return out


def _opcode(line: str) -> str:
    """The instruction of a SASS line: '/*0450*/ @!P0 HMMA.16816.F32 R4, ...' -> 'HMMA.16816.F32'."""
    body = re.sub(r"/\*.*?\*/", " ", line).strip().rstrip(";").strip()
    parts = body.split()
    if parts and parts[0].startswith("@"):
        parts = parts[1:]
    return parts[0] if parts else ""


@dataclass(frozen=True)
class SassCheck:
    kernel: str
    mma_count: int          # tensor-core instructions in the whole kernel
    moves_between: int      # MOV/PRMT between the first and last tensor instruction of the main loop
    ok: bool
    note: str


def check_probe_sass(p: PeakProbe, lines: list[str]) -> SassCheck:
    """One loop iteration issues CHAINS * sass_per_mma tensor instructions: the total must be a positive
    multiple of that (unrolled copies plus remainder), with no register moves between them."""
    ops = [_opcode(line) for line in lines]
    idx = [i for i, op in enumerate(ops) if op.split(".")[0] == p.sass_op]
    per_iter = CHAINS * p.sass_per_mma
    moves = 0
    if idx:
        moves = sum(1 for op in ops[idx[0]:idx[-1]] if op.split(".")[0] in ("MOV", "PRMT", "SHFL"))
    ok = bool(idx) and len(idx) % per_iter == 0 and moves == 0
    if not idx:
        note = f"no {p.sass_op} at all"
    elif len(idx) % per_iter:
        note = f"{len(idx)} {p.sass_op} is not a multiple of {per_iter} per iteration: some were dropped"
    elif moves:
        note = f"{moves} register moves between {p.sass_op}s"
    else:
        note = f"{len(idx)} {p.sass_op} ({len(idx) // per_iter} x {per_iter}), no moves between them"
    return SassCheck(p.kernel, len(idx), moves, ok, note)


def find_tool(name: str) -> Optional[str]:
    """A CUDA binary from PATH, $CUDA_PATH/$CUDA_HOME/bin, /usr/local/cuda/bin or an nvidia-* wheel."""
    found = shutil.which(name)
    if found:
        return found
    dirs = [Path(os.environ[v]) / "bin" for v in ("CUDA_PATH", "CUDA_HOME") if os.environ.get(v)]
    dirs.append(Path("/usr/local/cuda/bin"))
    try:
        import nvidia
        dirs += [Path(p) / "cu13" / "bin" for p in nvidia.__path__]
    except ImportError:
        pass
    for d in dirs:
        if (d / name).is_file():
            return str(d / name)
    return None


def compile_cubin(build: KernelBuild, arch: str) -> bytes:
    """The cubin of `build` for `arch` (e.g. sm_90): NVRTC from cuda-bindings, else nvcc."""
    from ..runtime import nvrtc_offline

    try:
        try:
            include = [nvrtc_offline.wheel_include_dir()]
        except nvrtc_offline.OfflineCompilerUnavailable:
            from ..runtime import gpu
            include = gpu.include_dirs()
        ok, log, cubin = nvrtc_offline.compile_build(build, arch, cubin=True, include_dirs=include)
        if not ok:
            raise RuntimeError(log)
        return cubin
    except nvrtc_offline.OfflineCompilerUnavailable:
        pass
    nvcc = find_tool("nvcc")
    if nvcc is None:
        raise FileNotFoundError("neither cuda-bindings (NVRTC) nor nvcc is available to build a cubin")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "peak.cubin"
        subprocess.run([nvcc, "-std=c++17", f"-arch={arch}", "-cubin", *(f"-I{d}" for d in build.include_dirs()),
                        str(build.path), "-o", str(out)], check=True, capture_output=True)
        return out.read_bytes()


def sass_text(cubin: bytes) -> str:
    tool = find_tool("cuobjdump")
    if tool is None:
        raise FileNotFoundError("cuobjdump was not found (CUDA toolkit bin, or pip install nvidia-cuda-cuobjdump)")
    env = dict(os.environ)
    nvdisasm = find_tool("nvdisasm")
    if nvdisasm:
        env["PATH"] = str(Path(nvdisasm).parent) + os.pathsep + env.get("PATH", "")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "peak.cubin"
        path.write_bytes(cubin)
        res = subprocess.run([tool, "-sass", str(path)], capture_output=True, text=True, env=env)
        if res.returncode != 0:
            raise RuntimeError(f"cuobjdump failed: {res.stderr.strip()}")
        return res.stdout


def sass_checks(arch: str) -> dict[str, SassCheck]:
    """{kernel: SassCheck} for every probe, or raises if no compiler/disassembler is at hand."""
    per_function = parse_sass(sass_text(compile_cubin(PEAK_BUILD, arch)))
    return {p.kernel: check_probe_sass(p, per_function.get(p.kernel, [])) for p in PROBES}


# ---------------------------------------------------------------------------------------------
# Measuring

def _random_inputs(cp, p: PeakProbe):
    rng = cp.random.default_rng(1234)
    if p.in_dtype == "uint8":
        return [rng.integers(0, 4, size=n).astype(cp.uint8) for n in (p.a_elems, p.b_elems)]
    if p.in_dtype == "uint32":  # packed f16 pairs for the PTX probe: small values keep sums finite
        return [(rng.random(2 * n, dtype=cp.float32) * 0.02 - 0.01).astype(cp.float16).view(cp.uint32)
                for n in (p.a_elems, p.b_elems)]
    vals = [rng.random(n, dtype=cp.float32) * 0.02 - 0.01 for n in (p.a_elems, p.b_elems)]
    if p.in_dtype == "float16":
        return [v.astype(cp.float16) for v in vals]
    if p.in_dtype == "bfloat16":  # bf16 bits: the upper half of each float32
        return [(v.view(cp.uint32) >> 16).astype(cp.uint16) for v in vals]
    return vals


SUSTAIN_S = 3.0  # the H200 reaches its power-capped clock ~1.5 s into tensor-core work (clocks logged at 5 Hz)


def measure(kernels: Optional[list[str]] = None, *, iters: int = PEAK_ITERS, reps: int = 15,
            sustain_s: float = 0.0, progress=None) -> list[dict]:
    """Rows (probe, api, shape, tflops, unit, ms, ...) for each probe on the present GPU.

    sustain_s = 0 gives the burst rate (a few ms of work on a cool GPU, at the highest clock);
    sustain_s > 0 first runs the probe back to back for that long, so the rate is the one the GPU keeps
    up under its power limit, the state a long GEMM runs in."""
    if sustain_s < 0:
        raise ValueError(f"invalid sustain_s {sustain_s}: must be >= 0")
    from .. import bench
    from ..runtime import gpu

    cp = gpu.cupy()
    sm_count = int(gpu.device_info()["sm_count"])
    blocks = sm_count * BLOCKS_PER_SM
    threads = 32 * WARPS_PER_BLOCK
    chosen = [probe(k) for k in (kernels or PROBE_NAMES)]
    task = progress.add_task("peak: register-only MMA loops", total=len(chosen)) if progress else None
    rows = []
    for p in chosen:
        fn = gpu.function(PEAK_BUILD, p.kernel)
        a, b = _random_inputs(cp, p)
        out = cp.empty(blocks * WARPS_PER_BLOCK * p.out_per_warp, dtype=p.acc_dtype)
        args = (a, b, out, cp.int32(iters))
        launch = lambda i=0: fn((blocks,), (threads,), args)  # noqa: E731
        if sustain_s > 0:
            _keep_busy(cp, launch, sustain_s)
        timing = bench.time_cuda(launch, warmup=2, reps=reps)
        rate = total_flops(p, blocks, iters) / (timing.median_ms * 1e-3) / 1e12
        rows.append({"probe": p.name, "kernel": p.kernel, "api": p.api, "shape": p.shape, "tflops": rate,
                     "unit": p.unit, "ms": timing.median_ms, "p20_ms": timing.p20_ms, "p80_ms": timing.p80_ms,
                     "blocks": blocks, "threads": threads, "iters": iters, "sustain_s": sustain_s})
        if progress:
            progress.advance(task)
    return rows


def _keep_busy(cp, launch, seconds: float) -> None:
    """Launch back to back for about `seconds` of GPU time, a few launches ahead of the host."""
    import time

    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(4):
            launch()
        cp.cuda.get_current_stream().synchronize()


def ceiling(dtype: str, rows: list[dict]) -> Optional[float]:
    """The register-only WMMA rate a GEMM of `dtype` inputs is judged against, from measured rows."""
    kernel = CEILING_PROBE.get(dtype)
    for r in rows:
        if r["kernel"] == kernel:
            return r["tflops"]
    return None


__all__ = ["PROBES", "PROBE_NAMES", "PEAK_BUILD", "PeakProbe", "SUSTAIN_S", "measure", "ceiling", "sass_checks",
           "check_probe_sass", "parse_sass", "SassCheck", "compile_cubin", "total_flops"]


COLUMNS = (("probe", "probe", ""), ("shape", "shape", ""), ("tflops", "rate", ".1f"), ("unit", "unit", ""),
           ("ms", "ms / launch", ".3f"), ("sass", "SASS check", ""))
