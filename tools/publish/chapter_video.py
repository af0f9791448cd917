"""A chapter's figures joined into one video with chapter markers, captions and a chapters track."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tools.files import content_key
from tools.publish import manifest, media
from tools.publish.clip import move_in, verify
from tools.publish.manifest import ChapterList, ChapterVideo, Manifest, PublishedFigure
from tools.publish.render import BuildError
from tools.publish.scratch import staging
from tools.voice import captions


def assemble(
    chapter: ChapterList, figures: list[PublishedFigure], out_dir: Path, key: str
) -> tuple[ChapterVideo, bool]:
    """Join a chapter's published clips, in page order, into ``out_dir``.

    Writes ``<chapter>.mp4`` (one chapter marker per clip, titled with the
    figure's title), ``<chapter>.vtt``/``.srt`` (each clip's captions moved
    to where the clip starts) and ``<chapter>.chapters.vtt`` (a WebVTT
    chapters track), verified before they replace anything. Returns the
    chapter video and whether the clips' sound was copied (not encoded again).
    """
    titles = [fig.title for fig in figures]
    with staging(out_dir) as staged:
        mp4 = staged / f"{chapter.id}.mp4"
        joined = media.concat(
            [out_dir / fig.files["mp4"].path for fig in figures], mp4, titles, {"title": chapter.title}
        )
        info = verify(mp4)
        if [mark[2] for mark in media.chapter_marks(mp4)] != titles:
            raise BuildError(f"{mp4.name}: chapter markers {media.chapter_marks(mp4)} do not match {titles}")
        lines = [
            line
            for fig, start in zip(figures, joined.starts)
            for line in captions.shifted(
                captions.parse_srt((out_dir / fig.files["srt"].path).read_text(encoding="utf-8")), start
            )
        ]
        marks = [
            captions.Caption(start, end, name) for name, start, end in zip(titles, joined.starts, joined.starts[1:])
        ]
        (staged / f"{chapter.id}.srt").write_text(captions.to_srt(lines), encoding="utf-8")
        (staged / f"{chapter.id}.vtt").write_text(captions.to_vtt(lines), encoding="utf-8")
        (staged / f"{chapter.id}.chapters.vtt").write_text(captions.to_vtt(marks), encoding="utf-8")
        files = move_in(staged, out_dir, "")
    return ChapterVideo(
        chapter.id,
        chapter.title,
        round(info.video_seconds, 3),
        info.width,
        info.height,
        joined.copied,
        [{"title": c.text, "start": round(c.start, 3), "end": round(c.end, 3)} for c in marks],
        files,
        list(chapter.figures),
        key,
    ), joined.sound_copied


def _key(chapter: ChapterList, figures: list[PublishedFigure]) -> str:
    material = [chapter.title, [[f.figure, f.title, f.files["mp4"].sha256, f.files["srt"].sha256] for f in figures]]
    return content_key(material)


def remove(video: ChapterVideo, out_dir: Path) -> None:
    for f in video.files.values():
        (out_dir / f.path).unlink(missing_ok=True)
    (out_dir / video.sidecar).unlink(missing_ok=True)


def build_all(man: Manifest, out_dir: Path, say: Callable[[str], None] = print) -> None:
    """Join each complete chapter's published clips, recording them in ``man.chapter_videos``.

    A chapter video is made only when every figure of the chapter is
    published at this quality; a chapter that is not complete has no
    chapter video (an older one is removed, it would lack figures). It is
    joined again only when a clip, a caption file or a title changed.
    """
    for chapter in man.chapters:
        ids = chapter.figures
        if not ids:
            continue
        figures = [man.figures.get(fig_id) for fig_id in ids]
        missing = [fig_id for fig_id, fig in zip(ids, figures) if fig is None or not fig.present(out_dir)]
        if missing:
            if chapter.id in man.chapter_videos:
                remove(man.chapter_videos.pop(chapter.id), out_dir)
            say(
                f"  chapter {chapter.id}: no chapter video, {len(ids) - len(missing)} of {len(ids)} figures "
                f"rendered at {man.quality} (missing: {', '.join(missing)})"
            )
            continue
        key = _key(chapter, figures)
        old = man.chapter_videos.get(chapter.id)
        if old is not None and old.key == key and old.present(out_dir):
            say(f"  chapter {chapter.id}: unchanged")
            continue
        started = time.monotonic()
        video, sound_copied = assemble(chapter, figures, out_dir, key)
        manifest.write_sidecar(out_dir, video)
        man.chapter_videos[chapter.id] = video
        say(
            f"  chapter {chapter.id}: {len(ids)} clip{'' if len(ids) == 1 else 's'} joined, {video.duration:.1f} s "
            f"(video {'copied' if video.copied else 're-encoded'}, sound {'copied' if sound_copied else 're-encoded'}) "
            f"in {time.monotonic() - started:.1f} s"
        )
