#!/usr/bin/env bash
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 tests/gemm/test_torch_gpu.py 2>&1 | tail -2 | tee $OUT/torch_gpu.log
B="--act relu --bias per_n --out-dtype f16"
for set in decode batch; do for o in F C; do
  [ -f $OUT/${set}_$o.txt ] && continue
  timeout 120 python3 -m fraglab gemm --bench --shapes $set $B --b-order $o --json $OUT/${set}_$o.json > $OUT/${set}_$o.txt 2>&1
  echo "$set $o: $(grep -E 'fraglab >= cuBLAS \(torch.mm\)' $OUT/${set}_$o.txt)"
done; done
for o in F C; do
  timeout 120 python3 -m fraglab gemm --bench --shapes decode $B --b-order $o --chain 24 --json $OUT/decode_${o}_chain24.json > $OUT/decode_${o}_chain24.txt 2>&1
  echo "decode $o chain 24: $(grep -E 'fraglab >= cuBLAS \(torch.mm\)' $OUT/decode_${o}_chain24.txt)"
done
timeout 90 python3 benchmarks/gemm_call_cost.py > $OUT/gemm_call_cost.txt 2>&1; tail -3 $OUT/gemm_call_cost.txt
timeout 90 python3 benchmarks/torch_call_cost.py > $OUT/torch_call_cost.txt 2>&1; tail -3 $OUT/torch_call_cost.txt
date -u
