set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader | tee $R/gpu_$T.txt; date -u
timeout 100 compute-sanitizer --error-exitcode 9 --print-limit 5 --tool synccheck --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles 64x64p,64x64pk2,64x128pc2,128x128c2x2,128x256 > $R/sanitize_synccheck_$T.log 2>&1; echo "synccheck exit $?: $(tail -n 2 $R/sanitize_synccheck_$T.log | tr '\n' ' ')"
timeout 240 python3 .carry/ab_start.py $R/ab_start_$T.json > $R/ab_start_$T.log 2>&1; cat $R/ab_start_$T.log
FRAGLAB_PROGRAMMATIC_LAUNCH=0 timeout 100 python3 benchmarks/wgmma_trace.py --shapes 64x4096x4096,1000x1000x1000,128x128x64 --tiles 64x64pk2,64x128pc2,64x64p --orders F > $R/trace_start_$T.log 2>&1; cat $R/trace_start_$T.log
tar czf $OUT/r.tgz -C $OUT r
