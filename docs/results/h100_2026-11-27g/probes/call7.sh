set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/r
date -u > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >> $OUT/r/gpu.txt
timeout 560 python3 .carry/ab.py "$(cat .carry/cases7.txt)" > $OUT/r/ab7.log 2>&1
cat $OUT/r/ab7.log
cd $OUT && tar czf res.tgz r
