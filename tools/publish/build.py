"""``lecture build``: check, synthesize, render each figure, publish to renders/.

Per figure: ``manim`` renders the scene in its own process; the result is
remuxed for the web (moov first), its subcaptions become .srt and .vtt, a
poster PNG (and a small WebP thumbnail) is taken from a frame that shows
the figure, and the streams are verified (h264 + aac, durations within
0.1 s) before anything replaces the files in ``renders/<quality>/<chapter>/``.
A figure whose inputs did not change since the last build (see
:func:`render_key`) is not rendered again.

Per chapter: once every figure of the chapter is published at the quality,
its clips are joined in page order into ``renders/<quality>/<chapter>.mp4``
with one chapter marker per figure, merged captions and a WebVTT chapters
track (see :func:`assemble_chapter`); the join is redone only when a clip
changed. Last, the embed kit ``renders/<quality>/site/`` is regenerated.
"""

from __future__ import annotations

import ast
import configparser
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path

from tools import settings
from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.publish import media, site
from tools.settings import AUDIO_OUT_ENV, MANIM_CFG, ROOT, SCENES_DIR
from tools.voice import audio, captions, cues, speech

QUALITIES = {"l": "480p15", "m": "720p30", "h": "1080p60", "k": "2160p60"}
# `lecture build` renders one figure per manim process: the repository's
# manim.cfg with these [CLI] settings changed (see one_figure_cfg).
ONE_FIGURE = {"write_all": "False"}
SYNC_TOLERANCE = 0.1  # seconds between audio and video duration
FIGURE_SECONDS = (30, 120)  # how long a figure should run (figure standard)
# What publish() writes for a figure; part of the render key, so a change
# here republishes figures built before it.
PUBLISHED = "mp4 srt vtt png webp; facts, size; v2"
THUMBNAIL_WIDTH = 480


class BuildError(Exception):
    """A figure failed to render or its output failed verification."""


def renders_dir(quality: str) -> Path:
    return settings.renders_root() / QUALITIES[quality]


def work_dir() -> Path:
    return settings.cache_root()


def check(figures: list[Figure]) -> tuple[int, int]:
    """Verify facts, narration and scene classes; returns (facts, cues) counted."""
    n_facts = n_cues = 0
    for fig in figures:
        n_facts += len(catalogue.facts(fig.id))
        n_cues += len(cues.figure_cues(fig.id))
        if fig.scene_class not in _scene_classes(catalogue.chapter(fig.chapter).scene_file):
            raise BuildError(f"{catalogue.chapter(fig.chapter).scene_file}: no scene class {fig.scene_class} "
                             f"for figure '{fig.id}'")
    return n_facts, n_cues


def _scene_classes(scene_file: Path) -> dict[str, str]:
    """Top-level class name -> its source, read without importing manim."""
    source = scene_file.read_text(encoding="utf-8")
    tree = ast.parse(source)
    return {node.name: ast.get_source_segment(source, node) or "" for node in tree.body
            if isinstance(node, ast.ClassDef)}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def render_key(fig: Figure, quality: str, cue_keys: list[str]) -> str:
    """Hash of everything that shapes one figure's video.

    The chapter file counts without the other figures' scene classes, so
    editing one figure does not re-render its neighbours; shared scene
    modules (style, base), the figure's facts and cue audio all count.
    """
    chapter = catalogue.chapter(fig.chapter)
    source = chapter.scene_file.read_text(encoding="utf-8")
    for name, segment in _scene_classes(chapter.scene_file).items():
        if name != fig.scene_class and name in {f.scene_class for f in chapter.figures}:
            source = source.replace(segment, "")
    chapter_ids = {ch.id for ch in catalogue.chapters()}
    shared = [p.read_bytes() for p in sorted(SCENES_DIR.glob("*.py")) if p.stem not in chapter_ids]
    facts = {name: [f.value, f.text, f.spoken] for name, f in catalogue.facts(fig.id).items()}
    material = {
        "quality": quality,
        "manim": version("manim"),
        "cfg": [MANIM_CFG.read_text(encoding="utf-8"), ONE_FIGURE],
        "scene": source,
        "shared": [_sha(b) for b in shared],
        "facts": facts,
        "title": [fig.title, fig.source],
        "published": PUBLISHED,
        "cues": [[captions.split_lines(c.caption), k] for c, k in zip(cues.figure_cues(fig.id), cue_keys)],
    }
    return _sha(json.dumps(material, sort_keys=True, ensure_ascii=False, default=str).encode())


def _manim_output(media_dir: Path, fig: Figure, quality: str) -> tuple[Path, Path, Path]:
    folder = media_dir / "videos" / fig.chapter / QUALITIES[quality]
    return folder / f"{fig.id}.mp4", folder / f"{fig.id}.srt", folder / f"{fig.id}.narration.wav"


def one_figure_cfg() -> Path:
    """manim.cfg with ONE_FIGURE applied, written to the work folder.

    manim reads one folder-level config: ``--config_file`` replaces
    manim.cfg rather than adding to it, so the override carries the rest.
    """
    parser = configparser.ConfigParser()
    parser.read(MANIM_CFG, encoding="utf-8")
    parser["CLI"].update(ONE_FIGURE)
    folder = work_dir()
    folder.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=folder, prefix=".one_figure-", suffix=".cfg")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        parser.write(out)
    target = folder / "one_figure.cfg"
    os.replace(tmp, target)
    return target


def render(fig: Figure, quality: str, log: Path) -> tuple[Path, Path, Path]:
    """Run manim on one figure scene; returns its raw mp4, srt and audio track."""
    media_dir = work_dir() / "manim"
    video, srt, track = _manim_output(media_dir, fig, quality)
    for stale in (video, srt, track):
        stale.unlink(missing_ok=True)
    command = [sys.executable, "-m", "manim", "render", "-q", quality, "--config_file", str(one_figure_cfg()),
               "--media_dir", str(media_dir), "-o", fig.id, "--progress_bar", "none",
               str(catalogue.chapter(fig.chapter).scene_file), fig.scene_class]
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as out:
        done = subprocess.run(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONUNBUFFERED": "1", AUDIO_OUT_ENV: str(track)})
    if done.returncode != 0 or not video.exists() or not track.exists():
        tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-25:])
        raise BuildError(f"manim failed on {fig.chapter}/{fig.id} (exit {done.returncode}); log {log}:\n{tail}")
    return video, srt, track


def verify(video: Path) -> media.Probe:
    info = media.probe(video)
    if info.video_codec != "h264" or info.audio_codec != "aac":
        raise BuildError(f"{video}: expected h264 video + aac audio, found {info.video_codec} + {info.audio_codec}")
    if abs(info.video_seconds - info.audio_seconds) > SYNC_TOLERANCE:
        raise BuildError(f"{video}: audio {info.audio_seconds:.2f} s vs video {info.video_seconds:.2f} s")
    return info


def fact_values(figure_id: str) -> dict:
    """A figure's facts as {name: value}, JSON-ready (as `lecture facts --json`)."""
    values = {name: fact.value for name, fact in catalogue.facts(figure_id).items()}
    return json.loads(json.dumps(values, default=lambda o: o.tolist()))


def _move_in(staged: Path, target_dir: Path, prefix: str) -> dict:
    """Move every staged file into target_dir; their manifest entries, keyed
    by the name after the stem ('mp4', 'chapters.vtt')."""
    files = {}
    for path in sorted(staged.iterdir()):
        files[path.name.split(".", 1)[1]] = {"path": f"{prefix}{path.name}", "sha256": _sha(path.read_bytes())}
        os.replace(path, target_dir / path.name)
    return files


def publish(fig: Figure, quality: str, video: Path, srt: Path, track: Path) -> dict:
    """Stage web-ready files, verify them, then move them into renders/."""
    target_dir = renders_dir(quality) / fig.chapter
    target_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target_dir, prefix=".staging-") as tmp:
        staged = Path(tmp)
        mp4 = staged / f"{fig.id}.mp4"
        media.mux_web(video, track, mp4, {"title": fig.title})
        info = verify(mp4)
        lines = captions.parse_srt(srt.read_text(encoding="utf-8")) if srt.exists() else []
        (staged / f"{fig.id}.srt").write_text(captions.to_srt(lines), encoding="utf-8")
        (staged / f"{fig.id}.vtt").write_text(captions.to_vtt(lines), encoding="utf-8")
        poster = media.poster_frame(mp4, info.video_seconds)
        poster.save(staged / f"{fig.id}.png")
        thumb_size = (THUMBNAIL_WIDTH, round(THUMBNAIL_WIDTH * poster.height / poster.width))
        poster.resize(thumb_size).save(staged / f"{fig.id}.webp", quality=80)
        files = _move_in(staged, target_dir, f"{fig.chapter}/")
    return {"chapter": fig.chapter, "figure": fig.id, "title": fig.title,
            "duration": round(info.video_seconds, 3), "width": info.width, "height": info.height,
            "facts": fact_values(fig.id), "files": files}


def assemble_chapter(chapter_id: str, title: str, clips: list[tuple[str, Path, Path]], target_dir: Path) -> dict:
    """Join a chapter's clips, given in page order as (figure title, mp4, srt).

    Writes ``<chapter>.mp4`` (one chapter marker per clip, titled with the
    figure's title), ``<chapter>.vtt``/``.srt`` (each clip's captions moved
    to where the clip starts) and ``<chapter>.chapters.vtt`` (a WebVTT
    chapters track) into target_dir, verified before they replace anything.
    """
    titles = [clip[0] for clip in clips]
    with tempfile.TemporaryDirectory(dir=target_dir, prefix=".staging-") as tmp:
        staged = Path(tmp)
        mp4 = staged / f"{chapter_id}.mp4"
        joined = media.concat([clip[1] for clip in clips], mp4, titles, {"title": title})
        info = verify(mp4)
        if [mark[2] for mark in media.chapter_marks(mp4)] != titles:
            raise BuildError(f"{mp4.name}: chapter markers {media.chapter_marks(mp4)} do not match {titles}")
        lines = [line for (_, _, srt), start in zip(clips, joined.starts)
                 for line in captions.shifted(captions.parse_srt(srt.read_text(encoding="utf-8")), start)]
        marks = [captions.Caption(start, end, name)
                 for name, start, end in zip(titles, joined.starts, joined.starts[1:])]
        (staged / f"{chapter_id}.srt").write_text(captions.to_srt(lines), encoding="utf-8")
        (staged / f"{chapter_id}.vtt").write_text(captions.to_vtt(lines), encoding="utf-8")
        (staged / f"{chapter_id}.chapters.vtt").write_text(captions.to_vtt(marks), encoding="utf-8")
        files = _move_in(staged, target_dir, "")
    return {"title": title, "duration": round(info.video_seconds, 3), "width": info.width, "height": info.height,
            "copied": joined.copied, "marks": [{"title": c.text, "start": round(c.start, 3), "end": round(c.end, 3)}
                                               for c in marks], "files": files}


def build_chapters(manifest: dict, out_dir: Path, say: Callable[[str], None] = print) -> None:
    """Join each complete chapter's published clips (manifest["chapter_videos"]).

    A chapter video is made only when every figure of the chapter is
    published at this quality; a chapter that is not complete has no
    chapter video (an older one is removed, it would lack figures). It is
    joined again only when a clip, a caption file or a title changed.
    """
    videos = manifest.setdefault("chapter_videos", {})
    for chapter in manifest["chapters"]:
        ch_id, ids = chapter["id"], chapter["figures"]
        if not ids:
            continue
        entries = [manifest["figures"].get(fig_id) for fig_id in ids]
        missing = [fig_id for fig_id, entry in zip(ids, entries) if not entry or not _present(entry, out_dir)]
        if missing:
            for old in videos.pop(ch_id, {}).get("files", {}).values():
                (out_dir / old["path"]).unlink(missing_ok=True)
            say(f"  chapter {ch_id}: no chapter video, {len(ids) - len(missing)} of {len(ids)} figures "
                f"rendered at {manifest['quality']} (missing: {', '.join(missing)})")
            continue
        key = _sha(json.dumps([chapter["title"], [[e["figure"], e["title"], e["files"]["mp4"]["sha256"],
                                                   e["files"]["srt"]["sha256"]] for e in entries]],
                              ensure_ascii=False).encode())
        if _is_current(videos.get(ch_id), key, out_dir):
            say(f"  chapter {ch_id}: unchanged")
            continue
        started = time.monotonic()
        clips = [(e["title"], out_dir / e["files"]["mp4"]["path"], out_dir / e["files"]["srt"]["path"])
                 for e in entries]
        videos[ch_id] = assemble_chapter(ch_id, chapter["title"], clips, out_dir) | {"figures": ids, "key": key}
        done = videos[ch_id]
        say(f"  chapter {ch_id}: {len(ids)} clip{'' if len(ids) == 1 else 's'} joined, {done['duration']:.1f} s "
            f"({'video copied' if done['copied'] else 'video re-encoded'}) in {time.monotonic() - started:.0f} s")


def _load_manifest(path: Path) -> dict:
    if path.exists():
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            return {}
    return {}


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _present(entry: dict, out_dir: Path) -> bool:
    return all((out_dir / f["path"]).exists() for f in entry["files"].values())


def _is_current(entry: dict | None, key: str, out_dir: Path) -> bool:
    return bool(entry) and entry.get("key") == key and _present(entry, out_dir)


def build(quality: str = "h", only: str | None = None, jobs: int = 1,
          say: Callable[[str], None] = print) -> dict:
    """Build the selected figures; returns the manifest."""
    if quality not in QUALITIES:
        raise BuildError(f"unknown quality {quality!r}: choose one of {', '.join(QUALITIES)}")
    figures = catalogue.select(only)
    n_facts, n_cues = check(figures)
    say(f"checked {len(figures)} figures: {n_facts} facts, {n_cues} cues")

    engine = speech.from_env()
    cue_keys: dict[str, list[str]] = {}
    all_cues = [c for fig in figures for c in cues.figure_cues(fig.id)]
    for n, cue in enumerate(all_cues, 1):
        cached = (audio.cache_dir() / f"{audio.cache_key(cue, engine)}.wav").exists()
        sound = audio.cue_audio(cue, engine)
        cue_keys.setdefault(cue.figure, []).append(audio.cache_key(cue, engine))
        say(f"  narration {n}/{len(all_cues)} {cue.id}: {sound.duration:.1f} s "
            f"({'cached' if cached else 'made'}, {sound.source})")

    out_dir = renders_dir(quality)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / "manifest.json"
    manifest = _load_manifest(manifest_path)
    figures_entry = manifest.setdefault("figures", {})
    manifest.update({"quality": QUALITIES[quality],
                     "chapters": [{"id": ch.id, "title": ch.title, "figures": [f.id for f in ch.figures]}
                                  for ch in catalogue.chapters()]})
    todo = []
    for fig in figures:
        key = render_key(fig, quality, cue_keys[fig.id])
        if _is_current(figures_entry.get(fig.id), key, out_dir):
            say(f"  {fig.chapter}/{fig.id}: unchanged")
        else:
            todo.append((fig, key))

    def make(item: tuple[Figure, str]) -> tuple[Figure, dict]:
        fig, key = item
        started = time.monotonic()
        say(f"  {fig.chapter}/{fig.id}: rendering {QUALITIES[quality]} …")
        raw = render(fig, quality, work_dir() / "logs" / f"{fig.id}.{quality}.log")
        entry = publish(fig, quality, *raw) | {"key": key}
        say(f"  {fig.chapter}/{fig.id}: done, {entry['duration']:.1f} s of video in "
            f"{time.monotonic() - started:.0f} s")
        if not FIGURE_SECONDS[0] <= entry["duration"] <= FIGURE_SECONDS[1]:
            say(f"  warning: {fig.chapter}/{fig.id} runs {entry['duration']:.1f} s, outside the "
                f"{FIGURE_SECONDS[0]}–{FIGURE_SECONDS[1]} s a figure should run")
        return fig, entry

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for fig, entry in pool.map(make, todo):
            figures_entry[fig.id] = entry
            _write_atomic(manifest_path, json.dumps(manifest, ensure_ascii=False, indent=2))
    _write_atomic(manifest_path, json.dumps(manifest, ensure_ascii=False, indent=2))
    say(f"{len(todo)} rendered, {len(figures) - len(todo)} unchanged → {out_dir}")
    build_chapters(manifest, out_dir, say)
    _write_atomic(manifest_path, json.dumps(manifest, ensure_ascii=False, indent=2))
    say(site.summary(site.write_kit(out_dir)))
    return manifest


def frames(quality: str, only: str | None, fractions: list[float]) -> list[Path]:
    """Still PNGs of rendered figures at fractions of their length, for review."""
    manifest = _load_manifest(renders_dir(quality) / "manifest.json").get("figures", {})
    written = []
    for fig in catalogue.select(only):
        if fig.id not in manifest:
            raise BuildError(f"{fig.chapter}/{fig.id} is not rendered at {QUALITIES[quality]}: run lecture build first")
        video = renders_dir(quality) / manifest[fig.id]["files"]["mp4"]["path"]
        seconds = manifest[fig.id]["duration"]
        for fraction in fractions:
            out = renders_dir(quality) / "frames" / f"{fig.id}-{round(fraction * 100):03d}.png"
            out.parent.mkdir(parents=True, exist_ok=True)
            media.frame_at(video, None if fraction >= 1 else fraction * seconds).save(out)
            written.append(out)
    return written
