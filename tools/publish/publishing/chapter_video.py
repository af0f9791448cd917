"""A chapter's figures joined into one video with chapter markers, captions and a chapters track.

The join itself (PyAV) runs in a process of its own under the join time limit (settings.LIMITS: 2 s per
second of video, at least 120 s), so a join that hangs is stopped, its process group killed, and its
half-written file goes with the staging folder. ``python -m tools.publish.publishing.chapter_video`` is that process:
it reads what to join as JSON on stdin and prints what it joined as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from tools import settings
from tools.files import TimeLimitError, content_key, run_limited
from tools.publish.publishing import fact_tracks, manifest, media
from tools.publish.publishing.clip import move_in, verify
from tools.publish.publishing.manifest import ChapterList, ChapterVideo, Manifest, PublishedFigure
from tools.publish.rendering.render import BuildError
from tools.publish.rendering.scratch import staging
from tools.voice import captions


def assemble(
    chapter: ChapterList, figures: list[PublishedFigure], out_dir: Path, key: str
) -> tuple[ChapterVideo, bool]:
    """Join a chapter's published clips, in page order, into ``out_dir``.

    Writes ``<chapter>.mp4`` (one chapter marker per clip, titled with the
    figure's title), ``<chapter>.vtt``/``.srt`` (each clip's captions moved
    to where the clip starts), each other text track every clip has moved
    the same way (``<chapter>.descriptions.vtt`` from each figure's
    ``.descriptions.vtt``; ``<chapter>.facts.vtt``, where each number is
    drawn, as written, its payloads untouched) and ``<chapter>.chapters.vtt``
    (a WebVTT chapters track), verified before they replace anything. Returns
    the chapter video and whether the clips' sound was copied (not encoded
    again).
    """
    titles = [fig.title for fig in figures]
    with staging(out_dir) as staged:
        mp4 = staged / f"{chapter.id}.mp4"
        clips = [out_dir / fig.files["mp4"].path for fig in figures]
        seconds = sum(fig.duration for fig in figures)
        joined = concat_limited(f"joining chapter {chapter.id}", clips, mp4, titles, {"title": chapter.title}, seconds)
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
        for kind in _other_tracks(figures):
            if kind == fact_tracks.FACTS_TRACK:  # metadata: its JSON cues moved as they are, never re-escaped
                parts = [(out_dir / fig.files[kind].path, start) for fig, start in zip(figures, joined.starts)]
                (staged / f"{chapter.id}.{kind}").write_text(fact_tracks.shifted(parts), encoding="utf-8")
                continue
            moved = [
                cue
                for fig, start in zip(figures, joined.starts)
                for cue in captions.shifted(
                    captions.parse_vtt((out_dir / fig.files[kind].path).read_text(encoding="utf-8")), start
                )
            ]
            (staged / f"{chapter.id}.{kind}").write_text(captions.to_vtt(moved), encoding="utf-8")
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


def concat_limited(
    what: str, clips: list[Path], dst: Path, titles: list[str], metadata: dict[str, str], seconds: float
) -> media.Joined:
    """media.concat in a process of its own, under the join limit for `seconds` of video; BuildError naming
    `what` when it fails or runs over (its process group killed)."""
    limit = settings.time_limit("join", 2.0 * seconds)
    asked = {"clips": [str(c) for c in clips], "dst": str(dst), "titles": titles, "metadata": metadata}
    command = [sys.executable, "-m", "tools.publish.publishing.chapter_video"]
    try:
        done = run_limited(command, limit, what, json.dumps(asked).encode(), cwd=settings.ROOT)
    except TimeLimitError as err:
        raise BuildError(str(err)) from None
    if done.returncode != 0:
        tail = "\n".join(done.stderr.decode(errors="replace").splitlines()[-15:])
        raise BuildError(f"{what}: the join failed (exit {done.returncode}):\n{tail}")
    return media.Joined(**json.loads(done.stdout))


def _join_from_stdin() -> None:
    """The join process: what to join from stdin (JSON), what it joined to stdout (JSON)."""
    asked = json.loads(sys.stdin.read())
    joined = media.concat([Path(c) for c in asked["clips"]], Path(asked["dst"]), asked["titles"], asked["metadata"])
    print(json.dumps(asdict(joined)))


def _other_tracks(figures: list[PublishedFigure]) -> list[str]:
    """The text tracks besides the captions that every clip has (a files key ending .vtt: 'descriptions.vtt')."""
    kinds = [{kind for kind in fig.files if kind.endswith(".vtt")} for fig in figures]
    return sorted(set.intersection(*kinds)) if kinds else []


def _key(chapter: ChapterList, figures: list[PublishedFigure]) -> str:
    tracks = ["srt", *_other_tracks(figures)]
    material = [
        chapter.title,
        [[f.figure, f.title, f.files["mp4"].sha256, *[f.files[kind].sha256 for kind in tracks]] for f in figures],
    ]
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
    joined again only when a clip, a caption file or a title changed; a
    file of the older video the new one does not have goes.
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
        if old is not None:  # a track the old video had and the new one lacks (not every clip has it now)
            kept = {f.path for f in video.files.values()}
            for f in old.files.values():
                if f.path not in kept:
                    (out_dir / f.path).unlink(missing_ok=True)
        man.chapter_videos[chapter.id] = video
        say(
            f"  chapter {chapter.id}: {len(ids)} clip{'' if len(ids) == 1 else 's'} joined, {video.duration:.1f} s "
            f"(video {'copied' if video.copied else 're-encoded'}, sound {'copied' if sound_copied else 're-encoded'}) "
            f"in {time.monotonic() - started:.1f} s"
        )


if __name__ == "__main__":
    _join_from_stdin()
