"""Session 20: K split inside clusters for small ragged shapes (1000^3): 128x128k2 (new), 128x64k2, 64x128pk2
and the cluster tiles beside the schedule's, B row- and column-major, against torch.mm / _addmm_activation."""
import json, sys
from pathlib import Path
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from fraglab.gemm import wgmma
for name, cfg in {"128x128k2": wgmma.TileConfig(128, 128, 4, cluster_k=2),
                  "128x128k2s3": wgmma.TileConfig(128, 128, 3, cluster_k=2),
                  "128x192k2": wgmma.TileConfig(128, 192, 3, 16, cluster_k=2)}.items():
    wgmma.EXPERIMENTAL_TILES[name] = cfg
    wgmma.ALL_TILES[name] = cfg
import wgmma_ragged as wr

out = {}
shapes = [(1000, 1000, 1000), (1000, 2000, 1000), (1024, 1024, 1024), (2000, 1000, 3000), (5000, 3000, 2000)]
for m, n, k in shapes:
    for order in ("C", "F"):
        sets, a, b, bias, b16, d = wr.operand_sets(m, n, k)
        if order == "F":
            b = [x.t().contiguous().t() for x in b]
        now = wr.spec(m, n, k, b_order=order)
        fns = {f"scheduled {now.tile}/{now.l2_promotion}": wr.bound(now, a, b, d, bias)}
        tiles = ["128x128k2", "128x128k2s3", "128x64k2", "64x128pk2", "128x128c2", "64x128pc2", "128x128c2x2", "128x128"]
        if m * n > 4e6:
            tiles = ["128x192k2", "128x128k2", "192x192c2", "128x192c2"]
        for t in tiles:
            for promo in ("none", "256B"):
                try:
                    fns[f"{t}/{promo}"] = wr.bound(wr.spec(m, n, k, t, promo, b_order=order), a, b, d, bias)
                except Exception as exc:
                    print("skip", t, promo, exc)
        ref = torch.relu(a[0].double() @ b[0].double() + bias[0].double())
        for key, fn in list(fns.items()):
            d.fill_(float("nan"))
            try:
                fn(0)
                torch.cuda.synchronize()
            except Exception as exc:
                print("drop", key, exc); fns.pop(key); continue
            err = ((d.double() - ref).abs() / (ref.abs() + 1)).max().item()
            print(f"  check {key}: max rel err {err:.2e}", "OK" if err < 2e-2 else "WRONG", flush=True)
            if not err < 2e-2:
                fns.pop(key)
        out[f"{m}x{n}x{k}{order}"] = wr.timed(m, n, k, sets, a, b, b16, fns, label=f" B {order}")
        del a, b, d, fns
        torch.cuda.empty_cache()
Path(sys.argv[1]).write_text(json.dumps(out, indent=1, default=str))
