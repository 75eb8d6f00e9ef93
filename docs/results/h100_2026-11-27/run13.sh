set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader; date -u
timeout 200 python3 .carry/ab_skinny_end.py $R/ab_skinny_end_$T.json > $R/ab_skinny_end_$T.log 2>&1; cat $R/ab_skinny_end_$T.log
SAN="compute-sanitizer --error-exitcode 9 --print-limit 5"
for tool in memcheck racecheck synccheck; do
  timeout 100 $SAN --tool $tool --report-api-errors no python3 benchmarks/skinny_sanitize.py > $R/sanitize_skinny_${tool}_$T.log 2>&1; echo "$tool exit $?: $(tail -n 2 $R/sanitize_skinny_${tool}_$T.log | tr '\n' ' ')"
done
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -n 15 -rfE --tb=short tests/gemm/test_skinny.py tests/gemm/test_programmatic_launch_gpu.py > $R/pytest_skinny_$T.log 2>&1; tail -n 2 $R/pytest_skinny_$T.log
tar czf $OUT/r.tgz -C $OUT r
