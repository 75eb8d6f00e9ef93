#!/usr/bin/env bash
# One device call for the wgmma family: build every probe kernel (sm_90a), run every method of every
# entry, compare methods and model, run compute-sanitizer memcheck and racecheck on a subset of
# the probes, print a short table last. Results go to $OUT (JSON gzip + logs).
# Usage (repo root, on the GPU machine): bash scripts/device_ptx_wgmma.sh
set -u
OUT=${OUT:-/tmp/fraglab_wgmma}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export PATH=/usr/local/cuda/bin:$PATH

# Load fraglab.apis.* from this tree without importing the package roots (other wings may be mid-edit).
RUNNER=$(mktemp /tmp/run_wgmma_XXXX.py)
cat > "$RUNNER" <<PY
import gzip, json, sys, types
for name, path in (("fraglab", "$ROOT/fraglab"), ("fraglab.apis", "$ROOT/fraglab/apis")):
    mod = types.ModuleType(name); mod.__path__ = [path]; sys.modules[name] = mod
from fraglab.apis import wgmma_capture as wc
sanitize = "--sanitize" in sys.argv
if "--experiments" in sys.argv:
    res = wc.run_experiments()
    with open("$OUT/wgmma_experiments.json", "w") as f:
        json.dump(res, f, indent=1)
    print("\n".join(wc.experiment_lines(res)))
    raise SystemExit(0)
doc = wc.capture(list(wc.SANITIZE_KEYS) if sanitize else None)
if not sanitize:
    with gzip.open("$OUT/wgmma_capture.json.gz", "wt") as f:
        json.dump(doc, f)
lines = wc.summary_lines(doc)
print("\n".join(lines))
bad = sum(bool(r["disagreements"]) for r in doc["entries"].values()) + len(doc["errors"])
print(f"SUMMARY {len(doc['entries'])} entries, {bad} with disagreements or errors, compile {doc['provenance']['compile_s']} s, {doc['provenance']['gpu_name']}")
PY

nvidia-smi -L | tee "$OUT/gpu.txt"
if [ "${WGMMA_SKIP_CAPTURE:-0}" != 1 ]; then   # WGMMA_SKIP_CAPTURE=1: experiments, sanitizers, tests only
  echo "== capture"
  /usr/bin/time -f "capture wall %e s" timeout 300 python3 "$RUNNER" > "$OUT/capture.log" 2>&1
  echo "capture rc=$?"
fi
echo "== experiments (descriptor fields, unaligned tiles, random products)"
timeout 120 python3 "$RUNNER" --experiments 2>&1 | tee "$OUT/experiments.log"
echo "== memcheck"
timeout 120 compute-sanitizer --tool memcheck --print-limit 20 python3 "$RUNNER" --sanitize > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|SUMMARY" "$OUT/memcheck.log" | tail -3
echo "== racecheck"
timeout 120 compute-sanitizer --tool racecheck --print-limit 20 python3 "$RUNNER" --sanitize > "$OUT/racecheck.log" 2>&1
echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|ERROR SUMMARY|SUMMARY" "$OUT/racecheck.log" | tail -3
echo "== pytest (GPU tests of this family)"
PYTHONPATH=$ROOT timeout 120 python3 -m pytest -q -m gpu tests/apis/test_ptx_wgmma.py > "$OUT/pytest.log" 2>&1
echo "pytest rc=$?"; tail -3 "$OUT/pytest.log"
echo "== table"
[ -f "$OUT/capture.log" ] && { grep -v " agree$" "$OUT/capture.log" | tail -60; grep -c " agree$" "$OUT/capture.log" | sed 's/^/entries agreeing: /'; }
