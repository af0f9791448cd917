"""The numbers in the picture, on a real build of the serving chapter played in headless Chromium: at a moment when
pd_timeline shows 「最长停顿 414.1 ms」, a click at the centre of that number's box (or Tab to it, then Enter) pauses
the clip and opens the matching fact in its numbers panel, on the embed page, a gallery card and the chapter video
at the shifted time; nothing is drawn over the video but the hint of the hotspot pointed at or focused; with
scripts off nothing changes; before play the embed page fetches no number track."""

import json
import re
import threading

import pytest
from test_site import Watched, browser  # noqa: F401 (browser: the shared fixture)
from test_site_a11y import WCAG_22_AA

from tools.publish.publishing import fact_tracks, manifest
from tools.publish.site import serve

pytestmark = pytest.mark.slow  # a real build of a chapter, a browser

FIGURE, FACT, NAME = "pd_timeline", "mixed_gap", "414.1 ms：最长停顿"
WANTED = f'.fact.picked[data-fact="{FACT}"]'


@pytest.fixture(scope="module")
def served(serving_build):
    kit = serving_build.out / "site"
    server = serve.make_server(kit, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", kit, manifest.load(serving_build.out)
    server.shutdown()
    server.server_close()


@pytest.fixture
def watched(browser, served):  # noqa: F811 (the fixture imported above)
    watched = Watched(browser, served[0])
    yield watched
    watched.context.close()


def _cue(out, path: str) -> tuple[float, float, dict]:
    """The cue of the figure's published metadata track that shows 414.1 ms in the line 「最长停顿 414.1 ms」."""
    cues = fact_tracks.cues_of((out / path).read_text(encoding="utf-8"), path)
    found = [(start, end, json.loads(text)) for start, end, text in cues if json.loads(text)["name"] == NAME]
    assert len(found) == 1, found
    return found[0]


def _moment(out, entry) -> tuple[float, dict]:
    """A second well inside the stretch the number stays in its box, and its cue's payload."""
    start, end, data = _cue(out, entry.files[fact_tracks.FACTS_TRACK].path)
    assert end - start > 4
    return start + 2.0, data


def _play_at(page, video: str, seconds: float) -> None:
    """Start the clip (muted: a page may start a muted clip itself), then move it to `seconds`, playing."""
    page.locator(video).scroll_into_view_if_needed()
    page.evaluate("v => { const e = document.querySelector(v); e.muted = true; e.play(); }", video)
    page.wait_for_function("v => document.querySelector(v).currentTime > 0.2", arg=video, timeout=20_000)
    page.evaluate("([v, s]) => { document.querySelector(v).currentTime = s; }", [video, seconds])
    page.wait_for_function(
        "([v, s]) => { const e = document.querySelector(v); return !e.paused && e.currentTime > s + 0.1; }",
        arg=[video, seconds],
        timeout=20_000,
    )


def _centre(page, video: str, box: list[float]) -> tuple[float, float]:
    """The centre of a box (fractions of the frame) on the page, where the video draws its frame (contained)."""
    return tuple(
        page.evaluate(
            """([v, box]) => { const e = document.querySelector(v), r = e.getBoundingClientRect();
                 const s = Math.min(r.width / e.videoWidth, r.height / e.videoHeight);
                 const w = e.videoWidth * s, h = e.videoHeight * s, x = r.left + (r.width - w) / 2,
                       y = r.top + (r.height - h) / 2;
                 return [x + w * (box[0] + box[2]) / 2, y + h * (box[1] + box[3]) / 2]; }""",
            [video, box],
        )
    )


def _opened(page, video: str, panel: str) -> dict:
    """What the click left: the clip paused, the picked fact, whether its panel is open, its entry in view."""
    page.wait_for_selector(f"{panel} {WANTED}", timeout=10_000)
    return page.evaluate(
        """([v, panel, wanted]) => {
             const e = document.querySelector(panel + ' ' + wanted), r = e.getBoundingClientRect();
             return {paused: document.querySelector(v).paused, open: e.closest('details').open,
                     picked: [...document.querySelectorAll('.fact.picked')].map(f => f.dataset.fact),
                     inView: r.top >= 0 && r.bottom <= innerHeight, text: e.innerText}; }""",
        [video, panel, WANTED],
    )


def _check_opened(state: dict) -> None:
    assert state["paused"]
    assert state["picked"] == [FACT]
    assert state["open"]
    assert state["inView"]
    # the fact as the panel gives it: its screen text, how it is computed, where it is first spoken
    assert state["text"].startswith("414.1 ms")
    assert "怎么算" in state["text"]
    assert "模拟 12 个请求" in state["text"]
    assert "首次说到" in state["text"]


def test_a_click_at_the_centre_of_the_numbers_box_pauses_the_clip_and_opens_its_fact(watched, served):
    base, _, man = served
    entry = man.figures[FIGURE]
    at, data = _moment(served[1].parent, entry)
    page = watched.page
    page.goto(f"{base}embed/{FIGURE}.html")
    _play_at(page, "video", at)
    page.wait_for_selector(f'.hotspot[aria-label="{NAME}"]', timeout=10_000)
    page.mouse.click(*_centre(page, "video", data["box"]))
    _check_opened(_opened(page, "video", "main"))
    assert watched.errors == []


def test_tab_goes_through_the_numbers_in_reading_order_and_enter_opens_one(watched, served):
    base, kit, man = served
    entry = man.figures[FIGURE]
    at, _ = _moment(kit.parent, entry)
    page = watched.page
    page.goto(f"{base}embed/{FIGURE}.html")
    _play_at(page, "video", at)
    page.wait_for_selector(f'.hotspot[aria-label="{NAME}"]', timeout=10_000)
    page.evaluate("() => document.querySelector('video').pause()")  # the same numbers while Tab goes round
    # The numbers on screen now, by the published track: rows top to bottom, each left to right.
    cues = fact_tracks.cues_of((kit.parent / entry.files[fact_tracks.FACTS_TRACK].path).read_text(), "facts")
    now = [json.loads(text) for start, end, text in cues if start <= at < end]
    rows = sorted(now, key=lambda d: (round(d["box"][1] / 0.02), d["box"][0]))
    page.focus("video")
    names = []
    for _ in range(40):  # past the video's own controls, then each number
        page.keyboard.press("Tab")
        name = page.evaluate("() => { const e = document.activeElement; return e.matches('.hotspot') && e.ariaLabel; }")
        if name:
            names.append(name)
        elif names:
            break
    assert names == [d["name"] for d in rows]
    assert NAME in names
    page.evaluate("() => document.querySelector('video').play()")
    page.focus(f'.hotspot[aria-label="{NAME}"]')
    page.keyboard.press("Enter")
    _check_opened(_opened(page, "video", "main"))
    assert watched.errors == []


def test_the_chapter_video_opens_the_fact_in_its_figures_card_at_the_shifted_time(watched, served):
    base, kit, man = served
    video = man.chapter_videos["serving"]
    start = next(mark["start"] for mark, fig in zip(video.marks, video.figures) if fig == FIGURE)
    assert start > 0  # the figure is not the chapter's first: its numbers are moved by where it starts
    at, data = _moment(kit.parent, man.figures[FIGURE])
    shifted = _cue(kit.parent, video.files[fact_tracks.FACTS_TRACK].path)
    assert shifted[0] == pytest.approx(at - 2.0 + start, abs=0.002)
    page = watched.page
    page.goto(base + "index.html")
    chapter = "#chapter-video-serving video"
    _play_at(page, chapter, start + at)
    page.wait_for_function(
        "n => [...document.querySelectorAll('#chapter-video-serving .hotspot')].some(b => b.ariaLabel === n)",
        arg=NAME,
        timeout=10_000,
    )
    page.mouse.click(*_centre(page, chapter, data["box"]))
    _check_opened(_opened(page, chapter, f"#figure-{FIGURE}"))
    assert watched.errors == []


def test_a_gallery_cards_number_opens_in_its_own_panel(watched, served):
    base, kit, man = served
    at, data = _moment(kit.parent, man.figures[FIGURE])
    page = watched.page
    page.goto(base + "index.html")
    card = f"#figure-{FIGURE} video"
    _play_at(page, card, at)  # its tracks come with its notes, when it first plays
    page.wait_for_selector(f'#figure-{FIGURE} .hotspot[aria-label="{NAME}"]', timeout=10_000)
    page.mouse.click(*_centre(page, card, data["box"]))
    _check_opened(_opened(page, card, f"#figure-{FIGURE}"))
    assert watched.errors == []


def test_nothing_is_drawn_over_the_video_but_the_hint_of_the_number_pointed_at(watched, served):
    base, kit, man = served
    at, data = _moment(kit.parent, man.figures[FIGURE])
    page = watched.page
    page.goto(f"{base}embed/{FIGURE}.html")
    _play_at(page, "video", at)
    page.evaluate("() => document.querySelector('video').pause()")
    page.wait_for_selector(f'.hotspot[aria-label="{NAME}"]', timeout=10_000)
    style = "b => { const s = getComputedStyle(b); return [s.backgroundColor, s.outlineStyle, s.borderStyle]; }"
    hotspot = page.locator(f'.hotspot[aria-label="{NAME}"]')
    assert hotspot.evaluate(style) == ["rgba(0, 0, 0, 0)", "none", "none"]
    page.mouse.move(*_centre(page, "video", data["box"]))
    assert hotspot.evaluate(style)[1] == "solid"  # the faint outline, on hover


def test_the_embed_page_with_its_hotspots_up_has_no_wcag_22_a_or_aa_violation(watched, served):
    """The hotspots are named buttons at least 24 px each way, and the page with them passes axe-core's WCAG 2.2 A
    and AA rules (as tests/test_site_a11y.py audits the pages before play)."""
    from axe_playwright_python.sync_playwright import Axe

    base, kit, man = served
    at, _ = _moment(kit.parent, man.figures[FIGURE])
    page = watched.page
    page.goto(f"{base}embed/{FIGURE}.html")
    _play_at(page, "video", at)
    page.evaluate("() => document.querySelector('video').pause()")
    page.wait_for_selector(f'.hotspot[aria-label="{NAME}"]', timeout=10_000)
    sizes = page.evaluate("() => [...document.querySelectorAll('.hotspot')].map(b => b.getBoundingClientRect())")
    assert all(r["width"] >= 24 and r["height"] >= 24 for r in sizes)
    results = Axe().run(page, options={"runOnly": {"type": "tag", "values": WCAG_22_AA}})
    found = [f"{v['id']}: {v['help']}: {[n['target'] for n in v['nodes'][:5]]}" for v in results.response["violations"]]
    assert found == []


def test_with_scripts_off_the_embed_page_is_as_it_was(browser, served):  # noqa: F811
    base = served[0]
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        requests = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(f"{base}embed/{FIGURE}.html")
        page.wait_for_timeout(1000)
        assert page.locator(".hotspot, .hotspots, .picture").count() == 0
        assert page.locator(f'.numbers .fact[data-fact="{FACT}"]').count() == 1
        assert not [url for url in requests if url.endswith((".facts.vtt", ".descriptions.vtt"))]
    finally:
        context.close()


def test_before_play_the_embed_page_fetches_no_number_track_and_grows_by_under_10_kb(watched, served):
    """What the numbers in the picture add to the embed page before play: their part of kit.js and kit.css and the
    two track lines of the page; their tracks are fetched when the clip plays, not before."""
    base, kit, _ = served
    page = watched.page
    page.goto(f"{base}embed/{FIGURE}.html")
    page.wait_for_function("() => document.querySelector('video').readyState >= 1", timeout=20_000)
    page.wait_for_timeout(500)
    assert not [url for url in watched.requests if url.endswith((".facts.vtt", ".descriptions.vtt"))]
    script = (kit / "kit.js").read_text(encoding="utf-8")
    section = re.search(r"  // -- The numbers in the picture -.*?(?=\n  document\.querySelectorAll)", script, re.S)
    styles = (kit / "kit.css").read_text(encoding="utf-8")
    rules = styles[styles.index("/* the numbers in the picture") :]
    html = (kit / "embed" / f"{FIGURE}.html").read_text(encoding="utf-8")
    tracks = re.findall(r'<track kind="(?:descriptions|metadata)"[^>]*>', html)
    assert len(tracks) == 2
    added = len(section.group().encode()) + len(rules.encode()) + sum(len(t.encode()) for t in tracks)
    print(f"the numbers in the picture add {added} B to the embed page before play")
    assert added <= 10_000
    page.evaluate("() => { const v = document.querySelector('video'); v.muted = true; v.play(); }")  # now they are
    page.wait_for_function("() => document.querySelectorAll('track')[2].readyState === 2", timeout=10_000)
