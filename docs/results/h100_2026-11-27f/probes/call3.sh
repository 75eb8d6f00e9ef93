#!/usr/bin/env bash
# tests_wgmma (every launcher tile, the kb tiles among them), then compute-sanitizer over the kb tiles
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/out}
JOBS=15 OUT=$OUT bash scripts/device.sh env tests_wgmma
T=64x64pk2kb2,64x128pkb2,64x64pkb4,128x64kb2
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles $T > $OUT/sanitize_kb_$tool.log 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAILED' $OUT/sanitize_kb_$tool.log | tail -2 | tr '\n' ' ') ($(grep -c ' ok$' $OUT/sanitize_kb_$tool.log) ok)"
done
