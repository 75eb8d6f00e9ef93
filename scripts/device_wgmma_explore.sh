#!/usr/bin/env bash
# One device call: GPU tests of the wgmma GEMM, memcheck of every variant, clusters per GPU, and the variant
# timings (f32 / 16-bit D, direct / staged stores, one block / clusters of two) beside cuBLAS and torch.
# Usage on the device: bash scripts/device_wgmma_explore.sh  (results under $OUT)
set -u
OUT=${OUT:-/tmp/wgmma_explore}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu,driver_version --format=csv | tee "$OUT/gpu.txt"
date -u | tee -a "$OUT/gpu.txt"
timeout 300 python3 -m pytest -q -m gpu -n 8 --timeout 150 tests/gemm/test_wgmma_gpu.py 2>&1 | tail -15 | tee "$OUT/pytest.log"
python3 - <<'PY' 2>&1 | tee "$OUT/clusters.txt"
from cuda.bindings import driver as cu
from fraglab.gemm import wgmma
from fraglab.runtime import gpu
gpu.cupy()
for tile in ("128x256c2", "128x128c2"):
    spec = wgmma.spec_for("f16", 4096, 4096, 4096, act="relu", bias_mode="per_n", tile=tile)
    k = wgmma._kernel(spec)
    fn = getattr(k, "kernel", k)
    cfg = cu.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = 132, 1, 1
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = wgmma.THREADS, 1, 1
    cfg.sharedMemBytes = spec.smem_bytes
    print(tile, "max active clusters:", cu.cuOccupancyMaxActiveClusters(cu.CUfunction(fn.ptr), cfg))
PY
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no --print-limit 5 python3 benchmarks/wgmma_sanitize.py > "$OUT/memcheck.log" 2>&1
echo "memcheck rc $?: $(grep -E 'ERROR SUMMARY|FAILED' "$OUT/memcheck.log" | tr '\n' ' ')"
[ -n "${PROFILE:-}" ] && timeout 200 python3 benchmarks/gemm_call_profile.py 3000 2>&1 | head -45 > "$OUT/call_profile.txt"
timeout 250 python3 benchmarks/wgmma_suite.py --skip-checks --json "$OUT/variants.json" \
  --variants "${VARIANTS:-128x256:f32,128x256:f16:direct,128x256:f16:tma,128x256c2:f32,128x256c2:f16:direct,128x256c2:f16:tma}" \
  --sizes "${SIZES:-2048x2048x2048,4096x4096x4096,8192x8192x8192,8192x8192x1024}" 2>&1 | grep -v "^check" | tee "$OUT/variants.log"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv | tee -a "$OUT/gpu.txt"
