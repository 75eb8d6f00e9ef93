set -uo pipefail
export PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader | tee $R/gpu_$T.txt
PYTHONPATH=$PWD timeout 120 compute-sanitizer --error-exitcode 9 --print-limit 5 --tool memcheck --report-api-errors no python3 benchmarks/skinny_sanitize.py > $R/sanitize_skinny_memcheck_$T.log 2>&1; echo "skinny memcheck exit $?: $(grep -c ' ok' $R/sanitize_skinny_memcheck_$T.log) ok, $(grep -c FAILED $R/sanitize_skinny_memcheck_$T.log) failed; $(tail -n 1 $R/sanitize_skinny_memcheck_$T.log)"
OUT=$R JOBS=15 timeout 440 bash scripts/device.sh tests_rest 2>&1 | tail -n 3
mv $R/pytest_gpu.log $R/tests_rest_$T.log 2>/dev/null
tar czf $OUT/r.tgz -C $OUT r
