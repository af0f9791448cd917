"""The course site's pages without rendering or a browser: the transcript and the numbers panel as HTML, the
titles from the catalogue's TOPICS, hostile text escaped, the search records, and the records the manifest
keeps for them (a real browser plays them in test_site.py)."""

import gzip
import json
import re
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from tools.course import catalogue
from tools.course.catalogue import Topic
from tools.files import file_sha256
from tools.publish.build import plan, stages
from tools.publish.keys import render_key
from tools.publish.publishing import figure_notes, manifest
from tools.publish.publishing.manifest import ChapterList, Manifest, ManifestError, PublishedFigure, PublishedFile
from tools.publish.rendering.render import BuildError
from tools.publish.site import site
from tools.settings import SettingsError
from tools.voice import cues
from tools.voice.speech import Silent

HOSTILE = '<script>alert("x")</script> & "引号" \'单\' <b>粗</b>'
CUES = [
    {"cue": "c1", "start": 0.0, "duration": 4.0, "text": "第一句，说到 59 层。", "cites": ["links"]},
    {"cue": "c2", "start": 4.5, "duration": 3.0, "text": "第二句。", "cites": []},
    {"cue": "c3", "start": 8.25, "duration": 5.0, "text": "第三句：只剩 1.9×10⁻⁶。", "cites": ["shrink_end"]},
]
FACTS = {
    "links": {"value": 59, "text": "59", "spoken": "五十九", "how": "输入：层数", "schematic": True},
    "shrink_end": {"value": 1.91562e-06, "text": "1.9×10⁻⁶", "spoken": "一点九乘以十的负六次方", "how": "0.8⁵⁹"},
    "curves": {"value": [1, 2], "text": "", "spoken": ""},
}
CHECKS = [
    {"name": "shrink_end (closed form)", "kind": "close", "computed": "1.91562e-06", "expected": "1.91562e-06",
     "tolerance": "rel 1e-12"},
    {"name": "factors", "kind": "holds", "computed": "one factor below 1", "expected": "", "tolerance": ""},
]  # fmt: skip


def _figure(out, chapter: str, fig_id: str, **fields) -> PublishedFigure:
    folder = out / chapter
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for kind in ("mp4", "srt", "vtt", "png", "webp"):
        path = folder / f"{fig_id}.{kind}"
        path.write_text("WEBVTT\n" if kind == "vtt" else f"{kind} bytes", encoding="utf-8")
        files[kind] = PublishedFile(f"{chapter}/{fig_id}.{kind}", file_sha256(path))
    notes = {"facts": FACTS, "source": "出处：某论文 Table 4", "cues": CUES, "checks": CHECKS} | fields
    facts = notes.pop("facts")
    return PublishedFigure(chapter, fig_id, f"图 {fig_id}", 42.0, 854, 480, facts, files, **notes)


def _kit(out, chapters: list[ChapterList], figures: dict[str, PublishedFigure]):
    return site.write_kit(out, Manifest("480p15", chapters, figures), catalogue.course_title()).path


@pytest.fixture
def kit(tmp_path):
    out = tmp_path / "480p15"
    figures = {"vanishing_gradients": _figure(out, "backprop", "vanishing_gradients")}
    return _kit(out, [ChapterList("backprop", "反向传播", ["vanishing_gradients"], "专题四　训练一步的账")], figures)


class _Text(HTMLParser):
    """The text a reader sees (scripts and styles left out) and every element's attributes."""

    def __init__(self):
        super().__init__()
        self.text, self.attrs, self._skip = [], [], 0

    def handle_starttag(self, tag, attrs):
        self.attrs.append((tag, dict(attrs)))
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style")

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def _parsed(path) -> _Text:
    parser = _Text()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_the_embed_page_holds_the_transcript_as_text_with_links_that_seek(kit):
    page = _parsed(kit / "embed" / "vanishing_gradients.html")
    text = "".join(page.text)
    for line in CUES:
        assert line["text"] in text
    links = [a for tag, a in page.attrs if tag == "a" and "cue" in a.get("class", "").split()]
    lines = [a for a in links if "data-cue" in a]
    assert [(a["href"], a["data-start"], a["data-cue"]) for a in lines] == [
        ("#t=0.000", "0.000", "c1"),
        ("#t=4.500", "4.500", "c2"),
        ("#t=8.250", "8.250", "c3"),
    ]
    assert "0:08 第三句" in re.sub(r"\s+", " ", text)


def test_the_numbers_panel_gives_each_fact_its_how_value_checks_source_and_first_cue(kit):
    html = (kit / "embed" / "vanishing_gradients.html").read_text(encoding="utf-8")
    page = _parsed(kit / "embed" / "vanishing_gradients.html")
    facts = [a["data-fact"] for tag, a in page.attrs if "data-fact" in a]
    assert facts == list(FACTS)
    shrink = html[html.index('data-fact="shrink_end"') : html.index('data-fact="curves"')]
    assert "0.8⁵⁹" in shrink
    assert "1.91562e-06" in shrink
    assert "shrink_end (closed form)：1.91562e-06 ≈ 1.91562e-06（rel 1e-12）" in shrink
    assert 'href="#t=8.250" data-start="8.250">0:08 「第三句：只剩 1.9×10⁻⁶。」' in shrink
    links = html[html.index('data-fact="links"') : html.index('data-fact="shrink_end"')]
    assert "示意" in links  # a schematic input says so
    assert "factors：成立，one factor below 1" in html[html.index('data-fact="curves"') :]  # the figure's own checks
    assert "出处：某论文 Table 4" in html


def record(path) -> str:
    """The HTML a player's record (notes/…/<id>.js) hands kit.js."""
    script = path.read_text(encoding="utf-8")
    assert script.startswith("LectureKit.notesArrived(")
    assert script.endswith(");\n")
    return json.loads(script.removeprefix("LectureKit.notesArrived(").removesuffix(");\n"))


def test_the_gallery_card_loads_its_notes_and_links_each_line_to_the_embed_page_at_that_second(kit):
    html = (kit / "index.html").read_text(encoding="utf-8")
    assert 'data-notes="notes/figures/vanishing_gradients.js"' in html
    assert "第三句" not in html  # not inlined: loaded when opened
    # Without scripts, each placeholder links to the page that holds it.
    assert html.count('<a href="embed/vanishing_gradients.html">在单独播放页上看</a>') == 2
    assert ">文字稿 · 3 段</summary>" in html
    assert ">这些数从哪来 · 3 个</summary>" in html
    notes = record(kit / "notes" / "figures" / "vanishing_gradients.js")
    assert 'href="embed/vanishing_gradients.html#t=8.250" data-start="8.250" data-cue="c3"' in notes
    assert 'data-fact="shrink_end"' in notes
    # Its track inline, so that it plays from disk and on another site's page.
    (track,) = re.findall(r"<track [^>]*>", notes)
    assert 'kind="captions"' in track
    assert 'src="data:text/vtt;charset=utf-8;base64,' in track
    assert 'src="media/backprop/vanishing_gradients.mp4"' in notes


def test_titles_and_topic_headings_come_from_the_catalogue(tmp_path, monkeypatch):
    topics = (Topic("专题四", "训练", ("backprop",)), Topic("专题九", "新的专题", ("serving",)))
    monkeypatch.setattr(catalogue, "TOPICS", topics)
    out = tmp_path / "480p15"
    figures = {
        "vanishing_gradients": _figure(out, "backprop", "vanishing_gradients"),
        "pd_roofline": _figure(out, "serving", "pd_roofline"),
    }
    chapters = [
        ChapterList("backprop", "反向传播", ["vanishing_gradients"], topics[0].label),
        ChapterList("serving", "PD 分离", ["pd_roofline"], topics[1].label),
    ]
    path = _kit(out, chapters, figures)
    gallery = _parsed(path / "index.html")
    headings = [data.strip() for data in gallery.text if data.strip() in (topics[0].label, topics[1].label)]
    assert topics[1].label in headings
    html = (path / "index.html").read_text(encoding="utf-8")
    assert "<title>专题四至专题九 · 视频</title>" in html
    assert "<h1>专题四至专题九</h1>" in html
    embed = (path / "embed" / "pd_roofline.html").read_text(encoding="utf-8")
    assert "<title>图 pd_roofline · 专题九　新的专题</title>" in embed


def test_hostile_text_in_a_title_cue_fact_or_topic_comes_out_escaped(tmp_path, monkeypatch):
    monkeypatch.setattr(catalogue, "TOPICS", (Topic(HOSTILE, HOSTILE, ("backprop",)),))
    out = tmp_path / "480p15"
    hostile_cue = [{"cue": "c1", "start": 1.0, "duration": 2.0, "text": HOSTILE, "cites": ["links"]}]
    hostile_fact = {"links": {"value": 1, "text": HOSTILE, "spoken": HOSTILE, "how": HOSTILE, "source": HOSTILE}}
    entry = _figure(out, "backprop", "vanishing_gradients", cues=hostile_cue, facts=hostile_fact, source=HOSTILE)
    entry = PublishedFigure(**{**entry.__dict__, "title": HOSTILE})
    path = _kit(out, [ChapterList("backprop", HOSTILE, ["vanishing_gradients"], HOSTILE)], {entry.figure: entry})
    for page in (path / "index.html", path / "embed" / "vanishing_gradients.html"):
        html = page.read_text(encoding="utf-8")
        assert "<script>alert" not in html
        assert "<b>粗</b>" not in html
        assert html.count("<script") == 1  # kit.js alone
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#34;引号&#34; &#39;单&#39;" in html
        parsed = _parsed(page)
        assert HOSTILE in "".join(parsed.text)  # a reader sees the text as it was written
        assert all(tag != "b" for tag, _ in parsed.attrs)
    snippets = json.loads((path / "embed.json").read_text(encoding="utf-8"))["figures"]["vanishing_gradients"]
    assert "<script>alert" not in snippets["snippets"]["iframe"] + snippets["snippets"]["video"]


def test_search_records_every_line_and_every_shown_fact_with_the_second_it_opens(tmp_path):
    entry = _figure(tmp_path, "backprop", "vanishing_gradients")
    chapters = [ChapterList("backprop", "反向传播", ["vanishing_gradients"], "专题四　训练一步的账")]
    views = site.figure_views(Manifest("480p15", chapters), {"vanishing_gradients": entry}, tmp_path)
    records = site.search_records(views)
    assert [r["page"] for r in records] == [
        "embed/vanishing_gradients.html#t=0.000",
        "embed/vanishing_gradients.html#t=4.500",
        "embed/vanishing_gradients.html#t=8.250",
        "embed/vanishing_gradients.html#t=0.000",  # links: first spoken in c1
        "embed/vanishing_gradients.html#t=8.250",  # shrink_end, in c3; curves is drawn, not searched
    ]
    assert "1.91562e-06" in records[-1]["content"]
    assert site._searchable(records[-1]["content"]).endswith("1.91562 191562 e-06 shrink_end")
    assert "0.8⁵⁹" in records[-1]["content"]


def test_the_kit_carries_a_search_index_and_no_unused_search_interface(kit):
    index = kit / site.SEARCH
    assert (index / "pagefind.js").is_file()
    assert list(index.glob("index/*"))
    assert list(index.glob("fragment/*"))
    assert not [p.name for pattern in site.SEARCH_UNUSED for p in index.glob(pattern)]


# -- the records behind them -----------------------------------------------------------------------------


def test_the_transcript_takes_the_renders_cue_times_and_the_cues_captions(tmp_path):
    times = tmp_path / "narration.cues.json"
    ids = [cue.id for cue in cues.figure_cues("gates_circuit")]
    times.write_text(json.dumps([{"cue": c, "start": 2.0 * n, "duration": 1.5} for n, c in enumerate(ids)]))
    figure_cues = list(cues.figure_cues("gates_circuit"))
    lines = figure_notes.transcript("gates_circuit", figure_cues, times)
    assert [line["cue"] for line in lines] == ids
    assert [line["start"] for line in lines] == [2.0 * n for n in range(len(ids))]
    assert [line["text"] for line in lines] == [cue.caption for cue in cues.figure_cues("gates_circuit")]
    times.write_text(json.dumps([{"cue": c, "start": 0.0, "duration": 1.0} for c in ids[:-1]]))
    with pytest.raises(BuildError, match=f"figure 'gates_circuit': the render recorded no start for cue '{ids[-1]}'"):
        figure_notes.transcript("gates_circuit", figure_cues, times)
    times.write_text("{not json")
    with pytest.raises(BuildError, match="the render left no readable cue times"):
        figure_notes.transcript("gates_circuit", figure_cues, times)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("cues", [{"cue": "c1", "start": "soon", "duration": 1.0, "text": "x", "cites": []}]),
        ("cues", ["not a record"]),
        ("checks", [{"name": "n", "kind": "equal", "computed": 1, "expected": "1", "tolerance": ""}]),
        ("facts", {"links": 59}),
    ],
)
def test_a_manifest_with_malformed_notes_is_refused_by_name(tmp_path, field, value):
    out = tmp_path / "480p15"
    entry = _figure(out, "backprop", "vanishing_gradients")
    raw = manifest.to_json(Manifest("480p15", [], {"vanishing_gradients": entry}))
    raw["figures"]["vanishing_gradients"][field] = value
    (out / manifest.NAME).write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ManifestError, match=f"malformed field .*{field}"):
        manifest.load(out)


def test_a_figure_whose_notes_changed_is_republished_and_one_showing_other_numbers_is_rendered(tmp_path):
    """The plan republishes a clip that stands (same key, files there) when what the site says beside it
    changed; its entry and sidecar are written again. A figure that shows another number renders instead."""
    from tools.course.fact_values import fact_values

    fig = catalogue.figure("gates_circuit")
    key = render_key.figure_key(fig, "l", Silent())
    now = fact_values("gates_circuit")
    stale = {name: {k: fact[k] for k in ("value", "text", "spoken")} for name, fact in now.items()}
    entry = _figure(tmp_path, "backprop", "gates_circuit", facts=stale, checks=[], source="")
    entry = replace(entry, key=key.digest, key_parts=key.parts)
    man = Manifest("480p15", [], {"gates_circuit": entry})
    planned = plan.make([fig], "l", tmp_path, man, Silent(), "voice: silent")
    (only,) = planned.figures
    assert (only.action, only.why) == (
        "republish",
        ("what the site says beside it changed: how its numbers are computed, its checks, its source line",),
    )
    stages.republish(planned.to_republish, manifest.Held(tmp_path, man), lambda line: None)
    fresh = man.figures["gates_circuit"]
    assert fresh.facts == now
    assert fresh.source == fig.source
    assert len(fresh.checks) == len(catalogue.checks("gates_circuit"))
    assert json.loads((tmp_path / fresh.sidecar).read_text(encoding="utf-8"))["figure"]["source"] == fig.source
    shows_other = {**key.parts, "facts": {**key.parts["facts"], "grad_c": "another number"}}
    man.figures["gates_circuit"] = replace(entry, key="an older key", key_parts=shows_other)
    (again,) = plan.make([fig], "l", tmp_path, man, Silent(), "voice: silent").figures
    assert (again.action, again.why) == ("render", ("facts changed (grad_c)",))


def test_the_site_credits_the_voice_that_speaks_and_its_corpus_terms(tmp_path):
    out = tmp_path / "480p15"
    figures = {"vanishing_gradients": _figure(out, "backprop", "vanishing_gradients", voices=["neural", "recording"])}
    path = _kit(out, [ChapterList("backprop", "反向传播", ["vanishing_gradients"], "专题四　训练一步的账")], figures)
    for page in (path / "index.html", path / "embed" / "vanishing_gradients.html"):
        text = "".join(_parsed(page).text)
        assert "标贝（Baker）中文标准女声语音库" in text
        assert "只许非商业使用" in text
        assert "旁白：真人录音" in text
        assert "espeak-ng" not in text  # only the voices that speak here


def test_a_kit_with_nothing_to_search_has_no_search_box_and_no_index(tmp_path):
    out = tmp_path / "480p15"
    figures = {"vanishing_gradients": _figure(out, "backprop", "vanishing_gradients", facts={}, cues=[])}
    path = _kit(out, [ChapterList("backprop", "反向传播", ["vanishing_gradients"], "专题四　训练一步的账")], figures)
    assert not (path / site.SEARCH).exists()
    assert 'id="search-box"' not in (path / "index.html").read_text(encoding="utf-8")


# -- embedding in another site: the element, oEmbed, the snippets -------------------------------------------------


def test_the_course_site_element_ships_within_5_kb_gzipped():
    """<lecture-clip> is all a course page loads before play: its script, its styles inside it."""
    script = (site.TEMPLATES / "lecture-clip.js").read_bytes()
    assert b"<style>" in script  # its CSS travels in the script: one file
    assert len(gzip.compress(script, 9)) <= 5 * 1024


def test_without_the_kits_address_every_embedding_path_is_relative(kit):
    figure = json.loads((kit / "embed.json").read_text(encoding="utf-8"))["figures"]["vanishing_gradients"]
    record = json.loads((kit / figure["oembed"]).read_text(encoding="utf-8"))
    assert (record["type"], record["version"], record["provider_url"]) == ("video", "1.0", "./")
    assert 'src="embed/vanishing_gradients.html"' in record["html"]
    assert (kit / record["thumbnail_url"]).is_file()
    page = (kit / figure["page"]).read_text(encoding="utf-8")
    assert 'type="application/json+oembed" href="../oembed/vanishing_gradients.json"' in page
    assert (kit / "embed" / "../oembed/vanishing_gradients.json").is_file()
    snippets = figure["snippets"]
    assert snippets["element"] == (
        '<lecture-clip figure="backprop/vanishing_gradients" start="0" duration="42.0">'
        '<a href="embed/vanishing_gradients.html#t=0">图 vanishing_gradients</a></lecture-clip>'
    )
    assert figure["tracks"] == [{"kind": "captions", "src": "media/backprop/vanishing_gradients.vtt", "label": "中文"}]
    assert (kit / site.HUGO_SHORTCODE).is_file()
    assert (kit / "lecture-clip.js").is_file()


def test_with_the_kits_address_the_snippets_and_oembed_name_it_in_full(tmp_path, monkeypatch):
    monkeypatch.setenv("LECTURE_KIT_URL", "https://course.example.org/llm/kit")
    out = tmp_path / "480p15"
    entry = _figure(out, "backprop", "vanishing_gradients")
    path = _kit(out, [ChapterList("backprop", "反向传播", ["vanishing_gradients"], "专题四")], {entry.figure: entry})
    kit_url = "https://course.example.org/llm/kit/"
    embed = json.loads((path / "embed.json").read_text(encoding="utf-8"))
    assert embed["kit"] == kit_url
    assert embed["script"] == f'<script src="{kit_url}lecture-clip.js" defer></script>'
    snippets = embed["figures"]["vanishing_gradients"]["snippets"]
    page = f"{kit_url}embed/vanishing_gradients.html"
    assert f'<a href="{page}#t=0">' in snippets["element"]
    assert snippets["mkdocs"] == snippets["docusaurus"] == snippets["element"]
    assert snippets["sphinx"] == ".. raw:: html\n\n   " + snippets["element"] + "\n"
    assert f'<iframe src="{page}" title="图 vanishing_gradients"' in snippets["iframe"]
    assert f'src="{kit_url}media/backprop/vanishing_gradients.mp4"' in snippets["video"]
    assert f'src="{kit_url}media/backprop/vanishing_gradients.vtt"' in snippets["video"]
    assert snippets["hugo"] == (
        '{{< lecture figure="backprop/vanishing_gradients" start=0 duration=42.0 title="图 vanishing_gradients" >}}'
    )
    assert snippets["quarto"] == (
        f'{{{{< video {kit_url}media/backprop/vanishing_gradients.mp4 start=0 title="图 vanishing_gradients" '
        "aspect-ratio=16x9 >}}"
    )
    assert snippets["myst"] == f":::{{iframe}} {page}#t=0\n:width: 100%\n图 vanishing_gradients\n:::\n"
    assert kit_url in embed["generators"]["mkdocs"]["setup"]
    record = json.loads((path / "oembed" / "vanishing_gradients.json").read_text(encoding="utf-8"))
    assert record["provider_url"] == kit_url
    assert record["thumbnail_url"] == f"{kit_url}media/backprop/vanishing_gradients.webp"
    assert f'src="{page}"' in record["html"]
    html = (path / "embed" / "vanishing_gradients.html").read_text(encoding="utf-8")
    assert f'href="{kit_url}oembed/vanishing_gradients.json"' in html


@pytest.mark.parametrize("address", ["ftp://course.example.org/", "course.example.org/kit/", "https://a b/"])
def test_a_kits_address_that_is_no_web_folder_is_refused_by_name_before_anything_is_written(
    tmp_path, monkeypatch, address
):
    monkeypatch.setenv("LECTURE_KIT_URL", address)
    out = tmp_path / "480p15"
    entry = _figure(out, "backprop", "vanishing_gradients")
    with pytest.raises(SettingsError, match=f"LECTURE_KIT_URL={re.escape(address)}: not an http"):
        _kit(out, [ChapterList("backprop", "反向传播", ["vanishing_gradients"], "专题四")], {entry.figure: entry})
    assert not (out / site.KIT).exists()
    assert not list(out.glob(".site-*"))


def test_a_title_with_quotes_stays_one_value_in_the_shortcodes(tmp_path):
    out = tmp_path / "480p15"
    entry = replace(_figure(out, "backprop", "vanishing_gradients"), title=HOSTILE)
    path = _kit(out, [ChapterList("backprop", "反向传播", ["vanishing_gradients"], "专题四")], {entry.figure: entry})
    snippets = json.loads((path / "embed.json").read_text(encoding="utf-8"))["figures"]["vanishing_gradients"][
        "snippets"
    ]
    for name in ("hugo", "quarto"):
        (quoted,) = re.findall(r'title="((?:[^"\\]|\\.)*)"', snippets[name])
        assert re.sub(r"\\(.)", r"\1", quoted) == HOSTILE
    assert "<script>alert" not in snippets["element"]
