set -uo pipefail
export PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
for tool in memcheck racecheck synccheck; do
PYTHONPATH=$PWD timeout 150 compute-sanitizer --error-exitcode 9 --print-limit 5 --tool $tool --report-api-errors no python3 -m pytest -q -p no:cacheprovider tests/gemm/test_bias_16bit_gpu.py -k "is_read_as_it_is and (skinny or k2 or 128x256 or c2)" > $R/sanitize_bias_${tool}_$T.log 2>&1; echo "$tool exit $?: $(grep -E 'passed|failed' $R/sanitize_bias_${tool}_$T.log | tail -n 1); $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/sanitize_bias_${tool}_$T.log | tail -n 1)"
done
OUT=$R JOBS=15 timeout 330 bash scripts/device.sh tests_wgmma 2>&1 | tail -n 3
mv $R/pytest_gpu.log $R/tests_wgmma_$T.log 2>/dev/null
tar czf $OUT/r.tgz -C $OUT r
