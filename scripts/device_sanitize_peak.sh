#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over every wgmma peak probe (short runs).
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SAN=/usr/local/cuda/bin/compute-sanitizer
probes=$(python3 -c "from fraglab.bench import peak; print(' '.join('--probe ' + p for p in peak.WGMMA_PROBE_NAMES))")
for tool in memcheck racecheck synccheck; do
  timeout 170 "$SAN" --tool $tool --error-exitcode 9 python3 -m fraglab peak $probes --iters 8 --no-sass \
    > "$OUT/peak_$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/peak_$tool.log" | tail -n 1)"
done
