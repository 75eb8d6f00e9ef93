"""Hot / cold per-launch time against ring depth at M 128 / 64, N = K = 4096 (B column-major): is the kernel's
streaming rate set by the ring's round trip (time falls with stages) or by a rate (flat)?"""
import sys
sys.path.insert(0, ".carry"); sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
from fraglab.gemm import wgmma
EXTRA = {}
for bm, bn, pp, ck, cm, stages in ((64, 64, True, 1, 1, (4, 8, 12)), (64, 64, True, 1, 2, (4, 8, 12)), (64, 64, True, 2, 1, (4, 10)),
                                   (128, 64, False, 2, 1, (3, 4, 6)), (128, 64, False, 1, 1, (4, 8))):
    for s in stages:
        name = f"{bm}x{bn}{'p' if pp else ''}{'c2' if cm == 2 else ''}{'k2' if ck == 2 else ''}S{s}"
        EXTRA[name] = wgmma.TileConfig(bm, bn, s, pingpong=pp, cluster_k=ck, cluster_m=cm)
for name, cfg in EXTRA.items():
    wgmma.EXPERIMENTAL_TILES[name] = wgmma.ALL_TILES[name] = cfg
names = "+".join(EXTRA)
sys.argv = [sys.argv[0], f"128,4096,4096,F,{names};64,4096,4096,F,{names}"]
exec(open(".carry/hot_cold.py").read())
