set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader; date -u
OUT=$R JOBS=15 timeout 400 bash scripts/device.sh tests_wgmma 2>&1 | tail -n 4
mv $R/pytest_gpu.log $R/tests_wgmma_$T.log 2>/dev/null
timeout 170 python3 .carry/ab_late_cluster.py $R/ab_final_$T.json > $R/ab_final_$T.log 2>&1; cat $R/ab_final_$T.log
tar czf $OUT/r.tgz -C $OUT r
