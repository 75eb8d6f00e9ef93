#!/usr/bin/env bash
# Device run for the layout probes: GPU tests, capture timing (cold and warm compile cache), verify,
# and compute-sanitizer (memcheck, racecheck) over a full capture. Logs under $OUT.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pytest -q -m gpu tests/test_gpu_probes.py -p no:cacheprovider 2>&1 | tail -5 | tee "$OUT/pytest_gpu_probes.log"
export CUPY_CACHE_DIR=$(mktemp -d)
for run in cold warm; do
  /usr/bin/time -f "$run capture wall %e s" python3 -m fraglab atlas capture --out "$OUT/atlas_$run.json" 2>&1 | tail -2
done
python3 -m fraglab atlas diff "$OUT/atlas_cold.json" fraglab/data/atlas_sm90.json | tail -1
COLUMNS=160 python3 -m fraglab verify > "$OUT/verify.log" 2>&1; echo "verify exit $?"; tail -1 "$OUT/verify.log"
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --print-limit 20 python3 scripts/capture_atlas.py /tmp/san_$tool > "$OUT/sanitizer_$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer_$tool.log" | tail -1)"
done
