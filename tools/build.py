"""``lecture build``: check, synthesize, render each figure, publish to renders/.

Per figure: ``manim`` renders the scene in its own process; the result is
remuxed for the web (moov first), its subcaptions become .srt and .vtt, a
poster PNG is taken from the last frame, and the streams are verified
(h264 + aac, durations within 0.1 s) before anything replaces the files
in ``renders/<quality>/<chapter>/``. A figure whose inputs did not change
since the last build (see :func:`render_key`) is not rendered again.
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

from tools import audio, captions, catalogue, cues, media, speech
from tools.catalogue import ROOT, Figure

QUALITIES = {"l": "480p15", "m": "720p30", "h": "1080p60", "k": "2160p60"}
# `lecture build` renders one figure per manim process: the repository's
# manim.cfg with these [CLI] settings changed (see one_figure_cfg).
ONE_FIGURE = {"write_all": "False"}
SYNC_TOLERANCE = 0.1  # seconds between audio and video duration
# The scene writes its whole audio track here (see scenes/base.py).
AUDIO_OUT_ENV = "LECTURE_AUDIO_OUT"


class BuildError(Exception):
    """A figure failed to render or its output failed verification."""


def renders_dir(quality: str) -> Path:
    return Path(os.environ.get("LECTURE_RENDERS", ROOT / "renders")) / QUALITIES[quality]


def work_dir() -> Path:
    return Path(os.environ.get("LECTURE_CACHE", ROOT / ".cache"))


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
    shared = [p.read_bytes() for p in sorted((ROOT / "scenes").glob("*.py")) if p.stem not in chapter_ids]
    facts = {name: [f.value, f.text, f.spoken] for name, f in catalogue.facts(fig.id).items()}
    material = {
        "quality": quality,
        "manim": version("manim"),
        "cfg": [(ROOT / "manim.cfg").read_text(encoding="utf-8"), ONE_FIGURE],
        "scene": source,
        "shared": [_sha(b) for b in shared],
        "facts": facts,
        "title": [fig.title, fig.source],
        "cues": [[c.caption, k] for c, k in zip(cues.figure_cues(fig.id), cue_keys)],
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
    parser.read(ROOT / "manim.cfg", encoding="utf-8")
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
        media.frame_at(mp4).save(staged / f"{fig.id}.png")
        files = {}
        for path in sorted(staged.iterdir()):
            files[path.suffix.lstrip(".")] = {
                "path": f"{fig.chapter}/{path.name}",
                "sha256": _sha(path.read_bytes()),
            }
            os.replace(path, target_dir / path.name)
    return {"chapter": fig.chapter, "figure": fig.id, "title": fig.title,
            "duration": round(info.video_seconds, 3), "files": files}


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


def _is_current(entry: dict | None, key: str, quality: str) -> bool:
    if not entry or entry.get("key") != key:
        return False
    return all((renders_dir(quality) / f["path"]).exists() for f in entry["files"].values())


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
        if _is_current(figures_entry.get(fig.id), key, quality):
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
        return fig, entry

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for fig, entry in pool.map(make, todo):
            figures_entry[fig.id] = entry
            _write_atomic(manifest_path, json.dumps(manifest, ensure_ascii=False, indent=2))
    _write_atomic(manifest_path, json.dumps(manifest, ensure_ascii=False, indent=2))
    say(f"{len(todo)} rendered, {len(figures) - len(todo)} unchanged → {out_dir}")
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
