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


# ---- shared-memory operands (matrix descriptors) -------------------------------------------------
# Descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address >> 4, 16-29 leading
# dimension byte offset (LBO) >> 4, 32-45 stride dimension byte offset (SBO) >> 4, 49-51 base offset,
# 62-63 swizzle mode (0 none, 1 128B, 2 64B, 3 32B). Every tile here starts on a 1024-byte boundary,
# so the base offset is 0 for every swizzle mode.
SWIZZLES = ("none", "32B", "64B", "128B")
SWIZZLE_CODE = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
SWIZZLE_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128}
MAJORS = ("k", "mn")
# Only 16-bit inputs may be transposed (imm-trans-a/b); every other type is K-major in shared memory.
MN_MAJOR_TYPES = ("f16", "bf16")
K_BYTES = 32          # every dense wgmma reads 32 bytes of K per row (k16 f16, k8 tf32, k32 8-bit)
OPERAND_MN = {"matrix_a": 64, "matrix_b": 128}   # rows of A; columns of B in the tiles measured here


def majors_for(dtype: str) -> tuple[str, ...]:
    return MAJORS if dtype in MN_MAJOR_TYPES else ("k",)


def element_bytes(dtype: str) -> int:
    return ELEMENT_BITS[dtype] // 8


def swizzle_bits(offset: np.ndarray, swizzle: str) -> np.ndarray:
    """The XOR the hardware applies to a shared-memory byte address: bits 4.. ^= bits 7.. (Swizzle<b,4,3>)."""
    mask = SWIZZLE_BYTES[swizzle] // 16 - 1
    return offset ^ (((offset >> 7) & mask) << 4)


def smem_tile(dtype: str, swizzle: str, major: str, operand: str, mn: int | None = None) -> dict:
    """The canonical dense tile measured for one (type, swizzle, major-ness, operand).

    k_extent: K columns covered; for swizzled K-major tiles that is one swizzle row (swizzle bytes of K),
    read by k_steps instructions whose start address advances k_step_bytes each (as GEMM kernels do).
    lbo / sbo: the descriptor byte offsets of this dense packing; region: bytes the tile spans.
    """
    if dtype not in K_BY_TYPE or dtype == "b1":
        raise ValueError(f"dtype must be one of {sorted(t for t in K_BY_TYPE if t != 'b1')}, got {dtype!r}")
    if swizzle not in SWIZZLES:
        raise ValueError(f"swizzle must be one of {list(SWIZZLES)}, got {swizzle!r}")
    if major not in majors_for(dtype):
        raise ValueError(f"major must be one of {list(majors_for(dtype))} for {dtype}, got {major!r}")
    if operand not in OPERAND_MN:
        raise ValueError(f"operand must be one of {list(OPERAND_MN)}, got {operand!r}")
    e, s = element_bytes(dtype), SWIZZLE_BYTES[swizzle]
    mn = OPERAND_MN[operand] if mn is None else mn
    k_instr = K_BY_TYPE[dtype]
    if major == "k":
        if swizzle == "none":
            # 8x16B core matrices of 128 contiguous bytes; the two along K adjacent, 8-row groups after them.
            lbo, sbo, k_extent = 128, 256, k_instr
        else:
            # Rows of `s` bytes, 8 rows per swizzle atom; LBO is unused for swizzled K-major (ISA: "assumed 1").
            lbo, sbo, k_extent = 16, 8 * s, s // e
    else:
        k_extent = k_instr
        if swizzle == "none":
            # Core matrices of 16 bytes of M/N x 8 K; along M/N adjacent (SBO), the next 8 K after them (LBO).
            lbo, sbo = (mn * e // 16) * 128, 128
        else:
            # Atoms of `s` bytes of M/N x 8 K: the next atom along M/N at LBO, the next 8 K at SBO.
            lbo, sbo = 8 * s, mn * e * 8
    steps = k_extent // k_instr
    rows, cols = (mn, k_extent) if operand == "matrix_a" else (k_extent, mn)
    tile = dict(dtype=dtype, swizzle=swizzle, major=major, operand=operand, rows=rows, cols=cols,
                mn=mn, k_extent=k_extent, k_instr=k_instr, k_steps=steps, k_step_bytes=K_BYTES if steps > 1 else 0,
                lbo=lbo, sbo=sbo, element_bytes=e)
    tile["region"] = int(smem_offsets(tile).max()) + e
    return tile


def smem_offsets(tile: dict, start: int = 0) -> np.ndarray:
    """Byte offset from the tile base of every element: (rows, cols) array, A(m, k) or B(k, n).

    `start`: the descriptor's start address minus the tile base. The swizzle XOR acts on the address
    after the start is added, which is why a K-step inside a swizzle row is a plain +32 bytes.
    """
    e, s, mn, kx = tile["element_bytes"], SWIZZLE_BYTES[tile["swizzle"]], tile["mn"], tile["k_extent"]
    lbo, sbo = tile["lbo"], tile["sbo"]
    x, k = np.meshgrid(np.arange(mn), np.arange(kx), indexing="ij")   # x = m or n
    if tile["major"] == "k":
        kb = k * e
        if tile["swizzle"] == "none":
            # ((8,m),(16B,2k)) : ((16B,SBO),(1,LBO))
            off = (x % 8) * 16 + (x // 8) * sbo + (kb // 16) * lbo + kb % 16
        else:
            # ((8,m),(sB)) : ((sB,SBO),(1)) then the XOR swizzle
            off = (x % 8) * s + (x // 8) * sbo + kb
    else:
        xb = x * e
        if tile["swizzle"] == "none":
            # ((16B,m),(8,k)) : ((1,SBO),(16B,LBO))
            off = xb % 16 + (xb // 16) * sbo + (k % 8) * 16 + (k // 8) * lbo
        else:
            # ((sB,m),(8,k)) : ((1,LBO),(sB,SBO)) then the XOR swizzle
            off = xb % s + (xb // s) * lbo + (k % 8) * s + (k // 8) * sbo
    off = off + start
    if tile["swizzle"] != "none":
        off = swizzle_bits(off, tile["swizzle"])
    return off if tile["operand"] == "matrix_a" else off.T


def descriptor_fields(tile: dict) -> int:
    """The 64-bit descriptor without its start address (LBO, SBO, swizzle mode; base offset 0)."""
    return (((tile["lbo"] >> 4) & 0x3FFF) << 16) | (((tile["sbo"] >> 4) & 0x3FFF) << 32) \
        | (SWIZZLE_CODE[tile["swizzle"]] << 62)


def smem_chunk_map(tile: dict) -> tuple[np.ndarray, np.ndarray]:
    """The tile as a slot map: 'thread' = 16-byte chunk (offset // 16), 'slot' = element in the chunk.

    Returns (row, col) arrays of shape (chunks, 16 // element_bytes), -1 where a chunk element is not read.
    # (C16B, V(16/E)) -> (rows, cols)
    """
    off = smem_offsets(tile)
    e = tile["element_bytes"]
    chunks = -(-tile["region"] // 16)
    row = np.full((chunks, 16 // e), -1, dtype=np.int64)
    col = np.full_like(row, -1)
    r, c = np.meshgrid(np.arange(off.shape[0]), np.arange(off.shape[1]), indexing="ij")
    row[off // 16, (off % 16) // e] = r
    col[off // 16, (off % 16) // e] = c
    return row, col
