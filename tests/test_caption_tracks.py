"""The player's text tracks in headless Chromium, on a page of its own (a short clip with a captions track and a
descriptions track, as a figure has once it is described): the menu lists both, the captions are on at first,
#cc=0 starts them off, and the descriptions track, when chosen, speaks its line in a live region under the video."""

import re
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from helpers import synthetic_clip

from tools.publish.site import serve
from tools.voice import captions
from tools.voice.captions import Caption

pytestmark = pytest.mark.slow  # a real browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update"]  # fmt: skip
TEMPLATES = Path(__file__).resolve().parents[1] / "tools" / "publish" / "site" / "templates"
DESCRIBED = "屏幕上：E4M3 最大 448"
PAGE = """<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>轨道</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="kit.css"></head>
<body class="embed"><main class="clip" id="figure-demo">
<video controls preload="auto" width="64" height="36" aria-label="示例"><source src="clip.mp4" type="video/mp4">
<track kind="captions" srclang="zh" label="中文" src="clip.vtt" default>
<track kind="descriptions" srclang="zh" label="中文" src="clip.descriptions.vtt" default></video>
</main><script src="kit.js"></script></body></html>"""
STATE = """() => { const v = document.querySelector('video'), menu = document.querySelector('.tracks select');
  return {modes: [...v.textTracks].map(t => t.kind + ':' + t.mode), value: menu.value,
          options: [...menu.options].map(o => o.text), label: document.querySelector('.tracks label').textContent,
          said: document.querySelector('.described').textContent,
          shown: !document.querySelector('.described').hidden,
          live: document.querySelector('.described').getAttribute('aria-live'), time: v.currentTime}; }"""
LOADED = """() => { const v = document.querySelector('video');
  return v.readyState >= 1
    && [...v.querySelectorAll('track')].every(t => t.readyState === 2 || t.track.mode === 'disabled'); }"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The page, its clip (4 s) and its two tracks, served on 127.0.0.1 as the kit is (byte ranges for seeking)."""
    folder = tmp_path_factory.mktemp("tracks")
    synthetic_clip(folder / "clip.mp4", np.zeros(4 * 48000), 60, folder / "work")
    shutil.rmtree(folder / "work")
    said = [Caption(0.2, 1.4, "先往前算"), Caption(1.6, 3.8, "再倒着走")]
    (folder / "clip.vtt").write_text(captions.to_vtt(said), encoding="utf-8")
    (folder / "clip.descriptions.vtt").write_text(captions.to_vtt([Caption(1.0, 3.0, DESCRIBED)]), encoding="utf-8")
    for name in ("kit.js", "kit.css"):
        shutil.copy(TEMPLATES / name, folder / name)
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    bare = re.sub(r"<track [^>]*>\n?", "", PAGE)  # the same clip without its tracks: a script adds them later
    (folder / "bare.html").write_text(bare, encoding="utf-8")
    server = serve.make_server(folder, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), "the browser tests need Debian's chromium: `make test` installs it"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 800, "height": 600})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    assert errors == []
    context.close()


def _open(page, url: str) -> dict:
    page.goto(url)
    page.wait_for_function(LOADED, timeout=20_000)
    return page.evaluate(STATE)


def test_the_menu_lists_both_tracks_with_the_captions_on(page, site):
    state = _open(page, site)
    assert state["label"] == "字幕与画面描述"
    assert state["options"] == ["关", "字幕：中文", "画面描述：中文"]
    assert state["modes"] == ["captions:showing", "descriptions:disabled"]
    assert state["value"] == "0"
    assert not state["shown"]


def test_choosing_the_descriptions_reads_the_line_shown_but_not_said(page, site):
    _open(page, site)
    page.select_option(".tracks select", "1")
    page.evaluate("() => { document.querySelector('video').currentTime = 1.5; }")
    page.wait_for_function(f"() => document.querySelector('.described').textContent === {DESCRIBED!r}", timeout=10_000)
    state = page.evaluate(STATE)
    assert state["modes"] == ["captions:disabled", "descriptions:hidden"]
    assert state["shown"]
    assert state["live"] == "polite"
    page.select_option(".tracks select", "-1")
    state = page.evaluate(STATE)
    assert state["modes"] == ["captions:disabled", "descriptions:disabled"]
    assert not state["shown"]


def test_cc_0_in_the_address_starts_the_captions_off_and_cc_1_turns_them_on(page, site):
    state = _open(page, site + "#t=2&cc=0")
    assert state["modes"] == ["captions:disabled", "descriptions:disabled"]
    assert state["value"] == "-1"
    page.wait_for_function("() => Math.abs(document.querySelector('video').currentTime - 2) < 0.05", timeout=10_000)
    page.evaluate("() => { location.hash = '#cc=1'; }")
    page.wait_for_function("() => document.querySelector('video').textTracks[0].mode === 'showing'", timeout=5_000)
    assert page.evaluate(STATE)["value"] == "0"


def test_tracks_that_arrive_later_get_the_menu_then(page, site):
    """A gallery card's tracks come with its notes, after the page is wired: the menu is made when they arrive."""
    page.goto(site.replace("index.html", "bare.html"))
    page.wait_for_function("() => document.querySelector('video').readyState >= 1", timeout=20_000)
    assert page.locator(".tracks").count() == 0
    page.evaluate("""() => { const v = document.querySelector('video');
      for (const [kind, src] of [['captions', 'clip.vtt'], ['descriptions', 'clip.descriptions.vtt']]) {
        const t = document.createElement('track');
        Object.assign(t, {kind, src, srclang: 'zh', label: '中文', default: true});
        v.appendChild(t);
      } }""")
    page.wait_for_function("() => document.querySelectorAll('.tracks select option').length === 3", timeout=5_000)
    assert page.locator(".tracks").count() == 1
    page.wait_for_function("() => document.querySelector('video').textTracks[0].mode === 'showing'", timeout=5_000)
