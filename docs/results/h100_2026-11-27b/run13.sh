set -uo pipefail
export PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader | tee $R/gpu_$T.txt
PYTHONPATH=$PWD timeout 120 compute-sanitizer --error-exitcode 9 --print-limit 5 --tool memcheck --report-api-errors no python3 -m pytest -q -p no:cacheprovider tests/gemm/test_bias_16bit_gpu.py -k "wmma or bits or k_zero" > $R/sanitize_widen_memcheck_$T.log 2>&1; echo "widen memcheck exit $?: $(grep -E 'passed|failed' $R/sanitize_widen_memcheck_$T.log | tail -n 1); $(grep -E 'ERROR SUMMARY' $R/sanitize_widen_memcheck_$T.log | tail -n 1)"
PYTHONPATH=$PWD timeout 120 python3 benchmarks/gemm_call_cost.py > $R/gemm_call_cost_$T.log 2>&1; tail -n 12 $R/gemm_call_cost_$T.log
OUT=$R JOBS=15 timeout 360 bash scripts/device.sh tests_rest 2>&1 | tail -n 3
mv $R/pytest_gpu.log $R/tests_rest_$T.log 2>/dev/null
tar czf $OUT/r.tgz -C $OUT r
