#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader; date -u
timeout 200 python3 benchmarks/wgmma_fp8_block.py --json $OUT/fp8_block.json 2>&1 | tee $OUT/fp8_block.log
date -u
timeout 340 python3 benchmarks/wgmma_ragged.py --final $OUT/road_final.json 2>&1 | tee $OUT/road_final.log
date -u
