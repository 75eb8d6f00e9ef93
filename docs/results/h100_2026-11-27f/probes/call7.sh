#!/usr/bin/env bash
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=/tmp/res; mkdir -p $R
JOBS=15 OUT=$R bash scripts/device.sh env tests_wgmma | grep -v "^\.\.\.\."
T=64x64pkb2,64x64pk2kb2,64x128pkb2
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles $T > $R/sanitize_kb_$tool.log 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAILED' $R/sanitize_kb_$tool.log | tail -2 | tr '\n' ' ') ($(grep -c ' ok$' $R/sanitize_kb_$tool.log) ok)"
done
B="--act relu --bias per_n --out-dtype f16"
for o in F C; do
  timeout 120 python3 -m fraglab gemm --bench --shapes batch $B --b-order $o --json $R/batch_$o.json > $R/batch_$o.txt 2>&1
  echo "batch $o: $(grep -E 'fraglab >= cuBLAS \(torch.mm\)' $R/batch_$o.txt)"
done
date -u
tar czf $OUT/res.tgz -C $R .
