export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
O=$OUT/tune; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt; date -u >> $O/gpu.txt
timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 tests/gemm/test_tuning_gpu.py tests/gemm/test_skinny.py 2>&1 | tail -2 | tee $O/pytest.log
for o in C F; do
  date -u +%H:%M:%S
  python3 -m fraglab gemm --tune --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $o --tuning $O/tuning.json --json $O/tune_$o.json > $O/tune_$o.txt 2>&1; tail -3 $O/tune_$o.txt
  FRAGLAB_GEMM_TUNING=$O/tuning.json python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $o --json $O/tuned_$o.json > $O/tuned_$o.txt 2>&1; grep -E '^fraglab >= cuBLAS \(|tuning table' $O/tuned_$o.txt
  FRAGLAB_GEMM_TUNING=$O/tuning.json python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $o --chain 24 --json $O/tuned_${o}_chain24.json > $O/tuned_${o}_chain24.txt 2>&1; grep -E '^fraglab >= cuBLAS \(|tuning table' $O/tuned_${o}_chain24.txt
done
date -u +%H:%M:%S
cd $OUT && tar czf tune.tgz tune && rm -rf tune
