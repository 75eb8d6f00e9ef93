#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader; date -u
for o in F C; do
  timeout 250 python3 -m fraglab gemm --bench --shapes decode --b-order $o --act relu --bias per_n --out-dtype f16 > $OUT/shapes_decode_$o.log 2>&1
  echo "decode $o exit $?"; date -u
done
timeout 80 python3 benchmarks/torch_call_cost.py > $OUT/call_cost.log 2>&1
timeout 40 python3 benchmarks/gemm_call_cost.py >> $OUT/call_cost.log 2>&1
tail -5 $OUT/call_cost.log; date -u
