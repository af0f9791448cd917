"""The embed kit: its files, `lecture site` / `lecture serve`, and a real
headless Chromium (Debian's, driven by Playwright) playing it from 127.0.0.1."""

import json
import os
import re
import shutil
import subprocess
import threading
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.error import HTTPError

import pytest
from helpers import BIN, FIGURE_C, run

from tools.course import catalogue
from tools.publish.publishing import manifest
from tools.publish.site import serve, site

pytestmark = pytest.mark.slow  # real renders

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
IDS = ["gates_circuit", "gates_circuit_b", FIGURE_C]


class _Refs(HTMLParser):
    """Every src/href/poster of a page."""

    def __init__(self):
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.refs += [value for name, value in attrs if name in ("src", "href", "poster") and value]


def _refs(path: Path) -> list[str]:
    parser = _Refs()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.refs


@pytest.fixture(scope="module")
def kit(three_figures) -> Path:
    return three_figures.kit.path


@pytest.fixture(scope="module")
def embed(kit) -> dict:
    return json.loads((kit / "embed.json").read_text(encoding="utf-8"))


# -- the files ---------------------------------------------------------------------


def test_the_kit_holds_a_page_and_an_entry_per_figure(kit, embed, three_figures):
    man = three_figures.manifest
    assert three_figures.kit.figures == IDS
    assert three_figures.kit.chapter_videos == ["backprop"]
    assert sorted(p.name for p in (kit / "embed").iterdir()) == sorted(f"{i}.html" for i in IDS)
    assert list(embed["figures"]) == IDS
    index = (kit / "index.html").read_text(encoding="utf-8")
    for fig_id, entry in embed["figures"].items():
        assert entry["title"] == man.figures[fig_id].title
        assert entry["title"] in index
        assert entry["duration"] == man.figures[fig_id].duration
        for path in (entry["video"], entry["poster"], entry["thumbnail"], *entry["captions"].values(), entry["page"]):
            assert (kit / path).is_file(), path
        snippet = entry["snippets"]["video"]
        assert f'src="{entry["video"]}"' in snippet
        assert f'poster="{entry["poster"]}"' in snippet
        assert f'<track kind="captions" srclang="zh" label="中文" src="{entry["captions"]["vtt"]}" default>' in snippet
        assert f'src="{entry["page"]}"' in entry["snippets"]["iframe"]
    assert index.count('<video controls preload="metadata"') == len(IDS) + 1
    chapter = next(ch for ch in embed["chapters"] if ch["id"] == "backprop")
    assert chapter["figures"] == IDS
    assert [m["title"] for m in chapter["video"]["marks"]] == [man.figures[i].title for i in IDS]
    assert '<track kind="chapters"' in chapter["video"]["snippets"]["video"]
    # Chapters with nothing rendered yet say why they have no chapter video.
    assert f"整章视频要等本章 {len(catalogue.chapter('ledger').figures)} 个图都渲染后才生成，现已渲染 0 个。" in index


def test_embed_json_carries_the_facts_lecture_facts_prints(embed):
    table = json.loads(run([str(BIN / "lecture"), "facts", "--json"]).stdout)
    assert embed["figures"]["gates_circuit"]["facts"] == table["gates_circuit"]


def test_every_reference_is_relative_and_inside_the_kit(kit):
    pages = [kit / "index.html", *sorted((kit / "embed").iterdir())]
    for page in pages:
        for ref in _refs(page):
            if ref.startswith("data:") or ref.startswith("#"):
                continue
            assert not re.match(r"^[a-z]+:|^/", ref), f"{page.name}: {ref}"
            assert (page.parent / ref.split("#")[0]).resolve().is_file(), f"{page.name}: {ref}"
    for text in [p.read_text(encoding="utf-8") for p in (*pages, kit / "kit.css", kit / "kit.js", kit / "embed.json")]:
        assert not re.search(r"https?://|//[a-z0-9]", text)


def test_a_failed_kit_write_leaves_the_old_kit(three_figures, monkeypatch):
    out = three_figures.out
    before = {p.relative_to(out): p.read_bytes() for p in (out / "site").rglob("*.html")}

    def broken(*args):
        raise RuntimeError("disk full")

    monkeypatch.setattr(site, "_embed_page", broken)
    with pytest.raises(RuntimeError):
        site.write_kit(out, manifest.load(out), catalogue.course_title())
    assert {p.relative_to(out): p.read_bytes() for p in (out / "site").rglob("*.html")} == before
    assert not list(out.glob(".site-*"))


def test_an_incomplete_chapter_shows_its_figures_and_says_why_no_chapter_video(backprop_build, tmp_path):
    out = tmp_path / "480p15"
    shutil.copytree(backprop_build.out, out, ignore=shutil.ignore_patterns("site"))
    man = manifest.load(out)
    man.chapters[0].figures.append("not_yet_rendered")
    kit = site.write_kit(out, man, catalogue.course_title())
    index = (kit.path / "index.html").read_text(encoding="utf-8")
    rendered = len(man.chapters[0].figures) - 1
    assert kit.figures == man.chapters[0].figures[:-1]
    assert kit.chapter_videos == []
    assert f"整章视频要等本章 {rendered + 1} 个图都渲染后才生成，现已渲染 {rendered} 个。" in index
    assert "media/backprop.mp4" not in index


def test_lecture_site_rewrites_the_kit_lecture_build_made(backprop_build):
    kit = backprop_build.out / "site"
    figures = len(catalogue.chapter("backprop").figures)
    assert f"embed kit: {figures} figures, 1 chapter videos" in backprop_build.stdout
    (kit / "index.html").unlink()
    done = run([str(BIN / "lecture"), "site", "-q", "l"], env=backprop_build.env)
    assert done.returncode == 0, done.stderr
    assert (kit / "index.html").exists()
    assert (kit / "embed" / "gates_circuit.html").exists()


def test_lecture_site_refuses_when_nothing_is_rendered(tmp_path):
    done = run([str(BIN / "lecture"), "site", "-q", "m"], env={"LECTURE_RENDERS": str(tmp_path)})
    assert done.returncode == 2
    assert "run lecture build first" in done.stderr


def test_lecture_serve_answers_on_localhost(backprop_build):
    process = subprocess.Popen(
        [str(BIN / "lecture"), "serve", "-q", "l", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **backprop_build.env},
    )
    try:
        line = process.stdout.readline()
        served = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert served, line
        url = served.group(0)
        with urllib.request.urlopen(url + "index.html") as response:
            assert "训练一步的账" in response.read().decode("utf-8")
    finally:
        process.terminate()
        process.wait(timeout=10)


# -- the server ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(kit):
    server = serve.make_server(kit, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _get(url: str, headers: dict | None = None):
    return urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}))


def test_the_server_answers_byte_ranges_for_seeking(served, kit, embed):
    path = embed["figures"]["gates_circuit"]["video"]
    data = (kit / path).read_bytes()
    with _get(served + path, {"Range": "bytes=100-199"}) as response:
        assert response.status == 206
        assert response.read() == data[100:200]
        assert response.headers["Content-Range"] == f"bytes 100-199/{len(data)}"
        assert response.headers["Content-Type"] == "video/mp4"
    with _get(served + path, {"Range": "bytes=-10"}) as response:
        assert response.read() == data[-10:]
    with pytest.raises(HTTPError) as refused:
        _get(served + path, {"Range": f"bytes={len(data)}-"})
    assert refused.value.code == 416
    with _get(served + embed["figures"]["gates_circuit"]["captions"]["vtt"]) as response:
        assert response.headers["Content-Type"] == "text/vtt"


# -- a real browser -------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), "the browser tests need Debian's chromium: `make test` installs it"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Watched:
    """A page with its console errors and every request it made."""

    def __init__(self, browser, base: str):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.base = base

    def _route(self, route):
        self.requests.append(route.request.url)
        if route.request.url.startswith(self.base) or route.request.url.startswith("data:"):
            route.continue_()
        else:
            route.abort()

    def outside(self) -> list[str]:
        return [url for url in self.requests if not url.startswith(self.base) and not url.startswith("data:")]


@pytest.fixture
def watched(browser, served):
    watched = Watched(browser, served)
    yield watched
    watched.context.close()


VIDEOS = """() => [...document.querySelectorAll('video')].map(v => ({
  id: (v.closest('[id]') || {}).id, readyState: v.readyState, duration: v.duration, error: v.error && v.error.code,
  tracks: [...v.textTracks].map(t => ({kind: t.kind, language: t.language, mode: t.mode,
    cues: t.cues ? [...t.cues].map(c => ({start: c.startTime, end: c.endTime, text: c.text})) : null})),
  trackStates: [...v.querySelectorAll('track')].map(t => t.readyState)}))"""
# Loaded: each video's metadata, and each track a browser loads by itself (a default one: captions, chapters).
LOADED = """() => [...document.querySelectorAll('video')].every(v => v.readyState >= 1
  && [...v.querySelectorAll('track')].every(t => !t.default || t.readyState >= 2))"""


def _captions_of(vtt: Path) -> list[str]:
    blocks = vtt.read_text(encoding="utf-8").split("\n\n")[1:]
    return [block.split("\n", 1)[1].strip() for block in blocks if block.strip()]


def test_gallery_plays_every_video_with_chinese_captions(watched, kit, embed, tmp_path):
    page = watched.page
    page.goto(watched.base + "index.html")
    # Each clip's tracks come with its notes, loaded when it first plays or its notes are opened: load them all.
    page.evaluate("() => Promise.all([...document.querySelectorAll('.clip')].map(c => LectureKit.loadNotes(c)))")
    page.wait_for_function(LOADED, timeout=30_000)
    videos = {v["id"]: v for v in page.evaluate(VIDEOS)}
    assert set(videos) == {f"figure-{i}" for i in IDS} | {"chapter-video-backprop"}
    for fig_id in IDS:
        video = videos[f"figure-{fig_id}"]
        assert video["error"] is None
        assert video["readyState"] >= 1
        assert video["duration"] == pytest.approx(embed["figures"][fig_id]["duration"], abs=0.1)
        # the captions, shown; the descriptions and the numbers' places beside them, where published, off
        track, *numbers = video["tracks"]
        assert (track["kind"], track["language"], video["trackStates"][0]) == ("captions", "zh", 2)
        off = [("descriptions", "disabled"), ("metadata", "disabled")]
        assert [(t["kind"], t["mode"]) for t in numbers] in ([], off)
        assert [c["text"] for c in track["cues"]] == _captions_of(kit / embed["figures"][fig_id]["captions"]["vtt"])
        assert all(any("\u4e00" <= ch <= "\u9fff" for ch in c["text"]) for c in track["cues"])
    chapter = next(ch for ch in embed["chapters"] if ch["id"] == "backprop")["video"]
    video = videos["chapter-video-backprop"]
    assert video["duration"] == pytest.approx(chapter["duration"], abs=0.1)
    kinds = {t["kind"]: t for t in video["tracks"]}
    assert len(kinds["captions"]["cues"]) == len(_captions_of(kit / chapter["captions"]["vtt"]))
    assert [(c["text"], c["start"]) for c in kinds["chapters"]["cues"]] == [
        (m["title"], pytest.approx(m["start"], abs=0.01)) for m in chapter["marks"]
    ]
    # The chapter list beside the chapter video: one entry per figure; a click seeks there.
    items = page.locator("#chapter-video-backprop .chapters button")
    assert [text.split(" ", 1)[1] for text in items.all_inner_texts()] == [m["title"] for m in chapter["marks"]]
    items.nth(2).click()
    page.wait_for_function(
        "s => document.querySelector('#chapter-video-backprop video').currentTime >= s",
        arg=chapter["marks"][2]["start"] - 0.05,
        timeout=10_000,
    )
    page.wait_for_selector("#chapter-video-backprop .chapters li.current:nth-child(3)", timeout=10_000)
    page.evaluate("() => document.querySelectorAll('video').forEach(v => v.pause())")
    page.evaluate("() => window.scrollTo(0, 0)")
    shot = tmp_path / "gallery.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    assert watched.errors == []
    assert watched.outside() == []


@pytest.mark.parametrize("fig_id", IDS)
def test_embed_page_plays_with_sound_and_captions_from_localhost_only(watched, embed, fig_id):
    entry = embed["figures"][fig_id]
    page = watched.page
    page.goto(watched.base + entry["page"])
    page.wait_for_function(LOADED, timeout=30_000)
    (video,) = page.evaluate(VIDEOS)
    assert video["duration"] == pytest.approx(entry["duration"], abs=0.1)
    assert video["tracks"][0]["mode"] == "showing"
    assert len(video["tracks"][0]["cues"]) > 3
    page.click("video")  # a user gesture, so play() with sound is allowed
    page.evaluate("() => document.querySelector('video').play()")
    page.wait_for_function("() => document.querySelector('video').currentTime > 1.5", timeout=20_000)
    state = page.evaluate("""() => { const v = document.querySelector('video');
      return {paused: v.paused, muted: v.muted, audio: v.webkitAudioDecodedByteCount,
              frames: v.webkitDecodedFrameCount, active: [...v.textTracks[0].activeCues].map(c => c.text)}; }""")
    assert not state["paused"]
    assert not state["muted"]
    assert state["audio"] > 0
    assert state["frames"] > 10
    assert state["active"]
    assert any("\u4e00" <= ch <= "\u9fff" for ch in state["active"][0])
    assert watched.errors == []
    assert watched.outside() == []


def test_pasted_video_snippet_loads_the_caption_file(watched, kit, embed):
    entry = embed["figures"]["gates_circuit"]
    page = watched.page
    page.goto(watched.base + "embed.json")  # any page of the kit's origin, then the snippet as pasted
    page.set_content(
        f'<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><base href="{watched.base}">'
        f'<link rel="icon" href="data:,"></head><body>{entry["snippets"]["video"]}</body></html>'
    )
    page.wait_for_function(LOADED, timeout=30_000)
    (video,) = page.evaluate(VIDEOS)
    assert video["duration"] == pytest.approx(entry["duration"], abs=0.1)
    assert [c["text"] for c in video["tracks"][0]["cues"]] == _captions_of(kit / entry["captions"]["vtt"])
    assert watched.errors == []
    assert watched.outside() == []


# -- the transcript, the numbers panel, search and #t= in a real browser, on the real backprop build --------


@pytest.fixture(scope="module")
def course(backprop_build):
    """The kit `lecture build` wrote for the whole backprop chapter, served on 127.0.0.1, and its embed.json."""
    kit = backprop_build.out / "site"
    server = serve.make_server(kit, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", json.loads((kit / "embed.json").read_text("utf-8"))
    server.shutdown()
    server.server_close()


FIGURE = "vanishing_gradients"
NOW = "() => document.querySelector('video').currentTime"
NEAR = "([t, d]) => Math.abs(document.querySelector('video').currentTime - t) < d"


def _open(browser, base: str, path: str, **context) -> Watched:
    watched = Watched(browser, base)
    if context:
        watched.context.close()
        watched.context = browser.new_context(viewport={"width": 1280, "height": 900}, **context)
        watched.context.route("**/*", watched._route)
        watched.page = watched.context.new_page()
        watched.page.on("pageerror", lambda e: watched.errors.append(str(e)))
    watched.page.goto(base + path)
    return watched


@pytest.fixture
def figure_page(browser, course):
    """The embed page of FIGURE, loaded, and its transcript's lines as embed.json gives them."""
    base, embed = course
    watched = _open(browser, base, f"embed/{FIGURE}.html")
    watched.page.wait_for_function(LOADED, timeout=30_000)
    yield watched, embed["figures"][FIGURE]["transcript"]
    assert watched.errors == []
    watched.context.close()


def test_a_transcript_line_seeks_its_clip_by_click_and_by_keyboard(figure_page):
    watched, lines = figure_page
    page = watched.page
    cues = page.locator(".transcript a.cue")
    assert cues.count() == len(lines) > 4
    cues.nth(2).click()
    page.wait_for_function(NEAR, arg=[lines[2]["start"], 0.2], timeout=10_000)
    assert page.evaluate("location.hash") == f"#t={lines[2]['start']:.3f}"
    page.evaluate("() => { const v = document.querySelector('video'); v.pause(); v.currentTime = 0; }")
    cues.nth(0).focus()
    for _ in range(3):
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.cue") == lines[3]["cue"]
    page.keyboard.press("Enter")
    page.wait_for_function(NEAR, arg=[lines[3]["start"], 0.2], timeout=10_000)


def test_the_highlighted_line_follows_playback(figure_page):
    watched, lines = figure_page
    page = watched.page
    page.evaluate(f"() => {{ document.querySelector('video').currentTime = {lines[4]['start'] + 0.3}; }}")
    page.wait_for_selector(f'.transcript li.current a[data-cue="{lines[4]["cue"]}"]', timeout=10_000)
    page.evaluate(
        "([t]) => { const v = document.querySelector('video'); v.muted = true; v.currentTime = t; v.play(); }",
        [lines[5]["start"] - 0.4],
    )
    page.wait_for_selector(f'.transcript li.current a[data-cue="{lines[5]["cue"]}"]', timeout=10_000)
    assert page.locator(".transcript li.current").count() == 1


def test_the_numbers_panel_lists_the_facts_lecture_facts_prints(browser, course):
    base, _ = course
    table = json.loads(run([str(BIN / "lecture"), "facts", "--json"]).stdout)[FIGURE]
    watched = _open(browser, base, f"embed/{FIGURE}.html")
    page = watched.page
    panel = page.locator(".numbers")
    assert panel.locator("[data-fact]").evaluate_all("els => els.map(e => e.dataset.fact)") == list(table)
    text = panel.inner_text()
    assert "0.8⁵⁹" in text
    for name, fact in table.items():
        row = panel.locator(f'[data-fact="{name}"]').inner_text()
        assert fact["text"] in row
        assert fact.get("how", "") in row
    watched.context.close()


def test_search_finds_a_number_and_opens_its_clip_at_that_second(browser, course):
    base, embed = course
    lines = embed["figures"][FIGURE]["transcript"]
    spoken = next(line for line in lines if "shrink_end" in line["cites"])
    watched = _open(browser, base, "index.html")
    page = watched.page
    page.fill("#search-box", "1.9156")
    page.wait_for_selector(".search-results li", timeout=20_000)
    first = page.locator(".search-results li a").first
    assert first.get_attribute("href") == f"embed/{FIGURE}.html#t={spoken['start']:.3f}"
    assert embed["figures"][FIGURE]["title"] in first.inner_text()
    first.click()
    page.wait_for_url(f"**/embed/{FIGURE}.html#t=*")
    page.wait_for_function(NEAR, arg=[spoken["start"], 0.2], timeout=20_000)
    assert watched.errors == []
    assert watched.outside() == []
    watched.context.close()


def test_t_in_the_address_starts_the_clip_there(browser, course):
    base, _ = course
    watched = _open(browser, base, f"embed/{FIGURE}.html#t=12.5")
    watched.page.wait_for_function(NEAR, arg=[12.5, 0.05], timeout=20_000)
    watched.context.close()


def test_with_scripts_off_the_transcript_and_the_numbers_are_there(browser, course):
    base, embed = course
    watched = _open(browser, base, f"embed/{FIGURE}.html", java_script_enabled=False)
    text = watched.page.locator("body").inner_text()
    for line in embed["figures"][FIGURE]["transcript"]:
        assert line["text"] in text
    assert "0.8⁵⁹" in text
    watched.context.close()


def test_a_hostile_catalogue_entry_renders_as_text(browser, tmp_path, monkeypatch):
    import test_site_pages as pages

    monkeypatch.setattr(catalogue, "TOPICS", (catalogue.Topic(pages.HOSTILE, pages.HOSTILE, ("backprop",)),))
    out = tmp_path / "480p15"
    cue = [{"cue": "c1", "start": 1.0, "duration": 2.0, "text": pages.HOSTILE, "cites": ["links"]}]
    fact = {"links": {"value": 1, "text": pages.HOSTILE, "spoken": "一", "how": pages.HOSTILE}}
    entry = pages._figure(out, "backprop", FIGURE, cues=cue, facts=fact, source=pages.HOSTILE)
    kit = pages._kit(out, [manifest.ChapterList("backprop", pages.HOSTILE, [FIGURE], pages.HOSTILE)], {FIGURE: entry})
    server = serve.make_server(kit, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        dialogs: list[str] = []
        for path in ("index.html", f"embed/{FIGURE}.html"):
            watched = _open(browser, base, path)
            watched.page.on("dialog", lambda d: dialogs.append(d.message))
            watched.page.reload()  # with the dialog watched from the start
            assert watched.page.evaluate("document.scripts.length") == 1
            assert watched.page.evaluate("document.querySelectorAll('b').length") == 0
            assert pages.HOSTILE in watched.page.locator("body").inner_text()
            assert dialogs == []
            watched.context.close()
    finally:
        server.shutdown()
        server.server_close()
