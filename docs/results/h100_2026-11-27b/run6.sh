set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $R/gpu_$T.txt; date -u >> $R/gpu_$T.txt; cat $R/gpu_$T.txt
for order in F C; do
python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $order --json $R/shapes_decode_${order}_$T.json > $R/shapes_decode_${order}_$T.log 2>&1; tail -n 8 $R/shapes_decode_${order}_$T.log
done
for run in C_1 C_2 F_1; do
python3 -m fraglab gemm --bench --shapes ragged --act relu --bias per_n --out-dtype f16 --b-order ${run%_*} --json $R/shapes_ragged_${run}_$T.json > $R/shapes_ragged_${run}_$T.log 2>&1; tail -n 14 $R/shapes_ragged_${run}_$T.log
done
python3 -m fraglab gemm --bench --shapes llm --act relu --bias per_n --out-dtype f16 --json $R/shapes_llm_$T.json > $R/shapes_llm_$T.log 2>&1; tail -n 7 $R/shapes_llm_$T.log
timeout 200 python3 benchmarks/decode_chain.py --layers 4 --json $R/decode_chain_$T.json > $R/decode_chain_$T.log 2>&1; tail -n 14 $R/decode_chain_$T.log
date -u
tar czf $OUT/r.tgz -C $OUT r
