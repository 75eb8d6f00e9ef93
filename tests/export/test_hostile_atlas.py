"""Atlases are files people exchange: every string in one is data. A hostile atlas (HTML, script, ANSI escapes,
NUL, bidi overrides, a 1 MB name) must run nothing in the page (real headless Chromium) and put no ESC byte on a
terminal (`atlas show`, `atlas diff`, `layout --atlas`), nor end a line of generated code."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fraglab.export.html import build_page
from fraglab.export.select import page_layouts

BUNDLED = Path(__file__).resolve().parents[2] / "fraglab" / "data" / "atlas_sm90.json"
SCRIPT = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
HOSTILE_NAME = (SCRIPT + "\x1b[31mRED\x1b[0m\x1b]0;title\x07\x00NUL\u202eevil\u009b31m<svg onload=window.__pwned=3>"
                + "</script><!--<script>" + "A" * (1 << 20))


def hostile_atlas(folder: Path) -> Path:
    doc = json.loads(BUNDLED.read_text())
    doc["provenance"]["gpu_name"] = HOSTILE_NAME
    doc["provenance"]["captured"] = SCRIPT + "\x1b[2J"
    doc["provenance"]["<b onmouseover=window.__pwned=4>\x1b[5m"] = "\x1b[41m" + SCRIPT
    doc["refused"] = {"wmma.matrix_a.m16n16k16.f16.row": "\x1b[31m" + SCRIPT + "\x00"}
    path = folder / "evil.json"
    path.write_text(json.dumps(doc))
    return path


def fraglab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "80", "FRAGLAB_NO_GPU": "1"}
    return subprocess.run([sys.executable, "-m", "fraglab", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=300)


@pytest.mark.parametrize("command", [
    ["atlas", "show", "{atlas}"],
    ["layout", "--frag", "matrix_a", "--atlas", "{atlas}"],
    ["layout", "--frag", "matrix_a", "--atlas", "{atlas}", "--view", "lanes"],
    ["atlas", "diff", "{atlas}"],
    ["--verbose", "layout", "--frag", "accumulator", "--atlas", "{atlas}"],
    ["export", "--to", "cute", "--api", "wmma", "--frag", "accumulator", "--atlas", "{atlas}"],
    ["export", "--to", "header", "--frag", "accumulator", "--atlas", "{atlas}"],
    ["where", "--frag", "matrix_a", "--row", "1", "--col", "2", "--atlas", "{atlas}"],
])
def test_no_escape_byte_reaches_the_terminal(tmp_path, command):
    atlas = hostile_atlas(tmp_path)
    result = fraglab(*[a.replace("{atlas}", str(atlas)) for a in command], cwd=tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode in (0, 1), out[-2000:]
    for byte in (b"\x1b", b"\x00", b"\x07", "\u202e".encode(), "\u009b".encode()):
        assert byte not in out, (command, byte)
    # the 1 MB name is shortened, not printed whole, and the atlas's text is still recognisable
    assert len(out) < 200_000
    if command[0] == "atlas" and command[1] == "show":
        assert b"?[31mRED" in out


def test_generated_code_keeps_a_hostile_name_inside_its_comment(tmp_path):
    atlas = hostile_atlas(tmp_path)
    result = fraglab("export", "--to", "header", "--frag", "accumulator", "--atlas", str(atlas), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    text = result.stdout.decode()
    source = [line for line in text.splitlines() if line.startswith("// Source:")]
    assert len(source) == 1 and len(source[0]) < 200
    # every line before the include guard is a comment: nothing from the atlas became code
    before_guard = text.split("#ifndef FRAGLAB_")[0].splitlines()
    assert all(line.startswith("//") for line in before_guard)


def test_page_data_block_holds_no_markup_and_the_policy_forbids_inline_handlers_and_network(tmp_path):
    from fraglab.layouts import atlas as atlas_mod

    page = build_page(page_layouts(hostile_atlas(tmp_path)), generated="test page")
    data = page.split('id="fraglab-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and ">" not in data and "&" not in data
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'" and directives["connect-src"] == "'none'"
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy and "'unsafe-hashes'" not in policy
    assert directives["script-src"].startswith("'sha256-")
    assert atlas_mod is not None


def test_hostile_atlas_runs_nothing_in_chromium(tmp_path, chromium):
    path = tmp_path / "evil.html"
    path.write_text(build_page(page_layouts(hostile_atlas(tmp_path)), generated="test page"))
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    requests: list[str] = []
    dialogs: list[str] = []
    errors: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri())
    page.select_option("#api", "wmma")
    # hover and click over the panel, where planted markup would sit if it were markup
    page.hover(".panel .cell >> nth=0")
    page.click(".panel .thread >> nth=3")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator(".panel img, .panel svg, .panel script, .panel b, footer img").count() == 0
    # the name is shown as text (shortened), planted tags and all
    source = page.locator(".panel .source").first.text_content()
    assert "<img src=x onerror=" in source and len(source) < 300
    assert errors == [] and dialogs == []
    assert [u for u in requests if not u.startswith("file:")] == []
    page.close()
