set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/r
OUT=$OUT/r JOBS=15 bash scripts/device.sh env tests_wgmma
T=128x224,128x160,128x96,128x224c2,128x160c2,128x96c2
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles $T > $OUT/r/sanitize_$tool.log 2>&1
  echo "$tool rc $?: $(grep -c ' ok' $OUT/r/sanitize_$tool.log) ok, $(grep -c FAILED $OUT/r/sanitize_$tool.log) failed; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/r/sanitize_$tool.log | tail -1)"
done
cd $OUT && tar czf res.tgz r
