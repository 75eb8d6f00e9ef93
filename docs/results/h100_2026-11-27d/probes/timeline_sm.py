"""Per-block timeline analysis: is the slow tail per SM load, per cluster, or random?"""
import dataclasses, statistics, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
from decode_inputs import decode_inputs, launch_error
from skinny_timeline import timeline_launches, TIMELINE_BLOCKS, MARKS
from fraglab.gemm import skinny
from fraglab.runtime import gpu
import torch

cp = gpu.cupy()
gen = torch.Generator(device="cuda").manual_seed(5)
for text in sys.argv[1].split(";"):
    m, n, k, order, cluster, splits, load = text.split(",")
    m, n, k, cluster, splits = int(m), int(n), int(k), int(cluster), int(splits)
    sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
    sched = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
    spec = dataclasses.replace(sched, splits=splits, cluster=cluster, b_load=load, layout="1x4n64" if m <= 32 else "4x1n64")
    calls, tl, grid = timeline_launches(spec, xs, d, m, n, k)
    err = launch_error(torch, calls[0], d, want)
    rows = []
    for i in range(14):
        tl.fill(0); cp.cuda.runtime.deviceSynchronize(); calls[i % sets](); cp.cuda.runtime.deviceSynchronize()
        if i < 2: continue
        mk = tl.get().reshape(TIMELINE_BLOCKS, MARKS)[:grid].astype(np.int64)
        active = np.arange(grid) // cluster * (cluster // splits) + (np.arange(grid) % cluster) // splits < -(-n // 64)
        mk = mk[active]
        t = (mk[:, :7] - mk[:, 0].min()) / 1000.0
        sm = mk[:, 7]
        per = np.bincount(sm)[sm]
        cl = (np.arange(grid)[active]) // cluster
        loop = t[:, 3]
        cmax = np.array([loop[cl == c].max() for c in cl])
        cmean = np.array([loop[cl == c].mean() for c in cl])
        byload = {int(p): round(float(np.mean(loop[per == p])), 2) for p in np.unique(per)}
        cnt = {int(p): int((per == p).sum()) for p in np.unique(per)}
        ent = t[:, 0]
        # stream rate per block: bytes / (loop end - first stage)
        rows.append(dict(span=t[:, 6].max(), entry_max=ent.max(), entry_p90=np.percentile(ent, 90), loop_med=np.median(loop),
                         loop_max=loop.max(), within=np.mean(cmax - cmean), clmean_sd=np.std(np.unique(cmean)),
                         byload=byload, cnt=cnt, stream_sd=np.std(t[:, 3] - t[:, 1]),
                         corr_entry=np.corrcoef(ent, loop)[0, 1], red=np.median(t[:, 4] - t[:, 3]), sms=len(np.unique(sm))))
    med = {key: statistics.median(r[key] for r in rows) for key in rows[0] if not isinstance(rows[0][key], dict)}
    print(f"{text} grid {grid} err {err:.1e} " + " ".join(f"{k2}={v:.2f}" for k2, v in med.items()))
    print("   loop end by blocks/SM (3 launches):", [r["byload"] for r in rows[:3]], rows[0]["cnt"], flush=True)
