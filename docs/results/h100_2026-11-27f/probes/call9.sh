#!/usr/bin/env bash
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
C="128,4096,4096,F,64x64pkb2;128,4096,4096,C,64x64pkb2;112,4096,4096,F,64x64pkb2;104,4096,4096,C,64x64pkb2"
C="$C;128,4096,8192,F,64x64pkb2;128,4096,14336,C,64x64pkb2;128,4096,11008,F,64x64pkb2"
timeout 140 python3 .carry/ab_stagek.py "$C" 2>&1 | tee $OUT/ab_m128.log
