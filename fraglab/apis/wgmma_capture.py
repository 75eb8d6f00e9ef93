"""Run every wgmma experiment on the GPU, compare methods with each other and with the PTX model.

`capture()` returns (and can write) one JSON-ready record per entry: the measured maps of each
method, whether they agree with each other and with the model, and the anomalies the decoders saw.
The comparisons themselves are numpy and run on the CPU (tests feed them synthetic results).
"""

from __future__ import annotations

import json
import time
from typing import Callable

import numpy as np

from . import wgmma_model as wm
from . import wgmma_probe as wp

SANITIZE_KEYS = (
    ("accumulator", 256, "f32", "f16", "mma"), ("accumulator", 64, "f16", "f16", "onehot"),
    ("accumulator", 96, "s32", "s8", "onehot"),
    ("register_a", "f16", "mma"), ("register_a", "e4m3", "onehot"),
    ("smem", "matrix_b", "f16", "128B", "k", "mma"), ("smem", "matrix_a", "f16", "64B", "mn", "onehot"),
    ("smem", "matrix_b", "s8", "32B", "k", "onehot"),
)


def entry_key(key: tuple) -> str:
    """Key of an entry without its method, e.g. 'smem.matrix_b.f16.128B.k'."""
    return ".".join(str(p) for p in key[:-1])


def model_for(key: tuple) -> dict:
    """The PTX model of an entry in the form its methods report."""
    kind = key[0]
    if kind == "accumulator":
        amap = wm.accumulator_map(key[1])
        return {"row": amap[..., 0], "col": amap[..., 1]}
    if kind == "register_a":
        amap = wm.register_a_map(key[1])
        return {"row": amap[..., 0], "col": amap[..., 1]}
    _, operand, dtype, swizzle, major = key[:5]
    return {"offset": wm.smem_offsets(wm.smem_tile(dtype, swizzle, major, operand))}


def smem_offset_from_reads(tile: dict, reads: list[list[tuple[int, int]]]) -> tuple[np.ndarray, int]:
    """One-hot reads (element index -> positions) as an offset grid; also how many elements were read twice."""
    offset = np.full((tile["rows"], tile["cols"]), -1, dtype=np.int64)
    twice = 0
    for el, positions in enumerate(reads):
        twice += int(len(positions) > 1)
        for pos in positions:
            offset[pos] = el * tile["element_bytes"]
    return offset, twice


def compare(key_base: tuple, results: dict[str, dict]) -> dict:
    """Agreement of each method with the model and of the methods with each other, with counts."""
    model = model_for(key_base + ("model",))
    record: dict = {"methods": {}, "disagreements": []}
    maps: dict[str, dict] = {}
    for method, res in results.items():
        if "reads" in res:
            tile = wm.smem_tile(key_base[2], key_base[3], key_base[4], key_base[1])
            offset, twice = smem_offset_from_reads(tile, res["reads"])
            maps[method] = {"offset": offset}
            unread = sum(1 for r in res["reads"] if not r)
            record["methods"][method] = {"elements_read_twice": twice, "elements_unread": unread,
                                         "anomalies": res.get("anomaly_count", 0)}
        else:
            maps[method] = {k: res[k] for k in ("row", "col", "offset") if k in res}
            record["methods"][method] = {"anomalies": res.get("anomaly_count", 0)}
    for method, got in maps.items():
        diff = sum(int(np.sum(got[k] != model[k])) for k in model)
        record["methods"][method]["differs_from_model"] = diff
        if diff:
            record["disagreements"].append(f"{method} vs model: {diff} values")
    names = sorted(maps)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            diff = sum(int(np.sum(maps[a][k] != maps[b][k])) for k in maps[a])
            if diff:
                record["disagreements"].append(f"{a} vs {b}: {diff} values")
    record["maps"] = {m: {k: v.tolist() for k, v in got.items()} for m, got in maps.items()}
    return record


def capture(keys: list[tuple] | None = None, progress: Callable[[str], None] | None = None) -> dict:
    """Compile the probe kernels, run the experiments (all, or `keys`), compare; a JSON-ready dict."""
    import cupy as cp
    plans = wp.all_plans()
    keys = list(plans) if keys is None else list(keys)
    built = {k: plans[k]() for k in keys}
    t0 = time.time()
    module = wp.compile_module(sorted({p.op for p in built.values()}, key=lambda o: o.name))
    compile_s = time.time() - t0
    results: dict[tuple, dict[str, dict]] = {}
    errors: dict[str, str] = {}
    for key, plan in built.items():
        try:
            results.setdefault(key[:-1], {})[key[-1]] = wp.run_plan(module, plan)
        except Exception as exc:   # one failing experiment must not hide the others
            errors[".".join(map(str, key))] = f"{type(exc).__name__}: {exc}"
        if progress:
            progress(".".join(map(str, key)))
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    entries = {entry_key(base + ("",)): {"key": list(base), **compare(base, res)} for base, res in results.items()}
    return {
        "provenance": {"gpu_name": props["name"].decode(), "compute_capability": props['major'] * 10 + props['minor'],
                       "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(), "cupy": cp.__version__,
                       "captured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "arch": wp.ARCH,
                       "compile_s": round(compile_s, 1)},
        "entries": entries,
        "errors": errors,
    }


def summary_lines(doc: dict) -> list[str]:
    """One line per entry: key, methods, agreement; disagreements and errors spelled out."""
    lines = []
    for name, rec in sorted(doc["entries"].items()):
        methods = ",".join(sorted(rec["methods"]))
        state = "agree" if not rec["disagreements"] else "; ".join(rec["disagreements"])
        lines.append(f"{name:40s} {methods:14s} {state}")
    lines += [f"ERROR {k}: {v}" for k, v in sorted(doc["errors"].items())]
    return lines


def main(out_path: str | None, sanitize_only: bool = False) -> int:
    keys = list(SANITIZE_KEYS) if sanitize_only else None
    doc = capture(keys)
    if out_path:
        with open(out_path, "w") as f:
            json.dump(doc, f)
    for line in summary_lines(doc):
        print(line)
    bad = sum(bool(r["disagreements"]) for r in doc["entries"].values()) + len(doc["errors"])
    print(f"{len(doc['entries'])} entries, {bad} with disagreements or errors; compile {doc['provenance']['compile_s']} s")
    return 1 if bad else 0


if __name__ == "__main__":
    import sys
    args = sys.argv[1:]
    raise SystemExit(main(next((a for a in args if not a.startswith("--")), None), "--sanitize" in args))


def spec_for(entry: str):
    """The FragmentSpec of a capture entry key ('accumulator.128.f32.f16', 'register_a.f16', 'smem....')."""
    from ..layouts.spec import FragmentSpec

    parts = entry.split(".")
    if parts[0] == "accumulator":
        n, acc, atype = int(parts[1]), parts[2], parts[3]
        return FragmentSpec("wgmma", "accumulator", f"m64n{n}k{wm.K_BY_TYPE[atype]}", acc, "row")
    if parts[0] == "register_a":
        return FragmentSpec("wgmma", "matrix_a", f"m64n8k{wm.K_BY_TYPE[parts[1]]}", parts[1], "row")
    _, operand, dtype, swizzle, major = parts
    n = 8 if operand == "matrix_a" else wm.OPERAND_MN["matrix_b"]
    return FragmentSpec("wgmma", operand, f"m64n{n}k{wm.K_BY_TYPE[dtype]}", dtype,
                        "row" if operand == "matrix_a" else "col", swizzle=swizzle, major=major)


def atlas_from_capture(doc: dict):
    """The capture as an Atlas (fraglab.layouts.atlas format), one Layout per entry and method."""
    from ..layouts.atlas import ATLAS_FORMAT, Atlas
    from ..layouts.layout import Source
    from .wgmma import layout_from_result

    provenance = dict(doc["provenance"], fraglab_atlas_format=ATLAS_FORMAT,
                      how="scripts/device_ptx_wgmma.sh (codes + onehot per entry, compared with the PTX model)")
    source = Source("gpu", provenance)
    entries = {}
    for name, rec in doc["entries"].items():
        spec = spec_for(name)
        layouts = {}
        for method, maps in rec["maps"].items():
            result = {k: np.asarray(v) for k, v in maps.items()}
            layout = layout_from_result(spec, method, source, result)
            if method == "onehot":   # the one-hot probe saw which slots/elements are read
                layout.mma_reads[:] = np.where(layout.row >= 0, 1, 0)
            layouts[method] = layout
        entries[spec.key] = layouts
    refused = {k: v for k, v in doc["errors"].items()}
    return Atlas(provenance, entries, refused)


# ---- descriptor experiments (docs/wgmma.md, "What surprised us") -----------------------------------
def experiments() -> list[tuple[str, Callable[[], wp.Plan], dict[str, np.ndarray]]]:
    """(name, plan, hypotheses: name -> predicted offset grid) for the descriptor experiments."""
    out = []
    for sw in ("32B", "64B", "128B"):
        tile = wm.smem_tile("f16", sw, "k", "matrix_a")
        out.append((f"lbo_ignored.f16.{sw}.k.matrix_a", lambda sw=sw: wp.smem_codes("f16", sw, "k", "matrix_a", lbo=0x3FFF0),
                    {"model (LBO ignored)": wm.smem_offsets(tile)}))
    for sw, shift, base in (("128B", 512, 0), ("128B", 512, 4), ("64B", 256, 0), ("32B", 128, 0)):
        tile = wm.smem_tile("f16", sw, "k", "matrix_a")
        hyp = {"swizzle of the tile-relative offset": wm.smem_offsets(tile),
               "swizzle of the absolute address": wm.smem_offsets(tile, start=shift) - shift}
        out.append((f"unaligned.f16.{sw}.k.matrix_a.shift{shift}.base{base}",
                     lambda sw=sw, shift=shift, base=base: wp.smem_codes("f16", sw, "k", "matrix_a", shift=shift,
                                                                         base_offset=base), hyp))
    return out


PRODUCT_CHECKS = ((256, "f16", "f32"), (128, "f16", "f16"), (256, "s8", "s32"), (8, "f16", "f32"))


def run_experiments() -> dict:
    """Run the descriptor experiments and the random-product checks; a JSON-ready dict."""
    exps = experiments()
    plans = {name: make() for name, make, _ in exps}
    products = {f"product.m64n{n}.{acc}.{atype}": wp.accumulator_product(n, atype, acc, seed=n)
                for n, atype, acc in PRODUCT_CHECKS}
    module = wp.compile_module(sorted({p.op for p in [*plans.values(), *products.values()]}, key=lambda o: o.name))
    result: dict = {"experiments": {}, "products": {}}
    for name, _, hyps in exps:
        got = wp.run_plan(module, plans[name])["offset"]
        result["experiments"][name] = {
            "matches": {h: int(np.sum(got != pred)) == 0 for h, pred in hyps.items()},
            "differences": {h: int(np.sum(got != pred)) for h, pred in hyps.items()},
            "first_row_chunks": (got[0:8, ::8] // 16).tolist(),
        }
    for name, plan in products.items():
        result["products"][name] = wp.run_plan(module, plan)
    return result


def experiment_lines(res: dict) -> list[str]:
    lines = []
    for name, rec in res["experiments"].items():
        which = [h for h, ok in rec["matches"].items() if ok] or ["none of the hypotheses"]
        lines.append(f"{name:50s} matches: {'; '.join(which)}  (differences {rec['differences']})")
    for name, rec in res["products"].items():
        lines.append(f"{name:50s} mismatches {rec['mismatches']}, max abs error {rec['max_abs_error']}")
    return lines
