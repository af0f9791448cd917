"""One figure's published files: the web MP4, its captions, a poster, a thumbnail, and its attachments.

Everything is made in a staging folder beside the target, verified (h264
+ aac, audio and video within SYNC_TOLERANCE), and only then moved over
the previous files, so ``renders/`` never holds a half-written clip.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tools.files import file_sha256
from tools.publish.publishing import media
from tools.publish.publishing.manifest import Files, PublishedFile
from tools.publish.rendering import scratch
from tools.publish.rendering.render import BuildError, Rendered
from tools.voice import captions

SYNC_TOLERANCE = 0.1  # seconds between audio and video duration
THUMBNAIL_WIDTH = 480
# What follows the figure's id in the names of its own files; an attachment must not take one.
CLIP_FILES = {"mp4", "srt", "vtt", "png", "webp", "json", "facts.vtt", "descriptions.vtt"}


@dataclass(frozen=True)
class Attached:
    """A file published beside a figure's clip (``<figure>.<suffix>``), made; the embed page links it with
    `label` and the one line `how_to`."""

    suffix: str
    label: str
    how_to: str
    text: str


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


def stage_clip(
    figure_id: str, title: str, attachments: tuple[Attached, ...], rendered: Rendered, staged: Path
) -> media.Probe:
    """Write a figure's web files and attachments into `staged` and verify them; returns the MP4's probe."""
    mp4 = staged / f"{figure_id}.mp4"
    media.mux_web(rendered.video, rendered.track, mp4, {"title": title})
    info = verify(mp4)
    lines = captions.parse_srt(rendered.srt.read_text(encoding="utf-8")) if rendered.srt.exists() else []
    (staged / f"{figure_id}.srt").write_text(captions.to_srt(lines), encoding="utf-8")
    (staged / f"{figure_id}.vtt").write_text(captions.to_vtt(lines), encoding="utf-8")
    poster = media.poster_frame(mp4, info.video_seconds)
    poster.save(staged / f"{figure_id}.png")
    thumb_size = (THUMBNAIL_WIDTH, round(THUMBNAIL_WIDTH * poster.height / poster.width))
    poster.resize(thumb_size).save(staged / f"{figure_id}.webp", quality=80)
    for attached in attachments:
        (staged / f"{figure_id}.{attached.suffix}").write_text(attached.text, encoding="utf-8")
    return info
