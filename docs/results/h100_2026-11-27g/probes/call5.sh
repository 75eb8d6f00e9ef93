set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
mkdir -p $OUT/r
date -u > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >> $OUT/r/gpu.txt
T=128x224,128x160,128x96,128x224c2,128x160c2,128x96c2
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles $T > $OUT/r/sanitize_$tool.log 2>&1
  echo "$tool rc $?: $(grep -c ' ok' $OUT/r/sanitize_$tool.log) ok, $(grep -c FAILED $OUT/r/sanitize_$tool.log) failed; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/r/sanitize_$tool.log | tail -1)"
done
timeout 100 python3 .carry/ab.py "80,14336,4096,F,128x256;96,14336,4096,F,128x256;160,14336,4096,F,128x256;192,14336,4096,F,128x256" > $OUT/r/ab5.log 2>&1; cat $OUT/r/ab5.log
for set in batch llm decode; do
  timeout 150 python3 -m fraglab gemm --bench --shapes $set --act relu --bias per_n --out-dtype f16 --b-order F --json $OUT/r/${set}_F.json > $OUT/r/${set}_F.txt 2>&1
  echo "$set rc $?"; grep -E "fraglab >=|lowest" $OUT/r/${set}_F.txt | head -4
done
cd $OUT && tar czf res.tgz r
