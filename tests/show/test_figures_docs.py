"""docs/ stays true to the bundled atlas: figures current, every fragment shown, tables and formulas right."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from fraglab.layouts import atlas as atlas_mod
from fraglab import show as figures
from fraglab.layouts.atlas import load_bundled
from fraglab.apis.wmma import wmma_catalogue
from fraglab.layouts.spec import FragmentSpec

from figure_fixtures import svg_groups, svg_texts

DOCS = Path(__file__).resolve().parents[2] / "docs"
FIGS = DOCS / "figures"
PAGES = sorted(p for p in DOCS.glob("*.md") if not p.name.startswith("benchmarks"))
FAMILY_PAGES = sorted(DOCS.glob("wmma-*.md"))


@pytest.fixture(scope="module")
def atlas():
    return atlas_mod.load(load_bundled().path)  # a fresh copy: other tests may have used the cached one


@pytest.fixture(scope="module")
def manifest():
    path = FIGS / figures.MANIFEST_NAME
    assert path.exists(), "docs/figures has no manifest: run `fraglab figures --out docs/figures`"
    return json.loads(path.read_text())


# ---- the figures are the atlas's, and current ---------------------------------------------------------------

def test_every_fragment_and_mma_view_of_the_atlas_has_a_current_figure(atlas, manifest):
    entries = {tuple(e["specs"]): e for e in manifest["figures"] if e["format"] == "svg"}
    wanted = [(s,) for s in atlas.specs()] + list(figures.mma_triples(atlas.specs()))
    assert len(atlas.specs()) == len(wmma_catalogue()) == 88  # the H200 runs every WMMA fragment
    stale = []
    for group in wanted:
        entry = entries.get(tuple(s.key for s in group))
        assert entry is not None, f"no figure of {[s.key for s in group]}: run `fraglab figures --out docs/figures`"
        digests = [figures.layout_digest(atlas.layout(s)) for s in group]
        if entry["layouts_sha256"] != digests:
            stale.append(entry["file"])
    assert not stale, f"figures drawn from another atlas: {stale[:5]}; run `fraglab figures --out docs/figures`"
    assert len(entries) == len(wanted)


def test_figure_files_are_the_ones_the_manifest_recorded(manifest):
    listed = {e["file"] for e in manifest["figures"]}
    on_disk = {p.name for p in FIGS.iterdir() if p.name != figures.MANIFEST_NAME}
    assert on_disk == listed, f"unlisted: {sorted(on_disk - listed)[:5]}, missing: {sorted(listed - on_disk)[:5]}"
    for entry in manifest["figures"]:
        data = (FIGS / entry["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], f"{entry['file']} edited after generation"


def test_every_figure_says_it_comes_from_the_h200_atlas(manifest):
    for entry in manifest["figures"]:
        texts = " ".join(svg_texts((FIGS / entry["file"]).read_bytes()))
        assert "source: atlas: NVIDIA H200 (sm_90), captured 2026-11-20" in texts, entry["file"]


def test_figure_labels_list_exactly_the_atlas_holders(atlas, manifest):
    """Every labelled cell of every fragment figure names the (lane, slot) pairs the atlas records."""
    checked = 0
    for entry in manifest["figures"]:
        if entry["kind"] != "fragment":
            continue
        layout = atlas.layout(FragmentSpec.from_key(entry["specs"][0]))
        groups = svg_groups((FIGS / entry["file"]).read_bytes())
        holders = layout.holder_grid()
        cells = {k: v for k, v in groups.items() if k.startswith("grid-cell-")}
        for key, lines in cells.items():
            r, c = (int(v) for v in key.split("-")[2:])
            expected = []
            for lane in dict.fromkeys(t for t, _ in holders[r][c]):
                expected.append(f"T{lane}")
                expected += [f"(x{s})" if layout.mma_reads[t, s] == 0 else f"x{s}"
                             for t, s in holders[r][c] if t == lane]
            got = " ".join(lines).replace(",", " ").split()
            assert got == expected, (entry["file"], r, c)
        if cells:
            assert len(cells) == layout.spec.rows * layout.spec.cols, entry["file"]
            checked += 1
        else:  # large grids are labelled by runs
            assert any(k.startswith("grid-run-") for k in groups), entry["file"]
    assert checked >= 80


def test_regenerating_the_figures_gives_the_same_bytes(atlas, manifest, tmp_path):
    import matplotlib

    if manifest["matplotlib"] != matplotlib.__version__:
        pytest.skip(f"docs/figures was drawn with matplotlib {manifest['matplotlib']}, this is "
                    f"{matplotlib.__version__}; the currency checks above still ran")
    paths = figures.generate_all(tmp_path, atlas, formats=("svg",))
    assert len(paths) == len(manifest["figures"])
    differ = [p.name for p in paths if p.read_bytes() != (FIGS / p.name).read_bytes()]
    assert not differ, f"not reproducible: {differ[:5]}"


# ---- the pages ---------------------------------------------------------------------------------------------

def _links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'<img src="([^"]+)"', text)


def test_pages_exist_and_relative_links_resolve():
    names = {p.name for p in PAGES}
    assert {"index.md", "probes.md", "reproduce.md"} <= names and len(FAMILY_PAGES) == 6
    for page in PAGES:
        for link in _links(page.read_text()):
            if link.startswith(("http://", "https://", "#")):
                continue
            target = (page.parent / link.split("#")[0]).resolve()
            assert target.exists(), f"{page.name}: broken link {link}"


def test_pages_show_every_figure(manifest):
    shown = {Path(link).name for page in PAGES for link in _links(page.read_text()) if "figures/" in link}
    missing = sorted(e["file"] for e in manifest["figures"] if e["file"] not in shown)
    assert not missing, f"figures no page shows: {missing[:5]}"


def test_summary_table_matches_the_atlas(atlas):
    rows = [ln for ln in (DOCS / "index.md").read_text().splitlines()
            if re.match(r"\| (matrix_a|matrix_b|accumulator) \|", ln)]
    seen = set()
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        frag, shape, dtype_link, slots, dups, ignored, alike, figs = cells
        dtype = re.match(r"\[(\w+)\]", dtype_link).group(1)
        layouts = re.findall(r"\[(row|col)\]\(", figs)
        lays = {lay: atlas.layout(FragmentSpec("wmma", frag, shape, dtype, lay)) for lay in layouts}
        for lay, layout in lays.items():
            seen.add((frag, shape, dtype, lay))
            assert layout.num_elements == int(slots), line
            assert layout.duplicate_slots == int(dups), line
            assert layout.ignored_slots == int(ignored.split()[0]), line
            ignored_slots = sorted(set(np.nonzero(layout.mma_reads == 0)[1].tolist()))
            if ignored_slots:
                assert ignored.split()[1] == f"(x{ignored_slots[0]}-x{ignored_slots[-1]})", line
                assert ignored_slots == list(range(ignored_slots[0], ignored_slots[-1] + 1))
        if len(lays) == 2:
            assert alike == ("yes" if lays["row"].same_map(lays["col"]) else "no"), line
    assert seen == {(s.frag, s.shape, s.dtype, s.layout) for s in atlas.specs()}


def _formula_rows():
    for page in FAMILY_PAGES:
        for line in page.read_text().splitlines():
            m = re.match(r"\| (matrix_a|matrix_b|accumulator) \| (m\d+n\d+k\d+) \| ([\w, ]+) \| (\d+)-(\d+) \| "
                         r"`([^`]+)` \| `([^`]+)` \|$", line)
            if m:
                yield page.name, m.groups()


def _evaluate(expr: str, i: np.ndarray) -> np.ndarray:
    lane = np.arange(32)[:, None]
    if not re.fullmatch(r"[gti0-9+*()&>< ]+", expr):
        raise AssertionError(f"unexpected formula {expr!r}")
    return np.broadcast_to(eval(expr, {"__builtins__": {}}, {"g": lane >> 2, "t": lane % 4, "i": i}),
                           (32, i.shape[1]))


def test_formula_tables_on_family_pages_match_the_atlas(atlas):
    rows = list(_formula_rows())
    assert len(rows) >= 30
    covered = set()
    for page, (frag, shape, dtypes, first, last, row_expr, col_expr) in rows:
        first, last = int(first), int(last)
        assert first == 0, (page, frag, shape)
        i = np.arange(first, last + 1)[None, :]
        for dtype in (d.strip() for d in dtypes.split(",")):
            for lay in ("row", "col"):
                spec = FragmentSpec("wmma", frag, shape, dtype, lay)
                if spec not in atlas.specs():
                    continue
                layout = atlas.layout(spec)
                covered.add(spec)
                assert np.array_equal(layout.row[:, first:last + 1], _evaluate(row_expr, i)), (page, spec.key, "row")
                assert np.array_equal(layout.col[:, first:last + 1], _evaluate(col_expr, i)), (page, spec.key, "col")
                count = last + 1  # slots past the listed ones repeat them, as the pages say
                for s in range(count, layout.num_elements):
                    assert layout.row[:, s].tolist() == layout.row[:, s % count].tolist(), (spec.key, s)
                    assert layout.col[:, s].tolist() == layout.col[:, s % count].tolist(), (spec.key, s)
    assert covered == set(atlas.specs()), sorted(s.key for s in set(atlas.specs()) - covered)


def test_pages_claim_the_model_agrees_and_it_does(atlas):
    from fraglab.apis.wmma import model_layout

    assert "All 88 slot maps agree with the PTX-formula model" in (DOCS / "index.md").read_text()
    differ = [s.key for s in atlas.specs() if not (m := model_layout(s)) or not m.same_map(atlas.layout(s))]
    assert not differ
