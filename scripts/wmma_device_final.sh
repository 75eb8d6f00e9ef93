#!/bin/bash
# One device call before a stop: every GPU test, verify, the sanitizers over the WMMA GEMM, the peak
# table (burst and sustained), and the three benchmark suites of docs/benchmarks.md, with the SM clock
# and power logged every 200 ms throughout. Everything lands in $OUT/logs, packed as $OUT/logs.tgz at
# the end (the device tool returns at most 8 files); the figures stay beside it.
set -o pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; L=$OUT/logs; mkdir -p "$L"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 200 > $L/clocks.csv &
logger=$!
t0=$(date +%s); stamp() { echo "=== $1 at +$(( $(date +%s) - t0 ))s"; }
if [[ -z $SKIP_TESTS ]]; then
  stamp tests
  OUT=$L bash scripts/device_all.sh
  mv $L/*.png $OUT/ 2>/dev/null
  stamp memcheck
  compute-sanitizer --tool memcheck --error-exitcode 9 python3 scripts/wmma_sanitize.py > $L/memcheck.log 2>&1; echo "memcheck exit $?: $(tail -1 $L/memcheck.log)"
  stamp racecheck
  compute-sanitizer --tool racecheck --error-exitcode 9 python3 scripts/wmma_sanitize.py > $L/racecheck.log 2>&1; echo "racecheck exit $?: $(tail -1 $L/racecheck.log)"
fi
stamp peak
python3 -m fraglab peak --json $L/peak.json 2>&1 | tail -12
python3 -m fraglab peak --sustain 3 --no-sass --probe peak_wmma_f16_f32 --probe peak_wmma_bf16_f32 --json $L/peak_sustained.json 2>&1 | tail -5
stamp bench
OUT=$L bash scripts/wmma_bench_final.sh > $L/bench.txt 2>&1; grep -A8 "TFLOP/s (2MNK\|^ Ratios\|^clocks" $L/bench.txt | grep -v "━"
mv $L/gemm_relu.png $OUT/ 2>/dev/null
stamp done
kill $logger
tar czf $OUT/logs.tgz -C $OUT logs && rm -r $L
