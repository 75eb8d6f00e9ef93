#!/bin/bash
# The one device run of issue 27 items 2-3 (mma.sp measured, fraglab explain on the GPU's own cubin).
# bash docs/results/h100_2026-11-25b/mma_sp/device_run.sh   (on the device; logs and the atlas go to $OUT)
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD PATH=/usr/local/cuda/bin:$PATH
L=$OUT/mma_sp.log
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv;
  python3 -c "import cupy; print('cupy', cupy.__version__)"; python3 -c "import cuda.bindings; print('cuda-bindings present')" || true; } 2>&1 | tee $L
echo "== capture + verify (mma_sp)" | tee -a $L
timeout 60 python3 - <<'PY' 2>&1 | tee -a $L
import gzip, json, os, time
from fraglab.probes.run import capture_atlas
from fraglab.layouts.verify import check_combination
t = time.perf_counter()
atlas = capture_atlas(apis=("mma_sp",))
print("captured", len(atlas.entries), "refused", atlas.refused, "in", round(time.perf_counter() - t, 1), "s")
data = (json.dumps(atlas.to_dict(), separators=(",", ":")) + "\n").encode()
open(os.path.join(os.environ["OUT"], "atlas_sm90_sparse.json.gz"), "wb").write(gzip.compress(data, mtime=0))
bad = 0
for spec in atlas.specs():
    row = check_combination(spec, {m: atlas.raw_layout(spec, m) for m in atlas.entries[spec.key]}, 90, None)
    bad += not row.ok
    print(f"{spec.key:44s} methods={row.methods} model={row.model} ign={row.ignored} {row.problems}")
print("verify:", len(atlas.entries) - bad, "of", len(atlas.entries), "agree")
PY
echo "== GPU tests: mma.sp family + explain" | tee -a $L
timeout 80 python3 -m pytest -q -p no:cacheprovider tests/apis/test_ptx_mma_sp.py tests/explain -m gpu --tb=line 2>&1 | tail -25 | tee -a $L
echo "== explain: the running GPU's cubin" | tee -a $L
timeout 30 python3 -m fraglab explain --api mma_sp --arch sm_90 > $OUT/explain_mma_sp.txt 2>&1; echo "rc $?" | tee -a $L
head -12 $OUT/explain_mma_sp.txt | tee -a $L
echo "== compute-sanitizer memcheck + racecheck (mma.sp probes, a spread)" | tee -a $L
K="sel3 or (matrix_b and m16n8k32) or m16n8k64_s32_s8 or m16n8k64_f32_e4m3"
timeout 45 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider \
  tests/apis/test_ptx_mma_sp.py -m gpu -k "$K" 2>&1 | tail -4 | tee -a $L
timeout 25 compute-sanitizer --tool racecheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider \
  tests/apis/test_ptx_mma_sp.py -m gpu -k "sel3" 2>&1 | tail -3 | tee -a $L
date -u | tee -a $L
