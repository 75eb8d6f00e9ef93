#!/usr/bin/env bash
# StageK: correctness (GPU tests of the kb tiles), then the A/B timings
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv | tee $OUT/gpu.txt; date -u | tee -a $OUT/gpu.txt
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -n 15 --timeout 120 -x tests/gemm/test_wgmma_gpu.py -k "kb2 or kb4" 2>&1 | tail -5 | tee $OUT/tests_kb.log
timeout 330 python3 .carry/ab_stagek.py "$CASES" 2>&1 | tee $OUT/ab_stagek.log
