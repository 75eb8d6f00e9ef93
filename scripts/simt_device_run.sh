#!/bin/bash
# One device call for the SIMT ladder: GPU tests, sanitizers, ladder vs cuBLAS, tile variants, smoke threshold.
# STEPS picks steps (comma list); every step logs under $OUT and a failing step does not stop the next.
set -o pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
STEPS=${STEPS:-env,test,ladder,epilogue,variants,threshold,sanitize}
SIZES=${SIZES:-4096,8192}
t0=$(date +%s)
stamp() { echo "=== $1 at +$(( $(date +%s) - t0 ))s" | tee -a $OUT/run.log; }
if [[ $STEPS == *env* ]]; then stamp env
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,power.limit --format=csv 2>&1 | tee -a $OUT/run.log
  python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__)" 2>&1 | tee -a $OUT/run.log; fi
if [[ $STEPS == *test* ]]; then stamp test
  timeout 150 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gemm_simt_gpu.py 2>&1 | tail -40 > $OUT/pytest_gpu.log
  tail -3 $OUT/pytest_gpu.log | tee -a $OUT/run.log; fi
if [[ $STEPS == *ladder* ]]; then stamp ladder
  timeout 130 python3 benchmarks/simt_ladder.py ladder --sizes $SIZES --json $OUT/ladder.json --plot $OUT/ladder.png 2>&1 | tee -a $OUT/run.log; fi
if [[ $STEPS == *epilogue* ]]; then stamp epilogue
  timeout 60 python3 benchmarks/simt_ladder.py ladder --sizes 4096,8192 --kernel warp_tiled --act gelu --bias per_n --beta 1.0 --json $OUT/ladder_epilogue.json 2>&1 | tee -a $OUT/run.log; fi
if [[ $STEPS == *variants* ]]; then stamp variants
  timeout 60 python3 benchmarks/simt_ladder.py variants --sizes 4096,8192 --json $OUT/variants.json 2>&1 | tee -a $OUT/run.log; fi
if [[ $STEPS == *threshold* ]]; then stamp threshold
  timeout 120 python3 benchmarks/simt_ladder.py threshold --json $OUT/threshold.json 2>&1 | tee -a $OUT/run.log; fi
if [[ $STEPS == *sanitize* ]]; then stamp memcheck
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 python3 benchmarks/simt_ladder.py sanitize > $OUT/sanitizer.log 2>&1
  echo "memcheck rc=$?" | tee -a $OUT/run.log; tail -4 $OUT/sanitizer.log | tee -a $OUT/run.log
  stamp racecheck
  timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 python3 benchmarks/simt_ladder.py sanitize >> $OUT/sanitizer.log 2>&1
  echo "racecheck rc=$?" | tee -a $OUT/run.log; tail -4 $OUT/sanitizer.log | tee -a $OUT/run.log; fi
stamp done
