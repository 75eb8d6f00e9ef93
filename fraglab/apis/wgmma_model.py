"""The PTX ISA model of Hopper `wgmma` register fragments, as plain numpy (no GPU).

One warpgroup (128 threads, 4 warps) executes `wgmma.mma_async.sync.aligned.m64nNkK`. Warp w of the
warpgroup owns rows 16*w .. 16*w + 15 of the 64-row tile; inside a warp the layout repeats the m16n8
fragment of `mma.sync` once per 8 columns (accumulator) or once per k-block (register-sourced A).

Notation: t = thread in the warpgroup (0..127), w = t // 32, g = (t % 32) // 4 (groupID),
q = t % 4 (threadID_in_group), i = slot. Slot numbering follows issue 11: slot = index of the element
in the thread's registers for that operand, lowest register first, inside a register lowest bits first.
Maps are int arrays (threads, slots, 2) of (row, col).
"""

from __future__ import annotations

import numpy as np

THREADS = 128
M = 64

# N that the ISA allows for the dense m64nNk* shapes, by input type (PTX ISA, "wgmma" matrix shapes).
_N_STEP8 = tuple(range(8, 257, 8))
_N_INTEGER = (8, 16, 24) + tuple(range(32, 257, 16))
VALID_N = {
    "f16": _N_STEP8, "bf16": _N_STEP8, "tf32": _N_STEP8, "e4m3": _N_STEP8, "e5m2": _N_STEP8,
    "s8": _N_INTEGER, "u8": _N_INTEGER, "b1": _N_INTEGER,
}
# K of one instruction by input type.
K_BY_TYPE = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32, "b1": 256}
# Accumulator types each input type allows.
ACCUMULATORS = {
    "f16": ("f32", "f16"), "bf16": ("f32",), "tf32": ("f32",), "e4m3": ("f32", "f16"),
    "e5m2": ("f32", "f16"), "s8": ("s32",), "u8": ("s32",), "b1": ("s32",),
}
ELEMENT_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "s32": 32,
                "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "b1": 1}


def _thread_parts() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = np.arange(THREADS)
    return t // 32, (t % 32) // 4, t % 4


def _check_n(n: int) -> None:
    if not isinstance(n, (int, np.integer)) or n < 8 or n > 256 or n % 8:
        raise ValueError(f"n must be a multiple of 8 in 8..256 (wgmma m64nNk*), got {n!r}")


def accumulator_map(n: int) -> np.ndarray:
    """(row, col) of slot i of thread t of the m64nNk* accumulator; shape (128, n // 2, 2).

    Holds for f32, s32 (one element per register) and f16 accumulators (two per register, same order:
    slot = 2 * register + half).
    """
    _check_n(n)
    # (T128, V(N/2)) -> (M64, N)
    w, g, q = (a[:, None] for a in _thread_parts())
    i = np.arange(n // 2)[None, :]
    row = 16 * w + g + 8 * ((i >> 1) & 1)
    col = 8 * (i >> 2) + 2 * q + (i & 1)
    return np.stack(np.broadcast_arrays(row, col), axis=-1).astype(np.int64)


def accumulator_register_map(n: int, accumulator: str = "f32") -> np.ndarray:
    """The accumulator map grouped by register: shape (128, registers, elements per register, 2)."""
    per_register = {"f32": 1, "s32": 1, "f16": 2}
    if accumulator not in per_register:
        raise ValueError(f"accumulator must be one of {sorted(per_register)}, got {accumulator!r}")
    slots = accumulator_map(n)
    k = per_register[accumulator]
    return slots.reshape(THREADS, n // 2 // k, k, 2)


def register_a_map(dtype: str) -> np.ndarray:
    """(row, col) of slot i of thread t of a register-sourced A (M64 x K); shape (128, slots, 2).

    4 registers of 32 bits per thread: tf32 k8 -> 4 slots, f16/bf16 k16 -> 8, 8-bit k32 -> 16.
    """
    w, g, q = (a[:, None] for a in _thread_parts())
    if dtype == "tf32":
        # (T128, V4) -> (M64, K8)
        i = np.arange(4)[None, :]
        row, col = 16 * w + g + 8 * (i & 1), q + 4 * (i >> 1)
    elif dtype in ("f16", "bf16"):
        # (T128, V8) -> (M64, K16)
        i = np.arange(8)[None, :]
        row, col = 16 * w + g + 8 * ((i >> 1) & 1), 2 * q + (i & 1) + 8 * (i >> 2)
    elif dtype in ("e4m3", "e5m2", "s8", "u8"):
        # (T128, V16) -> (M64, K32)
        i = np.arange(16)[None, :]
        row, col = 16 * w + g + 8 * ((i >> 2) & 1), 4 * q + (i & 3) + 16 * (i >> 3)
    else:
        raise ValueError(f"dtype of a register-sourced A must be one of "
                         f"['bf16', 'e4m3', 'e5m2', 'f16', 's8', 'tf32', 'u8'], got {dtype!r}")
    return np.stack(np.broadcast_arrays(row, col), axis=-1).astype(np.int64)
