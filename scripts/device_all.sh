#!/usr/bin/env bash
# Device run before a stop: every GPU test, verify, and one pass of each user-facing GPU command.
# usage: device_all.sh [suite|commands|all]  (suite: GPU tests in parallel; commands: CLI passes + capture)
set -u
stage=${1:-all}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader
if [ "$stage" != commands ]; then
# NVRTC compiles dominate the suite's time, so the tests run in parallel workers sharing CuPy's kernel cache
timeout 480 python3 -m pytest -q -m gpu -p no:cacheprovider -n ${JOBS:-14} --timeout 240 -rfE --tb=short \
    --durations=20 2>&1 | tee "$OUT/pytest_gpu_all.log" | tail -n 40
fi
[ "$stage" = suite ] && exit 0
timeout 150 python3 -m fraglab verify > "$OUT/verify.log" 2>&1; echo "verify exit $?: $(tail -1 "$OUT/verify.log")"
timeout 150 python3 -m fraglab layout --frag matrix_a --source gpu --format png --lane 5 --out "$OUT/matrix_a_gpu.png" | tail -1
timeout 150 python3 -m fraglab layout --mma --shape m32n8k16 --dtype bf16 --source gpu --format png --out "$OUT/mma_gpu.png" | tail -1
timeout 150 python3 -m fraglab gemm --wmma --check --size 1000 --act gelu --bias per_m --beta 0.5 --save-z 2>&1 | tail -4
timeout 150 python3 -m fraglab gemm --simt --check --size 127 --kernel warp_tiled 2>&1 | tail -4
timeout 150 python3 -m fraglab gemm --wgmma --check --size 1000 --act relu --bias per_n 2>&1 | tail -4
# every family captured on this GPU, then compared with the bundled atlas (an H100/H200 diff when run on the other)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr -c 'A-Za-z0-9\n' '_')
timeout 150 python3 -m fraglab atlas capture --out "$OUT/atlas_${gpu}.json" 2>&1 | tail -3
timeout 150 python3 -m fraglab atlas diff "$OUT/atlas_${gpu}.json" > "$OUT/atlas_diff.log" 2>&1
echo "atlas diff exit $?: $(tail -1 "$OUT/atlas_diff.log")"
gzip -9 -f "$OUT/atlas_${gpu}.json"
