export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
O=$OUT/rule; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt; date -u >> $O/gpu.txt
timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider -n 8 tests/gemm/test_skinny.py tests/gemm/test_tuning_gpu.py tests/gemm/test_programmatic_launch_gpu.py 2>&1 | tail -2 | tee $O/pytest.log
date -u +%H:%M:%S
python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order F --json $O/decode_F.json > $O/decode_F.txt 2>&1; grep -E '^fraglab >= cuBLAS \(' $O/decode_F.txt
python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order F --chain 24 --json $O/decode_F_chain24.json > $O/decode_F_chain24.txt 2>&1; grep -E '^fraglab >= cuBLAS \(' $O/decode_F_chain24.txt
date -u +%H:%M:%S
cd $OUT && tar czf rule.tgz rule && rm -rf rule
