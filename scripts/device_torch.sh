#!/usr/bin/env bash
# Issue 24's device call: fraglab for torch users. Usage on the device: bash scripts/device_torch.sh (results in $OUT)
#   the GPU tests of the torch road, the operator, graphs, compile and training, with the public road's GPU tests;
#   compute-sanitizer memcheck over the torch road's strided, empty and graph tests; then, alone on the GPU, the
#   per-call table (benchmarks/torch_call_cost.py, with its cProfile) and `fraglab gemm --wgmma --bench` at 256^3
#   and 1024^3 with the one-shot call rows.
set -u
OUT=${OUT:-/tmp/torch_out}; mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=200
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv | tee "$OUT/gpu.txt"
date -u | tee -a "$OUT/gpu.txt"; python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)" | tee -a "$OUT/gpu.txt"
( timeout 330 compute-sanitizer --tool memcheck --report-api-errors no --print-limit 5 \
    python3 -m pytest -q -m gpu -p no:cacheprovider tests/gemm/test_torch_gpu.py \
    -k "road or strided or empty or tma or graph or given_streams" > "$OUT/memcheck_torch.log" 2>&1
  echo "rc $?" >> "$OUT/memcheck_torch.log" ) &
timeout 330 python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 --timeout 300 -rfE --tb=short --durations=5 \
    tests/gemm/test_torch_gpu.py tests/gemm/test_gemm_api_gpu.py 2>&1 \
    | grep -v Warning | tee "$OUT/pytest_torch.log" | tail -n 40
wait
echo "memcheck: $(grep -E 'ERROR SUMMARY|passed|failed|^rc ' "$OUT/memcheck_torch.log" | tr '\n' ' ')"
timeout 150 python3 benchmarks/torch_call_cost.py --json "$OUT/call_cost.json" --profile 2>&1 | tee "$OUT/call_cost.log" | head -n 40
timeout 90 python3 -m fraglab gemm --wgmma --bench --size 256,1024 --act relu --bias per_n --out-dtype f16 \
    --json "$OUT/bench_calls.json" 2>&1 | tail -n 12
