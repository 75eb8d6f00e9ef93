#!/usr/bin/env bash
# The GEMM's closing device calls. Usage on the device: bash scripts/device_gemm_final.sh tests|bench (results in $OUT)
#   tests: the GPU tests of the gemm, bench and cli wings in parallel, beside compute-sanitizer memcheck over the
#          public road's GPU tests (fraglab.gemm with every kernel, the 16-bit cast, torch inputs, streams)
#   bench: fraglab peak; fraglab gemm --wgmma --bench (f16 D like cuBLAS: f16 and bf16 in, ReLU and GELU, with the
#          wgmma ceiling burst and sustained); the awkward shapes; the per-call cost and its profile
set -u
stage=${1:-tests}
OUT=${OUT:-/tmp/gemm_final}; mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=200
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv | tee "$OUT/gpu_$stage.txt"
date -u | tee -a "$OUT/gpu_$stage.txt"
if [ "$stage" = tests ]; then
  ( timeout 400 compute-sanitizer --tool memcheck --report-api-errors no --print-limit 5 \
      python3 -m pytest -q -m gpu -p no:cacheprovider tests/gemm/test_gemm_api_gpu.py > "$OUT/memcheck_api.log" 2>&1
    echo "rc $?" >> "$OUT/memcheck_api.log" ) &
  timeout 540 python3 -m pytest -q -m gpu -p no:cacheprovider -n ${JOBS:-12} --timeout 240 -rfE --tb=short \
      --durations=5 tests/gemm tests/bench tests/cli 2>&1 | grep -v Warning | tee "$OUT/pytest_gpu.log" | tail -n 25
  wait
  echo "memcheck (public road): $(grep -E 'ERROR SUMMARY|passed|failed|^rc ' "$OUT/memcheck_api.log" | tr '\n' ' ')"
  exit 0
fi
timeout 90 python3 -m fraglab peak --json "$OUT/peak.json" 2>&1 | tail -n 22
timeout 200 python3 -m fraglab gemm --wgmma --bench --size 1024,2048,4096,8192 --act relu --bias per_n --out-dtype f16 \
    --json "$OUT/wgmma_bench_f16.json" --plot "$OUT/wgmma_bench_f16.png" 2>&1 | tail -n 24
timeout 120 python3 -m fraglab gemm --wgmma --bench --size 4096,8192 --dtype bf16 --act relu --bias per_n --out-dtype bf16 \
    --json "$OUT/wgmma_bench_bf16.json" 2>&1 | tail -n 12
timeout 120 python3 -m fraglab gemm --wgmma --bench --size 4096,8192 --act gelu --bias per_n --out-dtype f16 \
    --json "$OUT/wgmma_bench_gelu.json" 2>&1 | tail -n 12
timeout 100 python3 benchmarks/wgmma_suite.py --skip-checks --json "$OUT/shapes.json" --variants 128x256:in:tma,128x256:f32:tma \
    --sizes 8192x8192x1024,4096x14336x4096,1000x4096x4096 2>&1 | grep -v "^check\|^b_swap\|compiled"
timeout 60 python3 benchmarks/gemm_call_cost.py --json "$OUT/call_cost.json" 2>&1 | tail -n 5
timeout 60 python3 benchmarks/gemm_call_profile.py 3000 2>&1 | head -40 > "$OUT/call_profile.txt"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv | tee -a "$OUT/gpu_$stage.txt"
