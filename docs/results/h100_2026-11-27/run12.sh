set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p $R
T=$(date -u +%H%M)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $R/gpu_$T.txt; date -u >> $R/gpu_$T.txt; cat $R/gpu_$T.txt
SAN="compute-sanitizer --error-exitcode 9 --print-limit 5"
for tool in memcheck racecheck synccheck; do
  timeout 150 $SAN --tool $tool --report-api-errors no python3 benchmarks/wgmma_sanitize.py --tiles 128x256,128x128,64x128pc2,64x64pk2,128x64k2,128x128c2x2,128x64n2 > $R/sanitize_wgmma_${tool}_$T.log 2>&1; echo "$tool exit $?: $(tail -n 2 $R/sanitize_wgmma_${tool}_$T.log | tr '\n' ' ')"
done
for order in F C; do
python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order $order --json $R/shapes_decode_${order}_$T.json > $R/shapes_decode_${order}_$T.log 2>&1; tail -n 8 $R/shapes_decode_${order}_$T.log
done
python3 -m fraglab gemm --bench --shapes ragged --act relu --bias per_n --out-dtype f16 --b-order C --json $R/shapes_ragged_C_$T.json > $R/shapes_ragged_C_$T.log 2>&1; tail -n 14 $R/shapes_ragged_C_$T.log
tar czf $OUT/r.tgz -C $OUT r
