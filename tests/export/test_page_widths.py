"""The page at 1280, 800 and 390 px in real headless Chromium: row and column numbers on every grid, a search
for an element (row, col) and for a thread, the readout in view, a wgmma m64n256 tile scrolling inside its
own box (the page itself never wider than the window), and the wgmma shapes in natural order.
Screenshots go to FRAGLAB_SCREENSHOTS (a folder) when it is set, to be looked at."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fraglab.export.html import build_page
from fraglab.export.select import page_layouts

WIDTHS = (1280, 800, 390)


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("page") / "fraglab.html"
    path.write_text(build_page(page_layouts(), generated="test page"))
    return path


def open_page(chromium, page_file, width):
    page = chromium.new_page(viewport={"width": width, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(page_file.as_uri())
    return page, errors


def choose(page, **fields):
    for field in ("api", "shape", "dtype", "frag", "variant"):
        if field in fields:
            page.select_option(f"#{field}", fields[field])


def shot(page, name):
    folder = os.environ.get("FRAGLAB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def natural_key(text):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def test_wgmma_shapes_are_in_natural_order(chromium, page_file):
    page, errors = open_page(chromium, page_file, 1280)
    choose(page, api="wgmma")
    shapes = page.eval_on_selector_all("#shape option", "os => os.map(o => o.value)")
    assert len(shapes) > 3 and shapes == sorted(shapes, key=natural_key)
    assert shapes.index("m64n8k8") < shapes.index("m64n128k8") if "m64n8k8" in shapes else True
    assert errors == []
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_small_grid_has_numbers_search_and_readout(chromium, page_file, width):
    page, errors = open_page(chromium, page_file, width)
    choose(page, api="wmma", shape="m16n16k16", dtype="f16", frag="matrix_a", variant="row")
    panel = page.locator(".panel").first
    assert panel.locator(".label.colnum").all_text_contents() == [str(c) for c in range(16)]
    assert panel.locator(".label.rownum").all_text_contents() == [str(r) for r in range(16)]
    # the whole 16x16 grid fits a 390 px phone: nothing wider than the window
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.fill("#find-row", "3")
    page.fill("#find-col", "5")
    page.click("#find-element")
    info = page.locator("#info")
    assert "element (3, 5)" in info.text_content()
    holder = panel.locator(".cell.holder")
    assert holder.count() == 1 and (holder.get_attribute("data-r"), holder.get_attribute("data-c")) == ("3", "5")
    box = info.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= 800 + 1  # the readout is in the window
    page.fill("#find-thread", "5")
    page.click("#find-thread-go")
    assert "thread 5 (warp 0, lane 5) holds" in info.text_content()
    assert panel.locator(".thread.lit").all_text_contents() == ["T5"]
    page.fill("#find-thread", "99")
    page.click("#find-thread-go")
    assert "0..31" in info.text_content()
    shot(page, f"wmma_m16n16k16_{width}")
    assert errors == []
    page.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_big_wgmma_tile_scrolls_inside_the_window(chromium, page_file, width):
    page, errors = open_page(chromium, page_file, width)
    choose(page, api="wgmma")
    shapes = page.eval_on_selector_all("#shape option", "os => os.map(o => o.value)")
    big = [s for s in shapes if s.startswith("m64n256")]
    assert big, shapes
    choose(page, shape=big[0])
    frags = page.eval_on_selector_all("#frag option", "os => os.map(o => o.value)")
    choose(page, frag="accumulator" if "accumulator" in frags else frags[0])
    assert page.locator(".panel .label.colnum").count() == 256
    viewport = page.locator(".panel .viewport").first
    vbox = viewport.bounding_box()
    assert vbox["x"] + vbox["width"] <= width and vbox["height"] <= 800
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert viewport.evaluate("v => v.scrollWidth > v.clientWidth")  # the tile scrolls inside its box
    # find the last column's element: it is scrolled into the box, and the readout names it
    page.fill("#find-row", "63")
    page.fill("#find-col", "255")
    page.click("#find-element")
    cell = page.locator(".panel .cell.holder").first
    cbox = cell.bounding_box()
    vbox = viewport.bounding_box()
    assert vbox["x"] - 1 <= cbox["x"] and cbox["x"] + cbox["width"] <= vbox["x"] + vbox["width"] + 1
    assert "element (63, 255)" in page.locator("#info").text_content()
    info = page.locator("#info").bounding_box()
    assert info["y"] + info["height"] <= 800 + 1
    # the row and column numbers stay in view while the tile scrolls (sticky)
    corner = page.locator(".panel .label.corner").first.bounding_box()
    assert abs(corner["x"] - vbox["x"]) <= 2
    shot(page, f"wgmma_{big[0]}_{width}")
    page.select_option("#zoom", "big")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert errors == []
    page.close()
