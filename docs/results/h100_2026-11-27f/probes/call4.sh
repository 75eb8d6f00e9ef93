#!/usr/bin/env bash
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}
JOBS=15 OUT=$OUT bash scripts/device.sh env tests_rest
date -u
timeout 200 python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order F --json $OUT/decode_F.json > $OUT/decode_F.txt 2>&1
tail -8 $OUT/decode_F.txt
