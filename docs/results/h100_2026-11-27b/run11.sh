set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader | tee $R/gpu_$T.txt
timeout 400 python3 .carry/ab_m64.py $R/ab_m64_$T.json > $R/ab_m64_$T.log 2>&1; cat $R/ab_m64_$T.log
tar czf $OUT/r.tgz -C $OUT r
