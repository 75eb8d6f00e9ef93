# session 22: torch_call_cost on the tree before the session (.carry/head = git archive 80c6f0a) and the final tree,
# in one call, alternating
export PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $O/gpu.txt; date -u >> $O/gpu.txt
ROOT=$PWD
(cd .carry/head && PYTHONPATH=$PWD timeout 100 python3 benchmarks/torch_call_cost.py --json $O/torch_call_cost_head.json > $O/torch_call_cost_head.log 2>&1); grep "^256x\|target" $O/torch_call_cost_head.log
PYTHONPATH=$ROOT timeout 100 python3 benchmarks/torch_call_cost.py --json $O/torch_call_cost.json > $O/torch_call_cost.log 2>&1; grep "^256x\|target" $O/torch_call_cost.log
