set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv > $OUT/r/gpu.txt; date -u >> $OUT/r/gpu.txt
timeout 150 python3 .carry/precompile_tiles.py 128x192t,64x192pt,128x256,128x224,64x256p,128x192,128x160,64x192p F
timeout 150 python3 .carry/precompile_tiles.py 128x256,64x256p,128x192,64x192p C
C=""
for nk in 14336x4096 28672x4096 57344x8192 14336x8192 28672x8192 57344x4096; do
  n=${nk%x*}; k=${nk#*x}
  for m in 168 192; do for o in F C; do C="$C;$m,$n,$k,$o,128x192t+64x192pt"; done; done
done
timeout 330 python3 .carry/ab.py "${C#;}" > $OUT/r/ab_192t.log 2>&1
cat $OUT/r/ab_192t.log
