set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/r
OUT=$OUT/r JOBS=15 bash scripts/device.sh env tests_wgmma
cd $OUT && tar czf res.tgz r
