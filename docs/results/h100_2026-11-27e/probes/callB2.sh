set -x
export PYTHONPATH=$PWD PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
for o in F C; do
  timeout 200 python3 -m fraglab gemm --bench --shapes batch --act relu --bias per_n --out-dtype f16 --b-order $o --json $OUT/batch_$o.json > $OUT/batch_$o.txt 2>&1
done
date -u >> $OUT/gpu.txt
JOBS=8 TESTS="tests/gemm/test_wgmma_shapes.py tests/gemm/test_tuning_gpu.py tests/gemm/test_wgmma_schedule.py" OUT=$OUT/t2 timeout 150 bash scripts/device.sh tests > $OUT/tests_small.log 2>&1
cd $OUT && tar czf x.tgz *.txt *.json *.log t2 2>/dev/null
