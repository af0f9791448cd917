"""The course site ``renders/<quality>/site/``: watch the videos, see where every number comes from, embed them.

:func:`write_kit` turns what ``lecture build`` published (``manifest.json``)
into one folder that can be copied under any site root::

    index.html             gallery: the chapters under their topics, each chapter video, its figures, search
    embed/<figure>.html    a bare player per figure, for an <iframe>, with its transcript and numbers panel
    notes/figures/<figure>.js, notes/chapters/<chapter>.js
                           a player's record (the embed page's player, tracks inline), loaded when wanted
    oembed/<figure>.json   the figure's oEmbed record, named by its embed page
    embed.json             per figure: snippets to paste (per site generator), paths, tracks, facts, transcript
    pagefind/…             the search index (Pagefind, written here at publish time) and its script
    media/…                the published files (hard links, same relative layout)
    kit.css, kit.js        the player (window.LectureKit)
    lecture-clip.js        <lecture-clip>, for a course site's pages (docs/embedding.md)
    hugo/…                 the Hugo shortcode that writes one

Beside every clip: its transcript (one line per cue, which seeks the clip there) and its numbers panel
「这些数从哪来」 (every fact with how it is computed, the checks that guard it, its source and where it is
first spoken), from the figure's manifest entry (tools/publish/publishing/figure_notes.py). ``embed/<id>.html#t=S``
starts a clip at S seconds. The pages come from the Jinja2 templates in ``templates/``, with
autoescape on; the site's title is the build plan's (from the catalogue's ``TOPICS``), its topic headings
the manifest's chapters'.

Every path is relative, or starts with the kit's address (``LECTURE_KIT_URL``) where it must be whole (oEmbed, the
snippets), and nothing is fetched from the network. The gallery holds no transcript, numbers panel or track: each
card loads its record when it plays or its notes are opened, as a script, so the gallery works opened straight from
disk (where Chromium refuses to fetch a file or load a track file: the records carry their tracks as ``data:`` URLs).
The embed pages and the snippets point at the ``.vtt`` files, as a served page can.
Search needs the page served (``lecture serve`` or any static host).
The kit is written to a staging folder and swapped in: never half-written.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import jinja2

from tools import settings
from tools.course.shown import shown
from tools.files import TimeLimitError, run_limited, signals_held
from tools.publish.publishing import fact_tracks
from tools.publish.publishing.clip import THUMBNAIL_WIDTH
from tools.publish.publishing.manifest import ChapterVideo, Manifest, PublishedFigure
from tools.voice import speech

KIT = "site"
FIGURE_FILES = {"mp4", "srt", "vtt", "png", "webp"}
TEMPLATES = Path(__file__).with_name("templates")
STATIC = ("kit.css", "kit.js", "lecture-clip.js")
# The Hugo shortcode the kit ships (docs/embedding.md): copied into a Hugo site's layouts/shortcodes/.
HUGO_SHORTCODE = "hugo/layouts/shortcodes/lecture.html"
NOTES = "notes"  # per figure and chapter video, its player's record, loaded when wanted (figure_record)
OEMBED = "oembed"
SEARCH = "pagefind"
# Pagefind's own ready-made search interfaces, which the kit does not use (kit.js draws its results).
SEARCH_UNUSED = ("pagefind-ui.*", "pagefind-component-ui.*", "pagefind-modular-ui.*", "pagefind-highlight.js")


class KitError(Exception):
    """Nothing to make a kit from."""


@dataclass(frozen=True)
class Kit:
    path: Path
    figures: list[str]
    chapter_videos: list[str]
    skipped: list[str]  # published by a build older than the kit: rebuild them


def kit_dir(out_dir: Path) -> Path:
    return out_dir / KIT


def credits(entries: list[PublishedFigure]) -> list[str]:
    """Who speaks the figures shown, one line per voice (the neural voice's corpus terms among them)."""
    voices = sorted({voice for entry in entries for voice in entry.voices})
    return [speech.CREDITS.get(voice, f"旁白：{voice}") for voice in voices]


def _clock(seconds: float) -> str:
    """m:ss, cut to the whole second as players show it."""
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def _check_line(check: dict) -> str:
    """One check in a line: what was compared with what (=, ≈ within its tolerance), or what holds."""
    name, computed, expected = check["name"], check["computed"], check["expected"]
    if check["kind"] == "holds":
        return f"{name}：成立，{computed}"
    if check["kind"] == "residual":
        return f"{name}：两条路之差 {check['tolerance'].replace('below', '<')}"
    if check["kind"] == "equal":
        return f"{name}：{computed} = {expected}"
    return f"{name}：{computed} ≈ {expected}（{check['tolerance']}）"


_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
)
_ENV.filters["clock"] = _clock
_ENV.filters["check_line"] = _check_line


def _render(template: str, **values) -> str:
    return _ENV.get_template(template).render(**values)


def _video(src: str, poster: str, label: str, size: tuple[int, int], tracks: list[tuple[str, str, str]]) -> str:
    """An HTML5 player as a snippet to paste; tracks are (kind, src, label), captions and chapters each the default
    of its kind (the descriptions are there for whoever turns them on, the numbers' places for the kit)."""
    return str(_ENV.get_template("parts.html.j2").module.video(src, poster, label, size, tracks))


def _data_url(path: Path) -> str:
    return "data:text/vtt;charset=utf-8;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _rendered(man: Manifest, out_dir: Path) -> tuple[dict[str, PublishedFigure], list[str]]:
    """Figures of the manifest's chapters whose files are all there, and the ids of
    those published in an older layout (without every file the kit shows)."""
    entries, skipped = {}, []
    for chapter in man.chapters:
        for fig_id in chapter.figures:
            entry = man.figures.get(fig_id)
            if entry is None or not entry.present(out_dir):
                continue
            if entry.files.keys() >= FIGURE_FILES:
                entries[fig_id] = entry
            else:
                skipped.append(fig_id)
    return entries, skipped


def _chapter_videos(man: Manifest, entries: dict[str, PublishedFigure], out_dir: Path) -> dict[str, ChapterVideo]:
    """Chapter videos that are there and hold the chapter's figures as listed."""
    videos = man.chapter_videos
    return {
        ch.id: videos[ch.id]
        for ch in man.chapters
        if ch.id in videos
        and videos[ch.id].figures == ch.figures
        and all(fig_id in entries for fig_id in ch.figures)
        and videos[ch.id].present(out_dir)
    }


def _media(path: str) -> str:
    return f"media/{path}"


def _published(out_dir: Path, kit_path: str) -> Path:
    """The published file a kit path names: the kit's media/ mirrors renders/<quality>/."""
    return out_dir / kit_path.removeprefix("media/")


def _cites(line: dict, fig_id: str, name: str) -> bool:
    return name in line["cites"] or f"{fig_id}.{name}" in line["cites"]


def numbers_panel(entry: PublishedFigure) -> dict:
    """The numbers panel of a figure: each fact with its screen text, how, value, the checks named after it
    and the first cue that speaks it; the checks of the figure as a whole; its source."""
    by_fact: dict[str, list[dict]] = {name: [] for name in entry.facts}
    other = []
    for check in entry.checks:
        name = check["name"].split(" (")[0].strip()
        by_fact.get(name, other).append(check)
    facts = []
    for name, fact in entry.facts.items():
        drawn = not (fact.get("text") or fact.get("spoken"))
        first = next((line for line in entry.cues if _cites(line, entry.figure, name)), None)
        facts.append(
            {
                "name": name,
                "text": fact.get("text", ""),
                "spoken": fact.get("spoken", ""),
                "value": "" if drawn else shown(fact.get("value")),
                "how": fact.get("how", ""),
                "source": fact.get("source", ""),
                "schematic": bool(fact.get("schematic")),
                "drawn": drawn,
                "checks": by_fact[name],
                "first": first,
            }
        )
    return {"figure": entry.figure, "source": entry.source, "facts": facts, "other_checks": other}


def figure_views(man: Manifest, entries: dict[str, PublishedFigure], out_dir: Path) -> dict[str, dict]:
    """What the pages show of each figure, made once for the gallery, its embed page and the search index."""
    views = {}
    for chapter in man.chapters:
        for number, fig_id in enumerate(chapter.figures, 1):
            if fig_id in entries:
                views[fig_id] = _figure_view(fig_id, entries[fig_id], number, chapter.topic, chapter.title, out_dir)
    return views


def tracks(entry: PublishedFigure) -> list[tuple[str, str, str]]:
    """A figure's text tracks as (kind, path in the kit, label): the one list its embed page, its record, its
    embed.json entry and its snippets carry."""
    return [("captions", _media(entry.files["vtt"].path), "中文"), *number_tracks(entry.files)]


# Beside the captions: what the picture shows and no cue says (descriptions), and where each number is drawn
# (metadata: no browser shows it; kit.js lays its hotspots from it). Neither is a default track.
NUMBER_TRACKS = (
    ("descriptions", fact_tracks.DESCRIPTIONS_TRACK, "画面描述"),
    ("metadata", fact_tracks.FACTS_TRACK, "数字的位置"),
)


def number_tracks(files: dict) -> list[tuple[str, str, str]]:
    """A figure's or chapter video's descriptions and numbers' places as (kind, path in the kit, label), where
    published (one published before them has neither)."""
    return [(kind, _media(files[name].path), label) for kind, name, label in NUMBER_TRACKS if name in files]


def _figure_view(fig_id: str, entry: PublishedFigure, number: int, topic: str, chapter_title: str, out_dir: Path):
    files, size = entry.files, (entry.width, entry.height)
    return {
        "id": fig_id,
        "number": number,
        "title": entry.title,
        "topic": topic,
        "chapter_title": chapter_title,
        "duration": entry.duration,
        "size": size,
        "page": f"embed/{fig_id}.html",
        "video": _media(files["mp4"].path),
        "poster": _media(files["png"].path),
        "thumbnail": _media(files["webp"].path),
        "tracks": tracks(entry),
        "notes": f"{NOTES}/figures/{fig_id}.js",
        "attachments": [
            {"path": _media(files[kind].path), **about} for kind, about in entry.attachments.items() if kind in files
        ],
        "lines": entry.cues,
        "panel": numbers_panel(entry),
        "credits": credits([entry]),
    }


def _embed_page(view: dict, base: str) -> str:
    """The bare player page of one figure: paths one folder up from embed/; its oEmbed record named in the head
    (from the kit's address where it is given: some consumers take the link as written)."""
    up = {key: "../" + view[key] for key in ("video", "poster")}
    figure = view | up | {"tracks": [(kind, "../" + path, label) for kind, path, label in view["tracks"]]}
    title = f"{view['title']} · {view['topic']}"
    oembed = (base or "../") + _oembed_path(view["id"])
    return _render("embed.html.j2", title=title, root="../", page_kind="embed", figure=figure, oembed=oembed)


def _record(html: str) -> str:
    """A player's record as the script kit.js loads (LectureKit.loadNotes): a script, not a file to fetch, so that
    it loads from disk (the gallery opened as a file) and from another site (<lecture-clip>) alike."""
    return f"LectureKit.notesArrived({json.dumps(html, ensure_ascii=False)});\n"


def figure_record(view: dict, out_dir: Path) -> str:
    """What a <lecture-clip> puts in its page on play, and a gallery card takes its tracks and notes from: the embed
    page's player, paths from the kit's folder, each track inline (a data: URL, which plays from disk and from
    another site, where a track file needs CORS)."""
    inline = [(kind, _data_url(_published(out_dir, path)), label) for kind, path, label in view["tracks"]]
    player = _ENV.get_template("parts.html.j2").module.player
    return _record(str(player(view | {"tracks": inline}, page=view["page"], heading="p")))


def _oembed_path(fig_id: str) -> str:
    return f"{OEMBED}/{fig_id}.json"


def oembed(view: dict, base: str, provider: str) -> dict:
    """A figure's oEmbed record (oembed.com, type video): the iframe to paste, its size and its thumbnail.
    Consumers need whole addresses: from the kit's address when given, else relative to the kit's folder."""
    width, height = view["size"]
    iframe = _ENV.get_template("parts.html.j2").module.iframe(base + view["page"], view["title"], view["size"])
    return {
        "type": "video",
        "version": "1.0",
        "title": view["title"],
        "provider_name": provider,
        "provider_url": base or "./",
        "html": str(iframe),
        "width": width,
        "height": height,
        "thumbnail_url": base + view["thumbnail"],
        "thumbnail_width": THUMBNAIL_WIDTH,
        "thumbnail_height": round(THUMBNAIL_WIDTH * height / width),
    }


def _chapter_lines(video: ChapterVideo, entries: dict[str, PublishedFigure]) -> list[dict]:
    """The chapter video's transcript: each figure's title as a heading, then its cues moved to where it starts."""
    lines = []
    for fig_id, mark in zip(video.figures, video.marks):
        lines.append({"heading": mark["title"], "start": mark["start"]})
        lines += [line | {"start": mark["start"] + line["start"]} for line in entries[fig_id].cues]
    return lines


def _gallery(
    man: Manifest,
    entries: dict[str, PublishedFigure],
    views: dict[str, dict],
    videos: dict[str, ChapterVideo],
    out_dir: Path,
    search: bool,
    title: str,
):
    topics = []
    for topic, chapters in itertools.groupby(man.chapters, key=lambda ch: ch.topic):
        shown_chapters = []
        for chapter in chapters:
            ids = chapter.figures
            figures = [views[fig_id] for fig_id in ids if fig_id in views]
            video = None
            if chapter.id in videos:
                item = videos[chapter.id]
                video = {
                    "id": chapter.id,
                    "title": chapter.title,
                    "src": _media(item.files["mp4"].path),
                    "poster": _media(entries[item.figures[0]].files["png"].path),
                    "size": (item.width, item.height),
                    "duration": item.duration,
                    "marks": item.marks,
                    "tracks": [
                        ("captions", _data_url(out_dir / item.files["vtt"].path), "中文"),
                        ("chapters", _data_url(out_dir / item.files["chapters.vtt"].path), "章节"),
                        *(
                            (kind, _data_url(_published(out_dir, path)), label)
                            for kind, path, label in number_tracks(item.files)
                        ),
                    ],
                    "notes": f"{NOTES}/chapters/{chapter.id}.js",
                    "lines": _chapter_lines(item, entries),
                }
            shown_chapters.append(
                {
                    "id": chapter.id,
                    "title": chapter.title,
                    "figure_count": len(ids),
                    "figures": figures,
                    "video": video,
                }
            )
        topics.append({"label": topic, "chapters": shown_chapters})
    course = {
        "title": title,
        "figures": len(entries),
        "duration": sum(entry.duration for entry in entries.values()),
        "quality": man.quality,
        "topics": topics,
        "credits": credits(list(entries.values())),
        "search": search,
    }
    page = _render("gallery.html.j2", title=f"{course['title']} · 视频", root="", page_kind="gallery", course=course)
    chapter_player = _ENV.get_template("parts.html.j2").module.chapter_player
    records = {
        chapter["video"]["notes"]: _record(str(chapter_player(chapter["video"])))
        for topic in topics
        for chapter in topic["chapters"]
        if chapter["video"]
    }
    return page, records


# Each generator's snippet: seen working (by a test, or by hand) or untested; docs/embedding.md says how.
GENERATORS = {
    "mkdocs": {
        "tested": "tests/test_course_site.py: examples/course-site built with MkDocs Material, played in Chromium",
        "setup": "mkdocs.yml: extra_javascript: [{kit}lecture-clip.js]; the snippet is raw HTML in the page",
    },
    "docusaurus": {
        "tested": "untested",
        "setup": "docusaurus.config.js: scripts: [{{src: '{kit}lecture-clip.js', defer: true}}]; "
        "the snippet is JSX in the .mdx page",
    },
    "sphinx": {
        "tested": "by hand: Sphinx 9.0.4 (alabaster), the page built and its clip played in Chromium",
        "setup": "conf.py: html_js_files = ['{kit}lecture-clip.js']",
    },
    "hugo": {
        "tested": "by hand: Hugo 0.111.3, the page built with the shortcode and its clip played in Chromium",
        "setup": f"copy the kit's {HUGO_SHORTCODE} into the site's layouts/shortcodes/, and set "
        "params.lectureKit = '{kit}' in the site's configuration",
    },
    "quarto": {"tested": "untested", "setup": "none: Quarto's own video shortcode, pointing at the MP4"},
    "myst": {
        "tested": "untested in a browser: mystmd 1.8.3 reads it as an iframe with its caption (its theme could not be "
        "had here)",
        "setup": "none: the iframe directive of MyST (mystmd, Jupyter Book 2)",
    },
}


def _quoted(text: str) -> str:
    """A value inside double quotes of a shortcode or directive (Hugo, Quarto): its own quotes escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def snippets(fig_id: str, entry: PublishedFigure, base: str) -> dict[str, str]:
    """What to paste for one figure, by generator: the iframe, the plain <video>, the <lecture-clip> element
    (MkDocs Material, Docusaurus, Sphinx), Hugo's shortcode (the kit ships it), Quarto's video shortcode and
    MyST's iframe directive. From `base` (the kit's address) when given, else relative to the kit's folder."""
    parts = _ENV.get_template("parts.html.j2").module
    files, size, page = entry.files, (entry.width, entry.height), f"{base}embed/{fig_id}.html"
    figure = f"{entry.chapter}/{fig_id}"
    media = {kind: base + _media(files[kind].path) for kind in ("mp4", "png")}
    element = str(parts.element(figure, 0, entry.duration, page, entry.title))
    indented = "\n".join("   " + line for line in element.splitlines())
    return {
        "iframe": str(parts.iframe(page, entry.title, size)),
        "video": _video(
            media["mp4"], media["png"], entry.title, size, [(k, base + path, lbl) for k, path, lbl in tracks(entry)]
        ),
        "element": element,
        "mkdocs": element,
        "docusaurus": element,
        "sphinx": f".. raw:: html\n\n{indented}\n",
        "hugo": f"{{{{< lecture figure={_quoted(figure)} start=0 duration={entry.duration:.1f} "
        f"title={_quoted(entry.title)} >}}}}",
        "quarto": f"{{{{< video {media['mp4']} start=0 title={_quoted(entry.title)} aspect-ratio=16x9 >}}}}",
        "myst": f":::{{iframe}} {page}#t=0\n:width: 100%\n{entry.title}\n:::\n",
    }


def _embed_json(man: Manifest, entries: dict[str, PublishedFigure], videos: dict[str, ChapterVideo], base: str) -> dict:
    figures = {}
    for fig_id, entry in entries.items():
        files = entry.files
        figures[fig_id] = {
            "chapter": entry.chapter,
            "title": entry.title,
            "duration": entry.duration,
            "page": f"embed/{fig_id}.html",
            "video": _media(files["mp4"].path),
            "poster": _media(files["png"].path),
            "thumbnail": _media(files["webp"].path),
            "captions": {"vtt": _media(files["vtt"].path), "srt": _media(files["srt"].path)},
            "tracks": [{"kind": kind, "src": path, "label": label} for kind, path, label in tracks(entry)],
            "oembed": _oembed_path(fig_id),
            "snippets": snippets(fig_id, entry, base),
            "source": entry.source,
            "facts": entry.facts,
            "checks": entry.checks,
            "transcript": entry.cues,
            "attachments": [
                {"path": _media(files[kind].path), **about}
                for kind, about in entry.attachments.items()
                if kind in files
            ],
        }
    chapters = []
    for chapter in man.chapters:
        video = videos.get(chapter.id)
        item = {
            "id": chapter.id,
            "title": chapter.title,
            "topic": chapter.topic,
            "figures": [fig_id for fig_id in chapter.figures if fig_id in entries],
            "video": None,
        }
        if video:
            files = video.files
            poster = _media(entries[video.figures[0]].files["png"].path)
            item["video"] = {
                "duration": video.duration,
                "video": _media(files["mp4"].path),
                "poster": poster,
                "captions": {"vtt": _media(files["vtt"].path), "srt": _media(files["srt"].path)},
                "chapters": _media(files["chapters.vtt"].path),
                "tracks": [{"kind": kind, "src": path, "label": label} for kind, path, label in number_tracks(files)],
                "marks": video.marks,
                "snippets": {
                    "video": _video(
                        _media(files["mp4"].path),
                        poster,
                        video.title,
                        (video.width, video.height),
                        [
                            ("captions", _media(files["vtt"].path), "中文"),
                            ("chapters", _media(files["chapters.vtt"].path), "章节"),
                            *number_tracks(files),
                        ],
                    )
                },
            }
        chapters.append(item)
    return {
        "quality": man.quality,
        "paths": "relative to this folder; the snippets too, unless the kit was written with LECTURE_KIT_URL "
        "(then they start with it): paste one into a page that sits next to this folder, or prefix its paths "
        "with this folder's URL",
        "kit": base,
        "script": f'<script src="{base}lecture-clip.js" defer></script>',
        "generators": {
            name: {k: v.replace("{kit}", base) for k, v in about.items()} for name, about in GENERATORS.items()
        },
        "figures": figures,
        "chapters": chapters,
    }


def search_records(views: dict[str, dict]) -> list[dict]:
    """What search finds: every transcript line and every fact shown, each with the page (and second) it opens."""
    records = []
    for fig_id, view in views.items():
        page, title = view["page"], view["title"]
        records += [
            {"content": line["text"], "page": f"{page}#t={line['start']:.3f}", "title": title} for line in view["lines"]
        ]
        for fact in view["panel"]["facts"]:
            if fact["drawn"]:
                continue
            first = fact["first"]
            content = " ".join(part for part in (fact["text"], fact["how"], fact["value"], fact["name"]) if part)
            opens = f"{page}#t={first['start']:.3f}" if first else f"{page}#fact-{fig_id}-{fact['name']}"
            records.append({"content": content, "page": opens, "title": title})
    return records


def _searchable(text: str) -> str:
    """The text as Pagefind should read it. Pagefind splits 1.91562 at its point but reads the query 1.9156 as
    19156: each decimal number is followed by its digits without the point, and a mantissa is made a word of
    its own (1.91562e-06)."""
    text = re.sub(r"(\d)e([-+]\d+)", r"\1 e\2", text)
    return re.sub(r"\d+(?:\.\d+)+", lambda m: f"{m.group()} {m.group().replace('.', '')}", text)


def write_search(records: list[dict], folder: Path) -> None:
    """The static search index of every transcript line and fact, and Pagefind's script, into `folder`.

    Each record is a small page `<n>.html` of its own, indexed by Pagefind's command line (its Python API
    answers one record per tenth of a second); `records.json` gives the page and second record n opens and
    its text as written (the index holds it as Pagefind should read it), which kit.js shows. The link is
    kept out of the index, which would find its digits (1.9156 found every line at 0:19).
    """
    page = _ENV.get_template("search_record.html.j2")
    with tempfile.TemporaryDirectory(prefix="lecture-search-") as source:
        for number, record in enumerate(records):
            text = page.render(title=record["title"], content=_searchable(record["content"]))
            (Path(source) / f"{number}.html").write_text(text, encoding="utf-8")
        command = [sys.executable, "-m", "pagefind", "--site", source, "--output-path", str(folder)]
        command += ["--force-language", "zh", "--silent"]
        limit = settings.time_limit("search", 0.1 * len(records))
        try:
            done = run_limited(command, limit, "the search index")
        except TimeLimitError as err:
            raise KitError(str(err)) from None
    if done.returncode != 0:
        raise KitError(f"Pagefind could not index the site: {done.stderr.decode(errors='replace').strip()}")
    shown_records = [{"page": record["page"], "text": record["content"]} for record in records]
    (folder / "records.json").write_text(json.dumps(shown_records, ensure_ascii=False), encoding="utf-8")
    for pattern in SEARCH_UNUSED:
        for path in folder.glob(pattern):
            path.unlink()


def _link(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:  # a file system without hard links
        shutil.copy2(source, target)


def write_kit(out_dir: Path, man: Manifest, title: str) -> Kit:
    """(Re)write ``out_dir/site`` from the manifest, under the site's `title` (the catalogue's
    ``course_title``); the caller holds the manifest's lock."""
    entries, skipped = _rendered(man, out_dir)
    videos = _chapter_videos(man, entries, out_dir)
    base = settings.kit_url()  # before anything is written: a bad address is refused by name
    stage = Path(tempfile.mkdtemp(dir=out_dir, prefix=".site-"))
    try:
        stage.chmod(0o755)
        for item in [*entries.values(), *videos.values()]:
            for f in item.files.values():
                _link(out_dir / f.path, stage / _media(f.path))
        for folder in ("embed", OEMBED, f"{NOTES}/figures", f"{NOTES}/chapters"):
            (stage / folder).mkdir(parents=True)
        views = figure_views(man, entries, out_dir)
        for fig_id, view in views.items():
            (stage / "embed" / f"{fig_id}.html").write_text(_embed_page(view, base), encoding="utf-8")
            (stage / view["notes"]).write_text(figure_record(view, out_dir), encoding="utf-8")
            record = json.dumps(oembed(view, base, title), ensure_ascii=False, indent=2)
            (stage / _oembed_path(fig_id)).write_text(record, encoding="utf-8")
        records = search_records(views)  # none when no figure has a transcript or a number: no search then
        gallery, chapter_records = _gallery(man, entries, views, videos, out_dir, bool(records), title)
        (stage / "index.html").write_text(gallery, encoding="utf-8")
        for path, record in chapter_records.items():
            (stage / path).write_text(record, encoding="utf-8")
        kit_json = json.dumps(_embed_json(man, entries, videos, base), ensure_ascii=False, indent=2)
        (stage / "embed.json").write_text(kit_json, encoding="utf-8")
        for name in (*STATIC, HUGO_SHORTCODE):
            (stage / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(TEMPLATES / name, stage / name)
        if records:
            write_search(records, stage / SEARCH)
    except BaseException:
        shutil.rmtree(stage)
        raise
    final = kit_dir(out_dir)
    old = out_dir / f".site-old-{stage.name}"
    with signals_held():  # stopped between the renames, the build would leave no site/ at all
        if final.exists():
            os.rename(final, old)
        os.rename(stage, final)
    shutil.rmtree(old, ignore_errors=True)
    return Kit(final, list(entries), list(videos), skipped)


def summary(kit: Kit) -> str:
    """One progress line about a written kit."""
    line = (
        f"embed kit: {len(kit.figures)} figures, {len(kit.chapter_videos)} chapter videos → {kit.path / 'index.html'}"
    )
    if kit.skipped:
        line += f" (left out, published by an older build, rebuild them: {', '.join(kit.skipped)})"
    return line
