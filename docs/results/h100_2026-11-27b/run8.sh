set -uo pipefail
export PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader | tee $R/gpu_$T.txt; date -u
PYTHONPATH=$PWD timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/gemm/test_bias_16bit_gpu.py tests/gemm/test_bias_dtype.py tests/gemm/test_gemm_api.py > $R/pytest_bias_$T.log 2>&1; tail -n 3 $R/pytest_bias_$T.log
grep -E "FAILED|Error" $R/pytest_bias_$T.log | head -20
for tool in memcheck racecheck; do
PYTHONPATH=$PWD timeout 200 compute-sanitizer --error-exitcode 9 --print-limit 5 --tool $tool --report-api-errors no python3 -m pytest -q -p no:cacheprovider tests/gemm/test_bias_16bit_gpu.py -k "is_read_as_it_is and float16 and (skinny or pk2 or 128x256 or c2)" > $R/sanitize_bias_${tool}_$T.log 2>&1; echo "$tool exit $?: $(grep -E 'passed|failed' $R/sanitize_bias_${tool}_$T.log | tail -n 1); $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/sanitize_bias_${tool}_$T.log | tail -n 1)"
done
(cd .carry/head && PYTHONPATH=$PWD timeout 150 python3 benchmarks/torch_call_cost.py --json $R/torch_call_cost_head_$T.json > $R/torch_call_cost_head_$T.log 2>&1)
PYTHONPATH=$PWD timeout 150 python3 benchmarks/torch_call_cost.py --json $R/torch_call_cost_$T.json > $R/torch_call_cost_$T.log 2>&1
python3 - $R/torch_call_cost_head_$T.json $R/torch_call_cost_$T.json <<'PY'
import json, sys
head, new = (json.load(open(p)) for p in sys.argv[1:])
keys = ["F.linear", "fraglab.torch.linear", "F.linear + relu", "fraglab.torch.linear(bias, relu)", "torch._addmm_activation", "fraglab.gemm(torch, bias, relu)"]
for h, n in zip(head["rows"], new["rows"]):
    print(f"{h['m']}x{h['n']}x{h['k']}: " + "  ".join(f"{k} {h[k]:.1f}->{n[k]:.1f}" for k in keys))
PY
tar czf $OUT/r.tgz -C $OUT r
