#!/bin/bash
# One device call: environment, GPU tests, sanitizers, peak, tile exploration. Logs under $OUT.
set -o pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
STEPS=${STEPS:-env,test,sanitize,peak,explore}
t0=$(date +%s)
stamp() { echo "=== $1 at +$(( $(date +%s) - t0 ))s"; }
if [[ $STEPS == *env* ]]; then stamp env; python3 tools/gemm/env_probe.py 2>&1 | tee $OUT/env.txt; fi
if [[ $STEPS == *test* ]]; then stamp test
  python3 -m pytest -m gpu -q -s -p no:cacheprovider tests/test_gemm_wmma_gpu.py tests/test_peak.py 2>&1 | tail -40 | tee $OUT/pytest_gpu.log; fi
if [[ $STEPS == *sanitize* ]]; then stamp memcheck
  compute-sanitizer --tool memcheck --error-exitcode 9 python3 tools/gemm/sanitize_wmma.py 2>&1 | tail -15 | tee $OUT/sanitize.log
  stamp racecheck
  compute-sanitizer --tool racecheck --error-exitcode 9 python3 tools/gemm/sanitize_wmma.py 2>&1 | tail -15 | tee -a $OUT/sanitize.log; fi
if [[ $STEPS == *peak* ]]; then stamp peak; python3 -m fraglab peak --json $OUT/peak.json 2>&1; fi
if [[ $STEPS == *explore* ]]; then stamp explore; python3 tools/gemm/explore_tiles.py --out $OUT/explore.json 2>&1 | tee $OUT/explore.txt; fi
if [[ $STEPS == *interleaved* ]]; then stamp interleaved; nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv; python3 tools/gemm/explore_interleaved.py --out $OUT/explore2.json 2>&1 | tee $OUT/explore2.txt; nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv; fi
if [[ $STEPS == *bench* ]]; then stamp bench; bash tools/gemm/bench_final.sh 2>&1 | tee $OUT/bench.txt; fi
stamp done
