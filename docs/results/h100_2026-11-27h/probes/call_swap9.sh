set -u
export PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/r
for i in 1 2; do
  echo "== new tree, run $i"; PYTHONPATH=$PWD timeout 90 python3 benchmarks/gemm_call_cost.py 2>&1 | tail -4
  echo "== 502b1fc (session start), run $i"; (cd .carry/old && PYTHONPATH=$PWD timeout 90 python3 benchmarks/gemm_call_cost.py 2>&1 | tail -4)
done > $OUT/r/call_cost_ab.txt
cat $OUT/r/call_cost_ab.txt
