# session 22: the tuning GPU tests, the skinny GEMM's new rules under memcheck, the decode set with a row-major B
# before and after `gemm --tune`, then the same for a column-major B while time lasts
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $O/gpu.txt; date -u >> $O/gpu.txt
t0=$SECONDS
s() { echo "[$1] $(date -u +%H:%M:%S) start"; }
s pytest; timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/gemm/test_tuning_gpu.py > $O/pytest_tuning.log 2>&1; tail -1 $O/pytest_tuning.log
s memcheck; timeout 90 compute-sanitizer --tool memcheck --report-api-errors no python3 benchmarks/skinny_sanitize.py > $O/sanitize_skinny_memcheck.log 2>&1; tail -2 $O/sanitize_skinny_memcheck.log
s decodeC; timeout 120 python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order C --json $O/shapes_decode_C.json > $O/shapes_decode_C.log 2>&1; tail -4 $O/shapes_decode_C.log
s tuneC; timeout 200 python3 -m fraglab gemm --tune --shapes decode --act relu --bias per_n --out-dtype f16 --b-order C --tuning $O/tuning.json --json $O/tune_decode_C.json > $O/tune_decode_C.log 2>&1; tail -3 $O/tune_decode_C.log
s decodeC_tuned; FRAGLAB_GEMM_TUNING=$O/tuning.json timeout 120 python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order C --json $O/shapes_decode_C_tuned.json > $O/shapes_decode_C_tuned.log 2>&1; tail -5 $O/shapes_decode_C_tuned.log
echo "elapsed $((SECONDS - t0))"
if [ $((SECONDS - t0)) -lt 300 ]; then
s decodeF; timeout 100 python3 -m fraglab gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order F --json $O/shapes_decode_F.json > $O/shapes_decode_F.log 2>&1; tail -4 $O/shapes_decode_F.log
fi
echo "elapsed $((SECONDS - t0))"
cd $O && tar czf logs.tgz *.log *.json gpu.txt 2>/dev/null; ls $O | wc -l
