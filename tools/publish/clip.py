"""One figure's published files: the web MP4, its captions, a poster, a thumbnail, and its attachments.

Everything is made in a staging folder beside the target, verified (h264
+ aac, audio and video within SYNC_TOLERANCE), and only then moved over
the previous files, so ``renders/`` never holds a half-written clip.
"""

from __future__ import annotations

import os
from pathlib import Path

from tools.course.catalogue import Figure
from tools.course.fact_values import fact_values
from tools.files import file_sha256
from tools.publish import figure_notes, media, scratch
from tools.publish.manifest import Files, PublishedFigure, PublishedFile
from tools.publish.render import BuildError, Rendered
from tools.voice import captions

SYNC_TOLERANCE = 0.1  # seconds between audio and video duration
THUMBNAIL_WIDTH = 480
# What follows the figure's id in the names of its own files; an attachment must not take one.
CLIP_FILES = {"mp4", "srt", "vtt", "png", "webp", "json"}


def verify(video: Path) -> media.Probe:
    info = media.probe(video)
    if info.video_codec != "h264" or info.audio_codec != "aac":
        raise BuildError(f"{video}: expected h264 video + aac audio, found {info.video_codec} + {info.audio_codec}")
    if abs(info.video_seconds - info.audio_seconds) > SYNC_TOLERANCE:
        raise BuildError(f"{video}: audio {info.audio_seconds:.2f} s vs video {info.video_seconds:.2f} s")
    return info


def move_in(staged: Path, target_dir: Path, prefix: str) -> Files:
    """Move every staged file into target_dir; their records keyed by the name after the stem."""
    files = {}
    for path in sorted(p for p in staged.iterdir() if p.name != scratch.OWNER):
        files[path.name.split(".", 1)[1]] = PublishedFile(f"{prefix}{path.name}", file_sha256(path))
        os.replace(path, target_dir / path.name)
    return files


def check_attachments(fig: Figure) -> None:
    """Each attachment makes a non-empty file under a name of its own; raises BuildError otherwise."""
    seen = set()
    for attached in fig.attachments:
        if attached.suffix in CLIP_FILES or attached.suffix in seen or "/" in attached.suffix:
            raise BuildError(
                f"figure '{fig.id}': attachment '{attached.suffix}' would collide with another "
                f"of its files ({', '.join(sorted(CLIP_FILES | seen))})"
            )
        seen.add(attached.suffix)
        if not attached.make().strip():
            raise BuildError(f"figure '{fig.id}': attachment '{attached.suffix}' is empty")


def stage_clip(fig: Figure, rendered: Rendered, staged: Path) -> media.Probe:
    """Write the figure's web files and attachments into `staged` and verify them; returns the MP4's probe."""
    mp4 = staged / f"{fig.id}.mp4"
    media.mux_web(rendered.video, rendered.track, mp4, {"title": fig.title})
    info = verify(mp4)
    lines = captions.parse_srt(rendered.srt.read_text(encoding="utf-8")) if rendered.srt.exists() else []
    (staged / f"{fig.id}.srt").write_text(captions.to_srt(lines), encoding="utf-8")
    (staged / f"{fig.id}.vtt").write_text(captions.to_vtt(lines), encoding="utf-8")
    poster = media.poster_frame(mp4, info.video_seconds)
    poster.save(staged / f"{fig.id}.png")
    thumb_size = (THUMBNAIL_WIDTH, round(THUMBNAIL_WIDTH * poster.height / poster.width))
    poster.resize(thumb_size).save(staged / f"{fig.id}.webp", quality=80)
    for attached in fig.attachments:
        (staged / f"{fig.id}.{attached.suffix}").write_text(attached.make(), encoding="utf-8")
    return info


def entry(
    fig: Figure,
    info: media.Probe,
    files: Files,
    key: str,
    key_parts: dict,
    render_seconds: float,
    cue_lines: list,
    voices: list[str],
) -> PublishedFigure:
    """The figure's manifest record; `cue_lines` is its transcript (figure_notes.transcript), `voices` who
    speaks its cues."""
    attachments = {a.suffix: {"label": a.label, "how_to": a.how_to} for a in fig.attachments}
    return PublishedFigure(
        fig.chapter,
        fig.id,
        fig.title,
        round(info.video_seconds, 3),
        info.width,
        info.height,
        fact_values(fig.id),
        files,
        key,
        key_parts,
        attachments,
        round(render_seconds, 1),
        fig.source,
        cue_lines,
        figure_notes.checks(fig.id),
        voices,
    )
