set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
FRAGLAB_PROGRAMMATIC_LAUNCH=0 python3 benchmarks/wgmma_trace.py --shapes 128x128x64,128x128x1024 --tiles 64x64p,128x128,128x128c2 --orders F > $R/trace_tiny_$T.log 2>&1; cat $R/trace_tiny_$T.log
FRAGLAB_PROGRAMMATIC_LAUNCH=0 python3 benchmarks/wgmma_trace.py --shapes 1000x1000x1000 --tiles 64x128pc2,128x128,128x128c2 --orders C,F > $R/trace_1000_$T.log 2>&1; cat $R/trace_1000_$T.log
FRAGLAB_PROGRAMMATIC_LAUNCH=0 python3 benchmarks/wgmma_trace.py --shapes 64x4096x4096 --tiles 64x64pk2,64x64p --orders F > $R/trace_m64_$T.log 2>&1; cat $R/trace_m64_$T.log
tar czf $OUT/r.tgz -C $OUT r
