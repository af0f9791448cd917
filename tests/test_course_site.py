"""The kit in a course site an author writes: examples/course-site (MkDocs Material) built against a real build's kit
and played in Chromium, where each <lecture-clip> is a facade (poster, title, duration, a play button; nothing else
fetched) until pressed, then the clip with its captions, transcript and numbers; the oEmbed records; the gallery
opened from disk with its notes loaded when wanted; and the weight of the whole course's gallery."""

import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest
from helpers import BIN, ROOT, run
from test_site import CHROMIUM_ARGS, Watched, browser  # noqa: F401 (browser: the shared fixture)

from tools import settings
from tools.course import catalogue
from tools.course.shown import check_cells
from tools.files import file_sha256
from tools.publish.publishing import figure_notes, manifest
from tools.publish.publishing.manifest import ChapterList, ChapterVideo, Manifest, PublishedFigure, PublishedFile
from tools.publish.site import serve, site
from tools.voice import captions, cues

pytestmark = pytest.mark.slow  # a real build, a browser, every builder

EXAMPLE = ROOT / "examples" / "course-site"
# What the example page embeds: three <lecture-clip>s (figure, start) and one iframe.
CLIPS = [("exchange_rate", 0.0), ("gates_circuit", 12.0), ("activation_mountain", 0.0)]
IFRAME = "vanishing_gradients"
# What the page may transfer before play for its clips: itself and the kit's files, the posters aside (issue 42).
BUDGET = 50_000
THEME = "assets/"  # MkDocs Material's own stylesheet, script and icon: the course site's, with or without clips


@pytest.fixture(scope="module")
def course_site(backprop_build, tmp_path_factory):
    """examples/course-site built by MkDocs, the backprop build's kit at kit/ in it, written for the address it is
    served from (LECTURE_KIT_URL); served on 127.0.0.1. Yields the address, the kit's address and embed.json."""
    tmp = tmp_path_factory.mktemp("course-site")
    built = tmp / "built"
    env = {"NO_MKDOCS_2_WARNING": "1"}
    done = run([str(BIN / "mkdocs"), "build", "--strict", "-f", str(EXAMPLE / "mkdocs.yml"), "-d", str(built)], env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    server = serve.make_server(built, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    out = tmp / "480p15"
    shutil.copytree(backprop_build.out, out, ignore=shutil.ignore_patterns("site"), copy_function=os.link)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(settings.KIT_URL_ENV, base + "kit/")
        kit = site.write_kit(out, manifest.load(out), catalogue.course_title()).path
    shutil.copytree(kit, built / "kit", copy_function=os.link)
    yield base, base + "kit/", json.loads((kit / "embed.json").read_text(encoding="utf-8"))
    server.shutdown()
    server.server_close()


class Transfer:
    """Every byte the page receives, per request, from Chromium's own count (DevTools' Network domain), with the
    frame that asked: a video's range requests count while they stream, not only once they finish."""

    def __init__(self, page):
        self.bytes: dict[str, int] = {}
        self.urls: dict[str, str] = {}
        self.frames: dict[str, str] = {}
        session = page.context.new_cdp_session(page)
        session.on("Network.requestWillBeSent", self._sent)
        session.on("Network.dataReceived", self._data)
        session.on("Network.loadingFinished", self._finished)
        session.send("Network.enable")
        self.page_frame = session.send("Page.getFrameTree")["frameTree"]["frame"]["id"]

    def _sent(self, event):
        self.urls[event["requestId"]] = event["request"]["url"]
        self.frames[event["requestId"]] = event.get("frameId", "")

    def _data(self, event):
        self.bytes[event["requestId"]] = self.bytes.get(event["requestId"], 0) + event["encodedDataLength"]

    def _finished(self, event):  # the whole count, headers too, once the response is in
        self.bytes[event["requestId"]] = max(self.bytes.get(event["requestId"], 0), event["encodedDataLength"])

    def by_url(self, frame_id: str | None = None) -> dict[str, int]:
        return {
            self.urls[rid]: size
            for rid, size in self.bytes.items()
            if rid in self.urls and (frame_id is None or self.frames[rid] == frame_id)
        }


@pytest.fixture
def course_page(browser, course_site):  # noqa: F811 (the fixture imported above)
    base, kit, embed = course_site
    watched = Watched(browser, base)
    transfer = Transfer(watched.page)
    watched.page.goto(base + "index.html")
    watched.page.wait_for_load_state("networkidle")
    yield watched, transfer, kit, embed
    assert watched.errors == []
    assert watched.outside() == []
    watched.context.close()


def _facade(page, n: int) -> dict:
    return page.evaluate(
        """n => { const clip = document.querySelectorAll('lecture-clip')[n], root = clip.shadowRoot;
          const img = root.querySelector('img'), time = root.querySelector('.time');
          return {title: root.querySelector('.title').textContent, time: time && time.textContent,
                  label: root.querySelector('button').getAttribute('aria-label'), poster: img.currentSrc,
                  posterWidth: img.naturalWidth, video: !!root.querySelector('video'),
                  fallbackShown: clip.querySelector('a').offsetParent !== null}; }""",
        n,
    )


def test_the_facades_show_poster_title_and_duration_and_fetch_nothing_else(course_page):
    watched, transfer, kit, embed = course_page
    page = watched.page
    for n, (fig_id, _) in enumerate(CLIPS):
        page.locator("lecture-clip").nth(n).scroll_into_view_if_needed()
        page.wait_for_function(
            "n => document.querySelectorAll('lecture-clip')[n].shadowRoot.querySelector('img').naturalWidth > 0",
            arg=n,
            timeout=10_000,
        )
        entry = embed["figures"][fig_id]
        seconds = int(float(f"{entry['duration']:.1f}"))
        facade = _facade(page, n)
        assert facade["title"] == entry["title"]
        assert facade["time"] == f"{seconds // 60}:{seconds % 60:02d}"
        assert facade["label"] == f"播放：{entry['title']}（时长 {facade['time']}）"
        assert facade["poster"].startswith(kit + "media/backprop/" + fig_id + ".")
        assert facade["posterWidth"] > 0
        assert not facade["video"]
        assert not facade["fallbackShown"]  # the link shows only without scripts
    page.wait_for_load_state("networkidle")
    fetched = transfer.by_url(transfer.page_frame)  # the iframe's own are counted apart
    from_kit = {url[len(kit) :]: size for url, size in fetched.items() if url.startswith(kit)}
    posters = {path for path in from_kit if re.fullmatch(r"media/.+\.(png|webp)", path)}
    assert set(from_kit) - posters == {"lecture-clip.js"}, from_kit  # no player, no notes, no video before play
    theme = sum(size for url, size in fetched.items() if url.startswith(watched.base + THEME))
    clips_cost = fetched[watched.base + "index.html"] + sum(from_kit[p] for p in from_kit if p not in posters)
    report = (
        f"before play: the page and the kit's files {clips_cost} B (the page {fetched[watched.base + 'index.html']} B, "
        f"lecture-clip.js {from_kit['lecture-clip.js']} B), posters {sum(from_kit[p] for p in posters)} B, "
        f"the theme's files {theme} B, everything with the iframe's {sum(transfer.by_url().values())} B"
    )
    print(report)
    assert clips_cost <= BUDGET, report


def test_a_press_plays_the_clip_from_its_start_with_its_tracks_transcript_and_numbers(course_page):
    watched, _, kit, embed = course_page
    page = watched.page
    fig_id, start = CLIPS[1]
    entry = embed["figures"][fig_id]
    clip = page.locator("lecture-clip").nth(1)
    clip.scroll_into_view_if_needed()
    clip.locator("button").focus()
    page.keyboard.press("Enter")  # keyboard operable: the facade is a labelled button
    page.wait_for_function(
        """s => { const v = document.querySelectorAll('lecture-clip')[1].shadowRoot.querySelector('video');
                  return v && !v.paused && v.currentTime > s + 0.5; }""",
        arg=start,
        timeout=20_000,
    )
    state = page.evaluate(
        """() => { const root = document.querySelectorAll('lecture-clip')[1].shadowRoot;
          const v = root.querySelector('video');
          return {src: v.currentSrc, muted: v.muted, focused: root.activeElement === v,
                  tracks: [...v.textTracks].map(t => ({kind: t.kind, label: t.label, mode: t.mode,
                                                       cues: t.cues ? t.cues.length : 0})),
                  lines: root.querySelectorAll('.transcript a.cue').length,
                  facts: [...root.querySelectorAll('.numbers [data-fact]')].map(e => e.dataset.fact)}; }"""
    )
    assert state["src"] == kit + entry["video"]
    assert not state["muted"]
    assert state["focused"]
    # The tracks embed.json lists for the figure, each loaded.
    assert [(t["kind"], t["label"]) for t in state["tracks"]] == [(t["kind"], t["label"]) for t in entry["tracks"]]
    assert state["tracks"][0]["cues"] > 3
    assert state["tracks"][0]["mode"] == "showing"
    # the numbers' places, fetched as it plays (the descriptions stay off until someone turns them on)
    modes = {t["kind"]: (t["mode"], t["cues"] > 0) for t in state["tracks"]}
    assert modes["metadata"] == ("hidden", True)
    assert modes["descriptions"][0] == "disabled"
    assert state["lines"] == len(entry["transcript"])
    assert state["facts"] == list(entry["facts"])
    # Only the pressed clip: the others are still facades.
    assert _facade(page, 0)["video"] is False


def test_a_transcript_line_seeks_the_clip_it_came_with(course_page):
    watched, _, _, embed = course_page
    page = watched.page
    fig_id, _ = CLIPS[0]
    lines = embed["figures"][fig_id]["transcript"]
    page.locator("lecture-clip").nth(0).locator("button").click()
    page.wait_for_selector("lecture-clip >> .transcript a.cue", timeout=20_000)
    page.locator("lecture-clip").nth(0).locator(".transcript a.cue").nth(3).click()
    page.wait_for_function(
        "t => Math.abs(document.querySelector('lecture-clip').shadowRoot.querySelector('video').currentTime - t) < .3",
        arg=lines[3]["start"],
        timeout=20_000,
    )
    assert page.url == watched.base + "index.html"  # the click seeks; it does not leave the page
    page.wait_for_selector(f'lecture-clip >> .transcript li.current a[data-cue="{lines[3]["cue"]}"]', timeout=10_000)


def test_without_scripts_each_clip_is_a_link_to_its_embed_page_at_that_second(browser, course_site):  # noqa: F811
    base, _, embed = course_site
    watched = Watched(browser, base)
    watched.context.close()
    watched.context = browser.new_context(java_script_enabled=False)
    page = watched.context.new_page()
    page.goto(base + "index.html")
    links = page.locator("lecture-clip a")
    assert links.count() == len(CLIPS)
    for n, (fig_id, start) in enumerate(CLIPS):
        assert links.nth(n).inner_text() == embed["figures"][fig_id]["title"]
        assert links.nth(n).get_attribute("href") == f"kit/embed/{fig_id}.html#t={start:g}"
    watched.context.close()


def test_each_oembed_record_has_the_fields_the_spec_requires_and_is_found_from_its_page(course_site):
    import urllib.request

    _, kit, embed = course_site
    for entry in embed["figures"].values():
        with urllib.request.urlopen(kit + entry["oembed"]) as answer:
            assert answer.headers["Content-Type"] == "application/json"
            record = json.loads(answer.read())
        # oEmbed 1.0, section 2.3.4: type and version always; a video's html, width and height; the thumbnail's
        # url, width and height all or none.
        assert record["type"] == "video"
        assert record["version"] == "1.0"
        assert isinstance(record["width"], int)
        assert isinstance(record["height"], int)
        assert record["title"] == entry["title"]
        assert record["provider_url"] == kit
        assert f'src="{kit}{entry["page"]}"' in record["html"]
        assert f'title="{entry["title"]}"' in record["html"]
        assert record["thumbnail_url"] == kit + entry["thumbnail"]
        assert (record["thumbnail_width"], record["thumbnail_height"]) == (480, 270)
        with urllib.request.urlopen(record["thumbnail_url"]) as answer:
            assert answer.read(4) == b"RIFF"  # the WebP is there
        with urllib.request.urlopen(kit + entry["page"]) as answer:
            page = answer.read().decode("utf-8")
        link = f'<link rel="alternate" type="application/json+oembed" href="{kit}{entry["oembed"]}"'
        assert link in page


# -- the gallery, opened from disk -------------------------------------------------------------------------


def test_the_gallery_opened_from_disk_loads_a_cards_notes_and_captions_when_wanted(browser, three_figures):  # noqa: F811
    kit = three_figures.kit.path
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((kit / "index.html").as_uri())
    card = page.locator("#figure-gates_circuit")
    assert card.locator(".transcript a.cue").count() == 0  # not in the page until wanted
    card.locator(".transcript summary").click()
    card.locator(".transcript a.cue").first.wait_for(timeout=10_000)
    lines = three_figures.manifest.figures["gates_circuit"].cues
    assert card.locator(".transcript a.cue").count() == len(lines)
    assert card.locator(".transcript").get_attribute("open") is not None  # the loaded part opens as asked
    card.locator(".transcript a.cue").nth(2).click()
    page.wait_for_function(
        "t => Math.abs(document.querySelector('#figure-gates_circuit video').currentTime - t) < 0.3",
        arg=lines[2]["start"],
        timeout=20_000,
    )
    page.wait_for_function(
        """() => { const t = document.querySelector('#figure-gates_circuit video').textTracks[0];
                   return t && t.mode === 'showing' && t.cues && t.cues.length > 3; }""",
        timeout=10_000,
    )
    card.locator(".numbers summary").click()
    card.locator(".numbers [data-fact]").first.wait_for(timeout=10_000)
    facts = card.locator(".numbers [data-fact]").evaluate_all("els => els.map(e => e.dataset.fact)")
    assert facts == list(three_figures.manifest.figures["gates_circuit"].facts)
    # The chapter video's tracks and transcript come the same way, when it plays.
    page.evaluate(
        "() => { const v = document.querySelector('#chapter-video-backprop video'); v.muted = true; v.play(); }"
    )
    page.wait_for_function(
        """() => [...document.querySelector('#chapter-video-backprop video').textTracks].map(t => t.kind).join()
                 === 'captions,chapters'""",
        timeout=10_000,
    )
    assert errors == []
    context.close()


# -- the whole course's kit, without rendering -----------------------------------------------------------------


def _course_manifest(out: Path) -> Manifest:
    """Every figure of the course as a build would list it (its real facts, checks, source and cues, each cue five
    seconds long), over files made up for it, and every chapter's video: what the kit is written from."""
    figures, videos = {}, {}
    for chapter in catalogue.chapters():
        folder = out / chapter.id
        folder.mkdir(parents=True)
        marks = []
        for fig in chapter.figures:
            figure_cues = list(cues.figure_cues(fig.id))
            times = folder / f"{fig.id}.cues.json"
            times.write_text(
                json.dumps([{"cue": c.id, "start": 5.0 * n, "duration": 5.0} for n, c in enumerate(figure_cues)])
            )
            lines = figure_notes.transcript(fig.id, figure_cues, times)
            vtt = captions.to_vtt([captions.Caption(line["start"], line["start"] + 5, line["text"]) for line in lines])
            files = {}
            for kind in ("mp4", "srt", "vtt", "png", "webp"):
                path = folder / f"{fig.id}.{kind}"
                path.write_text(vtt if kind == "vtt" else kind, encoding="utf-8")
                files[kind] = PublishedFile(f"{chapter.id}/{fig.id}.{kind}", file_sha256(path))
            facts = {name: fact.as_json() for name, fact in catalogue.facts(fig.id).items()}
            checks = [check_cells(check) for check in catalogue.checks(fig.id)]
            duration = 5.0 * len(lines) + 3
            figures[fig.id] = PublishedFigure(
                chapter.id, fig.id, fig.title, duration, 1920, 1080, facts, files, source=fig.source, cues=lines,
                checks=checks, voices=["neural"],
            )  # fmt: skip
            start = marks[-1]["end"] if marks else 0.0
            marks.append({"title": fig.title, "start": start, "end": start + duration})
        chapter_files = {}
        for kind in ("mp4", "vtt", "srt", "chapters.vtt"):
            path = out / f"{chapter.id}.{kind}"
            path.write_text("WEBVTT\n" if "vtt" in kind else kind, encoding="utf-8")
            chapter_files[kind] = PublishedFile(f"{chapter.id}.{kind}", file_sha256(path))
        ids = [fig.id for fig in chapter.figures]
        videos[chapter.id] = ChapterVideo(
            chapter.id, chapter.title, marks[-1]["end"], 1920, 1080, True, marks, chapter_files, ids
        )
    chapters = [ChapterList(ch.id, ch.title, [f.id for f in ch.figures], ch.topic.label) for ch in catalogue.chapters()]
    return Manifest("1080p60", chapters, figures, videos)


def test_the_whole_course_gallery_stays_under_300_kb_its_notes_one_record_per_figure(tmp_path):
    out = tmp_path / "1080p60"
    man = _course_manifest(out)
    kit = site.write_kit(out, man, catalogue.course_title())
    assert len(kit.figures) == len(catalogue.figures())
    assert len(kit.chapter_videos) == len(catalogue.chapters())
    gallery = (kit.path / "index.html").stat().st_size
    assert gallery <= 300_000, f"the gallery is {gallery} B"
    html = (kit.path / "index.html").read_text(encoding="utf-8")
    assert "data:text/vtt" not in html  # tracks come with each clip's record
    for fig_id, entry in man.figures.items():
        assert f'data-notes="notes/figures/{fig_id}.js"' in html
        assert entry.cues[0]["text"] not in html or entry.cues[0]["text"] in entry.title
        assert (kit.path / "notes" / "figures" / f"{fig_id}.js").is_file()
        assert (kit.path / "oembed" / f"{fig_id}.json").is_file()
    for chapter in man.chapters:
        assert (kit.path / "notes" / "chapters" / f"{chapter.id}.js").is_file()
    print(f"the whole course's gallery: {gallery} B ({len(kit.figures)} figures)")
