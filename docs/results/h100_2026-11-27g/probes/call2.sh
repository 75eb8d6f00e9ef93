set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/r
date -u > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >> $OUT/r/gpu.txt
timeout 330 python3 -m pytest -q -m gpu -p no:cacheprovider -n 15 --timeout 240 -rfE --tb=short tests/gemm/test_wgmma_gpu.py \
  -k "128x224 or 128x160 or 128x96 or accumulator_registers" > $OUT/r/tests_n.log 2>&1
tail -3 $OUT/r/tests_n.log
timeout 200 python3 .carry/ab.py "256,57344,8192,F,128x224+128x224c2+128x192;160,57344,8192,F,128x224+128x224c2+128x192;256,28672,4096,F,128x224+128x224c2;256,10240,8192,F,128x160+128x160c2+128x128c2;256,6144,4096,F,128x96+128x96c2+128x128c2;192,6144,4096,F,128x96+128x96c2+128x128c2;2048,28672,4096,F,128x256+128x224" > $OUT/r/ab2.log 2>&1
cat $OUT/r/ab2.log | tail -8
cd $OUT && tar czf res.tgz r
