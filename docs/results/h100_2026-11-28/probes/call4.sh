set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
mkdir -p $OUT/r
o=$OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $o/gpu.txt; date -u >> $o/gpu.txt
python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)" >> $o/gpu.txt
git log --oneline -1 >> $o/gpu.txt 2>/dev/null
for s in "ragged C" "ragged F" "decode F" "decode C" "llm F" "llm C"; do set -- $s
  timeout 150 python3 -m fraglab gemm --bench --shapes $1 --act relu --bias per_n --out-dtype f16 --b-order $2 --json $o/$1_$2.json > $o/$1_$2.txt 2>&1
  echo "$(date -u +%H:%M:%S) $1 $2 rc $?: $(grep -E 'fraglab >= cuBLAS' $o/$1_$2.txt | head -2 | tr '\n' ' ')"
done
for b in F C; do
  timeout 150 python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $b --chain 24 --json $o/decode_${b}_chain24.json > $o/decode_${b}_chain24.txt 2>&1
  echo "$(date -u +%H:%M:%S) decode $b chain24 rc $?: $(grep -E 'fraglab >= cuBLAS \(torch.mm\)' $o/decode_${b}_chain24.txt)"
done
timeout 200 python3 benchmarks/wgmma_fp8_rowwise.py --json $o/fp8_rowwise.json > $o/fp8_rowwise.txt 2>&1
echo "$(date -u +%H:%M:%S) fp8 rowwise rc $?"; tail -8 $o/fp8_rowwise.txt
date -u >> $o/gpu.txt
cd $o && tar czf ../res.tgz *.txt *.json
