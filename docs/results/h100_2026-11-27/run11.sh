set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
FRAGLAB_PROGRAMMATIC_LAUNCH=0 python3 .carry/trace_fine.py > $R/trace_fine_nowait_$T.log 2>&1; cat $R/trace_fine_nowait_$T.log
timeout 200 python3 .carry/ab_late_cluster.py $R/ab_nowait_$T.json > $R/ab_nowait_$T.log 2>&1; cat $R/ab_nowait_$T.log
tar czf $OUT/r.tgz -C $OUT r
