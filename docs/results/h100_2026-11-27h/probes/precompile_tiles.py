"""Compile the ab.py launches of the given tiles (f16, relu, bias per_n f32, D f16, TMA store, B order) at once."""
import sys
sys.path.insert(0, ".")
from fraglab.gemm import wgmma
from fraglab.runtime import gpu
order = sys.argv[2] if len(sys.argv) > 2 else "F"
tiles = [t for t in sys.argv[1].split(",") if t]
builds = [wgmma.spec_for("f16", 4096, 4096, 4096, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order,
                         tile=t, store="tma").build() for t in tiles]
print(f"compiled {len(builds)} in {gpu.precompile(builds, workers=16):.0f} s", flush=True)
