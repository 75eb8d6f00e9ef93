#!/bin/bash
# Where the time goes (H4): candidate tiles timed side by side, the SM clock under a long run, and ncu
# (full set, clock control off) on one 8192^3 f16 bias+ReLU launch. Files under $OUT; key numbers in the log.
set -o pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
stamp() { echo "=== $1 at +$(( $(date +%s) - t0 ))s"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
stamp variants; python3 benchmarks/wmma_profile.py time --out $OUT/variants.json 2>&1 | tee $OUT/variants.txt
stamp sustain; python3 benchmarks/wmma_profile.py sustain --seconds 8 2>&1 | tail -8
stamp ncu
timeout 240 ncu --clock-control none --set full --import-source no -k regex:gemm_wmma_kernel --launch-skip 1 \
  --launch-count 1 -f -o $OUT/gemm8192 python3 benchmarks/wmma_profile.py ncu 2>&1 | grep -v "^==PROF==" | tail -5
ncu --import $OUT/gemm8192.ncu-rep --page details --print-units base > $OUT/ncu_details.txt 2>&1
ncu --import $OUT/gemm8192.ncu-rep --page source --csv --print-source sass > $OUT/ncu_sass.csv 2>&1
grep -E "SM Frequency|Duration|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|DRAM Throughput|L2 Hit Rate|Registers Per|Achieved Occupancy|Issue Slots Busy|Issued Ipc|No Eligible|Warp Cycles Per Issued|Shared Memory|Bank|Stall|stall|est\. speedup|Executed Ipc|Pipe|Tensor" $OUT/ncu_details.txt | head -90
ls -la $OUT
stamp done
