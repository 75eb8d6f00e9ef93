set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/r
date -u > $OUT/r/gpu.txt
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -n 15 --timeout 180 -rfE --tb=short tests/gemm/test_wgmma_swapped_gpu.py -k "pn2t or pkb2n2t" > $OUT/r/tests_n2t.log 2>&1
echo "tests: $(tail -1 $OUT/r/tests_n2t.log)"
T=64x96pn2t,64x96pkb2n2t
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles $T > $OUT/r/san_$tool.log 2>&1
  echo "$tool rc $?: $(grep -c ' ok' $OUT/r/san_$tool.log) ok, $(grep -c FAILED $OUT/r/san_$tool.log) failed; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/r/san_$tool.log | tail -1)"
done
T=64x96pn2t,64x96pkb2n2t,64x96pkb2t,128x96n2t
timeout 120 python3 .carry/precompile_tiles.py $T F
C=""
for nk in 4096x4096 4096x14336 4096x11008 6144x4096 8192x8192; do
  n=${nk%x*}; k=${nk#*x}
  for m in 144 160 176 192; do C="$C;$m,$n,$k,F,64x96pn2t+64x96pkb2n2t+64x96pkb2t+128x96n2t"; done
  C="$C;160,$n,$k,C,64x96pn2t+64x96pkb2n2t;192,$n,$k,C,64x96pn2t+64x96pkb2n2t+64x96pkb2t+128x96n2t"
done
timeout 300 python3 .carry/ab.py "${C#;}" > $OUT/r/ab_swap6.log 2>&1
cat $OUT/r/ab_swap6.log
cd $OUT && tar czf res.tgz r
