#!/usr/bin/env bash
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv | tee $OUT/gpu.txt; date -u | tee -a $OUT/gpu.txt
D="64,4096,11008,F,64x64pk2kb2;64,4096,14336,F,64x64pk2kb2;64,4096,11008,C,64x64pk2kb2;64,4096,14336,C,64x64pk2kb2"
D="$D;64,11008,4096,F,64x128pkb2+64x192pkb2;64,11008,11008,F,64x128pkb2;64,14336,4096,F,64x128pkb2;64,14336,14336,F,64x128pkb2"
D="$D;64,11008,4096,C,64x128pkb2+64x192pkb2;64,11008,11008,C,64x128pkb2;64,14336,4096,C,64x128pkb2;64,14336,14336,C,64x128pkb2"
B="80,6144,4096,F,64x128pkb2+64x192pkb2;96,4096,4096,F,64x64pkb2+64x128pkb2;160,6144,4096,F,64x192pkb2+64x128pkb2"
B="$B;160,4096,14336,F,64x128pkb2;192,4096,4096,F,64x128pkb2;160,8192,4096,F,64x192pkb2+64x128pkb2;160,10240,8192,F,64x128pkb2+64x192pkb2"
B="$B;160,4096,4096,C,64x128pkb2;192,4096,14336,C,64x128pkb2;80,8192,8192,F,64x128pkb2+64x192pkb2;96,6144,4096,C,64x128pkb2+64x192pkb2"
timeout 280 python3 .carry/ab_stagek.py "$D" 2>&1 | tee $OUT/ab_stagek_decode.log
timeout 280 python3 .carry/ab_stagek.py "$B" 2>&1 | tee $OUT/ab_stagek_batch.log
