# session 22: the skinny GEMM's reduction in runs of four columns: A/B, its GPU tests, compute-sanitizer
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $O/gpu.txt; date -u >> $O/gpu.txt
s() { echo "[$1] $(date -u +%H:%M:%S)"; }
s ab; timeout 150 python3 .carry/ab_skinny_epi.py $O/ab_skinny_epi.json > $O/ab_skinny_epi.log 2>&1; cat $O/ab_skinny_epi.log | tail -20
for tool in memcheck racecheck synccheck; do
  s $tool; timeout 100 compute-sanitizer --tool $tool --report-api-errors no python3 benchmarks/skinny_sanitize.py > $O/sanitize_skinny_$tool.log 2>&1; tail -1 $O/sanitize_skinny_$tool.log
done
s pytest; timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 tests/gemm/test_skinny.py tests/gemm/test_bias_16bit_gpu.py tests/gemm/test_tuning_gpu.py > $O/pytest_skinny.log 2>&1; tail -1 $O/pytest_skinny.log
s done
cd $O && tar czf logs.tgz *.log *.json gpu.txt
