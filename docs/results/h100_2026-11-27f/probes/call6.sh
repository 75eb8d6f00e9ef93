#!/usr/bin/env bash
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
C="72,4096,4096,F,64x64pkb2+64x128pkb2;80,4096,4096,F,64x64pkb2+64x128pkb2;88,4096,4096,F,64x64pkb2;96,4096,4096,F,64x64pkb2+64x128pkb2"
C="$C;80,4096,4096,C,64x64pkb2+64x128pkb2;96,4096,4096,C,64x64pkb2;64,4096,2048,F,64x64pkb2+64x64pk2kb2;128,4096,2048,F,64x64pkb2"
C="$C;64,8192,4096,F,64x64pkb2+64x128pkb2;64,8192,14336,C,64x64pkb2+64x128pkb2;40,4096,2048,C,64x64pkb2;128,2048,4096,F,64x64pkb2"
timeout 400 python3 .carry/ab_stagek.py "$C" 2>&1 | tee $OUT/ab_stagek_64x64.log
