"""Timing and the suites behind `fraglab gemm --bench` and `fraglab peak`: timing (CUDA events), report
(tables, JSON, chart), wmma_suite, simt_ladder, peak. The names below are the shared toolkit."""

from .report import format_value, plot_tflops, rows_table, save_json, size_label, tflops_figure
from .timing import (SPIN_BUILD, Timing, l2_cache_bytes, percentile, progress, queue_spin, rotation_count,
                     round_orders, summarize, tflops, time_cuda, time_cuda_samples, time_interleaved)

__all__ = ["format_value", "plot_tflops", "rows_table", "save_json", "size_label", "tflops_figure", "SPIN_BUILD",
           "Timing", "l2_cache_bytes", "percentile", "progress", "queue_spin", "rotation_count", "round_orders",
           "summarize", "tflops", "time_cuda", "time_cuda_samples", "time_interleaved"]
