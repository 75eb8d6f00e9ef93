"""The tuner over decode-like M between the decode set's (and past it): every candidate tile against the rules' and
torch.mm, per launch, weights rotated past L2. Prints one line per problem with the three best."""
import sys, json
sys.path.insert(0, ".")
from fraglab.bench.shapes import Shape
from fraglab.bench.tune import tune_shapes
ms = [int(x) for x in sys.argv[1].split(",")]
nks = [tuple(int(v) for v in x.split("x")) for x in sys.argv[2].split(",")]
order = sys.argv[3] if len(sys.argv) > 3 else "F"
shapes = [Shape("between", m, n, k) for m in ms for n, k in nks]
res = tune_shapes(shapes, b_order=order)
out = []
for r in res["rows"]:
    t = r["times_us"]
    tiles = sorted(((v, k) for k, v in t.items() if k != "torch.mm"))
    best3 = "  ".join(f"{k} {v:.2f}" for v, k in tiles[:3])
    print(f"{r['m']:4d}x{r['n']}x{r['k']} {order}: torch.mm {t['torch.mm']:.2f}  rules {r['rule_tile']} {r['rule_us']:.2f} "
          f"({t['torch.mm'] / r['rule_us']:.3f}x)  best: {best3}  (best/torch {t['torch.mm'] / tiles[0][0]:.3f}x)", flush=True)
    out.append(r)
json.dump(out, open(sys.argv[4] if len(sys.argv) > 4 else "/dev/null", "w"), default=str)
