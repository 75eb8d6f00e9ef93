import json, glob, os, sys
out = sys.argv[1]
summary = {}
for path in sorted(glob.glob(os.path.join(out, "*_pdl*.json"))):
    r = json.load(open(path))
    summary[os.path.basename(path)] = [(x["m"], x["n"], x["k"], x["tile"], round(x["fraglab_ms"] * 1e3, 2),
                                        round(x["cublas_ms"] * 1e3, 2), round(x["vs_cublas"], 3)) for x in r["rows"]]
json.dump(summary, open(os.path.join(out, "ab_summary.json"), "w"), indent=0)
keys = [(1000, 1000, 1000), (3000, 3000, 3000), (5000, 3000, 2000), (64, 4096, 4096), (128, 4096, 4096),
        (8, 4096, 4096), (16, 14336, 4096), (64, 11008, 14336), (128, 14336, 14336)]
for name, rows in summary.items():
    got = {(m, n, k): (f, c) for m, n, k, t, f, c, v in rows}
    ge = sum(v >= 1.0 for *_, v in rows)
    print(name, f">=1: {ge}/{len(rows)}", " ".join(f"{m}x{n}x{k}:{got[(m,n,k)][0]}/{got[(m,n,k)][1]}" for m, n, k in keys if (m, n, k) in got))
