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
  quick) python3 benchmarks/wgmma_suite.py --quick --json "$OUT/suite.json" 2>&1 | tee "$OUT/suite.log" ;;
  full)  python3 benchmarks/wgmma_suite.py --json "$OUT/suite.json" 2>&1 | tee "$OUT/suite.log" ;;
  sanitize)
    for tool in memcheck racecheck synccheck; do
      compute-sanitizer --tool $tool --print-limit 5 python3 benchmarks/wgmma_sanitize.py 2>&1 | tail -6 | tee "$OUT/sanitize_$tool.log"
    done ;;
esac
# SASS of the compiled kernels (CuPy's disk cache holds a header before the ELF): HGMMA present, no local memory
for f in $(ls -t ~/.cupy/kernel_cache/*.cubin 2>/dev/null | head -4); do
  name=$(basename "$f" .cubin)
  python3 -c "import sys; b=open(sys.argv[1],'rb').read(); open(sys.argv[2],'wb').write(b[b.find(b'\x7fELF'):])" "$f" /tmp/$name.elf
  cuobjdump -sass /tmp/$name.elf > /tmp/$name.sass 2>&1
  echo "$name: $(grep -m1 -o 'Function : [^ ]*' /tmp/$name.sass | cut -c1-60) HGMMA $(grep -c HGMMA /tmp/$name.sass) LDL/STL $(grep -cE 'LDL|STL' /tmp/$name.sass)"
done
cp "$(ls -t /tmp/*.sass | head -1)" "$OUT/newest.sass" 2>/dev/null
