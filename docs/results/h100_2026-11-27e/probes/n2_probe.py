"""64x64 ping-pong tiles in clusters of two along N sharing A (cuBLAS's M 128 shape: 64 weight columns x 64 rows
per block, the pair multicasting the rows), hot and cold, against the rules and torch.mm; correctness first."""
import sys
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
from fraglab.gemm import wgmma
EXTRA = {"64x64pn2S12": wgmma.TileConfig(64, 64, 12, pingpong=True, cluster_n=2),
         "64x64pn2S8": wgmma.TileConfig(64, 64, 8, pingpong=True, cluster_n=2),
         "64x128pn2": wgmma.TileConfig(64, 128, 7, pingpong=True, cluster_n=2),
         "128x64n2": wgmma.ALL_TILES["128x64n2"]}
for name, cfg in EXTRA.items():
    wgmma.EXPERIMENTAL_TILES[name] = wgmma.ALL_TILES[name] = cfg
names = "+".join(EXTRA)
shapes = ";".join(f"{m},{n},{k},{o},{names}" for m, n, k, o in (
    (128, 4096, 4096, "F"), (128, 4096, 4096, "C"), (64, 4096, 4096, "F"), (128, 11008, 4096, "F"),
    (128, 4096, 11008, "F"), (96, 4096, 4096, "F"), (130, 4104, 1000, "F")))
sys.argv = [sys.argv[0], shapes]
exec(open(".carry/hot_cold.py").read())
