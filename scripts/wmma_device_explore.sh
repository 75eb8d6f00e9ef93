#!/bin/bash
# Exploration call: the WMMA GPU tests, then candidate tiles and schedules side by side (PLAN, ROUNDS),
# with the SM clock and power logged every 200 ms throughout (clocks.csv).
set -o pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > $OUT/clocks.csv &
logger=$!
t0=$(date +%s); stamp() { echo "=== $1 at +$(( $(date +%s) - t0 ))s"; }
stamp test
[ -n "$SKIP_TEST" ] || python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gemm_wmma_gpu.py 2>&1 | tail -5 | tee $OUT/pytest_gpu.log
stamp explore
python3 benchmarks/wmma_explore_interleaved.py --out $OUT/explore.json --plan "${PLAN:-1024:128x64,128x64s4e,128x64w32s4e,64x64s4e;2048:256x128,256x128e,256x128s4e,256x128s4b1;4096:256x128,256x128e,256x128s4e,256x128s4b1;8192:256x128,256x128e,256x128s4e,256x128s4b1}" --rounds ${ROUNDS:-3} 2>&1 | tee $OUT/explore.txt
stamp peak
python3 -m fraglab peak --probe peak_wmma_f16_f32 --no-sass 2>&1 | tail -4
python3 -m fraglab peak --probe peak_wmma_f16_f32 --no-sass --sustain 3 2>&1 | tail -4
stamp done
kill $logger
