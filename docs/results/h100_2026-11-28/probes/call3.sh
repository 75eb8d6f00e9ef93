set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
mkdir -p $OUT/r
date -u > $OUT/r/gpu.txt
timeout 150 python3 .carry/precompile_tiles.py 64x128pkb2n2t,128x128n2t,64x128pkb2,128x128c2,128x96,128x64,128x224,128x128 F
timeout 100 python3 .carry/precompile_tiles.py 64x128pkb2,128x128c2,128x128,128x64 C
C=""
for nk in 4096x4096 4096x14336 6144x4096 8192x8192; do n=${nk%x*}; k=${nk#*x}
  for o in F C; do C="$C;256,$n,$k,$o,64x128pkb2n2t+128x128n2t"; done
done
C="$C;224,4096,4096,F,64x128pkb2n2t+128x128n2t;200,4096,14336,F,64x128pkb2n2t+128x128n2t;256,8192,28672,F,64x128pkb2n2t+128x128n2t;256,14336,4096,F,128x128n2t;240,6144,4096,C,64x128pkb2n2t+128x128n2t"
timeout 200 python3 .carry/ab.py "${C#;}" > $OUT/r/ab_256.log 2>&1
cat $OUT/r/ab_256.log
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -n 15 --timeout 140 -rfE --tb=short tests/gemm/test_wgmma_swapped_gpu.py -k "64x128pkb2n2t or 128x128n2t" > $OUT/r/tests_n2t_128.log 2>&1
echo "tests new tiles: $(tail -1 $OUT/r/tests_n2t_128.log)"
OUT=$OUT/r JOBS=15 bash scripts/device.sh tests_rest
cd $OUT/r && tar czf ../res.tgz *.log gpu.txt
