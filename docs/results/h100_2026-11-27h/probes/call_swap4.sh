set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/r
date -u > $OUT/r/gpu.txt
T=64x96pkb2t,64x96pt,128x96n2t,128x96t,64x96pk2t,64x160pt,64x192pt
timeout 240 python3 .carry/precompile_tiles.py $T F
C=""
for nk in 4096x4096 4096x14336 6144x4096 8192x8192 4096x11008; do
  n=${nk%x*}; k=${nk#*x}
  for m in 176 192; do C="$C;$m,$n,$k,F,64x96pkb2t+64x96pt+128x96n2t+128x96t+64x192pt"; done
  C="$C;160,$n,$k,F,64x96pkb2t+64x96pt+128x96n2t+64x160pt;160,$n,$k,C,64x96pkb2t+64x96pt"
  C="$C;192,$n,$k,C,64x96pkb2t+64x96pt+128x96n2t"
done
timeout 400 python3 .carry/ab.py "${C#;}" > $OUT/r/ab_swap4.log 2>&1
cat $OUT/r/ab_swap4.log
cd $OUT && tar czf res.tgz r
