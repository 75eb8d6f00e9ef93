export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
O=$OUT/pdl; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > $O/gpu.txt; date -u >> $O/gpu.txt
for p in 0 1; do for o in F C; do
  date -u
  FRAGLAB_PROGRAMMATIC_LAUNCH=$p python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $o --chain 24 --json $O/decode_${o}_chain24_pdl$p.json > $O/decode_${o}_chain24_pdl$p.txt 2>&1; tail -7 $O/decode_${o}_chain24_pdl$p.txt | head -2
done; done
for p in 0 1; do
  FRAGLAB_PROGRAMMATIC_LAUNCH=$p python3 -m fraglab gemm --bench --shapes llm --act relu --bias per_n --out-dtype f16 --chain 24 --json $O/llm_F_chain24_pdl$p.json > $O/llm_F_chain24_pdl$p.txt 2>&1; tail -7 $O/llm_F_chain24_pdl$p.txt | head -2
done
date -u
cd $OUT && tar czf pdl.tgz pdl && rm -rf pdl
