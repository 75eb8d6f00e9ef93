set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
mkdir -p $OUT/r
date -u > $OUT/r/gpu.txt; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv >> $OUT/r/gpu.txt
cat $OUT/r/gpu.txt
T=64x64pkb2,64x64pk2kb2,64x128pkb2,64x192p,64x256p,128x64k2,128x224,128x160,128x96,128x128,64x96p,64x160p,64x224p,64x96pkb2,64x160pkb2,64x96pk2,64x160pk2,64x192pk2,64x96pk2kb2,64x128pk2kb2,64x128pk2,64x192pkb2,64x128p
timeout 240 python3 .carry/precompile_tiles.py $T F
# user problem (torch + rules), then the swapped problem N x M x K with tokens as the kernel's K-major B
C=""
add() { C="$C;$1,$2,$3,F,;$2,$1,$3,F,$4"; }
add 80 4096 4096 64x96p+64x96pkb2+64x96pk2+64x96pk2kb2
add 96 4096 4096 64x96p+64x96pkb2+64x96pk2+64x96pk2kb2
add 128 4096 4096 64x128p+64x128pkb2+64x128pk2+64x128pk2kb2
add 160 4096 4096 64x160p+64x160pkb2+64x160pk2
add 192 4096 4096 64x192p+64x192pkb2+64x192pk2
add 64 4096 4096 64x64pkb2+64x64pk2kb2
add 80 6144 4096 64x96p+64x96pkb2+64x96pk2+64x96pk2kb2
add 160 6144 4096 64x160p+64x160pkb2+64x160pk2
add 192 6144 4096 64x192p+64x192pkb2+64x192pk2
add 160 4096 14336 64x160p+64x160pkb2+64x160pk2
add 192 4096 14336 64x192p+64x192pkb2+64x192pk2
add 80 4096 14336 64x96p+64x96pkb2+64x96pk2+64x96pk2kb2
add 128 4096 14336 64x128pkb2+64x128pk2+64x128pk2kb2
add 160 8192 8192 64x160p+64x160pkb2+64x160pk2
add 160 57344 8192 64x160p+64x160pkb2
add 192 57344 8192 64x192p+64x192pkb2
add 160 28672 4096 64x160p+64x160pkb2
timeout 420 python3 .carry/ab.py "${C#;}" > $OUT/r/ab_swap.log 2>&1
cat $OUT/r/ab_swap.log
cd $OUT && tar czf res.tgz r
