#!/bin/bash
# One device call before a stop: every GPU test, verify, the sanitizers over the WMMA GEMM, the peak
# table (burst and sustained), and the three benchmark suites of docs/benchmarks.md, with the SM clock
# and power logged every 200 ms throughout ($OUT/clocks.csv). Logs and JSON go to $OUT.
set -o pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > $OUT/clocks.csv &
logger=$!
t0=$(date +%s); stamp() { echo "=== $1 at +$(( $(date +%s) - t0 ))s"; }
stamp tests
OUT=$OUT bash tools/device_all.sh
stamp memcheck
compute-sanitizer --tool memcheck --error-exitcode 9 python3 tools/gemm/sanitize_wmma.py 2>&1 | tail -4 | tee $OUT/sanitize.log
stamp racecheck
compute-sanitizer --tool racecheck --error-exitcode 9 python3 tools/gemm/sanitize_wmma.py 2>&1 | tail -4 | tee -a $OUT/sanitize.log
stamp peak
python3 -m fraglab peak --json $OUT/peak.json 2>&1 | tail -12
python3 -m fraglab peak --sustain 3 --no-sass --probe peak_wmma_f16_f32 --probe peak_wmma_bf16_f32 --json $OUT/peak_sustained.json 2>&1 | tail -5
stamp bench
bash tools/gemm/bench_final.sh 2>&1 | tee $OUT/bench.txt
stamp done
kill $logger
