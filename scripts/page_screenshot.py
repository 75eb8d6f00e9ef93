"""The screenshot of `fraglab html` in docs/export.md: the page in headless Chromium, WMMA A/B/C, one cell hovered.

Usage: python3 scripts/page_screenshot.py [docs/img/export_page.png]   (needs playwright and a Chromium;
FRAGLAB_CHROMIUM names the browser binary when it is not `chromium` on PATH)
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from fraglab.export.html import build_page
from fraglab.export.select import page_layouts


def main(out: str = "docs/img/export_page.png") -> None:
    exe = os.environ.get("FRAGLAB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        sys.exit("no Chromium found: apt-get install chromium, or set FRAGLAB_CHROMIUM")
    with tempfile.TemporaryDirectory() as tmp:
        page_file = Path(tmp) / "fraglab.html"
        page_file.write_text(build_page(page_layouts()))
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"] if os.geteuid() == 0 else [])
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            page.goto(page_file.as_uri())
            for field, value in (("api", "wmma"), ("shape", "m16n16k16"), ("dtype", "f16"), ("frag", "matrix_a"),
                                 ("variant", "row")):
                page.select_option(f"#{field}", value)
            page.check("#abc")
            page.hover('.panel >> nth=0 >> .cell[data-r="3"][data-c="5"]')
            page.screenshot(path=out, full_page=True)
            browser.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
