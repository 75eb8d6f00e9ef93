set -x
export PYTHONPATH=$PWD PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
for o in F C; do
  timeout 200 python3 -m fraglab gemm --bench --shapes batch --act relu --bias per_n --out-dtype f16 --b-order $o --json $OUT/batch_$o.json > $OUT/batch_$o.txt 2>&1
done
date -u >> $OUT/gpu.txt
JOBS=15 OUT=$OUT/t timeout 420 bash scripts/device.sh env tests_wgmma > $OUT/tests_wgmma.log 2>&1
date -u >> $OUT/gpu.txt
cd $OUT && tar czf x.tgz *.txt *.json *.log t 2>/dev/null
