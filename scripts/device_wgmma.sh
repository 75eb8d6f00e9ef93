#!/usr/bin/env bash
# One device call for the wgmma GEMM. Usage on the device: bash scripts/device_wgmma.sh [quick|full|final]
#   quick: checks (float64 reference) + timing at 2048/4096/8192 cubed, f16 and bf16, every candidate tile
#   full:  checks + timing with the non-square shapes
#   final: GPU tests, compute-sanitizer (memcheck, racecheck, synccheck), timing (no repeated checks), SASS
#   verify: GPU tests and `fraglab gemm --wgmma --check` only
set -u
MODE=${1:-quick}
OUT=${OUT:-/tmp/wgmma_out}
TILES=${TILES:-128x256,128x128,128x128p,64x256p}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
case "$MODE" in
  quick) timeout 240 python3 benchmarks/wgmma_suite.py --quick --tiles "$TILES" --json "$OUT/suite.json" 2>&1 | tee "$OUT/suite.log" ;;
  full)  timeout 400 python3 benchmarks/wgmma_suite.py --tiles "$TILES" --json "$OUT/suite.json" 2>&1 | tee "$OUT/suite.log" ;;
  verify|final)
    timeout 200 python3 -m pytest -q -x tests/gemm/test_wgmma_gpu.py 2>&1 | tail -4 | tee "$OUT/pytest.log"
    timeout 60 python3 -m fraglab gemm --wgmma --check --size 1000,517 --act gelu --bias per_n 2>&1 | tail -12 | tee "$OUT/cli.log"
    [ "$MODE" = verify ] && exit 0
    for tool in memcheck racecheck synccheck; do
      timeout 120 compute-sanitizer --tool $tool --report-api-errors no --print-limit 5 python3 benchmarks/wgmma_sanitize.py > /tmp/san_$tool.log 2>&1
      echo "$tool (rc $?): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|FAILED' /tmp/san_$tool.log | tr '\n' ' ')" | tee -a "$OUT/sanitize.log"
    done
    grep -vE '^(b|1|2|6)[0-9x]* ' /tmp/san_memcheck.log | head -60 >> "$OUT/sanitize.log"
    timeout 200 python3 benchmarks/wgmma_suite.py --skip-checks --tiles "$TILES" --json "$OUT/suite.json" 2>&1 \
      | grep -v "^check" | tee "$OUT/suite.log" ;;
esac
# SASS: HGMMA present, no local memory (LDL/STL), registers and spills from ptxas
mkdir -p /tmp/wgmma_sass
python3 benchmarks/wgmma_sass.py /tmp/wgmma_sass 2>&1 | tee "$OUT/ptxas.txt"
for f in /tmp/wgmma_sass/*.cubin; do
  cuobjdump -sass "$f" > "${f%.cubin}.sass"
  echo "$(basename "$f"): HGMMA $(grep -c HGMMA "${f%.cubin}.sass") LDL/STL $(grep -cE 'LDL|STL' "${f%.cubin}.sass") $(grep -m1 -o 'HGMMA[^ ]*' "${f%.cubin}.sass")"
done
cp "$(ls /tmp/wgmma_sass/*.sass | head -1)" "$OUT/example.sass"
