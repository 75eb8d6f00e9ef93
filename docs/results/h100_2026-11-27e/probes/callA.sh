set -x
export PYTHONPATH=$PWD PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $OUT/gpu.txt; date -u >> $OUT/gpu.txt
python3 .carry/hot_cold.py "128,4096,4096,F,64x64pc2+64x64pk2;128,4096,4096,C,64x64pc2;64,4096,4096,F,64x64pc2+64x128p;64,4096,4096,C,;8,4096,4096,F,;32,4096,4096,F,;128,11008,11008,F,;64,14336,4096,F," > $OUT/hot_cold.log 2>&1
for s in "128,4096,4096,F,64x64pc2" "64,4096,4096,F,64x64pc2"; do
  ncu --kernel-name regex:"nvjet|gemm_wgmma" --launch-skip 0 --launch-count 8 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy --section SchedulerStats python3 .carry/ncu_m128.py "$s" > $OUT/ncu_${s%%,*}.log 2>&1
done
cd $OUT && tar czf x.tgz *.log gpu.txt
