set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/r
date -u > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >> $OUT/r/gpu.txt
cat $OUT/r/gpu.txt
timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider -n 15 --timeout 240 -rfE --tb=short tests/gemm/test_wgmma_swapped_gpu.py > $OUT/r/tests_swapped.log 2>&1
tail -15 $OUT/r/tests_swapped.log
T=64x96pk2t,64x96pkb2t,64x128pk2t,64x160pk2t,64x160pt,64x192pt,128x96t,128x128t,128x160t,128x192t
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles $T > $OUT/r/san_$tool.log 2>&1
  echo "$tool rc $?: $(grep -c ' ok' $OUT/r/san_$tool.log) ok, $(grep -c FAILED $OUT/r/san_$tool.log) failed; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/r/san_$tool.log | tail -1)"
done
C=""
for nk in 4096x4096 6144x4096 4096x14336 8192x8192 10240x8192 8192x28672 28672x4096 57344x8192 11008x4096 14336x4096 4096x11008; do
  n=${nk%x*}; k=${nk#*x}
  for o in F C; do
    C="$C;80,$n,$k,$o,64x96pk2t+64x96pkb2t+128x96t;96,$n,$k,$o,64x96pk2t+64x96pkb2t+128x96t;128,$n,$k,$o,64x128pk2t+128x128t;160,$n,$k,$o,64x160pk2t+64x160pt+128x160t;192,$n,$k,$o,64x192pt+128x192t"
  done
done
timeout 400 python3 .carry/ab.py "${C#;}" > $OUT/r/ab_swap2.log 2>&1
cat $OUT/r/ab_swap2.log
cd $OUT && tar czf res.tgz r
