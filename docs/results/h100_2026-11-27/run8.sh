set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader; date -u
timeout 120 python3 .carry/sass_start.py > $R/sass_start_$T.log 2>&1; cat $R/sass_start_$T.log | cut -c1-150
timeout 300 python3 .carry/ab_late_cluster.py $R/ab_relaxed_$T.json > $R/ab_relaxed_$T.log 2>&1; cat $R/ab_relaxed_$T.log
FRAGLAB_PROGRAMMATIC_LAUNCH=0 timeout 120 python3 benchmarks/wgmma_trace.py --shapes 64x4096x4096,1000x1000x1000 --tiles 64x64pk2,64x128pc2 --orders F > $R/trace_relaxed_$T.log 2>&1; cat $R/trace_relaxed_$T.log
tar czf $OUT/r.tgz -C $OUT r
