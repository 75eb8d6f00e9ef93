# session 22, final: the tuning and shapes GPU tests; --tune over the decode set (both B orders, 64x192p among the
# candidates now) into one table, then the set with it
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $O/gpu.txt; date -u >> $O/gpu.txt
s() { echo "[$1] $(date -u +%H:%M:%S)"; }
s pytest; timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/gemm/test_tuning_gpu.py tests/gemm/test_wgmma_shapes.py > $O/pytest_tuning.log 2>&1; tail -1 $O/pytest_tuning.log
for order in C F; do
  s tune$order; timeout 150 python3 -m fraglab gemm --tune --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $order --tuning $O/tuning.json --json $O/tune_decode_$order.json > $O/tune_decode_$order.log 2>&1; tail -3 $O/tune_decode_$order.log
  s decode${order}_tuned; FRAGLAB_GEMM_TUNING=$O/tuning.json timeout 100 python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $order --json $O/shapes_decode_${order}_tuned.json > $O/shapes_decode_${order}_tuned.log 2>&1; tail -9 $O/shapes_decode_${order}_tuned.log
done
s done
cd $O && tar czf logs.tgz *.log *.json gpu.txt
