#!/usr/bin/env bash
# Device run before a stop: every GPU test, verify, and one pass of each user-facing GPU command.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader
python3 -m pytest -q -m gpu -p no:cacheprovider 2>&1 | tee "$OUT/pytest_gpu_all.log" | tail -4
python3 -m fraglab verify > "$OUT/verify.log" 2>&1; echo "verify exit $?: $(tail -1 "$OUT/verify.log")"
python3 -m fraglab layout --frag matrix_a --source gpu --format png --lane 5 --out "$OUT/matrix_a_gpu.png" | tail -1
python3 -m fraglab layout --mma --shape m32n8k16 --dtype bf16 --source gpu --format png --out "$OUT/mma_gpu.png" | tail -1
python3 -m fraglab gemm --wmma --check --size 1000 --act gelu --bias per_m --beta 0.5 --save-z 2>&1 | tail -4
python3 -m fraglab gemm --simt --check --size 127 --kernel warp_tiled 2>&1 | tail -4
python3 -m fraglab gemm --wgmma --check --size 1000 --act relu --bias per_n 2>&1 | tail -4
# every family captured on this GPU, then compared with the bundled atlas (an H100/H200 diff when run on the other)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr -c 'A-Za-z0-9\n' '_')
python3 -m fraglab atlas capture --out "$OUT/atlas_${gpu}.json" 2>&1 | tail -3
python3 -m fraglab atlas diff "$OUT/atlas_${gpu}.json" > "$OUT/atlas_diff.log" 2>&1
echo "atlas diff exit $?: $(tail -1 "$OUT/atlas_diff.log")"
