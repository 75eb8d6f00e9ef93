#!/bin/bash
# The measured tables of docs/benchmarks.md (WMMA section): one run, side by side, on the device machine.
set -o pipefail
clocks() { nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader; }
echo "clocks before: $(clocks)"
python3 -m fraglab gemm --wmma --bench --check --size 1024,2048,4096,8192 --act relu --bias per_n \
  --json $OUT/gemm_relu.json --plot $OUT/gemm_relu.png
echo "clocks: $(clocks)"
python3 -m fraglab gemm --wmma --bench --check --size 1024,2048,4096,8192 --act gelu --bias per_n \
  --json $OUT/gemm_gelu.json
echo "clocks: $(clocks)"
python3 -m fraglab gemm --wmma --bench --check --size 2048,8192 --dtype bf16 --act relu --bias per_n \
  --json $OUT/gemm_bf16.json
echo "clocks after: $(clocks)"
