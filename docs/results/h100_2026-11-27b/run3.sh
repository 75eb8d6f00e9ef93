set -uo pipefail
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH COLUMNS=160
TILES=128x256,64x64p,64x64pk2,128x64k2,64x128pc2,128x128c2x2,128x64n2,192x192c2
echo "new, the same list:"; timeout 100 python3 benchmarks/wgmma_sanitize.py --tiles $TILES | grep -v " ok$"
echo "new, 128x128c2x2 alone:"; timeout 60 python3 benchmarks/wgmma_sanitize.py --tiles 128x128c2x2 | grep -v " ok$"
cp kernels/gemm/wgmma.cu /tmp/new.cu; cp .carry/wgmma_head.cu kernels/gemm/wgmma.cu
echo "head, the same list:"; timeout 100 python3 benchmarks/wgmma_sanitize.py --tiles $TILES | grep -v " ok$"
echo "head, 128x128c2x2 alone:"; timeout 60 python3 benchmarks/wgmma_sanitize.py --tiles 128x128c2x2 | grep -v " ok$"
cp /tmp/new.cu kernels/gemm/wgmma.cu
python3 .carry/debug_c2x2.py
