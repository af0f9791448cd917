"""The course site passes axe-core's WCAG 2.2 A and AA rules with no violation: the gallery and an embed page of
the real backprop build, in headless Chromium (axe-core comes in the axe-playwright-python wheel)."""

import threading
from pathlib import Path

import pytest

from tools.publish.site import serve

pytestmark = pytest.mark.slow  # the real backprop build, a real browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update"]  # fmt: skip
# axe-core's tags for the success criteria of WCAG 2.0, 2.1 and 2.2 at levels A and AA.
WCAG_22_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
LOADED = "() => [...document.querySelectorAll('video')].every(v => v.readyState >= 1)"


@pytest.fixture(scope="module")
def kit_url(backprop_build):
    server = serve.make_server(backprop_build.out / "site", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
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


@pytest.mark.parametrize("path", ["index.html", "embed/vanishing_gradients.html"])
def test_the_page_has_no_wcag_22_a_or_aa_violation(browser, kit_url, path):
    from axe_playwright_python.sync_playwright import Axe

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(kit_url + path)
    page.wait_for_function(LOADED, timeout=30_000)
    # A gallery card's tracks, transcript and numbers come with its notes: the first card's are loaded, so that its
    # track menu and notes are audited too; an embed page has them from the start.
    page.evaluate("() => LectureKit.loadNotes(document.querySelector('.clip[data-notes]') || document.body)")
    page.wait_for_selector(".tracks select")  # the player's add-ons are in place
    results = Axe().run(page, options={"runOnly": {"type": "tag", "values": WCAG_22_AA}})
    context.close()
    found = [
        f"{v['id']} ({v['impact']}): {v['help']}: {', '.join(str(n['target']) for n in v['nodes'][:5])}"
        for v in results.response["violations"]
    ]
    assert results.response["passes"], "axe ran no rule"
    assert found == []
