"""Device script: capture the atlas (cold, then warm compile cache) and compare it with the model.

PYTHONPATH=$PWD python3 scripts/capture_atlas.py OUTDIR
"""
import sys
import time
from pathlib import Path

from fraglab.probes import run as probes
from fraglab.apis.wmma import model_layout

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
t0 = time.perf_counter()
atlas = probes.capture_atlas(lambda what, done, total: print(f"[{done}/{total}] {what}", flush=True) if done % 10 == 0 else None)
print("capture seconds", time.perf_counter() - t0, atlas.provenance)
atlas.save(out / "atlas_sm90.json")
for key, why in atlas.refused.items():
    print("REFUSED", key, why)
for spec in atlas.specs():
    load = atlas.raw_layout(spec, "load")
    mma = atlas.raw_layout(spec, "mma")
    one = atlas.raw_layout(spec, "onehot")
    model = model_layout(spec)
    agree_mo = mma.same_map(one) and (mma.mma_reads == one.mma_reads).all()
    read = one.mma_reads == 1
    agree_lo = bool(((load.row == one.row) | ~read).all() and ((load.col == one.col) | ~read).all())
    agree_model = model is not None and model.same_map(load)
    print(f"{spec.key:38s} ne={load.num_elements:2d} dup={load.duplicate_slots:3d} ign={one.ignored_slots:3d} "
          f"mma=onehot:{agree_mo} load~onehot:{agree_lo} model:{agree_model}")
