"""Measuring wavefronts on the GPU: the bank probe (kernels/smem/bank_probe.cu) runs each instruction's exact
addresses in a timed loop; cycles become wavefronts through a calibration launched just before on the same
GPU (b32 accesses of known 1, 2, 4, 8, 16 and 32 wavefronts, the same warps, window and loop).

Everything but the two launches is numpy: which kernel, the address table, the conversion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..runtime.build import KernelBuild
from .access import AccessSpec, Instruction

OPS = {"ld": 0, "st": 1, "ldmatrix": 2, "stmatrix": 3, "cp.async": 4}
UNROLL = 8                 # FL_UNROLL in bank_probe.cu
REPS = 32
TIMED_LAUNCHES = 3
SHARED_BUDGET = 192 * 1024  # dynamic shared memory the probe's block takes at most (H100: 227 KiB)
MAX_WARPS = 16
CALIBRATION_WAVEFRONTS = (1, 2, 4, 8, 16, 32)   # of the b32 ladder
NO_ADDRESS = 0xFFFFFFFF


def kernel_name(spec: AccessSpec) -> str:
    if spec.kind not in OPS:
        raise InputError(f"{spec.spelling} is not timed by the bank probe (wgmma reads shared memory through its "
                         "descriptor, not per thread): use --source model", argument="source")
    num = spec.num if spec.kind in ("ldmatrix", "stmatrix") else 1
    trans = "true" if spec.trans else "false"
    return f"bank_probe<{OPS[spec.kind]}, {spec.width}, {num}, {trans}>"


def _all_specs() -> list[AccessSpec]:
    specs = [AccessSpec(k, w) for k in ("ld", "st") for w in (2, 4, 8, 16)]
    specs += [AccessSpec(k, 16, n, t) for k in ("ldmatrix", "stmatrix") for n in (1, 2, 4) for t in (False, True)]
    specs += [AccessSpec("cp.async", w) for w in (4, 8, 16)]
    return specs


# One build holds every form the probe times (one NVRTC compile, cached by CuPy); sm_90 for stmatrix.
PROBE_BUILD = KernelBuild("smem/bank_probe.cu", tuple(kernel_name(s) for s in _all_specs()))


def kernel_builds() -> list[KernelBuild]:
    """Every build the smem wing may ask NVRTC for (the CPU compile test compiles each)."""
    return [PROBE_BUILD]


def calibration_plan(spec: AccessSpec) -> tuple[AccessSpec, np.ndarray, tuple[int, ...]]:
    """(access, (k, 32) byte offsets, wavefronts of each row) of the calibration launched before `spec`.

    Loads against b32 loads, stores against b32 stores: row j asks each of 32 // w banks for w distinct words,
    w = 1, 2, 4, 8, 16, 32. cp.async against itself (its global-memory side costs cycles too, the same for every
    pattern of one width): threads side by side (width / 4 wavefronts) and 128 bytes apart (32)."""
    lane = np.arange(32)
    if spec.kind == "cp.async":
        return spec, np.stack([lane * spec.width, lane * 128]), (spec.width // 4, 32)
    rows = [((lane % (32 // k)) + (lane // (32 // k)) * 32) * 4 for k in CALIBRATION_WAVEFRONTS]
    return AccessSpec("ld" if spec.is_load else "st", 4), np.array(rows, dtype=np.int64), CALIBRATION_WAVEFRONTS


def address_table(instructions: list[Instruction]) -> np.ndarray:
    table = np.full((len(instructions), 32), NO_ADDRESS, dtype=np.uint32)
    for i, ins in enumerate(instructions):
        a = ins.addresses[:32]
        table[i, :len(a)] = np.where(a >= 0, a, NO_ADDRESS).astype(np.uint32)
    return table


@dataclass
class ProbeShape:
    warps: int
    window: int      # bytes of each storing warp's copy of the tile (loads share one)
    shared: int      # dynamic shared memory of the block


def probe_shape(spec: AccessSpec, span_bytes: int) -> ProbeShape:
    window = -(-max(span_bytes, 4096) // 1024) * 1024   # the 32-wavefront calibration spans 4 KiB
    if spec.is_load:
        return ProbeShape(MAX_WARPS, window, window)
    warps = max(1, min(MAX_WARPS, SHARED_BUDGET // window))
    return ProbeShape(warps, window, warps * window)


def wavefronts_from_cycles(cycles: np.ndarray, calibration: dict) -> np.ndarray:
    """Linear in cycles through the fewest- and most-wavefront calibration points."""
    lo, hi = min(calibration), max(calibration)
    c_lo, c_hi = float(calibration[lo]), float(calibration[hi])
    if c_hi <= c_lo:
        return np.full(len(cycles), np.nan)
    return lo + (hi - lo) * (np.asarray(cycles, dtype=np.float64) - c_lo) / (c_hi - c_lo)


@dataclass
class Measurement:
    cycles: np.ndarray             # per instruction: cycles per warp-instruction
    wavefronts: np.ndarray         # per instruction, calibrated (float)
    calibration: dict              # wavefronts -> cycles per warp-instruction, of the calibration access
    warps: int
    device: dict
    calibrated_by: str = "ld.b32"

    def to_dict(self) -> dict:
        return {"method": "clock64 probe, calibrated", "calibrated_by": self.calibrated_by, "warps": self.warps,
                "reps": REPS * UNROLL,
                "calibration_cycles": {str(k): round(float(v), 3) for k, v in self.calibration.items()},
                "device": self.device}


def _launch(spec: AccessSpec, table: np.ndarray, shape: ProbeShape, reps: int, fill: int) -> np.ndarray:
    from ..runtime import gpu

    cycles = np.zeros(len(table), dtype=np.int64)
    sink = np.zeros(shape.warps * 32, dtype=np.uint32)
    gsrc = np.arange(32 * 4, dtype=np.uint32)
    out = gpu.run_block(PROBE_BUILD, kernel_name(spec), shape.warps * 32, shape.shared,
                        [table.ravel(), np.int32(len(table)), np.int32(reps), np.uint32(shape.window), np.int32(fill),
                         np.uint32(0), gsrc, cycles, sink])
    return out[2].astype(np.float64)


def _median_launch(spec: AccessSpec, table: np.ndarray, shape: ProbeShape) -> np.ndarray:
    """Per-instruction median cycles of TIMED_LAUNCHES launches after one warm-up (a lone instruction is timed in
    one pass of the loop, where a cold instruction cache or a clock change shows)."""
    _launch(spec, table, shape, REPS, 1)
    return np.median([_launch(spec, table, shape, REPS, 1) for _ in range(TIMED_LAUNCHES)], axis=0)


def measure(spec: AccessSpec, instructions: list[Instruction], span_bytes: int) -> Measurement:
    """Time every instruction on the GPU (GpuUnavailable / CompileError when it cannot)."""
    from ..runtime import gpu

    kernel_name(spec)   # refuses wgmma before touching the GPU
    if gpu.compute_capability() < 90 and spec.kind == "stmatrix":
        from ..errors import GpuUnavailable

        raise GpuUnavailable("stmatrix needs sm_90")
    shape = probe_shape(spec, span_bytes)
    per_instruction = shape.warps * REPS * UNROLL
    cal_spec, cal_addresses, cal_wavefronts = calibration_plan(spec)
    calibration = dict(zip(cal_wavefronts, _median_launch(cal_spec, cal_addresses.astype(np.uint32), shape)
                           / per_instruction))
    cycles = _median_launch(spec, address_table(instructions), shape) / per_instruction
    info = gpu.device_info()
    return Measurement(cycles, wavefronts_from_cycles(cycles, calibration), calibration, shape.warps,
                       {"gpu_name": info["gpu_name"], "compute_capability": info["compute_capability"]},
                       cal_spec.spelling)


def launch_once(spec: AccessSpec, instructions: list[Instruction], span_bytes: int) -> None:
    """One warp, one repetition, no fill: what Nsight Compute counts (UNROLL executions of each instruction)."""
    shape = probe_shape(spec, span_bytes)
    _launch(spec, address_table(instructions), ProbeShape(1, shape.window, shape.window), 1, 0)


__all__ = ["PROBE_BUILD", "kernel_builds", "kernel_name", "measure", "launch_once", "Measurement",
           "wavefronts_from_cycles", "calibration_plan", "address_table", "probe_shape", "UNROLL"]
