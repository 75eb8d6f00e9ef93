# session 22: the one-shot call costs on the final tree (the tuning lookup sits in the per-plan path)
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $O/gpu.txt; date -u >> $O/gpu.txt
timeout 120 python3 benchmarks/gemm_call_cost.py --json $O/gemm_call_cost.json > $O/gemm_call_cost.log 2>&1; tail -12 $O/gemm_call_cost.log
timeout 150 python3 benchmarks/torch_call_cost.py --json $O/torch_call_cost.json > $O/torch_call_cost.log 2>&1; tail -25 $O/torch_call_cost.log
