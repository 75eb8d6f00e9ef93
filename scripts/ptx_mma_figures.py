"""Draw the docs figures of docs/mma.md and docs/ldmatrix.md from the H100 capture (no GPU needed).

Reads fraglab/data/atlas_sm90_ptx.json.gz (the bundled atlas of these families), draws each listed fragment,
and writes docs/img/ptx/<api>_<frag>_<shape>_<dtype>_<layout>[_num<n>_trans<t>]_<method>.svg.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fraglab.layouts import atlas as atlas_mod  # noqa: E402
from fraglab.layouts.spec import FragmentSpec  # noqa: E402
from fraglab.show.figure import plot_layout, plot_mma  # noqa: E402
from fraglab.show.gallery import save_figure  # noqa: E402

CAPTURE = ROOT / "fraglab" / "data" / "atlas_sm90_ptx.json.gz"
OUT = ROOT / "docs" / "img" / "ptx"  # docs/figures/ is the gallery's (fraglab figures, with its manifest)

MMA_VIEWS = [("m16n8k16", "f16", "f32"), ("m16n8k8", "tf32", "f32"), ("m16n8k32", "s8", "s32"),
             ("m16n8k16", "f64", "f64"), ("m16n8k32", "e4m3", "f16")]
SINGLE = [("matrix_a", "m8n8k4", "f16", "row"), ("matrix_a", "m8n8k4", "f16", "col"),
          ("matrix_b", "m8n8k4", "f16", "row"), ("accumulator", "m8n8k4", "f32", "row"),
          ("accumulator", "m8n8k4", "f16", "row"), ("matrix_a", "m16n8k64", "s4", "row"),
          ("matrix_a", "m16n8k128", "b1", "row")]
MOVES = [("ldmatrix", 1, False), ("ldmatrix", 4, False), ("ldmatrix", 4, True), ("ldmatrix", 2, True),
         ("stmatrix", 4, False), ("stmatrix", 4, True), ("movmatrix", 1, True)]


def name(spec: FragmentSpec, method: str) -> str:
    extra = [f"num{spec.num}", f"trans{int(spec.trans)}"] if spec.num is not None else []
    return "_".join([spec.api, spec.frag, spec.shape, spec.dtype, spec.layout, *extra, method]) + ".svg"


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    atlas = atlas_mod.load(CAPTURE)
    written = []
    for shape, dtype, acc in MMA_VIEWS:
        a, b, c = (atlas.layout(FragmentSpec("mma", f, shape, t, lay), "onehot")
                   for f, t, lay in (("matrix_a", dtype, "row"), ("matrix_b", dtype, "col"), ("accumulator", acc, "row")))
        fname = f"mma_mma_{shape}_{dtype}_row_col_{acc}_row_onehot.svg"
        save_figure(plot_mma(a, b, c), OUT / fname, "svg")
        written.append(fname)
    for frag, shape, dtype, layout in SINGLE:
        spec = FragmentSpec("mma", frag, shape, dtype, layout)
        save_figure(plot_layout(atlas.layout(spec, "onehot")), OUT / name(spec, "onehot"), "svg")
        written.append(name(spec, "onehot"))
    for api, num, trans in MOVES:
        spec = FragmentSpec(api, "matrix", "m8n8", "b16", "row", num=num, trans=trans)
        method = "store" if api == "stmatrix" else "load"
        save_figure(plot_layout(atlas.layout(spec, method)), OUT / name(spec, method), "svg")
        written.append(name(spec, method))
    print("\n".join(written))


if __name__ == "__main__":
    main()
