"""Measure every mma.sync and ldmatrix/stmatrix/movmatrix entry on the present GPU (run by device_ptx_mma.sh).

Compiles kernels/apis/mma.cu and ldmatrix.cu through fraglab.runtime.gpu, runs every method of every entry, compares each
with the PTX model, runs the random-product check of every mma instruction, and writes one JSON document
(maps, agreement, provenance). --sanitize launches every kernel once with small inputs (for
compute-sanitizer); --only limits the run to keys containing the text.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fraglab.apis import ldmatrix as ld  # noqa: E402 (after the path is set)
from fraglab.apis import mma  # noqa: E402


def provenance(cp) -> dict:
    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"]
    drv = cp.cuda.runtime.driverGetVersion()
    nv = cp.cuda.nvrtc.getVersion()
    return {"gpu_name": name.decode() if isinstance(name, bytes) else str(name),
            "compute_capability": int(cp.cuda.Device().compute_capability),
            "driver_version": f"{drv // 1000}.{(drv % 1000) // 10}", "nvrtc_version": f"{nv[0]}.{nv[1]}",
            "cupy_version": cp.__version__,
            "captured": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}


def mma_key(frag, shape, dtype, layout) -> str:
    return f"mma.{frag}.{shape}.{dtype}.{layout}"


def ld_key(move) -> str:
    return f"{move.api}.matrix.m8n8.b16.row.num{move.num}.trans{int(move.trans)}"


def atlas_document(doc: dict) -> dict:
    """The captured maps in the atlas file format (fraglab/layouts/atlas.py): cells = row * cols + col."""
    entries = {}
    for key, entry in doc["entries"].items():
        entries[key] = {}
        for method, found in entry["methods"].items():
            cells = np.asarray(found["map"])
            cols = int(cells[..., 1].max()) + 1 if not key.startswith("mma.") else \
                _mma_cols(key)
            flat = np.where(cells[..., 0] >= 0, cells[..., 0] * cols + cells[..., 1], -1)
            reads = found.get("reads")
            chars = ["".join("1" if v == 1 else "0" for v in lane) for lane in reads] if reads is not None \
                else ["?" * flat.shape[1]] * flat.shape[0]
            entries[key][method] = {"cells": flat.tolist(), "reads": chars}
    prov = dict(doc["provenance"], compile_seconds=doc["compile_seconds"], capture_seconds=doc["seconds"],
                fraglab_version="0.1.0", capture="scripts/device_ptx_mma.sh")
    return {"fraglab_atlas": 1, "provenance": prov, "entries": entries, "refused": {}}


def _mma_cols(key: str) -> int:
    _, frag, shape, *_ = key.split(".")
    m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
    return k if frag == "matrix_a" else n


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--sanitize", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--atlas", type=Path, default=None, help="also write the maps as an atlas document")
    parser.add_argument("--convert", type=Path, default=None, help="only turn a captured JSON into --atlas")
    args = parser.parse_args()
    if args.convert:
        args.atlas.write_text(json.dumps(atlas_document(json.loads(args.convert.read_text())),
                                         separators=(",", ":")) + "\n")
        return 0

    from fraglab.runtime import gpu

    cp = gpu.cupy()
    t0 = time.perf_counter()
    for build in mma.kernel_builds() + ld.kernel_builds():  # compiled once here, so the timing is the compile's
        gpu.module(build)
    compile_s = time.perf_counter() - t0
    fed = ld.fed_kernel_names()
    # the library's launchers: outputs poisoned first, any unwritten one is a ProbeError
    mma_launch, ld_launch, fed_launch = mma.gpu_launch(), ld.gpu_launch(), ld.gpu_fed_launch()

    if args.sanitize:  # every kernel once, small inputs
        for inst in mma.INSTRUCTIONS:
            mma.product_check(inst, mma_launch, trials=1)
        for move in ld.catalogue():
            for method in ld.METHODS[move.api]:
                if method != "onehot":
                    ld.measure_maps(move, (method,), ld_launch)
        for inst in ld.fed_instructions() if fed else ():
            ld.fed_product_error(inst, fed_launch, trials=1)
        print(f"sanitize pass: {len(mma.INSTRUCTIONS)} mma kernels, {len(ld.kernel_names())} ldmatrix-family kernels, "
              f"{len(fed)} ldmatrix-fed mma kernels")
        return 0

    doc = {"provenance": provenance(cp), "compile_seconds": round(compile_s, 2), "entries": {}, "products": {},
           "failures": []}
    rows = []
    for frag, shape, dtype, layout in mma.catalogue():
        key = mma_key(frag, shape, dtype, layout)
        if args.only not in key:
            continue
        model = mma.model_map(frag, shape, dtype, layout)
        entry = {"ptx": mma.instruction_for(frag, shape, dtype, layout).ptx, "methods": {}}
        try:
            found = mma.measure_maps(frag, shape, dtype, layout, mma.METHODS, mma_launch)
        except Exception as exc:  # noqa: BLE001 - record and go on; the table shows it
            doc["failures"].append(f"{key}: {exc}")
            rows.append((key, "ERROR", str(exc)[:60]))
            continue
        verdicts = []
        for method, (found_map, reads) in found.items():
            same = bool(np.array_equal(found_map, model))
            entry["methods"][method] = {"map": found_map.tolist(), "reads": reads.tolist(), "equals_model": same}
            verdicts.append(f"{method}={'ok' if same else 'DIFF'}")
        entry["methods_agree"] = bool(np.array_equal(*(f[0] for f in found.values())))
        doc["entries"][key] = entry
        rows.append((key, "ok" if all("ok" in v for v in verdicts) and entry["methods_agree"] else "DIFF",
                     " ".join(verdicts)))
    for inst in mma.INSTRUCTIONS:
        if args.only not in inst.name and args.only:
            continue
        err = mma.product_check(inst, mma_launch)
        doc["products"][inst.ptx] = err
        rows.append((f"product {inst.name}", "ok" if err == 0 else "DIFF", f"max|D-ref|={err:g}"))
    for inst in ld.fed_instructions() if fed else ():
        if args.only and args.only not in inst.name:
            continue
        err = ld.fed_product_error(inst, fed_launch)
        doc.setdefault("ldmatrix_fed_products", {})[inst.ptx] = err
        rows.append((f"ldmatrix-fed {inst.name}", "ok" if err == 0 else "DIFF", f"max|D-ref|={err:g}"))
    for move in ld.catalogue():
        key = ld_key(move)
        if args.only not in key:
            continue
        model = ld.model_map(move)
        try:
            found = ld.measure_maps(move, ld.METHODS[move.api], ld_launch)
        except Exception as exc:  # noqa: BLE001
            doc["failures"].append(f"{key}: {exc}")
            rows.append((key, "ERROR", str(exc)[:60]))
            continue
        entry = {"ptx": move.ptx, "methods": {m: {"map": f.tolist(), "equals_model": bool(np.array_equal(f, model))}
                                              for m, f in found.items()}}
        doc["entries"][key] = entry
        ok = all(v["equals_model"] for v in entry["methods"].values())
        rows.append((key, "ok" if ok else "DIFF", " ".join(f"{m}={'ok' if v['equals_model'] else 'DIFF'}"
                                                          for m, v in entry["methods"].items())))
    doc["seconds"] = round(time.perf_counter() - t0, 2)
    if args.out:
        args.out.write_text(json.dumps(doc))
        (args.out.parent / "capture_table.txt").write_text("".join(f"{v:5} {k:55} {d}\n" for k, v, d in rows))
    if args.atlas:
        args.atlas.write_text(json.dumps(atlas_document(doc), separators=(",", ":")) + "\n")
    bad = [r for r in rows if r[1] != "ok"]
    for key, verdict, detail in bad + [r for r in rows if r[1] == "ok"][-5:]:
        print(f"{verdict:5} {key:55} {detail}")
    print(f"{len(rows) - len(bad)}/{len(rows)} ok, {len(bad)} not ok; {doc['provenance']['gpu_name']}; "
          f"compile {compile_s:.1f} s, total {doc['seconds']} s")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
