"""The interactive page, loaded in a real headless Chromium through Playwright: hover, and check what lights up."""

from __future__ import annotations

import os
import re
import shutil

import numpy as np
import pytest

from export_cases import atlas_layouts, formula_cases
from fraglab.export.html import build_page


def chromium_path() -> str | None:
    for name in (os.environ.get("FRAGLAB_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


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
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install fraglab[dev])")
    exe = chromium_path()
    if exe is None:
        pytest.skip("no Chromium installed (apt-get install chromium, or set FRAGLAB_CHROMIUM)")
    args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=args)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        outside: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.route(re.compile(r"^(?!file:).*"), lambda route: (outside.append(route.request.url), route.abort()))
        page.goto(page_file.as_uri())
        yield page, errors, outside
        browser.close()


def choose(page, api, shape, dtype, frag, variant):
    for field, value in (("api", api), ("shape", shape), ("dtype", dtype), ("frag", frag), ("variant", variant)):
        page.select_option(f"#{field}", value)


def lit_cells(page, key: str, cls: str) -> set[tuple[int, int]]:
    cells = page.locator(f'.panel[data-key="{key}"] .cell.{cls}')
    return {(int(r), int(c)) for r, c in cells.evaluate_all("els => els.map(e => [e.dataset.r, e.dataset.c])")}


def cells_of_threads(layout, threads) -> set[tuple[int, int]]:
    return {(int(layout.row[t, s]), int(layout.col[t, s])) for t in threads
            for s in range(layout.num_elements) if layout.row[t, s] >= 0}


def test_hover_cell_lights_every_holder_and_their_other_slots(browser_page):
    page, errors, outside = browser_page
    layout = next(x for x in atlas_layouts() if x.spec.key == "wmma.matrix_a.m16n16k16.f16.row")
    choose(page, "wmma", "m16n16k16", "f16", "matrix_a", "row")
    key = "wmma.matrix_a.m16n16k16.f16.row"
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
    layout = next(x for x in atlas_layouts() if x.spec.key == "wmma.accumulator.m16n16k16.f32.row")
    choose(page, "wmma", "m16n16k16", "f32", "accumulator", "row")
    key = "wmma.accumulator.m16n16k16.f32.row"
    page.hover(f'.panel[data-key="{key}"] .thread[data-t="9"]')
    assert lit_cells(page, key, "lit") == cells_of_threads(layout, [9])
    info = page.inner_text("#info")
    for s in range(layout.num_elements):
        assert f"V{s} register {s} bits 0-31: ({layout.row[9, s]}, {layout.col[9, s]})" in info
    assert errors == []


def test_side_by_side_shows_a_b_c_and_lights_the_thread_in_each(browser_page):
    page, errors, _ = browser_page
    choose(page, "mma", "m16n8k16", "f16", "matrix_a", "row")
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
    choose(page, "wgmma", "m64n16k16", "f32", "accumulator", "row")
    page.select_option("#colorby", "warp")
    key = "wgmma.accumulator.m64n16k16.f32.row"

    def fill(r, c):
        return page.locator(f'.panel[data-key="{key}"] .cell[data-r="{r}"][data-c="{c}"]').evaluate(
            "e => getComputedStyle(e).backgroundColor")

    assert fill(0, 0) == fill(15, 15)               # warp 0 owns rows 0-15
    assert len({fill(16 * w, 0) for w in range(4)}) == 4
    page.select_option("#colorby", "lane")
    assert fill(0, 0) != fill(1, 0)                  # lanes 0 and 4
    assert errors == []
