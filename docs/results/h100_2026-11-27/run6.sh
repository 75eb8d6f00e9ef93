set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $R/gpu_$T.txt; date -u >> $R/gpu_$T.txt; cat $R/gpu_$T.txt
SAN="compute-sanitizer --error-exitcode 9 --print-limit 5"
for tool in memcheck racecheck synccheck; do
  $SAN --tool $tool python3 benchmarks/dram_read_sanitize.py > $R/sanitize_dram_read_${tool}_$T.log 2>&1; echo "$tool exit $?: $(tail -n 2 $R/sanitize_dram_read_${tool}_$T.log | tr '\n' ' ')"
done
python3 -m fraglab peak --memory --sizes 4,8,16,32,64,4096x4096,4096x11008,4096x14336,11008x11008,11008x14336,14336x14336,1024 --json $R/peak_memory_$T.json --plot $R/peak_memory_$T.png > $R/peak_memory_$T.log 2>&1; cat $R/peak_memory_$T.log
for order in F C; do
python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $order --json $R/shapes_decode_${order}_$T.json > $R/shapes_decode_${order}_$T.log 2>&1; tail -n 8 $R/shapes_decode_${order}_$T.log
done
python3 -m fraglab gemm --bench --shapes ragged --act relu --bias per_n --out-dtype f16 --b-order C --json $R/shapes_ragged_C_$T.json > $R/shapes_ragged_C_$T.log 2>&1; cat $R/shapes_ragged_C_$T.log
python3 -m pytest -q -m gpu -p no:cacheprovider -rfE --tb=short tests/bench tests/cli tests/gemm/test_wgmma_shapes.py > $R/pytest_bench_cli_$T.log 2>&1; tail -n 3 $R/pytest_bench_cli_$T.log
tar czf $OUT/r.tgz -C $OUT r
