export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
O=$OUT/ep; mkdir -p $O
python3 .carry/ab_skinny_pairs.py $O/ab_pairs.json 2>&1 | grep -v Warn | tee $O/ab_pairs.log
for tool in memcheck racecheck synccheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 5 --report-api-errors no python3 benchmarks/skinny_sanitize.py > $O/san_$tool.log 2>&1; echo "$tool exit $? $(grep -E 'SUMMARY' $O/san_$tool.log | tail -1)"
done
cd $OUT && tar czf ep.tgz ep && rm -rf ep
