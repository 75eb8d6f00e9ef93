#!/bin/bash
# One device call for the copy loader (issue 25 item 1): GPU tests, compute-sanitizer, timings. Logs under $OUT.
# Usage (device): bash benchmarks/wgmma_copy_loader_device.sh [HEAD_KERNEL.cu]
# HEAD_KERNEL.cu: a wgmma.cu from before the copy loader (e.g. `git show HEAD:kernels/gemm/wgmma.cu`), timed beside.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv; } \
  | tee "$OUT/gpu.txt"
# every launch compiles once; the disk cache keeps the builds for the sanitizer and timing runs
timeout 110 python3 -m pytest -q -m gpu -p no:cacheprovider --maxfail=5 tests/gemm/test_wgmma_copy_loader_gpu.py 2>&1 \
  | tail -40 > "$OUT/pytest_copy_loader.log"
echo "pytest rc $?" >> "$OUT/pytest_copy_loader.log"; tail -3 "$OUT/pytest_copy_loader.log"
# per tool: the launches' count, the summary, and anything that is not a passing launch (first 40 lines); host API
# returns are not reported (cuda-bindings' first driver call probes cuGetProcAddress 34 times: docs/wgmma-gemm.md)
for tool in memcheck racecheck synccheck; do
  timeout 45 /usr/local/cuda/bin/compute-sanitizer --tool $tool --report-api-errors no \
    python3 benchmarks/wgmma_sanitize.py --copy-only > "$OUT/sanitize_raw.log" 2>&1
  echo "$tool: rc $?, $(grep -c ' ok$' "$OUT/sanitize_raw.log") launches ok" >> "$OUT/sanitize_copy_loader.log"
  grep 'SUMMARY' "$OUT/sanitize_raw.log" | sed "s/^/$tool: /" >> "$OUT/sanitize_copy_loader.log"
  grep -v ' ok$' "$OUT/sanitize_raw.log" | grep -v SUMMARY | head -40 | sed "s/^/$tool: /" >> "$OUT/sanitize_copy_loader.log"
done
rm -f "$OUT/sanitize_raw.log"
cat "$OUT/sanitize_copy_loader.log"
head_args=()
[ -n "$1" ] && head_args=(--head "$1")
timeout 170 python3 benchmarks/wgmma_ragged.py --loaders "$OUT/loaders.json" "${head_args[@]}" 2>&1 | tee "$OUT/loaders.log"
{ date -u; nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv; } | tee -a "$OUT/gpu.txt"
