set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader; date -u
timeout 170 python3 .carry/ab_late_cluster.py $R/ab_end_relaxed_$T.json > $R/ab_end_relaxed_$T.log 2>&1; cat $R/ab_end_relaxed_$T.log
SAN="compute-sanitizer --error-exitcode 9 --print-limit 5"
for tool in memcheck racecheck synccheck; do
  timeout 100 $SAN --tool $tool --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles 64x128pc2,64x64pk2,128x64k2,128x128c2x2,128x64n2,128x128c2 > $R/sanitize_wgmma_${tool}_$T.log 2>&1; echo "$tool exit $?: $(tail -n 2 $R/sanitize_wgmma_${tool}_$T.log | tr '\n' ' ')"
done
OUT=$R JOBS=15 timeout 330 bash scripts/device.sh tests_wgmma 2>&1 | tail -n 3
mv $R/pytest_gpu.log $R/tests_wgmma_$T.log 2>/dev/null
tar czf $OUT/r.tgz -C $OUT r
