set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
mkdir -p $OUT/r
OUT=$OUT/r JOBS=15 bash scripts/device.sh env tests_rest
timeout 90 python3 benchmarks/gemm_call_cost.py > $OUT/r/gemm_call_cost.txt 2>&1; tail -3 $OUT/r/gemm_call_cost.txt
timeout 150 python3 benchmarks/torch_call_cost.py > $OUT/r/torch_call_cost.txt 2>&1; tail -30 $OUT/r/torch_call_cost.txt
cd $OUT/r && tar czf ../res.tgz pytest_gpu.log gemm_call_cost.txt torch_call_cost.txt gpu.txt
