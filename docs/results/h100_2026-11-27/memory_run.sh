#!/usr/bin/env bash
# session 20, run 1: the DRAM read probes (tests, sanitizers, peak --memory) and the decode set with the bare-read column
set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T=$(date -u +%H%M)
bash scripts/device.sh env > "$OUT/env_$T.log" 2>&1; cat "$OUT/gpu.txt"
python3 -m pytest -q -m gpu -p no:cacheprovider -rfE --tb=short tests/bench/test_memory.py > "$OUT/pytest_memory_$T.log" 2>&1; tail -n 3 "$OUT/pytest_memory_$T.log"
cat > /tmp/read_sanitize.py <<'PY'
from fraglab.bench import memory
from fraglab.runtime import gpu
cp = gpu.cupy()
rng = cp.random.default_rng(3)
for nbytes in (48, 64 * 1024 + 16, 3 * 2**20 + 16 * 1024 - 32):
    bufs = [rng.integers(0, 2**32, size=nbytes // 4, dtype=cp.uint32)]
    for r in memory.READERS:
        memory.Reader(r, bufs, gpu.device_info()["sm_count"]).check(0)
print("sums right")
PY
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool --report-api-errors no python3 /tmp/read_sanitize.py > "$OUT/sanitize_read_${tool}_$T.log" 2>&1
  echo "$tool: $(tail -n 2 "$OUT/sanitize_read_${tool}_$T.log" | tr '\n' ' ')"
done
python3 -m fraglab peak --memory --json "$OUT/peak_memory_$T.json" > "$OUT/peak_memory_$T.log" 2>&1; cat "$OUT/peak_memory_$T.log"
python3 -m fraglab peak --memory --json "$OUT/peak_memory_again_$T.json" > "$OUT/peak_memory_again_$T.log" 2>&1; tail -n 20 "$OUT/peak_memory_again_$T.log"
for order in F C; do
python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $order --json "$OUT/shapes_decode_${order}_$T.json" > "$OUT/shapes_decode_${order}_$T.log" 2>&1; tail -n 70 "$OUT/shapes_decode_${order}_$T.log"
done
ncu -c 16 --metrics dram__bytes_read.sum,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed -k regex:fraglab_read python3 -m fraglab peak --memory --sizes 4096x4096,1024 > "$OUT/ncu_read_$T.log" 2>&1; grep -E "fraglab_read|dram__|gpu__time" "$OUT/ncu_read_$T.log" | head -60
