export PYTHONUNBUFFERED=1
rm -rf /tmp/old && mkdir /tmp/old && cp -r fraglab kernels benchmarks /tmp/old/ && cp .carry/wgmma_before.cu /tmp/old/kernels/gemm/wgmma.cu
for round in 1 2; do
  echo "== before (launch_dependents at the start), round $round"; (cd /tmp/old && PYTHONPATH=/tmp/old timeout 250 python3 benchmarks/decode_chain.py --layers 4 --m 1,32,64,128 2>&1 | tail -5)
  echo "== after (after the last mainloop), round $round"; PYTHONPATH=$PWD timeout 250 python3 benchmarks/decode_chain.py --layers 4 --m 1,32,64,128 2>&1 | tail -5
done
