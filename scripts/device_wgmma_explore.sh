#!/usr/bin/env bash
# One device call: GPU tests of the wgmma GEMM, compute-sanitizer (memcheck, racecheck, synccheck) over every
# variant, clusters per GPU, and variant timings (f32 / 16-bit D, direct / staged stores, one block / clusters of
# two) beside cuBLAS and torch. Usage on the device: bash scripts/device_wgmma_explore.sh  (results under $OUT)
#   SKIP_TESTS=1 / SANITIZERS="": leave the tests / sanitizers out; TESTS: the test files (default: the wgmma GEMM's);
#   VARIANTS, SIZES: what to time (benchmarks/wgmma_suite.py --variants / --sizes); GELU_VARIANTS: also time GELU;
#   SASS_TILES: registers and SASS counts of those tiles' kernels (benchmarks/wgmma_sass.py, acts SASS_ACTS)
set -u
OUT=${OUT:-/tmp/wgmma_explore}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu,driver_version --format=csv | tee "$OUT/gpu.txt"
date -u | tee -a "$OUT/gpu.txt"
[ -n "${SASS_TILES:-}" ] && mkdir -p /tmp/sass && timeout 200 python3 benchmarks/wgmma_sass.py /tmp/sass \
  --acts "${SASS_ACTS:-relu,gelu}" $SASS_TILES 2>&1 | tee "$OUT/sass.txt"
[ -z "${SKIP_TESTS:-}" ] && timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider -n 12 --timeout 150 -rfE --tb=short \
  ${TESTS:-tests/gemm/test_wgmma_gpu.py} 2>&1 | grep -v Warning | tail -25 | tee "$OUT/pytest.log"
python3 - <<'PY' 2>&1 | tee "$OUT/clusters.txt"
from cuda.bindings import driver as cu
from fraglab.gemm import wgmma
from fraglab.runtime import gpu
gpu.cupy()
for tile in ("128x256c2", "128x128c2"):
    spec = wgmma.spec_for("f16", 4096, 4096, 4096, act="relu", bias_mode="per_n", tile=tile)
    fn = getattr(wgmma._kernel(spec), "kernel", None)
    cfg = cu.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = 132, 1, 1
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = wgmma.THREADS, 1, 1
    cfg.sharedMemBytes = spec.smem_bytes
    print(tile, "max active clusters:", cu.cuOccupancyMaxActiveClusters(cu.CUfunction(fn.ptr), cfg))
PY
for tool in ${SANITIZERS-memcheck racecheck synccheck}; do
  ( timeout 240 compute-sanitizer --tool $tool --report-api-errors no --print-limit 5 python3 benchmarks/wgmma_sanitize.py \
      > "$OUT/$tool.log" 2>&1; echo "rc $?" >> "$OUT/$tool.log" ) &
done
wait
for tool in ${SANITIZERS-memcheck racecheck synccheck}; do
  echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAILED|^rc ' "$OUT/$tool.log" | tr '\n' ' ')"
done
[ -n "${PROFILE:-}" ] && timeout 200 python3 benchmarks/gemm_call_profile.py 3000 2>&1 | head -45 > "$OUT/call_profile.txt"
timeout 250 python3 benchmarks/wgmma_suite.py --skip-checks --json "$OUT/variants.json" \
  --variants "${VARIANTS:-128x256:f32,128x256:f16:direct,128x256:f16:tma,128x256c2:f32,128x256c2:f16:direct,128x256c2:f16:tma}" \
  --sizes "${SIZES:-2048x2048x2048,4096x4096x4096,8192x8192x8192,8192x8192x1024}" 2>&1 | grep -v "^check" | tee "$OUT/variants.log"
if [ -n "${GELU_VARIANTS:-}" ]; then
  timeout 150 python3 benchmarks/wgmma_suite.py --skip-checks --json "$OUT/gelu.json" --act gelu \
    --variants "$GELU_VARIANTS" --sizes "${GELU_SIZES:-4096x4096x4096,8192x8192x8192}" 2>&1 | grep -v "^check" | tee "$OUT/gelu.log"
fi
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv | tee -a "$OUT/gpu.txt"
