#!/usr/bin/env bash
# One device call for issue 11 items 1-2: every mma.sync / ldmatrix / stmatrix / movmatrix entry with
# every method against the PTX model, the random-product check, compute-sanitizer memcheck and racecheck
# on every probe kernel, the GPU tests when asked (PTX_MMA_PYTEST=1). Logs and JSON go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
OUT=${OUT:-/tmp/ptx_mma}
mkdir -p "$OUT"
SAN=${SAN:-/usr/local/cuda/bin/compute-sanitizer}
# At most 8 files come back: summary.txt, sanitizers.log, pytest_gpu.log, sass_mma.txt, capture.log,
# capture_table.txt, ptx_captured.json, ptx_atlas.json.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/summary.txt"
: > "$OUT/sanitizers.log"
for tool in memcheck racecheck; do
  "$SAN" --tool "$tool" --error-exitcode 9 python3 scripts/ptx_mma_device.py --sanitize > /tmp/$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/$tool.log | tail -1)" | tee -a "$OUT/summary.txt"
  cat /tmp/$tool.log >> "$OUT/sanitizers.log"
done
if [ "${PTX_MMA_PYTEST:-0}" = 1 ]; then
  python3 -m pytest -q -m gpu tests/apis/test_ptx_mma.py tests/apis/test_ptx_ldmatrix.py -p no:cacheprovider \
    > "$OUT/pytest_gpu.log" 2>&1
  echo "pytest gpu rc=$? $(tail -1 "$OUT/pytest_gpu.log")" | tee -a "$OUT/summary.txt"
fi
# Which tensor-core SASS each mma.sync variant becomes on sm_90 (nvcc + cuobjdump; explicit instantiations).
python3 - "$OUT" <<'PY'
import re, subprocess, sys
from pathlib import Path
out = Path(sys.argv[1])
names = re.findall(r"^FL_MMA\((\w+),", Path("fraglab/apis/mma.cu").read_text(), re.M)
wrapper = Path("/tmp/mma_sass.cu")  # out of $OUT: only 8 files come back
wrapper.write_text('#include "mma.cu"\n' + "".join(
    f"template __global__ void mma_probe<fl_mma::{n}>(const unsigned*, const unsigned*, const unsigned*, unsigned*);\n"
    for n in names))
subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-std=c++17", "-Ifraglab/apis", "-o", "/tmp/mma.cubin",
                str(wrapper)], check=True)
sass = subprocess.run(["cuobjdump", "-sass", "/tmp/mma.cubin"], capture_output=True, text=True).stdout
lines = []
for block in sass.split("Function : ")[1:]:
    fn = block.split()[0]
    name = next((n for n in names if f"{len(n)}{n}" in fn), fn)
    ops = re.findall(r"\b([HIDBQ]MMA\.[A-Z0-9_.]+|[HIDBQ]MMA)\b", block)
    lines.append(f"{name:28} {len(ops):2} x {' '.join(sorted(set(ops)))}")
(out / "sass_mma.txt").write_text("\n".join(sorted(lines)) + "\n")
print("\n".join(sorted(lines)))
PY
python3 scripts/ptx_mma_device.py --out "$OUT/ptx_captured.json" --atlas "$OUT/ptx_atlas.json" 2>&1 | tee "$OUT/capture.log"
echo "capture rc=${PIPESTATUS[0]}" | tee -a "$OUT/summary.txt"
cat "$OUT/summary.txt"
