set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
mkdir -p $OUT/r
o=$OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $o/gpu.txt; date -u >> $o/gpu.txt
timeout 100 python3 .carry/precompile_tiles.py 128x224r,128x256,128x192 C
C=""
for c in 200,14336,4096 256,14336,4096 256,28672,4096 256,57344,8192 384,28672,4096 512,14336,4096 512,28672,4096 768,14336,4096 1024,14336,4096 1024,10240,8192 200,57344,8192 320,14336,8192 1024,14336,14336; do
  C="$C;$c,C,128x256+128x192"
done
timeout 240 python3 .carry/ab.py "${C#;}" > $o/ab_224r.log 2>&1
cat $o/ab_224r.log
timeout 60 python3 -m fraglab gemm --bench --shapes batch --act relu --bias per_n --out-dtype f16 --b-order C --json $o/batch_C.json > $o/batch_C.txt 2>&1
echo "batch C rc $?: $(grep -E 'fraglab >= cuBLAS \(torch.mm\)' $o/batch_C.txt)"
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -n 15 --timeout 180 -rfE --tb=short tests/gemm/test_wgmma_gpu.py -k "128x224r" > $o/tests_224r.log 2>&1
echo "tests 128x224r: $(tail -1 $o/tests_224r.log)"
cd $o && tar czf ../res.tgz *.log *.txt *.json
