export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
O=$OUT/final; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $O/gpu.txt; date -u >> $O/gpu.txt
run() { name=$1; shift; date -u +%H:%M:%S; python3 -m fraglab gemm --bench "$@" --json $O/$name.json > $O/$name.txt 2>&1; echo "$name: $(grep -E '^fraglab >= cuBLAS \(torch.mm\)' $O/$name.txt)"; }
for o in F C; do
  run decode_${o}_chain24 --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $o --chain 24
  run decode_${o} --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $o
done
run llm_F_chain24 --shapes llm --act relu --bias per_n --out-dtype f16 --chain 24
run llm_F --shapes llm --act relu --bias per_n --out-dtype f16
run ragged_F_chain24 --shapes ragged --act relu --bias per_n --out-dtype f16 --chain 24
run ragged_F --shapes ragged --act relu --bias per_n --out-dtype f16
date -u +%H:%M:%S
cd $OUT && tar czf final.tgz final && rm -rf final
