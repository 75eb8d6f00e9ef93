#!/usr/bin/env bash
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
OUT=${OUT:-/tmp/out}
date -u
for round in 1 2; do
for cfg in "1 0" "0 0" "1 1" "0 1"; do
  set -- $cfg
  export FRAGLAB_PROGRAMMATIC_LAUNCH=$1 NO_WEIGHT_PREFETCH=$2
  tag="pdl$1_nopf$2_r$round"
  timeout 100 python3 .carry/ab_prefetch.py gemm --bench --shapes decode --act relu --bias per_n --out-dtype f16 --b-order F --json $OUT/decF_$tag.json > $OUT/decF_$tag.log 2>&1 || echo "decF $tag failed"
  timeout 60 python3 .carry/ab_prefetch.py gemm --bench --shapes ragged --act relu --bias per_n --out-dtype f16 --b-order C --json $OUT/rag_$tag.json > $OUT/rag_$tag.log 2>&1 || echo "rag $tag failed"
done
done
date -u
python3 .carry/summarize_ab.py $OUT
mkdir -p /tmp/keep && mv $OUT/*_pdl* /tmp/keep/ && tar czf $OUT/ab_runs.tgz -C /tmp/keep .
