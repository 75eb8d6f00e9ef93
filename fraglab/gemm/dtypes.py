"""Bytes per element of the GEMM's input and output types: one table that the tiles (a staged store's chunk), the
schedule (row pitches) and the tensor maps (strides, boxes) read. CPU only, imports nothing."""

BYTES = {"f16": 2, "bf16": 2, "f32": 4, "e4m3": 1}
