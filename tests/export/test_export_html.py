"""The interactive page, loaded in a real headless Chromium through Playwright: hover, and check what lights up."""

from __future__ import annotations

import re

import numpy as np
import pytest

from browser import chromium_page
from export_cases import atlas_layouts, formula_cases
from fraglab.export.html import build_page

LAYOUTS = atlas_layouts() + formula_cases()


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("page") / "fraglab.html"
    path.write_text(build_page(LAYOUTS, generated="test page"))
    return path


def test_page_is_self_contained(page_file):
    text = page_file.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "@import" not in text and "fetch(" not in text
    # every measured layout is in the page under its key, and no layout twice
    for layout in atlas_layouts():
        assert f'"key":"{layout.spec.key}"' in text
    keys = re.findall(r'"key":"([^"]+)"', text)
    assert len(keys) == len(set(keys)) and len(keys) >= len(atlas_layouts())


@pytest.fixture(scope="module")
def browser_page(page_file):
    with chromium_page(page_file, 1400, 1000) as opened:
        yield opened


def choose(page, key: str) -> str:
    """Pick the fragment `key` (api.frag.shape.dtype.variant) in the page's menus; the key back, naming its panel."""
    api, frag, shape, dtype, variant = key.split(".")
    for field, value in (("api", api), ("shape", shape), ("dtype", dtype), ("frag", frag), ("variant", variant)):
        page.select_option(f"#{field}", value)
    return key


def lit_cells(page, key: str, cls: str) -> set[tuple[int, int]]:
    cells = page.locator(f'.panel[data-key="{key}"] .cell.{cls}')
    return {(int(r), int(c)) for r, c in cells.evaluate_all("els => els.map(e => [e.dataset.r, e.dataset.c])")}


def cells_of_threads(layout, threads) -> set[tuple[int, int]]:
    return {(int(layout.row[t, s]), int(layout.col[t, s])) for t in threads
            for s in range(layout.num_elements) if layout.row[t, s] >= 0}


def test_hover_cell_lights_every_holder_and_their_other_slots(browser_page):
    page, errors, outside = browser_page
    key = choose(page, "wmma.matrix_a.m16n16k16.f16.row")
    layout = next(x for x in atlas_layouts() if x.spec.key == key)
    page.hover(f'.panel[data-key="{key}"] .cell[data-r="3"][data-c="5"]')
    holders = np.argwhere((layout.row == 3) & (layout.col == 5))
    assert lit_cells(page, key, "holder") == {(3, 5)}
    assert lit_cells(page, key, "lit") == cells_of_threads(layout, {int(t) for t, _ in holders})
    info = page.inner_text("#info")
    assert f"has {len(holders)} holders" in info
    for t, s in holders:
        assert f"T{t} (warp 0, lane {t}) V{s} " in info
    assert errors == [] and outside == []


def test_hover_thread_lists_its_registers(browser_page):
    page, errors, _ = browser_page
    key = choose(page, "wmma.accumulator.m16n16k16.f32.row")
    layout = next(x for x in atlas_layouts() if x.spec.key == key)
    page.hover(f'.panel[data-key="{key}"] .thread[data-t="9"]')
    assert lit_cells(page, key, "lit") == cells_of_threads(layout, [9])
    info = page.inner_text("#info")
    for s in range(layout.num_elements):
        assert f"V{s} register {s} bits 0-31: ({layout.row[9, s]}, {layout.col[9, s]})" in info
    assert errors == []


def test_side_by_side_shows_a_b_c_and_lights_the_thread_in_each(browser_page):
    page, errors, _ = browser_page
    choose(page, "mma.matrix_a.m16n8k16.f16.row")
    page.check("#abc")
    try:
        keys = page.locator(".panel").evaluate_all("els => els.map(e => e.dataset.key)")
        assert [k.split(".")[1] for k in keys] == ["matrix_a", "matrix_b", "accumulator"]
        mma_like = [next(x for x in formula_cases() if x.spec.api == "mma" and x.spec.shape == "m16n8k16"
                                   and x.spec.frag == f) for f in ("matrix_a", "matrix_b", "accumulator")]
        page.hover(f'.panel[data-key="{keys[0]}"] .cell[data-r="0"][data-c="0"]')
        for key, layout in zip(keys, mma_like):
            assert lit_cells(page, key, "lit") == cells_of_threads(layout, [0])
    finally:
        page.uncheck("#abc")
    assert errors == []


def test_colour_by_warp_separates_the_warps_of_wgmma(browser_page):
    page, errors, _ = browser_page
    key = choose(page, "wgmma.accumulator.m64n16k16.f32.row")
    page.select_option("#colorby", "warp")

    def fill(r, c):
        return page.locator(f'.panel[data-key="{key}"] .cell[data-r="{r}"][data-c="{c}"]').evaluate(
            "e => getComputedStyle(e).backgroundColor")

    assert fill(0, 0) == fill(15, 15)               # warp 0 owns rows 0-15
    assert len({fill(16 * w, 0) for w in range(4)}) == 4
    page.select_option("#colorby", "lane")
    assert fill(0, 0) != fill(1, 0)                  # lanes 0 and 4
    assert errors == []
