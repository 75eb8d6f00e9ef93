export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
mkdir -p $OUT/t
JOBS=15 OUT=$OUT/t bash scripts/device.sh env tests_wgmma 2>&1 | tail -4
for tool in memcheck synccheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 5 --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles 128x128,64x64pk2,128x64k2,64x128p,128x192c2 > $OUT/t/san_$tool.log 2>&1; echo "$tool exit $? $(grep -E 'ERROR SUMMARY' $OUT/t/san_$tool.log | tail -1)"
done
cd $OUT && tar czf t.tgz t && rm -rf t
