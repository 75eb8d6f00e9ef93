set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
mkdir -p $OUT/r
OUT=$OUT/r JOBS=15 bash scripts/device.sh env tests_wgmma
timeout 120 python3 .carry/ab.py "4096,4096,4096,F,128x256;160,4096,4096,F,64x80pkb2n2t;80,4096,4096,F,64x96pk2t;256,57344,8192,F,128x224" > $OUT/r/ab_refactor.log 2>&1
cat $OUT/r/ab_refactor.log
cd $OUT/r && tar czf ../res.tgz pytest_gpu.log ab_refactor.log gpu.txt
