set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/r
date -u > $OUT/r/gpu.txt
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -n 15 --timeout 180 -rfE --tb=short tests/gemm/test_wgmma_swapped_gpu.py -k "64x80 or 128x80" > $OUT/r/tests_n80b.log 2>&1
echo "tests: $(tail -1 $OUT/r/tests_n80b.log)"
T=64x80pkb2n2t,64x80pk2t,64x80pkb2t,128x80n2t
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles $T > $OUT/r/san_$tool.log 2>&1
  echo "$tool rc $?: $(grep -c ' ok' $OUT/r/san_$tool.log) ok, $(grep -c FAILED $OUT/r/san_$tool.log) failed; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/r/san_$tool.log | tail -1)"
done
timeout 120 python3 .carry/precompile_tiles.py 64x80pkb2n2t,64x80pk2t,64x80pkb2t,128x80n2t,64x96pk2t,64x96pkb2t,64x96pkb2n2t,64x160pt,64x160pk2t F
C=""
for nk in 4096x4096 4096x14336 6144x4096 8192x8192 8192x28672; do
  n=${nk%x*}; k=${nk#*x}
  for m in 72 80; do C="$C;$m,$n,$k,F,64x80pk2t+64x80pkb2t+64x96pk2t+64x96pkb2t"; done
  for m in 144 160; do C="$C;$m,$n,$k,F,64x80pkb2n2t+128x80n2t+64x96pkb2n2t+64x160pt+64x160pk2t"; done
  C="$C;160,$n,$k,C,64x80pkb2n2t+128x80n2t+64x160pt"
done
timeout 300 python3 .carry/ab.py "${C#;}" > $OUT/r/ab_swap11.log 2>&1
cat $OUT/r/ab_swap11.log
cd $OUT && tar czf res.tgz r
