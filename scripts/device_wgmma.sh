#!/usr/bin/env bash
# One device call for the wgmma GEMM: correctness (float64 reference), timing side by side, SASS check.
# Usage on the device: bash scripts/device_wgmma.sh [quick|full|sanitize]
set -u
MODE=${1:-quick}
OUT=${OUT:-/tmp/wgmma_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
case "$MODE" in
  quick) timeout 240 python3 benchmarks/wgmma_suite.py --quick --tiles 128x256,128x128,128x128p,64x256p --json "$OUT/suite.json" 2>&1 | tee "$OUT/suite.log" ;;
  full)  timeout 400 python3 benchmarks/wgmma_suite.py --json "$OUT/suite.json" 2>&1 | tee "$OUT/suite.log" ;;
  sanitize)
    for tool in memcheck racecheck synccheck; do
      compute-sanitizer --tool $tool --print-limit 5 python3 benchmarks/wgmma_sanitize.py 2>&1 | tail -6 | tee "$OUT/sanitize_$tool.log"
    done ;;
esac
# SASS: HGMMA present, no local memory (LDL/STL), registers and spills from ptxas
mkdir -p /tmp/wgmma_sass
python3 benchmarks/wgmma_sass.py /tmp/wgmma_sass 2>&1 | tee "$OUT/ptxas.txt"
for f in /tmp/wgmma_sass/*.cubin; do
  cuobjdump -sass "$f" > "${f%.cubin}.sass"
  echo "$(basename "$f"): HGMMA $(grep -c HGMMA "${f%.cubin}.sass") LDL/STL $(grep -cE 'LDL|STL' "${f%.cubin}.sass") $(grep -m1 -o 'HGMMA[^ ]*' "${f%.cubin}.sass")"
done
cp "$(ls /tmp/wgmma_sass/*.sass | head -1)" "$OUT/example.sass"
