set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
mkdir -p $OUT/r
OUT=$OUT/r JOBS=15 bash scripts/device.sh env tests_wgmma
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider --timeout 180 -rfE --tb=short tests/gemm/test_torch_gpu.py -k swapped > $OUT/r/torch_swapped.log 2>&1
echo "torch swapped: $(tail -1 $OUT/r/torch_swapped.log)"
for s in "batch F" "batch C"; do set -- $s
  timeout 110 python3 -m fraglab gemm --bench --shapes $1 --act relu --bias per_n --out-dtype f16 --b-order $2 --json $OUT/r/$1_$2.json > $OUT/r/$1_$2.txt 2>&1
  echo "$1 $2 rc $?: $(grep -E 'fraglab >= cuBLAS \(torch.mm\)' $OUT/r/$1_$2.txt)"
done
cd $OUT/r && tar czf ../res.tgz pytest_gpu.log torch_swapped.log batch_*.txt batch_*.json gpu.txt
