#!/usr/bin/env bash
# Issue 24's device call: fraglab for torch users. Usage on the device: bash scripts/device_torch.sh (results in $OUT)
#   at once: the GPU tests of row pitches (C, bias, D, Z on every kernel), the torch road, the operator and the
#   public road; compute-sanitizer memcheck over the row-pitch tests; torch.compile(mode="reduce-overhead") of a
#   fraglab block and of its torch.nn twin, each with and without compute-sanitizer (scripts/reduce_overhead_check.py);
#   then, alone on the GPU, the per-call table and targets (benchmarks/torch_call_cost.py, with its cProfile) and
#   the door in `fraglab gemm --wgmma --bench` (the one-shot call rows).
set -u
OUT=${OUT:-/tmp/torch_out}; mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=200
SAN="compute-sanitizer --tool memcheck --report-api-errors no --print-limit 5"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv | tee "$OUT/gpu.txt"
date -u | tee -a "$OUT/gpu.txt"; python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)" | tee -a "$OUT/gpu.txt"
( timeout ${SAN_S:-150} $SAN python3 -m pytest -q -m gpu -p no:cacheprovider tests/gemm/test_row_pitch_gpu.py \
    > "$OUT/memcheck_row_pitch.log" 2>&1; echo "rc $?" >> "$OUT/memcheck_row_pitch.log" ) &
for layers in torch fraglab; do
  ( timeout ${SAN_S:-150} $SAN python3 scripts/reduce_overhead_check.py $layers --history \
      > "$OUT/reduce_overhead_sanitizer_$layers.log" 2>&1; echo "rc $?" >> "$OUT/reduce_overhead_sanitizer_$layers.log" ) &
done
{ for layers in torch fraglab; do timeout 120 python3 scripts/reduce_overhead_check.py $layers; echo "rc $?"; done; } \
    > "$OUT/reduce_overhead_plain.log" 2>&1 &
timeout ${TEST_S:-150} python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 --timeout 140 -rfE --tb=short --durations=5 \
    tests/gemm/test_row_pitch_gpu.py tests/gemm/test_torch_gpu.py tests/gemm/test_gemm_api_gpu.py 2>&1 \
    | grep -v Warning > "$OUT/pytest_torch.log"; tail -n 25 "$OUT/pytest_torch.log"
wait
for f in memcheck_row_pitch reduce_overhead_plain reduce_overhead_sanitizer_torch reduce_overhead_sanitizer_fraglab; do
  echo "$f: $(grep -E 'ERROR SUMMARY|passed|failed|: ok|FAILED|^rc ' "$OUT/$f.log" | cut -c1-300 | tr '\n' ' ')"
done
# the sanitizer logs in one file (at most 8 files come back)
for layers in torch fraglab; do echo "== $layers under memcheck"; cat "$OUT/reduce_overhead_sanitizer_$layers.log"; done \
    > "$OUT/reduce_overhead_sanitizer.log"; rm -f "$OUT"/reduce_overhead_sanitizer_*.log
timeout ${BENCH_S:-100} python3 benchmarks/torch_call_cost.py --json "$OUT/call_cost.json" --profile 2>&1 \
    | tee "$OUT/call_cost.log" | head -n 30
timeout 40 python3 -m fraglab gemm --wgmma --bench --size 256 --act relu --bias per_n --out-dtype f16 2>&1 \
    | tee "$OUT/bench_door.log" | tail -n 8
