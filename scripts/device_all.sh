#!/usr/bin/env bash
# Device run before a stop: every GPU test, verify, and one pass of each user-facing GPU command.
# usage: device_all.sh [suite|commands|release|all]
#   suite: GPU tests in parallel; commands: CLI passes + capture;
#   release: capture + verify beside the GPU tests of the wings that changed, diffs with a carried
#            .carry/atlas_h100.json.gz and the bundled atlas, then `fraglab peak` and `gemm --wgmma --bench`
set -u
stage=${1:-all}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader
if [ "$stage" = release ]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr -c 'A-Za-z0-9\n' '_')
  ( timeout 300 python3 -m fraglab atlas capture --out "$OUT/atlas_${gpu}.json" > "$OUT/atlas.log" 2>&1
    echo "capture exit $?" >> "$OUT/atlas.log" ) &
  ( timeout 300 python3 -m fraglab verify > "$OUT/verify.log" 2>&1; echo "verify exit $?" >> "$OUT/verify.log"
    # the mma.sync / ldmatrix probe kernels through the library's poisoned launcher, under memcheck
    timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 \
      python3 scripts/ptx_mma_device.py --sanitize > /tmp/memcheck.log 2>&1
    echo "memcheck (mma/ldmatrix probes) exit $?: $(grep -E 'ERROR SUMMARY|sanitize pass' /tmp/memcheck.log | tr '\n' ' ')" \
      >> "$OUT/verify.log" ) &
  timeout 360 python3 -m pytest -q -m gpu -p no:cacheprovider -n ${JOBS:-12} --timeout 240 -rfE --tb=short \
      --durations=10 tests/probes tests/bench tests/cli tests/export tests/apis/test_ptx_wgmma.py \
      tests/apis/test_ptx_mma.py tests/apis/test_ptx_ldmatrix.py tests/gemm/test_wgmma_gpu.py 2>&1 | tee "$OUT/pytest_gpu_release.log" | tail -n 30
  wait
  tail -n 2 "$OUT/verify.log"; tail -n 2 "$OUT/atlas.log"
  for other in .carry/atlas_h100.json.gz ""; do
    echo "== atlas diff ${other:-bundled}" >> "$OUT/atlas.log"
    timeout 120 python3 -m fraglab atlas diff "$OUT/atlas_${gpu}.json" $other >> "$OUT/atlas.log" 2>&1
    echo "atlas diff ${other:-bundled} exit $?: $(tail -n 1 "$OUT/atlas.log")"
  done
  gzip -9 -f "$OUT/atlas_${gpu}.json"
  timeout 120 python3 -m fraglab peak --json "$OUT/peak.json" 2>&1 | tail -n 20
  timeout 200 python3 -m fraglab gemm --wgmma --bench --size 2048,4096,8192 --act relu --bias per_n \
      --json "$OUT/wgmma_bench.json" --plot "$OUT/wgmma_bench.png" 2>&1 | tail -n 30
  exit 0
fi
if [ "$stage" != commands ]; then
# NVRTC compiles dominate the suite's time, so the tests run in parallel workers sharing CuPy's kernel cache
timeout 480 python3 -m pytest -q -m gpu -p no:cacheprovider -n ${JOBS:-14} --timeout 240 -rfE --tb=short \
    --durations=20 2>&1 | tee "$OUT/pytest_gpu_all.log" | tail -n 40
fi
[ "$stage" = suite ] && exit 0
timeout 150 python3 -m fraglab verify > "$OUT/verify.log" 2>&1; echo "verify exit $?: $(tail -1 "$OUT/verify.log")"
timeout 150 python3 -m fraglab layout --frag matrix_a --source gpu --format png --lane 5 --out "$OUT/matrix_a_gpu.png" | tail -1
timeout 150 python3 -m fraglab layout --mma --shape m32n8k16 --dtype bf16 --source gpu --format png --out "$OUT/mma_gpu.png" | tail -1
timeout 150 python3 -m fraglab gemm --wmma --check --size 1000 --act gelu --bias per_m --beta 0.5 --save-z 2>&1 | tail -4
timeout 150 python3 -m fraglab gemm --simt --check --size 127 --kernel warp_tiled 2>&1 | tail -4
timeout 150 python3 -m fraglab gemm --wgmma --check --size 1000 --act relu --bias per_n 2>&1 | tail -4
# every family captured on this GPU, then compared with the bundled atlas (an H100/H200 diff when run on the other)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr -c 'A-Za-z0-9\n' '_')
timeout 150 python3 -m fraglab atlas capture --out "$OUT/atlas_${gpu}.json" 2>&1 | tail -3
timeout 150 python3 -m fraglab atlas diff "$OUT/atlas_${gpu}.json" > "$OUT/atlas_diff.log" 2>&1
echo "atlas diff exit $?: $(tail -1 "$OUT/atlas_diff.log")"
gzip -9 -f "$OUT/atlas_${gpu}.json"
