set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader | tee $R/gpu_$T.txt; date -u
timeout 150 python3 .carry/ab_start.py $R/ab_read_$T.json > $R/ab_read_$T.log 2>&1; cat $R/ab_read_$T.log
FRAGLAB_PROGRAMMATIC_LAUNCH=0 timeout 100 python3 benchmarks/wgmma_trace.py --shapes 64x4096x4096,128x4096x4096,1000x1000x1000 --tiles 64x64pk2,128x64k2,64x128pc2,128x128 --orders F > $R/trace_read_$T.log 2>&1; cat $R/trace_read_$T.log
tar czf $OUT/r.tgz -C $OUT r
