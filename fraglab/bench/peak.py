"""`fraglab peak`: the tensor-core rate ceilings of the present GPU (bench/peak.cu, bench/peak_wgmma.cu).

WMMA / mma.sync probes (bench/peak.cu): each keeps 2 A and 4 B fragments in registers (from two separate
buffers) and runs 8 independent accumulator chains; every accumulator element is summed into the stored
result, so no MMA is dead. These rates are the ceiling a WMMA / mma.sync GEMM is judged against.

wgmma probes (bench/peak_wgmma.cu, sm_90a only): m64n256 wgmma with both operands in shared memory (SS, what a
GEMM uses) or A from registers (RS), 128B-swizzled K-major tiles placed by fraglab's wgmma layout model, one
accumulator per warpgroup and WGMMA_STEPS wgmmas per commit group; each thread stores the sum of its 128
accumulators, which the CPU predicts (`wgmma_expected`, exact for integer inputs). These rates are the ceiling
of a wgmma GEMM.

The SASS check counts the tensor-core instructions per kernel and looks for register moves between them (the
two pitfalls of ../shared/reference/gpu-facts.md: dropped HMMAs and A/B register shuffles); for wgmma it also
checks that ptxas did not serialise the wgmmas (a warpgroup wait inside a commit group).
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

import numpy as np

from ..apis import wgmma_model
from ..errors import ProbeUnsupported
from ..runtime.build import SM90A, KernelBuild, Sm90aBuild
from .memory import READ_BUILD

PEAK_ITERS = 8192
WARPS_PER_BLOCK = 8
BLOCKS_PER_SM = 2
CHAINS = 8  # kPeakA x kPeakB accumulators per warp

# wgmma probes: the constants of bench/peak_wgmma.cu (fraglab_peak_wgmma::k*), checked against it by a test.
WGMMA_ARCH = SM90A
WGMMA_WARPGROUPS = 2          # kWarpgroups: warpgroups per block, one accumulator each
WGMMA_STEPS = 4               # kSteps: wgmmas per commit group, one 128-byte swizzle row of K
WGMMA_N = 256                 # every wgmma probe is m64n256
WGMMA_A_BYTES = 64 * 128      # kABytes: A tile, 64 rows of one 128-byte swizzle row
WGMMA_B_BYTES = WGMMA_N * 128  # kBBytes: B tile, 256 columns of one 128-byte swizzle row
WGMMA_SMEM_BYTES = WGMMA_B_BYTES + WGMMA_A_BYTES + 1024  # kSmemBytes: both tiles + 1024-byte alignment slack
WGMMA_BLOCKS_PER_SM = 1       # 256 threads x 154-170 registers (ptxas, sm_90a): a second block does not fit
WGMMA_TYPE = {"float16": "f16", "bfloat16": "bf16", "float8_e4m3fn": "e4m3"}  # in_dtype -> wgmma input type


@dataclass(frozen=True)
class PeakProbe:
    name: str             # row label
    kernel: str           # extern "C" name in bench/peak.cu (bench/peak_wgmma.cu for api "wgmma")
    api: str              # wmma | mma.sync | wgmma
    shape: str            # m16n16k16 ...
    in_dtype: str         # numpy dtype name of A/B in memory ("bfloat16" handled as uint16 bits; wgmma: WGMMA_TYPE)
    acc_dtype: str        # numpy dtype name of the stored result
    flops_per_mma: int    # 2*m*n*k per warp-level MMA (wgmma: per warpgroup-level MMA)
    sass_op: str          # HMMA | IMMA | HGMMA | QGMMA
    sass_per_mma: int     # SASS tensor instructions per MMA
    a_elems: int          # elements of the A buffer (all fragments; wgmma: 64 x WGMMA_STEPS * k values)
    b_elems: int
    out_per_warp: int     # stored elements per warp (mma.sync: per thread x 32; wgmma: one per thread)
    unit: str = "TFLOP/s"
    a_from: str = "registers"  # wgmma: "smem" (SS) or "registers" (RS); B is in shared memory for every wgmma


def _wgmma_probe(in_dtype: str, a_from: str) -> PeakProbe:
    dtype = WGMMA_TYPE[in_dtype]
    k = wgmma_model.K_BY_TYPE[dtype]
    src = "ss" if a_from == "smem" else "rs"
    return PeakProbe(f"wgmma m64n{WGMMA_N}k{k} {dtype}->f32 {src.upper()}",
                     f"peak_wgmma_m64n{WGMMA_N}k{k}_{dtype}_f32_{src}", "wgmma", f"m64n{WGMMA_N}k{k}", in_dtype,
                     "float32", 2 * 64 * WGMMA_N * k, "QGMMA" if dtype == "e4m3" else "HGMMA", 1,
                     64 * k * WGMMA_STEPS, k * WGMMA_STEPS * WGMMA_N, 32, a_from=a_from)


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
    _wgmma_probe("float16", "smem"),
    _wgmma_probe("float16", "registers"),
    _wgmma_probe("bfloat16", "smem"),
    _wgmma_probe("bfloat16", "registers"),
    _wgmma_probe("float8_e4m3fn", "smem"),
)
PROBE_NAMES = tuple(p.kernel for p in PROBES)
WGMMA_PROBE_NAMES = tuple(p.kernel for p in PROBES if p.api == "wgmma")
CEILING_PROBE = {"f16": "peak_wmma_f16_f32", "bf16": "peak_wmma_bf16_f32"}  # what a WMMA GEMM is judged by
# What a wgmma GEMM is judged by: both operands in shared memory, as the GEMM's wgmmas read them.
WGMMA_CEILING_PROBE = {"f16": "peak_wgmma_m64n256k16_f16_f32_ss", "bf16": "peak_wgmma_m64n256k16_bf16_f32_ss",
                       "e4m3": "peak_wgmma_m64n256k32_e4m3_f32_ss"}
CEILING_PROBES = {"wmma": CEILING_PROBE, "wgmma": WGMMA_CEILING_PROBE}


PEAK_BUILD = KernelBuild(entry="bench/peak.cu", name_expressions=tuple(k for k in PROBE_NAMES
                                                                      if k not in WGMMA_PROBE_NAMES))
PEAK_WGMMA_BUILD = Sm90aBuild(entry="bench/peak_wgmma.cu", name_expressions=WGMMA_PROBE_NAMES)


def build_of(p: PeakProbe) -> KernelBuild:
    return PEAK_WGMMA_BUILD if p.api == "wgmma" else PEAK_BUILD


def kernel_builds() -> list[tuple[KernelBuild, tuple[str, ...]]]:
    """Every build `fraglab peak` can compile, with the architectures it is compiled for (the compile test); the
    DRAM readers of `peak --memory` too (the bulk one traps below sm_90, where it is never offered)."""
    return [(PEAK_BUILD, ("sm_80", "sm_90")), (PEAK_WGMMA_BUILD, (WGMMA_ARCH,)), (READ_BUILD, ("sm_80", "sm_90"))]


def unsupported_reason(p: PeakProbe, compute_capability: int) -> Optional[str]:
    """Why the GPU of `compute_capability` (e.g. 90) cannot run probe `p`, or None if it can."""
    if p.api == "wgmma" and compute_capability != 90:
        return (f"{p.kernel} needs an sm_90 GPU (H100/H200): wgmma exists only in the sm_90a target; "
                f"this GPU is sm_{compute_capability}")
    return None


def default_kernels(compute_capability: int) -> tuple[str, ...]:
    """What `fraglab peak` runs when no probe is named: every probe this GPU can run."""
    return tuple(p.kernel for p in PROBES if unsupported_reason(p, compute_capability) is None)


def probe(kernel: str) -> PeakProbe:
    for p in PROBES:
        if p.kernel == kernel:
            return p
    raise ValueError(f"invalid probe {kernel!r}: valid choices are {', '.join(PROBE_NAMES)}")


def issuers_per_block(p: PeakProbe) -> int:
    """MMA issuers per block: warps (WMMA, mma.sync) or warpgroups (wgmma), one loop each."""
    return WGMMA_WARPGROUPS if p.api == "wgmma" else WARPS_PER_BLOCK


def mmas_per_iteration(p: PeakProbe) -> int:
    return WGMMA_STEPS if p.api == "wgmma" else CHAINS


def launch_shape(p: PeakProbe, sm_count: int) -> tuple[int, int, int]:
    """(blocks, threads per block, dynamic shared-memory bytes) of one launch of probe `p`."""
    if p.api == "wgmma":
        return sm_count * WGMMA_BLOCKS_PER_SM, 128 * WGMMA_WARPGROUPS, WGMMA_SMEM_BYTES
    return sm_count * BLOCKS_PER_SM, 32 * WARPS_PER_BLOCK, 0


def out_elements(p: PeakProbe, blocks: int) -> int:
    """Elements the probe stores: out_per_warp for every warp of every block."""
    return blocks * launch_shape(p, 1)[1] // 32 * p.out_per_warp


def total_flops(p: PeakProbe, blocks: int, iters: int) -> float:
    return float(blocks * issuers_per_block(p) * iters * mmas_per_iteration(p) * p.flops_per_mma)


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


_MOVES = ("MOV", "PRMT", "SHFL")  # register shuffles that must not sit between tensor instructions


def _sass_verdict(p: PeakProbe, count: int, per: int, per_what: str, missing: str, moves: int,
                  described: str, uneven: tuple[int, ...] = ()) -> SassCheck:
    """ok when there are tensor instructions, in whole units of `per`, in even runs, with no moves between."""
    ok = count > 0 and count % per == 0 and not uneven and moves == 0
    if not count:
        note = f"no {p.sass_op} at all"
    elif uneven:
        note = (f"{p.sass_op} runs of {sorted(set(uneven))} between warpgroup waits, not {per}: "
                "serialised by ptxas")
    elif count % per:
        note = f"{count} {p.sass_op} is not a multiple of {per} per {per_what}: {missing}"
    elif moves:
        note = f"{moves} register moves between {p.sass_op}s"
    else:
        note = f"{count} {p.sass_op} ({count // per} {described}), no moves" + \
            (" between them" if p.api != "wgmma" else "")
    return SassCheck(p.kernel, count, moves, ok, note)


def check_probe_sass(p: PeakProbe, lines: list[str]) -> SassCheck:
    """One loop iteration issues CHAINS * sass_per_mma tensor instructions: the total must be a positive
    multiple of that (unrolled copies plus remainder), with no register moves between them."""
    if p.api == "wgmma":
        return check_wgmma_sass(p, lines)
    ops = [_opcode(line) for line in lines]
    idx = [i for i, op in enumerate(ops) if op.split(".")[0] == p.sass_op]
    per_iter = CHAINS * p.sass_per_mma
    moves = sum(1 for op in ops[idx[0]:idx[-1]] if op.split(".")[0] in _MOVES) if idx else 0
    return _sass_verdict(p, len(idx), per_iter, "iteration", "some were dropped", moves, f"x {per_iter}")


def check_wgmma_sass(p: PeakProbe, lines: list[str]) -> SassCheck:
    """wgmma: inline asm cannot be dropped, so the count checks that the loop holds whole commit groups
    (WGMMA_STEPS GMMAs each); what can go wrong is ptxas serialising them (it waits on the warpgroup after each
    GMMA when it cannot prove the accumulators untouched in between), so every run of GMMAs between two
    warpgroup waits (WARPGROUP.DEPBAR) must be a whole commit group, and no register moves may sit between them."""
    ops = [_opcode(line) for line in lines]
    idx = [i for i, op in enumerate(ops) if op.split(".")[0] == p.sass_op]
    per_group = WGMMA_STEPS * p.sass_per_mma
    runs, run, moves = [], 0, 0
    for op in ops[idx[0]:idx[-1] + 1] if idx else []:
        head = op.split(".")[0]
        if head == p.sass_op:
            run += 1
        elif op.startswith("WARPGROUP.DEPBAR"):
            runs.append(run)
            run = 0
        elif head in _MOVES:
            moves += 1
    runs.append(run)
    uneven = tuple(r for r in runs if r and r != per_group)   # two waits in a row hold no run at all
    return _sass_verdict(p, len(idx), per_group, "commit group", "not whole groups", moves,
                         f"groups of {per_group} between waits", uneven)


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


def sass_checks(compute_capability: int, kernels=None) -> dict[str, SassCheck]:
    """{kernel: SassCheck} for the probes named (default: every probe this GPU runs), compiling only the builds
    that hold them (the wgmma probes' is sm_90a); raises if no compiler/disassembler is at hand."""
    chosen = [p for p in PROBES if (kernels is None or p.kernel in kernels)
              and unsupported_reason(p, compute_capability) is None]
    per_function = {}
    for build, arch in ((PEAK_BUILD, f"sm_{compute_capability}"), (PEAK_WGMMA_BUILD, WGMMA_ARCH)):
        if any(p.kernel in build.name_expressions for p in chosen):
            per_function.update(parse_sass(sass_text(compile_cubin(build, arch))))
    return {p.kernel: check_probe_sass(p, per_function.get(p.kernel, [])) for p in chosen}


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


# ---------------------------------------------------------------------------------------------
# wgmma operands (CPU, numpy): exact values of the input type, placed where fraglab's wgmma model says the
# hardware reads them, and the per-thread result the probe must store

def _e4m3_values() -> np.ndarray:
    """The value of each e4m3 code (the GEMM reference's decoder: one definition of the format)."""
    from ..gemm.reference import e4m3_to_float64

    return e4m3_to_float64(np.arange(256))


def to_input_type(values: np.ndarray, wtype: str) -> tuple[np.ndarray, np.ndarray]:
    """values rounded to the nearest value of `wtype` (f16, bf16, e4m3): (bytes (..., element bytes) uint8,
    the exact values as float64)."""
    v = np.asarray(values, dtype=np.float64)
    if wtype == "f16":
        h = v.astype(np.float16)
        return np.ascontiguousarray(h).view(np.uint8).reshape(*v.shape, 2), h.astype(np.float64)
    if wtype == "bf16":
        bits = v.astype(np.float32).view(np.uint32).astype(np.uint64)
        top = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)   # round to nearest even
        exact = (top.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        return np.ascontiguousarray(top).view(np.uint8).reshape(*v.shape, 2), exact
    if wtype == "e4m3":
        table = _e4m3_values()
        codes = np.array([c for c in range(256) if np.isfinite(table[c]) and c != 0x80])  # -0 left out: +0 is 0
        order = np.argsort(table[codes])
        sorted_values, sorted_codes = table[codes][order], codes[order]
        i = np.clip(np.searchsorted(sorted_values, v), 1, len(sorted_values) - 1)
        nearer_low = np.abs(v - sorted_values[i - 1]) <= np.abs(sorted_values[i] - v)
        code = np.where(nearer_low, sorted_codes[i - 1], sorted_codes[i]).astype(np.uint8)
        return code.reshape(*v.shape, 1), table[code].astype(np.float64)
    raise ValueError(f"invalid wgmma input type {wtype!r}: valid choices are f16, bf16, e4m3")


def wgmma_tiles(p: PeakProbe) -> tuple[dict, dict]:
    """The shared-memory tiles of A (64 x one K block) and B (one K block x 256): 128B-swizzled, K-major."""
    from ..apis import wgmma_model as wm

    wtype = WGMMA_TYPE[p.in_dtype]
    return wm.smem_tile(wtype, "128B", "k", "matrix_a"), wm.smem_tile(wtype, "128B", "k", "matrix_b", mn=WGMMA_N)


def wgmma_values(p: PeakProbe, kind: str = "uniform", seed: int = 1234) -> tuple[np.ndarray, np.ndarray]:
    """A (64 x K) and B (K x 256), K = WGMMA_STEPS wgmmas' worth, as exact float64 values of the input type.

    kind "uniform": uniform in [-1, 1) rounded to the type, like the GEMM benchmarks' inputs (so power and clock
    under --sustain are a GEMM's); "integers": integers in -2..2, with which every sum the probe makes is an exact
    integer while |iters * A @ B| < 2**13 (fp8 wgmma is reported to keep ~14 accumulator bits, not f32's 24)."""
    tile_a, tile_b = wgmma_tiles(p)
    rng = np.random.default_rng(seed)
    shapes = ((64, tile_a["k_extent"]), (tile_b["k_extent"], WGMMA_N))
    if kind == "uniform":
        raw = [rng.uniform(-1.0, 1.0, size=shape) for shape in shapes]
    elif kind == "integers":
        raw = [rng.integers(-2, 3, size=shape).astype(np.float64) for shape in shapes]
    else:
        raise ValueError(f"invalid kind {kind!r}: valid choices are uniform, integers")
    a, b = (to_input_type(v, WGMMA_TYPE[p.in_dtype])[1] for v in raw)
    return a, b


def _tile_image(tile: dict, values: np.ndarray, wtype: str) -> np.ndarray:
    """The tile's shared-memory bytes with each value at the byte offset the wgmma model gives it."""
    from ..apis import wgmma_model as wm

    raw, exact = to_input_type(values, wtype)
    if not np.array_equal(exact, values):
        raise ValueError(f"values are not exact in {wtype}: round them with wgmma_values / to_input_type first")
    image = np.zeros(tile["region"], dtype=np.uint8)
    offsets = wm.smem_offsets(tile)
    image[(offsets[..., None] + np.arange(tile["element_bytes"])).reshape(-1)] = raw.reshape(-1)
    return image


def wgmma_operands(p: PeakProbe, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the kernel copies from global memory: (A's tile image (SS) or registers (RS), B's tile image).

    RS registers: (WGMMA_STEPS, 128 threads, 4) uint32, step s holding A's columns s*k .. s*k + k - 1 in the
    register-sourced A fragment layout of the wgmma model."""
    from ..apis import wgmma_model as wm

    wtype = WGMMA_TYPE[p.in_dtype]
    tile_a, tile_b = wgmma_tiles(p)
    b_image = _tile_image(tile_b, b, wtype)
    if p.a_from == "smem":
        return _tile_image(tile_a, a, wtype), b_image
    amap = wm.register_a_map(wtype)                                   # (128, slots, 2): (m, k) of each slot
    k = tile_a["k_instr"]
    steps = [to_input_type(a[amap[..., 0], s * k + amap[..., 1]], wtype)[0].reshape(128, 16)
             for s in range(WGMMA_STEPS)]
    return np.ascontiguousarray(np.stack(steps)).view(np.uint32), b_image


def wgmma_expected(p: PeakProbe, a: np.ndarray, b: np.ndarray, iters: int) -> np.ndarray:
    """What thread t of every warpgroup stores: the sum of its 128 accumulator slots of iters * A @ B
    (float64; the probe's f32 result equals it exactly for wgmma_values(kind="integers"))."""
    from ..apis import wgmma_model as wm

    d = iters * (a @ b)
    slots = wm.accumulator_map(WGMMA_N)                               # (128, 128, 2): (row, col) of each slot
    return d[slots[..., 0], slots[..., 1]].sum(axis=1)


def wgmma_descriptor_fields(p: PeakProbe) -> tuple[int, int]:
    """LBO, SBO and swizzle bits of A's and B's descriptors (the kernel adds the start addresses)."""
    from ..apis import wgmma_model as wm

    return tuple(wm.descriptor_fields(t) for t in wgmma_tiles(p))


def launch_args(cp, p: PeakProbe, blocks: int, iters: int, values: str = "uniform") -> tuple[tuple, object]:
    """(kernel arguments, output array) of one launch of `p` on `blocks` blocks; `values` picks the wgmma
    inputs (see wgmma_values); the WMMA / mma.sync probes take random values in [-0.01, 0.01)."""
    out = cp.empty(out_elements(p, blocks), dtype=p.acc_dtype)
    if p.api != "wgmma":
        a, b = _random_inputs(cp, p)
        return (a, b, out, cp.int32(iters)), out
    a_src, b_src = wgmma_operands(p, *wgmma_values(p, values))
    desc_a, desc_b = wgmma_descriptor_fields(p)
    return (cp.asarray(a_src), cp.asarray(b_src), out, cp.int32(iters), np.uint64(desc_a), np.uint64(desc_b)), out


SUSTAIN_S = 3.0  # the H200 reaches its power-capped clock ~1.5 s into tensor-core work (clocks logged at 5 Hz)


def measure(kernels: Optional[list[str]] = None, *, iters: int = PEAK_ITERS, reps: int = 15,
            sustain_s: float = 0.0, progress=None) -> list[dict]:
    """Rows (probe, api, shape, tflops, unit, ms, ...) for each probe on the present GPU; kernels=None runs
    every probe the GPU can run (the wgmma ones on sm_90 only). A named probe the GPU cannot run raises
    ProbeUnsupported before anything runs.

    sustain_s = 0 gives the burst rate (a few ms of work on a cool GPU, at the highest clock);
    sustain_s > 0 first runs the probe back to back for that long, so the rate is the one the GPU keeps
    up under its power limit, the state a long GEMM runs in."""
    if sustain_s < 0:
        raise ValueError(f"invalid sustain_s {sustain_s}: must be >= 0")
    from .. import bench
    from ..runtime import gpu

    cp = gpu.cupy()
    cc = gpu.compute_capability()
    chosen = [probe(k) for k in (kernels or default_kernels(cc))]
    for p in chosen:
        why = unsupported_reason(p, cc)
        if why:
            raise ProbeUnsupported(why)
    sm_count = int(gpu.device_info()["sm_count"])
    task = progress.add_task("peak: tensor-core MMA loops", total=len(chosen)) if progress else None
    rows = []
    for p in chosen:
        blocks, threads, smem = launch_shape(p, sm_count)
        fn = gpu.function(build_of(p), p.kernel)
        args, _ = launch_args(cp, p, blocks, iters)
        launch = lambda i=0: fn((blocks,), (threads,), args, shared_mem=smem)  # noqa: E731
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


def ceiling(dtype: str, rows: list[dict], api: str = "wmma") -> Optional[float]:
    """The rate a GEMM of `dtype` inputs built on `api` instructions ("wmma": the register-only WMMA probe;
    "wgmma": the shared-memory wgmma probe) is judged against, from measured rows."""
    if api not in CEILING_PROBES:
        raise ValueError(f"invalid api {api!r}: valid choices are {', '.join(CEILING_PROBES)}")
    kernel = CEILING_PROBES[api].get(dtype)
    for r in rows:
        if r["kernel"] == kernel:
            return r["tflops"]
    return None


__all__ = ["PROBES", "PROBE_NAMES", "WGMMA_PROBE_NAMES", "PEAK_BUILD", "PEAK_WGMMA_BUILD", "PeakProbe", "SUSTAIN_S",
           "CEILING_PROBE", "WGMMA_CEILING_PROBE", "measure", "ceiling", "default_kernels", "unsupported_reason",
           "sass_checks", "check_probe_sass", "check_wgmma_sass", "parse_sass", "SassCheck", "compile_cubin",
           "total_flops", "wgmma_values", "wgmma_operands", "wgmma_expected", "launch_args", "kernel_builds"]


COLUMNS = (("probe", "probe", ""), ("shape", "shape", ""), ("tflops", "rate", ".1f"), ("unit", "unit", ""),
           ("ms", "ms / launch", ".3f"), ("sass", "SASS check", ""))
