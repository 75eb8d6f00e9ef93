set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
mkdir -p $OUT/r
o=$OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $o/gpu.txt; date -u >> $o/gpu.txt
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -n 15 --timeout 180 -rfE --tb=short tests/gemm/test_gemm_api_gpu.py tests/gemm/test_row_pitch_gpu.py tests/gemm/test_torch_gpu.py tests/gemm/test_tuning_gpu.py tests/bench > $o/tests_road.log 2>&1
echo "tests road: $(tail -1 $o/tests_road.log)"
for b in F C; do
  timeout 60 python3 -m fraglab gemm --bench --shapes batch --act relu --bias per_n --out-dtype f16 --b-order $b --json $o/batch_$b.json > $o/batch_$b.txt 2>&1
  echo "batch $b rc $?: $(grep -E 'fraglab >= cuBLAS \(torch.mm\)' $o/batch_$b.txt)"
done
date -u >> $o/gpu.txt
cd $o && tar czf ../res.tgz *.log *.txt *.json
