set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
mkdir -p $OUT/r
date -u > $OUT/r/gpu.txt
timeout 100 python3 benchmarks/torch_call_cost.py > $OUT/r/torch_call_cost.txt 2>&1; echo "torch rc $?"
timeout 80 python3 benchmarks/gemm_call_cost.py > $OUT/r/gemm_call_cost.txt 2>&1; echo "cupy rc $?"
date -u >> $OUT/r/gpu.txt
cat $OUT/r/torch_call_cost.txt $OUT/r/gemm_call_cost.txt | tail -40
