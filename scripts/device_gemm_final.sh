#!/usr/bin/env bash
# The GEMM's closing device calls. Usage on the device: bash scripts/device_gemm_final.sh tests|bench|gelu (results in $OUT)
#   tests: the GPU tests of the gemm, bench and cli wings in parallel, beside compute-sanitizer memcheck over the
#          public road's GPU tests (fraglab.gemm with every kernel, the 16-bit cast, torch inputs, streams, every
#          activation on every kernel)
#   bench: fraglab peak; fraglab gemm --wgmma --bench (f16 D like cuBLAS: f16 and bf16 in, bias + ReLU, with the
#          wgmma ceiling burst and sustained); the awkward shapes; the per-call cost and its profile
#   gelu:  which GELU torch's fused call computes; GELU (erf) and GELU (tanh form) fused at 4096^3, 8192^3 and
#          8192x8192x1024 beside torch's fused GELU; registers, spills and SASS counts of every activation's kernel
set -u
stage=${1:-tests}
OUT=${OUT:-/tmp/gemm_final}; mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=200
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv | tee "$OUT/gpu_$stage.txt"
date -u | tee -a "$OUT/gpu_$stage.txt"
if [ "$stage" = tests ]; then
  ( timeout 400 compute-sanitizer --tool memcheck --report-api-errors no --print-limit 5 \
      python3 -m pytest -q -m gpu -p no:cacheprovider tests/gemm/test_gemm_api_gpu.py \
      tests/gemm/test_activation_accuracy_gpu.py > "$OUT/memcheck_api.log" 2>&1
    echo "rc $?" >> "$OUT/memcheck_api.log" ) &
  timeout 540 python3 -m pytest -q -m gpu -p no:cacheprovider -n ${JOBS:-12} --timeout 240 -rfE --tb=short \
      --durations=5 tests/gemm tests/bench tests/cli 2>&1 | grep -v Warning | tee "$OUT/pytest_gpu.log" | tail -n 25
  wait
  echo "memcheck (public road): $(grep -E 'ERROR SUMMARY|passed|failed|^rc ' "$OUT/memcheck_api.log" | tr '\n' ' ')"
  exit 0
fi
if [ "$stage" = gelu ]; then
  python3 - <<'PY' 2>&1 | tee "$OUT/torch_gelu_form.txt"
import torch
torch.backends.cuda.matmul.allow_tf32 = False
for dtype in (torch.float32, torch.float16):
    a, b = (torch.randn(512, 512, device="cuda", dtype=dtype) * 0.15 for _ in range(2))
    bias = torch.randn(512, device="cuda", dtype=dtype)
    fused = torch._addmm_activation(bias, a, b, use_gelu=True).double()
    pre = torch.addmm(bias.double(), a.double(), b.double())
    tail = (pre > -4) & (pre < -1)   # where the two forms differ most and |GELU| < 0.16 (f16 rounds finely)
    for form in ("none", "tanh"):
        err = (fused - torch.nn.functional.gelu(pre, approximate=form))[tail].abs().max().item()
        print(f"{dtype}: torch._addmm_activation(use_gelu=True) vs gelu(approximate={form!r}) on x in (-4, -1): "
              f"max abs diff {err:.2e}")
PY
  for act in gelu gelu_tanh; do
    timeout 120 python3 -m fraglab gemm --wgmma --bench --size 4096,8192 --act $act --bias per_n --out-dtype f16 \
        --json "$OUT/bench_${act}_squares.json" 2>&1 | tail -n 8
    timeout 60 python3 -m fraglab gemm --wgmma --bench --m 8192 --n 8192 --k 1024 --act $act --bias per_n --out-dtype f16 \
        --json "$OUT/bench_${act}_k1024.json" 2>&1 | tail -n 6
  done
  mkdir -p /tmp/sass
  timeout 200 python3 benchmarks/wgmma_sass.py /tmp/sass --acts none,relu,gelu,gelu_tanh,silu,sigmoid,tanh 128x256 128x128 \
      2>&1 | tee "$OUT/sass.txt"
  cuobjdump -sass /tmp/sass/wgmma_128x256_gelu.cubin > "$OUT/wgmma_128x256_gelu.sass"
  exit 0
fi
timeout 90 python3 -m fraglab peak --json "$OUT/peak.json" 2>&1 | tail -n 22
timeout 200 python3 -m fraglab gemm --wgmma --bench --size 1024,2048,4096,8192 --act relu --bias per_n --out-dtype f16 \
    --json "$OUT/wgmma_bench_f16.json" --plot "$OUT/wgmma_bench_f16.png" 2>&1 | tail -n 24
timeout 120 python3 -m fraglab gemm --wgmma --bench --size 4096,8192 --dtype bf16 --act relu --bias per_n --out-dtype bf16 \
    --json "$OUT/wgmma_bench_bf16.json" 2>&1 | tail -n 12
timeout 100 python3 benchmarks/wgmma_suite.py --skip-checks --json "$OUT/shapes.json" --variants 128x256:in:tma,128x256:f32:tma \
    --sizes 8192x8192x1024,4096x14336x4096,1000x4096x4096 2>&1 | grep -v "^check\|^b_swap\|compiled"
timeout 60 python3 benchmarks/gemm_call_cost.py --json "$OUT/call_cost.json" 2>&1 | tail -n 5
timeout 60 python3 benchmarks/gemm_call_profile.py 3000 2>&1 | head -40 > "$OUT/call_profile.txt"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv | tee -a "$OUT/gpu_$stage.txt"
