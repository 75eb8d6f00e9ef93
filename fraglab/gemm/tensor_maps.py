"""CUtensorMaps for TMA, encoded once per (pointer, shape, box) with cuda-bindings: the wgmma GEMM's operands, D and
bias, and the skinny GEMM's weight. Nothing runs on the GPU here; encoding needs the CUDA driver."""

from __future__ import annotations

import numpy as np

from ..memo import BoundedMemo
from .dtypes import BYTES
from .schedule import DEFAULT_L2_PROMOTION

TMA_MAP_DTYPE = np.dtype([("words", np.uint64, (16,))], align=True)   # CUtensorMap: 128 bytes


def encode_tma(pointer: int, dtype: str, inner: int, outer: int, box_inner: int, box_outer: int,
               l2_promotion: str = DEFAULT_L2_PROMOTION, pitch: int = 0) -> np.void:
    """A row-major (outer x inner) matrix of f16, bf16, f32 or e4m3 (as bytes) elements as a 2-D tiled tensor map
    with 128B swizzle (64B for a box row of 64 bytes); with outer = 0, a vector of `inner` elements as a (1 x inner)
    map without swizzle (the bias; the driver refuses rank 1 here). Out-of-bounds boxes are zero-filled (loads) or
    clipped (stores); `l2_promotion`: how far L2 widens each fetch (schedule.L2_PROMOTIONS). Returned as the 128
    bytes the kernel takes by value."""
    import ctypes

    from cuda.bindings import driver as cu

    (err,) = cu.cuInit(0)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuInit failed: {err}")
    data_type = {"f16": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                 "bf16": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                 "f32": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
                 "e4m3": cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT8}[dtype]
    # the swizzle spans the box's row: 128B for rows of 128 bytes (every operand box), 64B for 64 (D of n96 / n160
    # / n224 tiles in 16-bit types)
    swizzle = (cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B if box_inner * BYTES[dtype] == 64
               else cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B)
    row_bytes = (pitch or inner) * BYTES[dtype]   # pitch: elements from one row to the next (0: dense)
    if not outer:   # one row; its (never used) row stride still has to be a multiple of 16 bytes
        outer, box_outer, row_bytes = 1, 1, -(-row_bytes // 16) * 16
        swizzle = cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE
    err, tmap = cu.cuTensorMapEncodeTiled(
        data_type, 2, pointer, [cu.cuuint64_t(inner), cu.cuuint64_t(outer)], [cu.cuuint64_t(row_bytes)],
        [cu.cuuint32_t(box_inner), cu.cuuint32_t(box_outer)], [cu.cuuint32_t(1), cu.cuuint32_t(1)],
        cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
        getattr(cu.CUtensorMapL2promotion, "CU_TENSOR_MAP_L2_PROMOTION_" +
                ("NONE" if l2_promotion == "none" else "L2_" + l2_promotion)),
        cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuTensorMapEncodeTiled({outer}x{inner} {dtype}) failed: {err}")
    raw = ctypes.string_at(tmap.getPtr(), TMA_MAP_DTYPE.itemsize)
    return np.frombuffer(raw, dtype=TMA_MAP_DTYPE)[0]


NO_MAP = np.zeros((), dtype=TMA_MAP_DTYPE)[()]   # a map the kernel never reads (direct D stores, no bias)
# (pointer, dtype, inner, outer, box_inner, box_outer[, l2_promotion, pitch]) -> the encoded map
MAPS = BoundedMemo(lambda key: encode_tma(*key), 256)
