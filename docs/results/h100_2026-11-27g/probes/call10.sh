set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/r
date -u > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >> $OUT/r/gpu.txt
timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider -n 15 --timeout 240 -rfE --tb=short tests/gemm/test_wgmma_gpu.py \
  -k "128x224r or 128x160r or 128x96r or accumulator_registers" > $OUT/r/tests_r.log 2>&1
tail -2 $OUT/r/tests_r.log
T=128x224r,128x160r,128x96r
for tool in memcheck racecheck synccheck; do
  timeout 80 compute-sanitizer --tool $tool --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles $T > $OUT/r/san_$tool.log 2>&1
  echo "$tool rc $?: $(grep -c ' ok' $OUT/r/san_$tool.log) ok, $(grep -c FAILED $OUT/r/san_$tool.log) failed; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/r/san_$tool.log | tail -1)"
done
timeout 200 python3 .carry/ab.py "128,11008,4096,C,128x96r;128,11008,11008,C,128x96r;128,11008,14336,C,128x96r;128,10240,8192,C,128x96r;256,57344,8192,C,128x224r;192,57344,8192,C,128x224r;160,57344,8192,C,128x224r;256,28672,4096,C,128x224r;512,28672,4096,C,128x224r;512,14336,4096,C,128x224r;1024,14336,4096,C,128x224r;256,10240,8192,C,128x160r;512,10240,4096,C,128x160r;1024,5120,4096,C,128x160r;256,6144,4096,C,128x96r;2048,28672,4096,C,128x224r;80,28672,4096,C,128x224r;96,57344,8192,C,128x224r" > $OUT/r/ab10.log 2>&1
cat $OUT/r/ab10.log
cd $OUT && tar czf res.tgz r
