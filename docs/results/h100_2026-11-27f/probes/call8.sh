#!/usr/bin/env bash
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/out}; R=/tmp/res8; mkdir -p $R
JOBS=15 OUT=$R bash scripts/device.sh env tests_rest | grep -v "^\.\.\.\."
tar czf $OUT/res.tgz -C $R .
