"""Session 20: where the wgmma producer's first ~0.6 us after the start sync go (.carry/wgmma_fine.cu: trace points
0 entry, 1 synced, 3 after setmaxnreg.dec, 4 after the tile walk's set-up, 5 after the first empty wait, 6 after
its expect_tx, 2 after its first TMA loads, 7 done); plain launches."""
import sys
from pathlib import Path
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import numpy as np
import torch
from decode_inputs import decode_inputs, launch_error
from fraglab.gemm import wgmma
from fraglab.runtime import gpu

ORDER = (0, 1, 3, 4, 5, 6, 2, 7)
NAMES = {0: "entry", 1: "synced", 3: "setmaxnreg", 4: "walk", 5: "empty", 6: "expect", 2: "tma", 7: "done"}


class FineBuild(wgmma.WgmmaBuild):
    def source_text(self):
        return wgmma.accumulator_header() + f'#include "{Path(".carry/wgmma_fine.cu").resolve()}"\n'


gen = torch.Generator(device="cuda").manual_seed(3)
for m, n, k, tile in ((128, 128, 64, "64x64p"), (128, 128, 64, "128x128"), (64, 4096, 4096, "64x64pk2"),
                      (1000, 1000, 1000, "64x128pc2"), (4096, 4096, 4096, "128x256")):
    sets, xs, d, want = decode_inputs(torch, gen, m, n, k, "F")
    spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order="F", tile=tile,
                          store="tma")
    build = FineBuild(wgmma.ENTRY, (spec.name(),), ("-DFRAGLAB_WGMMA_TRACE",))
    kernel = gpu.function(build, spec.name())
    if kernel.max_dynamic_shared_size_bytes < spec.smem_bytes:
        kernel.max_dynamic_shared_size_bytes = spec.smem_bytes
    launches = [wgmma.bind(spec, a, b, d, bias=bias, shared=False) for a, b, bias, _ in xs]
    for launch in launches:
        launch.function = kernel.kernel.ptr
    err = launch_error(torch, lambda: launches[0](), d, want)
    cp = gpu.cupy()
    trace = cp.ndarray((1024, 8), dtype=cp.uint64, memptr=gpu.module(build).get_global("fraglab_wgmma_trace"))
    rows = []
    for rep in range(5):
        trace.fill(0)
        for i in range(sets):
            launches[i]()
        torch.cuda.synchronize()
        blocks = wgmma.launch_blocks(m, n, spec.tile_config)
        t = trace.get()[:blocks].astype(np.int64)
        rows.append(t - t[:, 0].min())
    t = np.concatenate(rows)
    cells = []
    for p in ORDER:
        got = t[:, p][t[:, p] > 0] if p else t[:, 0]
        cells.append(f"{NAMES[p]} {np.median(got) / 1e3:.2f}")
    print(f"{m}x{n}x{k} {tile} (err {err:.1e}): " + "  ".join(cells), flush=True)
