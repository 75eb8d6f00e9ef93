set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
for tool in memcheck racecheck synccheck; do
timeout 150 compute-sanitizer --error-exitcode 9 --print-limit 5 --tool $tool --report-api-errors no python3 .carry/san_192.py > $R/sanitize_64x192p_${tool}_$T.log 2>&1; echo "$tool exit $?: $(grep -c ' ok' $R/sanitize_64x192p_${tool}_$T.log) ok, $(grep -c FAILED $R/sanitize_64x192p_${tool}_$T.log) failed; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/sanitize_64x192p_${tool}_$T.log | tail -n 1)"
done
tar czf $OUT/r.tgz -C $OUT r
