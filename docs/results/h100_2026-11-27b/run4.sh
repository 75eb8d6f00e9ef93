set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader | tee $R/gpu_$T.txt; date -u
TILES=128x256,128x128,64x64p,64x64pk2,128x64k2,64x128pc2,128x128c2,128x128c2x2,128x64n2,192x192c2,128x192c2
for tool in synccheck memcheck racecheck; do
  timeout 150 compute-sanitizer --error-exitcode 9 --print-limit 5 --tool $tool --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles $TILES > $R/sanitize_wgmma_${tool}_$T.log 2>&1; echo "$tool exit $?: $(grep -c ' ok' $R/sanitize_wgmma_${tool}_$T.log) ok, $(grep -c FAILED $R/sanitize_wgmma_${tool}_$T.log) failed; $(tail -n 1 $R/sanitize_wgmma_${tool}_$T.log)"
done
timeout 60 compute-sanitizer --error-exitcode 9 --tool memcheck --report-api-errors no python3 benchmarks/wgmma_sanitize.py --copy-only > $R/sanitize_wgmma_copy_memcheck_$T.log 2>&1; echo "copy loader memcheck exit $?: $(tail -n 1 $R/sanitize_wgmma_copy_memcheck_$T.log)"
timeout 150 python3 .carry/ab_start.py $R/ab_start_$T.json > $R/ab_start_$T.log 2>&1; cat $R/ab_start_$T.log
OUT=$R JOBS=15 timeout 300 bash scripts/device.sh tests_wgmma 2>&1 | tail -n 3
mv $R/pytest_gpu.log $R/tests_wgmma_$T.log 2>/dev/null
tar czf $OUT/r.tgz -C $OUT r
