set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader; date -u
python3 .carry/ab_late_cluster.py $R/ab_late_cluster_$T.json > $R/ab_late_cluster_$T.log 2>&1; cat $R/ab_late_cluster_$T.log
FRAGLAB_PROGRAMMATIC_LAUNCH=0 python3 benchmarks/wgmma_trace.py --shapes 64x4096x4096,128x4096x4096,128x128x64 --tiles 64x64pk2,128x64k2 --orders F > $R/trace_late_$T.log 2>&1; cat $R/trace_late_$T.log
SAN="compute-sanitizer --error-exitcode 9 --print-limit 5"
for tool in memcheck racecheck synccheck; do
  $SAN --tool $tool --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles 64x64pk2,128x64k2,64x128pk2 > $R/sanitize_k2_${tool}_$T.log 2>&1; echo "$tool exit $?: $(tail -n 2 $R/sanitize_k2_${tool}_$T.log | tr '\n' ' ')"
done
tar czf $OUT/r.tgz -C $OUT r
