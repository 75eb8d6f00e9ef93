#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
git log --oneline -1 2>/dev/null
JOBS=15 bash scripts/device.sh env tests_wgmma
SAN="compute-sanitizer --error-exitcode 9 --print-limit 5 --report-api-errors no"
for tool in memcheck racecheck synccheck; do
  timeout 150 $SAN --tool $tool python3 benchmarks/wgmma_sanitize.py --block-scales > $OUT/san_${tool}_block.log 2>&1
  echo "$tool block exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAILED' $OUT/san_${tool}_block.log | tail -2) $(grep -c ' ok' $OUT/san_${tool}_block.log) ok"
done
for tool in memcheck synccheck; do
timeout 120 $SAN --tool $tool python3 benchmarks/wgmma_sanitize.py --tiles 128x64k2,64x64pk2,192x192c2,128x128c2 > $OUT/san_${tool}_tiles.log 2>&1
echo "$tool tiles exit $?: $(grep -E 'ERROR SUMMARY|FAILED' $OUT/san_${tool}_tiles.log | tail -2) $(grep -c ' ok' $OUT/san_${tool}_tiles.log) ok"
done
date -u
