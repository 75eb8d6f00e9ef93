set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
for rep in 1 2; do for p in 1 0; do
echo "== programmatic $p (pass $rep)"; FRAGLAB_PROGRAMMATIC_LAUNCH=$p python3 .carry/fixed_cost.py > $R/fixed_cost_p${p}_${rep}_$T.log 2>&1; grep -v "^{" $R/fixed_cost_p${p}_${rep}_$T.log
done; done
ncu -k regex:"gemm|nvjet|sm90" --metrics gpu__time_duration.sum,sm__cycles_active.avg,launch__grid_size,launch__cluster_dim_x,launch__shared_mem_per_block_dynamic -c 40 python3 .carry/fixed_cost.py > $R/ncu_fixed_$T.log 2>&1; grep -E "^\s+(void |fraglab|nvjet|gemm|sm90|cutlass)|gpu__time|cluster_dim|grid_size|shared_mem" $R/ncu_fixed_$T.log | head -120
tar czf $OUT/r.tgz -C $OUT r
