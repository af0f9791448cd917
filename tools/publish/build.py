"""``lecture build``: check (:mod:`tools.publish.checks`), synthesize, render each figure, publish to renders/.

Per figure: ``manim`` renders the scene in its own process and work folder
(:mod:`tools.publish.render`); the clip is staged and verified
(:mod:`tools.publish.clip`), then moved over the previous files together
with its sidecar record and manifest entry (which records how long the
render took). A figure whose render key did not change since the last
build is not rendered again; one that must be rendered says why. The
renders are queued longest first, by their recorded time or, for a figure
never rendered, an estimate: its frames times how long its lint run took to
draw its last frame (else its narration's length).

Then, under the manifest's lock: figures the catalogue no longer has are
pruned, each complete chapter is joined (:mod:`tools.publish.chapter_video`)
and the embed kit ``renders/<quality>/site/`` is rewritten. Two builds into
one folder each wait for the other there, and both end up listed.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools import settings
from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.publish import (
    chapter_video,
    checks,
    clip,
    figure_notes,
    manifest,
    media,
    progress,
    render,
    scratch,
    sheet,
    site,
    stills,
)
from tools.publish.cluster import Cluster
from tools.publish.manifest import ChapterList, Manifest, PublishedFigure
from tools.publish.render import FPS, QUALITIES, BuildError, RenderKey
from tools.publish.segments import Costs, FigureRender, Part
from tools.publish.work_queue import WorkQueue
from tools.voice import audio, cues, speech
from tools.voice.pacing import FIGURE_SECONDS

Say = Callable[[str], None]


def renders_dir(quality: str) -> Path:
    return settings.renders_root() / QUALITIES[quality]


def course_chapters() -> list[ChapterList]:
    return [ChapterList(ch.id, ch.title, [f.id for f in ch.figures], ch.topic.label) for ch in catalogue.chapters()]


# A human take longer than this many times what its text takes to say (and
# by more than RECORDING_SLACK seconds) is probably the wrong file.
RECORDING_STRETCH, RECORDING_SLACK = 3.0, 10.0


@dataclass(frozen=True)
class Narration:
    keys: dict[str, list[str]]  # each figure's cue audio keys, in cue order
    seconds: dict[str, float]  # each figure's narration, all cues end to end
    paths: dict[str, dict[str, Path]]  # each figure's cue audio files, by cue id (shipped to cluster workers)
    voices: dict[str, list[str]]  # who speaks each figure's cues: engine names, or "recording" (the site credits them)


def narrate(figures: list[Figure], say: Say) -> Narration:
    """Make (or find cached) every cue's audio, saying first which voice speaks; warn about a recording far
    longer than its text."""
    say(speech.describe())
    engine = speech.from_env()
    keys: dict[str, list[str]] = {}
    seconds: dict[str, float] = {}
    paths: dict[str, dict[str, Path]] = {}
    voices: dict[str, set[str]] = {}
    all_cues = [c for fig in figures for c in cues.figure_cues(fig.id)]
    for n, cue in enumerate(all_cues, 1):
        sound = audio.cue_audio(cue, engine)
        if sound.damaged:
            say(f"  cached audio of cue {cue.id} could not be decoded: {sound.damaged}; deleted and made again")
        keys.setdefault(cue.figure, []).append(sound.key)
        paths.setdefault(cue.figure, {})[cue.id] = sound.path
        voices.setdefault(cue.figure, set()).add(sound.source)
        seconds[cue.figure] = seconds.get(cue.figure, 0.0) + sound.duration
        say(
            f"  narration {n}/{len(all_cues)} {cue.id}: {sound.duration:.1f} s "
            f"({'made' if sound.made else 'cached'}, {sound.source})"
        )
        expected = speech.Silent().seconds(cue.caption)
        if sound.source == "recording" and sound.duration > max(
            RECORDING_STRETCH * expected, expected + RECORDING_SLACK
        ):
            say(
                f"  warning: the recording for cue {cue.id} ({cue.recording}) lasts {sound.duration:.1f} s; "
                f"its text takes about {expected:.1f} s to say"
            )
    return Narration(keys, seconds, paths, {fig: sorted(names) for fig, names in voices.items()})


def _too_long(fig: Figure, seconds: float, what: str) -> BuildError:
    return BuildError(
        f"{fig.chapter}/{fig.id}: {what} {seconds:.1f} s, over the {FIGURE_SECONDS[1]} s a figure "
        f"may run; shorten it, or pass --allow-long to publish it anyway"
    )


def _remove_figure(entry: PublishedFigure, out_dir: Path, keep: set[str] = frozenset()) -> None:
    """Delete a published figure's files (but those in `keep`) and its sidecar."""
    for f in entry.files.values():
        if f.path not in keep:
            (out_dir / f.path).unlink(missing_ok=True)
    if entry.sidecar not in keep:
        (out_dir / entry.sidecar).unlink(missing_ok=True)


def prune(man: Manifest, out_dir: Path, say: Say) -> None:
    """Drop figures and chapter videos the catalogue no longer has, with their files."""
    figure_ids = {fig_id for ch in man.chapters for fig_id in ch.figures}
    for fig_id in [f for f in man.figures if f not in figure_ids]:
        _remove_figure(man.figures.pop(fig_id), out_dir)
        say(f"  {fig_id}: no longer in the catalogue, its files removed")
    chapter_ids = {ch.id for ch in man.chapters}
    for ch_id in [c for c in man.chapter_videos if c not in chapter_ids]:
        chapter_video.remove(man.chapter_videos.pop(ch_id), out_dir)
        say(f"  chapter {ch_id}: no longer in the catalogue, its video removed")


def _publish(
    fig: Figure,
    quality: str,
    key: RenderKey,
    allow_long: bool,
    tracker: progress.BuildProgress,
    rendered: render.Rendered,
    render_seconds: float,
    voices: list[str],
) -> PublishedFigure:
    """Stage a rendered figure's files, then move them in and record them under the lock.

    A figure over the time limit is not published (its previous files stay)
    unless allow_long; one under the lower limit is published with a warning.
    """
    out_dir = renders_dir(quality)
    target_dir = out_dir / fig.chapter
    started = time.monotonic()
    with scratch.staging(target_dir) as staged:
        cue_lines = figure_notes.transcript(fig.id, rendered.cue_times)
        info = clip.stage_clip(fig, rendered, staged)
        if info.video_seconds > FIGURE_SECONDS[1] and not allow_long:
            raise _too_long(fig, info.video_seconds, "the rendered video runs")
        with manifest.updating(out_dir) as man:
            files = clip.move_in(staged, target_dir, f"{fig.chapter}/")
            entry = clip.entry(fig, info, files, key.digest, key.parts, render_seconds, cue_lines, voices)
            manifest.write_sidecar(out_dir, entry)
            if (old := man.figures.get(fig.id)) is not None:
                _remove_figure(old, out_dir, keep={f.path for f in files.values()} | {entry.sidecar})
            man.figures[fig.id] = entry
    tracker.say(
        f"  {fig.chapter}/{fig.id}: done, {entry.duration:.1f} s of video, rendered in {render_seconds:.0f} s "
        f"and published in {time.monotonic() - started:.0f} s"
    )
    tracker.finish(fig.id, entry.duration)
    if not FIGURE_SECONDS[0] <= entry.duration <= FIGURE_SECONDS[1]:
        tracker.say(
            f"  warning: {fig.chapter}/{fig.id} runs {entry.duration:.1f} s, outside the "
            f"{FIGURE_SECONDS[0]}–{FIGURE_SECONDS[1]} s a figure should run"
        )
    return entry


@dataclass(frozen=True)
class Draft:
    """A render that lecture preview shows and nothing publishes: manim runs with `config_file` (encoded for
    speed), without the fill that makes a build's bytes reproducible, cut where the `costs` of the draft
    before say (if any), and `deliver` gets the whole render (parts joined, in a work folder removed after)
    and what it cost where, in place of publishing."""

    config_file: Path
    deliver: Callable[[Figure, render.Rendered, Costs], None]
    costs: Costs | None = None


class _Renders:
    """The build's renders on a WorkQueue, longest first, each figure published as soon as it is complete.

    A figure starts as one process; a core that would idle takes over half of what the running figure
    with the most left still has to render (tools/publish/segments.py).
    """

    def __init__(
        self,
        quality: str,
        jobs: int,
        allow_long: bool,
        tracker: progress.BuildProgress,
        remote: Cluster | None,
        narration: Narration,
        draft: Draft | None = None,
    ):
        self.quality, self.allow_long, self.tracker, self.remote, self.narration, self.draft = (
            quality,
            allow_long,
            tracker,
            remote,
            narration,
            draft,
        )
        self.queue = WorkQueue(jobs, idle=self._split_one)
        self._running: dict[str, tuple[Figure, RenderKey | None, FigureRender]] = {}
        self._all: list[FigureRender] = []
        self._limits: dict[str, settings.Limit] = {}  # each figure's render time limit, for each of its parts
        self._lock = threading.Lock()

    def add(
        self, fig: Figure, key: RenderKey | None, render_seconds: float, video_seconds: float, limit: settings.Limit
    ) -> None:
        self._limits[fig.id] = limit
        self.queue.add(render_seconds, functools.partial(self._first, fig, key, render_seconds, video_seconds))

    def run(self) -> None:
        try:
            self.queue.run()
        finally:  # work folders of figures a failure left unfinished
            for job in self._all:
                job.close()

    def _first(self, fig: Figure, key: RenderKey | None, render_seconds: float, video_seconds: float) -> None:
        job = FigureRender(
            video_seconds,
            render_seconds,
            functools.partial(render.work_folder, fig, self.quality),
            self.draft.costs if self.draft is not None else None,
        )
        with self._lock:
            self._running[fig.id] = (fig, key, job)
            self._all.append(job)
        self._render_part(fig, key, job, job.first())

    def _render_part(self, fig: Figure, key: RenderKey | None, job: FigureRender, part: Part) -> None:
        self.tracker.start(fig.id, part.progress_file)
        limit = self._limits[fig.id]
        if self.draft is not None:
            rendered = render.render(
                fig,
                self.quality,
                part.work,
                start=part.start,
                limit=limit,
                config_file=self.draft.config_file,
                reproducible=False,
            )
        elif self.remote is None:
            rendered = render.render(fig, self.quality, part.work, start=part.start, limit=limit)
        else:
            rendered = self.remote.render(
                fig.id, self.quality, self.narration.paths[fig.id], part.work, part.start, limit
            )
        if job.finished(part, rendered):  # the figure's last part: join, publish, drop the work folders
            with self._lock:
                del self._running[fig.id]
            with job:
                if self.draft is not None:
                    self.draft.deliver(fig, job.whole(part.work), job.measured_costs())
                    return
                _publish(
                    fig,
                    self.quality,
                    key,
                    self.allow_long,
                    self.tracker,
                    job.whole(part.work),
                    job.render_seconds(),
                    self.narration.voices[fig.id],
                )

    def _split_one(self) -> Callable[[], None] | None:
        """For a thread with nothing queued: the rest of a running figure to render, if any is worth a process."""
        with self._lock:
            running = list(self._running.values())
        for fig, key, job in sorted(running, key=lambda item: -item[2].left()):
            part = job.split()
            if part is not None:
                self.tracker.say(f"  {fig.chapter}/{fig.id}: from {part.start:.1f} s on in another process")
                return functools.partial(self._render_part, fig, key, job, part)
        return None


def expected_render_seconds(
    figures: list[Figure],
    published: dict[str, PublishedFigure],
    narration_seconds: dict[str, float],
    quality: str = "l",
    frame_seconds: dict[str, float] | None = None,
) -> dict[str, float]:
    """How long each figure's render should take: its last recorded render time; else, when its lint run
    timed a whole frame (`frame_seconds`, at 480p), its frames times that, scaled by the quality's pixels;
    else its narration's length times the median render time per second of video among the figures that
    have one (or 1)."""
    rates = sorted(
        entry.render_seconds / entry.duration
        for entry in published.values()
        if entry.render_seconds > 0 and entry.duration > 0
    )
    rate = rates[len(rates) // 2] if rates else 1.0
    frame_seconds = frame_seconds or {}
    pixels = (render.PIXEL_WIDTH[quality] / render.PIXEL_WIDTH["l"]) ** 2

    def expected(fig: Figure) -> float:
        if fig.id in published and published[fig.id].render_seconds > 0:
            return published[fig.id].render_seconds
        if fig.id in frame_seconds:
            return narration_seconds[fig.id] * FPS[quality] * frame_seconds[fig.id] * pixels
        return rate * narration_seconds[fig.id]

    return {fig.id: expected(fig) for fig in figures}


def _sweep(out_dir: Path, say: Say) -> None:
    """Remove what a killed build left behind (call under the manifest's lock)."""
    for path in scratch.sweep(out_dir):
        say(f"  removed {path.relative_to(out_dir)}, left by a build that was stopped")


def _finish(out_dir: Path, say: Say, built: list[Figure]) -> None:
    """Under the lock: prune, refresh the notes of the figures built, join complete chapters, save, rewrite
    the embed kit."""
    with manifest.locked(out_dir):
        man = manifest.load(out_dir)
        man.chapters = course_chapters()
        for fig in built:
            if fig.id in man.figures:
                man.figures[fig.id] = figure_notes.refreshed(man.figures[fig.id])
        _sweep(out_dir, say)
        prune(man, out_dir, say)
        chapter_video.build_all(man, out_dir, say)
        manifest.save(out_dir, man)
        say(site.summary(site.write_kit(out_dir, man)))


def build(
    quality: str = "h",
    only: str | None = None,
    jobs: int = 1,
    say: Say = print,
    lint: bool = True,
    allow_long: bool = False,
    scheduler: str | None = None,
) -> Manifest:
    """Check the selected figures as `lecture check` does (the layout lint too, unless `lint` is False),
    then build them, rendering here or, given a Dask `scheduler` address, on its workers; returns the
    manifest as this build left it."""
    if quality not in QUALITIES:
        raise BuildError(f"unknown quality {quality!r}: choose one of {', '.join(QUALITIES)}")
    figures = catalogue.select(only)
    manifest.load(renders_dir(quality))  # a corrupt manifest is refused before the checks take their time
    remote = Cluster(scheduler) if scheduler else None  # an unreachable scheduler is refused before any work
    try:
        # Two lint processes even for a one-job build: each draws only its figures' last frames.
        checks.run(figures, say, max(jobs, 2), layout=lint)
        return _build(figures, quality, jobs, say, allow_long, remote)
    finally:
        if remote is not None:
            remote.close()


def _build(
    figures: list[Figure], quality: str, jobs: int, say: Say, allow_long: bool, remote: Cluster | None
) -> Manifest:
    out_dir = renders_dir(quality)
    with manifest.locked(out_dir):
        published = manifest.load(out_dir).figures  # a corrupt manifest is refused here, before any rendering
        _sweep(out_dir, say)
    narration = narrate(figures, say)
    for fig in figures:  # a video is never shorter than its narration: refuse before rendering
        if narration.seconds[fig.id] > FIGURE_SECONDS[1] and not allow_long:
            raise _too_long(fig, narration.seconds[fig.id], "its narration alone lasts")
    todo = []
    for fig in figures:
        key = render.render_key(fig, quality, narration.keys[fig.id])
        old = published.get(fig.id)
        if old is not None and old.key == key.digest and old.present(out_dir):
            say(f"  {fig.chapter}/{fig.id}: unchanged")
            continue
        why = (
            ["files missing"]
            if old is not None and old.key == key.digest
            else render.reasons(old.key_parts if old else None, key)
        )
        say(f"  {fig.chapter}/{fig.id}: rendering {QUALITIES[quality]} ({'; '.join(why)})")
        todo.append((fig, key))

    # Each render is its own manim process, on a queue of `jobs` threads, longest first; a thread with
    # nothing left to start takes over the rest of a running figure (tools/publish/segments.py).
    drawn = [fig for fig, _ in todo if fig.id not in published]
    expected = expected_render_seconds(
        [fig for fig, _ in todo], published, narration.seconds, quality, stills.frame_seconds(drawn)
    )
    video_seconds = {
        fig.id: published[fig.id].duration if fig.id in published else narration.seconds[fig.id] for fig, _ in todo
    }
    live = bool(todo) and say is print and progress.on_terminal()  # else plain lines, one per figure done
    tracker = progress.BuildProgress(video_seconds, FPS[quality], say, live)
    renders = _Renders(quality, jobs, allow_long, tracker, remote, narration)
    for fig, key in todo:
        recorded = published[fig.id].render_seconds if fig.id in published else 0.0
        limit = render.time_limit(quality, recorded, video_seconds[fig.id])
        renders.add(fig, key, expected[fig.id], video_seconds[fig.id], limit)
    with tracker.shown():
        renders.run()
    say(f"{len(todo)} rendered, {len(figures) - len(todo)} unchanged → {out_dir}")
    _finish(out_dir, say, figures)
    return manifest.load(out_dir)


def render_draft(fig: Figure, jobs: int, say: Say, draft: Draft) -> None:
    """Render `fig` at -q l as a build renders it (its narration made or found cached, split over `jobs`
    processes), then hand it to `draft.deliver` rather than publish it: lecture preview's draft."""
    quality = "l"
    narration = narrate([fig], say)
    seconds = narration.seconds[fig.id]
    tracker = progress.BuildProgress({fig.id: seconds}, FPS[quality], say, False)
    renders = _Renders(quality, jobs, True, tracker, None, narration, draft)
    renders.add(fig, None, seconds, seconds, render.time_limit(quality, 0.0, seconds))
    with tracker.shown():
        renders.run()


def rescan(quality: str, say: Say = print) -> manifest.Rescan:
    """Rebuild renders/<quality>/manifest.json from the sidecar records, without rendering."""
    out_dir = renders_dir(quality)
    with manifest.locked(out_dir):
        result = manifest.rescan(out_dir, course_chapters())
        manifest.save(out_dir, result.manifest)
        for line in result.unreadable:
            say(f"  {line}")
        say(
            f"manifest rebuilt from sidecars: {len(result.restored)} restored "
            f"({len(result.manifest.figures)} figures, {len(result.manifest.chapter_videos)} chapter videos)"
        )
        if result.to_render:
            say(f"  need a render (no sidecar, or files missing or changed): {', '.join(result.to_render)}")
        say(site.summary(site.write_kit(out_dir, result.manifest)))
    return result


def write_site(quality: str) -> site.Kit:
    """Rewrite renders/<quality>/site/ from what is published there (``lecture site``)."""
    out_dir = renders_dir(quality)
    if not (out_dir / manifest.NAME).exists():
        raise site.KitError(f"nothing rendered in {out_dir}: run lecture build first")
    with manifest.locked(out_dir):
        return site.write_kit(out_dir, manifest.load(out_dir))


def _clip_frames(quality: str, only: str | None, fractions: list[float]) -> dict[Figure, list]:
    """Each selected figure's frames (PIL images) at fractions of its length, from the published clips."""
    out_dir = renders_dir(quality)
    published = manifest.load(out_dir).figures
    stills = {}
    for fig in catalogue.select(only):
        if fig.id not in published:
            raise BuildError(f"{fig.chapter}/{fig.id} is not rendered at {QUALITIES[quality]}: run lecture build first")
        entry = published[fig.id]
        clip_path = out_dir / entry.files["mp4"].path
        stills[fig] = [media.frame_at(clip_path, None if f >= 1 else f * entry.duration) for f in fractions]
    return stills


def frames(quality: str, only: str | None, fractions: list[float]) -> list[Path]:
    """Still PNGs of rendered figures at fractions of their length, for review."""
    folder = renders_dir(quality) / "frames"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for fig, images in _clip_frames(quality, only, fractions).items():
        for fraction, image in zip(fractions, images):
            out = folder / f"{fig.id}-{round(fraction * 100):03d}.png"
            image.save(out)
            written.append(out)
    return written


def sheets(quality: str, only: str | None, fractions: list[float]) -> list[Path]:
    """One contact sheet per chapter (renders/<quality>/frames/<chapter>-sheet.png): its figures'
    stills at the fractions, one row per figure, for looking over a chapter at once."""
    frames_of = _clip_frames(quality, only, fractions)
    written = []
    for chapter in catalogue.chapters():
        rows = [sheet.Row(fig.id, fig.title, images) for fig, images in frames_of.items() if fig.chapter == chapter.id]
        if rows:
            out = renders_dir(quality) / "frames" / f"{chapter.id}-sheet.png"
            sheet.contact_sheet(f"{chapter.title}  ({chapter.id}, {QUALITIES[quality]})", fractions, rows, out)
            written.append(out)
    return written
