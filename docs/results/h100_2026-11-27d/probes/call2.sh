export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
O=$OUT/chain; mkdir -p $O
bash scripts/device.sh env > $O/env.txt 2>&1; cat $O/gpu.txt 2>/dev/null; cp $OUT/gpu.txt $O/ 2>/dev/null
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -n 4 tests/bench/test_gemm_wmma_bench.py tests/gemm/test_wgmma_shapes.py 2>&1 | tail -3
for o in F C; do
  date -u
  python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $o --chain 24 --json $O/decode_${o}_chain24.json > $O/decode_${o}_chain24.txt 2>&1; tail -8 $O/decode_${o}_chain24.txt
  python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $o --json $O/decode_${o}.json > $O/decode_${o}.txt 2>&1; tail -8 $O/decode_${o}.txt
done
date -u
python3 -m fraglab gemm --bench --shapes llm --act relu --bias per_n --out-dtype f16 --chain 24 --json $O/llm_F_chain24.json > $O/llm_F_chain24.txt 2>&1; tail -6 $O/llm_F_chain24.txt
date -u
cd $OUT && tar czf logs.tgz chain
