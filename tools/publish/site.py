"""The embed kit ``renders/<quality>/site/``: watch the videos, embed them.

:func:`write_kit` turns what ``lecture build`` published (``manifest.json``)
into one folder that can be copied under any site root::

    index.html             gallery: the chapters under their topics, each chapter video, its figures
    embed/<figure>.html    a bare player per figure, for an <iframe> (and a line per attachment)
    embed.json             per figure: snippets to paste, paths, duration, poster, facts, attachments
    media/…                the published files (hard links, same relative layout)
    kit.css, kit.js

Every path is relative and nothing is fetched from the network. The gallery
carries its caption and chapter tracks inline (``data:`` URLs), so it works
opened straight from disk, where Chromium refuses a track file; the embed
pages and the snippets point at the ``.vtt`` files, as a served page can.
The kit is written to a staging folder and swapped in: never half-written.

``lecture serve`` shows a kit on 127.0.0.1 (see :mod:`tools.publish.serve`).
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from html import escape
from pathlib import Path

from tools.publish.manifest import ChapterList, ChapterVideo, Manifest, PublishedFigure

COURSE = "训练一步的账"
KIT = "site"
FIGURE_FILES = {"mp4", "srt", "vtt", "png", "webp"}


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


def _clock(seconds: float) -> str:
    """m:ss, cut to the whole second as players show it."""
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def _attr(text: str) -> str:
    return escape(text, quote=True)


def _data_url(path: Path) -> str:
    return "data:text/vtt;charset=utf-8;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _video(src: str, poster: str, label: str, size: tuple[int, int], tracks: list[tuple[str, str, str]]) -> str:
    """An HTML5 player; tracks are (kind, src, label), each the default of its kind."""
    lines = [
        f'<video controls preload="metadata" playsinline width="{size[0]}" height="{size[1]}" '
        f'poster="{_attr(poster)}" aria-label="{_attr(label)}">',
        f'  <source src="{_attr(src)}" type="video/mp4">',
    ]
    lines += [
        f'  <track kind="{kind}" srclang="zh" label="{_attr(name)}" src="{_attr(url)}" default>'
        for kind, url, name in tracks
    ]
    lines.append("  您的浏览器无法播放此视频。</video>")
    return "\n".join(lines)


def _page(title: str, body: str, head: str = "") -> str:
    return (
        f'<!doctype html>\n<html lang="zh-CN">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<title>{escape(title)}</title>\n<link rel="icon" href="data:,">\n{head}</head>\n'
        f"<body>\n{body}\n</body>\n</html>\n"
    )


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


def _figure_snippets(fig_id: str, entry: PublishedFigure) -> dict[str, str]:
    files, size = entry.files, (entry.width, entry.height)
    iframe = (
        f'<iframe src="embed/{fig_id}.html" title="{_attr(entry.title)}" width="{size[0]}" '
        f'height="{size[1]}" style="border:0;width:100%;height:auto;aspect-ratio:{size[0]}/{size[1]}" '
        f'allow="fullscreen" allowfullscreen loading="lazy"></iframe>'
    )
    video = _video(
        _media(files["mp4"].path),
        _media(files["png"].path),
        entry.title,
        size,
        [("captions", _media(files["vtt"].path), "中文")],
    )
    return {"iframe": iframe, "video": video}


def _attachments(entry: PublishedFigure, prefix: str = "") -> list[str]:
    """One line per file attached to the figure: its link, then how to open it."""
    return [
        f'<p class="attachment"><a href="{_attr(prefix + _media(entry.files[kind].path))}" download>'
        f"{escape(about['label'])}</a>：{escape(about['how_to'])}</p>"
        for kind, about in entry.attachments.items()
        if kind in entry.files
    ]


def _embed_page(fig_id: str, entry: PublishedFigure) -> str:
    files = entry.files
    player = _video(
        "../" + _media(files["mp4"].path),
        "../" + _media(files["png"].path),
        entry.title,
        (entry.width, entry.height),
        [("captions", "../" + _media(files["vtt"].path), "中文")],
    )
    style = (
        "<style>html,body{margin:0;height:100%;background:#0E1116}"
        "body{display:flex;flex-direction:column}"
        "video{display:block;width:100%;flex:1;min-height:0;object-fit:contain}"
        ".attachment{margin:0;padding:4px 8px;font:13px sans-serif;color:#8B949E}"
        ".attachment a{color:#58C4DD}</style>\n"
    )
    return _page(entry.title, "\n".join([player, *_attachments(entry, "../")]), style)


def _chapter_block(video: ChapterVideo, entries: dict[str, PublishedFigure], out_dir: Path) -> str:
    files = video.files
    first = entries[video.figures[0]]
    player = _video(
        _media(files["mp4"].path),
        _media(first.files["png"].path),
        video.title,
        (video.width, video.height),
        [
            ("captions", _data_url(out_dir / files["vtt"].path), "中文"),
            ("chapters", _data_url(out_dir / files["chapters.vtt"].path), "章节"),
        ],
    )
    items = "\n".join(
        f'  <li><button type="button" data-start="{mark["start"]:.3f}">'
        f'<span class="at">{_clock(mark["start"])}</span> {escape(mark["title"])}</button></li>'
        for mark in video.marks
    )
    return (
        f'<figure class="chapter-video" id="chapter-video-{video.chapter}">\n{player}\n'
        f"<figcaption>整章连播 · {len(video.marks)} 节 · 时长 {_clock(video.duration)}</figcaption>\n"
        f'<ol class="chapters" aria-label="章节">\n{items}\n</ol>\n</figure>'
    )


def _figure_card(number: int, fig_id: str, entry: PublishedFigure, out_dir: Path) -> str:
    files = entry.files
    player = _video(
        _media(files["mp4"].path),
        _media(files["png"].path),
        entry.title,
        (entry.width, entry.height),
        [("captions", _data_url(out_dir / files["vtt"].path), "中文")],
    )
    extra = "".join(line + "\n" for line in _attachments(entry))
    return (
        f'<article class="card" id="figure-{fig_id}">\n{player}\n'
        f'<h4><span class="num">图 {number}</span> {escape(entry.title)}</h4>\n'
        f'<p class="meta">时长 {_clock(entry.duration)} · <code>{fig_id}</code> · '
        f'<a href="embed/{fig_id}.html">单独播放页</a></p>\n{extra}</article>'
    )


def _gallery(man: Manifest, entries: dict[str, PublishedFigure], videos: dict[str, ChapterVideo], out_dir: Path) -> str:
    """The chapters in play order, under a heading for each topic they belong to."""
    nav, topics = [], []
    for number, (topic, chapters) in enumerate(itertools.groupby(man.chapters, key=lambda ch: ch.topic), 1):
        chapters = list(chapters)
        links = " ".join(f'<a href="#chapter-{ch.id}">{escape(ch.title)}</a>' for ch in chapters)
        blocks = "\n".join(_chapter_section(ch, entries, videos, out_dir) for ch in chapters)
        if topic:
            head = f'<a class="topic-link" href="#topic-{number}">{escape(topic)}</a>'
            nav.append(f'<p class="topic-nav">{head} {links}</p>')
            topics.append(
                f'<section class="topic" id="topic-{number}">\n'
                f'<h2 class="topic-title">{escape(topic)}</h2>\n{blocks}\n</section>'
            )
        else:
            nav.append(f'<p class="topic-nav">{links}</p>')
            topics.append(blocks)
    total = sum(entry.duration for entry in entries.values())
    body = (
        f'<header>\n<h1>{COURSE}</h1>\n<p class="meta">{len(entries)} 个图 · 共 {_clock(total)} · '
        f'画质 {escape(man.quality)} · 嵌入代码见 <a href="embed.json">embed.json</a></p>\n'
        "<nav>\n" + "\n".join(nav) + "\n</nav>\n</header>\n<main>\n" + "\n".join(topics) + "\n</main>\n"
        '<script src="kit.js"></script>'
    )
    return _page(f"{COURSE} · 视频", body, '<link rel="stylesheet" href="kit.css">\n')


def _chapter_section(
    chapter: ChapterList, entries: dict[str, PublishedFigure], videos: dict[str, ChapterVideo], out_dir: Path
) -> str:
    ch_id, ids = chapter.id, chapter.figures
    shown = [fig_id for fig_id in ids if fig_id in entries]
    parts = [
        f'<section class="chapter" id="chapter-{ch_id}">',
        f'<h3 class="chapter-title">{escape(chapter.title)}</h3>',
    ]
    if not ids:
        parts.append('<p class="note">本章还没有图。</p>')
    elif ch_id in videos:
        parts.append(_chapter_block(videos[ch_id], entries, out_dir))
    else:
        parts.append(f'<p class="note">整章视频要等本章 {len(ids)} 个图都渲染后才生成，现已渲染 {len(shown)} 个。</p>')
    if shown:
        cards = [_figure_card(ids.index(fig_id) + 1, fig_id, entries[fig_id], out_dir) for fig_id in shown]
        parts.append('<div class="grid">\n' + "\n".join(cards) + "\n</div>")
    return "\n".join(parts) + "\n</section>"


def _embed_json(man: Manifest, entries: dict[str, PublishedFigure], videos: dict[str, ChapterVideo]) -> dict:
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
            "snippets": _figure_snippets(fig_id, entry),
            "facts": entry.facts,
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
                        ],
                    )
                },
            }
        chapters.append(item)
    return {
        "quality": man.quality,
        "paths": "relative to this folder; paste a snippet into a page that sits next to it, "
        "or prefix its paths with this folder's URL",
        "figures": figures,
        "chapters": chapters,
    }


def _link(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:  # a file system without hard links
        shutil.copy2(source, target)


def write_kit(out_dir: Path, man: Manifest) -> Kit:
    """(Re)write ``out_dir/site`` from the manifest; the caller holds the manifest's lock."""
    entries, skipped = _rendered(man, out_dir)
    videos = _chapter_videos(man, entries, out_dir)
    stage = Path(tempfile.mkdtemp(dir=out_dir, prefix=".site-"))
    try:
        stage.chmod(0o755)
        for item in [*entries.values(), *videos.values()]:
            for f in item.files.values():
                _link(out_dir / f.path, stage / _media(f.path))
        (stage / "embed").mkdir()
        for fig_id, entry in entries.items():
            (stage / "embed" / f"{fig_id}.html").write_text(_embed_page(fig_id, entry), encoding="utf-8")
        (stage / "index.html").write_text(_gallery(man, entries, videos, out_dir), encoding="utf-8")
        kit_json = json.dumps(_embed_json(man, entries, videos), ensure_ascii=False, indent=2)
        (stage / "embed.json").write_text(kit_json, encoding="utf-8")
        (stage / "kit.css").write_text(CSS, encoding="utf-8")
        (stage / "kit.js").write_text(JS, encoding="utf-8")
    except BaseException:
        shutil.rmtree(stage)
        raise
    final = kit_dir(out_dir)
    old = out_dir / f".site-old-{stage.name}"
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


CSS = """\
:root { color-scheme: dark; --bg: #0E1116; --panel: #1A1F27; --text: #E8E6E3; --muted: #8B949E;
        --accent: #58C4DD; --mark: #F4D35E; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); line-height: 1.6;
       font-family: "Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei", sans-serif; }
header, main { max-width: 1200px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 24px; }
h1 { margin: 0 0 4px; font-size: 28px; }
h2.topic-title { margin: 48px 0 4px; font-size: 24px; color: var(--mark); }
h3.chapter-title { margin: 28px 0 12px; font-size: 21px; border-bottom: 1px solid var(--panel); padding-bottom: 6px; }
h4 { margin: 8px 0 2px; font-size: 17px; font-weight: 600; }
a { color: var(--accent); }
nav { margin: 8px 0; }
.topic-nav { display: flex; flex-wrap: wrap; gap: 6px 20px; margin: 4px 0; }
.topic-link { color: var(--mark); font-weight: 600; }
.topic { border-top: 3px solid var(--panel); }
.meta, .note, figcaption, .attachment { color: var(--muted); font-size: 14px; margin: 0; }
.num { color: var(--muted); font-weight: 400; margin-right: 4px; }
code { font-size: 13px; }
video { display: block; width: 100%; height: auto; background: #000; border-radius: 6px; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(340px, 1fr)); gap: 24px; margin-top: 16px; }
.card { background: var(--panel); border-radius: 8px; padding: 10px 12px 12px; }
.chapter-video { display: grid; grid-template-columns: minmax(0, 2fr) minmax(220px, 1fr); gap: 8px 20px;
                 margin: 0 0 12px; background: var(--panel); border-radius: 8px; padding: 12px; }
.chapter-video figcaption { grid-column: 1; }
.chapters { grid-column: 2; grid-row: 1 / span 2; margin: 0; padding: 0; list-style: none;
            max-height: 420px; overflow-y: auto; }
.chapters button { width: 100%; text-align: left; background: none; border: 0; color: var(--text);
                   font: inherit; padding: 6px 8px; border-radius: 4px; cursor: pointer; }
.chapters button:hover { background: #232a35; }
.chapters .current button { background: #232a35; color: var(--mark); }
.at { color: var(--muted); font-variant-numeric: tabular-nums; margin-right: 6px; }
@media (max-width: 760px) { .chapter-video { grid-template-columns: 1fr; }
                            .chapters { grid-column: 1; grid-row: auto; } }
"""

JS = """\
// 整章视频旁的章节列表：点一节跳到那里播放；播放时标出当前一节。
document.querySelectorAll(".chapter-video").forEach(function (box) {
  var video = box.querySelector("video");
  var items = Array.prototype.slice.call(box.querySelectorAll(".chapters li"));
  var starts = items.map(function (li) { return parseFloat(li.firstElementChild.dataset.start); });
  items.forEach(function (li, i) {
    li.firstElementChild.addEventListener("click", function () {
      video.currentTime = starts[i];
      video.play().catch(function () {});
    });
  });
  video.addEventListener("timeupdate", function () {
    items.forEach(function (li, i) {
      var t = video.currentTime;
      li.classList.toggle("current", t >= starts[i] && (i + 1 === starts.length || t < starts[i + 1]));
    });
  });
});
"""
