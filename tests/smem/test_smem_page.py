"""The page's shared-memory section (`fraglab html`), in a real headless Chromium: the cases, the bank map of
the one picked, and strings from the data shown as text, never run."""

from __future__ import annotations

import pytest

from browser import chromium_page, require_chromium
from fraglab.smem.page import page_cases


def test_page_cases_carry_the_model_and_the_h100_difference():
    cases = {c["name"]: c for c in page_cases()}
    swizzled = cases["ldmatrix.x4 Sw<3,3,3> 64x64"]
    assert (swizzled["predicted"], swizzled["minimum"], swizzled["h100"]) == (64, 64, None)
    # 4 phases, conflict-free: one row each; row p0 w0: rows 0-7 each in its own 4 banks
    assert [label for label, _ in swizzled["map"]] == ["p0 w0", "p1 w0", "p2 w0", "p3 w0"]
    assert cases["broadcast ld.b128, one vector"]["h100"] == 2


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    require_chromium()                       # skipped before the page is built
    from fraglab.export.html import build_page
    from fraglab.lookup import layout

    cases = page_cases()
    planted = dict(cases[0], name='<img src=x onerror="window.PLANTED=1">', why="</script><b>x</b>")
    text = build_page([layout("accumulator", shape="m16n8k16", dtype="f32", api="mma", source="model")],
                      generated="test page", smem=[planted, *cases[1:]])
    path = tmp_path_factory.mktemp("page") / "fraglab.html"
    path.write_text(text)
    with chromium_page(path, 1200, 900) as (page, errors, _):
        yield page, errors, cases


def test_the_section_lists_every_case_and_draws_the_picked_map(browser):
    page, errors, cases = browser
    assert not errors, errors
    options = page.eval_on_selector_all("#smem-case option", "os => os.map(o => o.textContent)")
    assert len(options) == len(cases)
    index = next(i for i, c in enumerate(cases) if c["name"] == "ldmatrix.x4 row-major 64x64")
    page.select_option("#smem-case", str(index))
    head = page.text_content("#smem-head")
    assert "predicted 512" in head and "fewest the bytes need 64" in head
    rows = page.eval_on_selector_all("#smem-map tr", "rs => rs.map(r => [...r.children].map(c => c.textContent))")
    # a header row of banks, then 4 phases x 8 wavefronts: row p0 w1 is thread 1 in banks 0-3, a conflict
    assert rows[0][1:] == [str(b) for b in range(32)] and len(rows) == 1 + 32
    assert rows[2][:5] == ["p0 w1", "1*", "1*", "1*", "1*"] and rows[2][5] == ""


def test_strings_from_the_data_are_text(browser):
    page, errors, _ = browser
    page.select_option("#smem-case", "0")
    assert page.evaluate("window.PLANTED === undefined")
    assert page.locator("#smem img, #smem b").count() == 0
    assert '<img src=x onerror="window.PLANTED=1">' in page.text_content("#smem-case")
    assert not errors, errors
