"""The stages of ``lecture build`` after its plan, in order: narrate, render, publish, then finish (republish,
prune, chapters, site).

Each takes the plan (tools/publish/build/plan.py), or its part of it, and the manifest the build holds
(``manifest.Held``): none goes back to the catalogue or reopens the manifest.

- **narrate**: the cue audio of the figures to render, made or found cached;
- **render**: each figure's manim process on a WorkQueue, longest first (by its recorded render time or an
  estimate); a core that would idle takes over half of what the running figure with the most left still has
  to render (tools/publish/rendering/segments.py);
- **publish**: a figure as soon as its render is complete: its files staged and verified
  (tools/publish/publishing/clip.py), moved over the previous ones with its sidecar, and the manifest saved;
- **finish**: the republished figures' entries written again, what the catalogue no longer has pruned, each
  complete chapter joined (tools/publish/publishing/chapter_video.py), the manifest saved, the embed kit rewritten.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools import settings
from tools.publish.build.plan import FigurePlan, Plan, thawed
from tools.publish.publishing import chapter_video, clip, fact_tracks, figure_notes, manifest
from tools.publish.publishing.manifest import Held, Manifest, PublishedFigure
from tools.publish.rendering import progress, render, scratch
from tools.publish.rendering.cluster import Cluster
from tools.publish.rendering.render import FPS, PIXEL_WIDTH, BuildError
from tools.publish.rendering.segments import Costs, FigureRender, Part
from tools.publish.rendering.work_queue import WorkQueue
from tools.publish.site import site
from tools.voice import audio, speech
from tools.voice.engine import Engine
from tools.voice.pacing import FIGURE_SECONDS

Say = Callable[[str], None]

# A human take longer than this many times what its text takes to say (and
# by more than RECORDING_SLACK seconds) is probably the wrong file.
RECORDING_STRETCH, RECORDING_SLACK = 3.0, 10.0


# -- narrate ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Narration:
    seconds: dict[str, float]  # each figure's narration, all cues end to end
    paths: dict[str, dict[str, Path]]  # each figure's cue audio files, by cue id (shipped to cluster workers)
    voices: dict[str, list[str]]  # who speaks each figure's cues: engine names, or "recording" (the site credits them)


def narrate(figures: tuple[FigurePlan, ...], engine: Engine, say: Say) -> Narration:
    """Make (or find cached) the cue audio of `figures`; warn about a recording far longer than its text."""
    seconds: dict[str, float] = {}
    paths: dict[str, dict[str, Path]] = {}
    voices: dict[str, set[str]] = {}
    all_cues = [planned.cue for fig in figures for planned in fig.cues]
    for n, cue in enumerate(all_cues, 1):
        sound = audio.cue_audio(cue, engine)
        if sound.damaged:
            say(f"  cached audio of cue {cue.id} could not be decoded: {sound.damaged}; deleted and made again")
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
    return Narration(seconds, paths, {fig: sorted(names) for fig, names in voices.items()})


def too_long(fig: FigurePlan, seconds: float, what: str) -> BuildError:
    return BuildError(
        f"{fig.chapter}/{fig.id}: {what} {seconds:.1f} s, over the {FIGURE_SECONDS[1]} s a figure "
        f"may run; shorten it, or pass --allow-long to publish it anyway"
    )


# -- publish ---------------------------------------------------------------------------------------------------


def _remove_figure(entry: PublishedFigure, out_dir: Path, keep: set[str] = frozenset()) -> None:
    """Delete a published figure's files (but those in `keep`) and its sidecar."""
    for f in entry.files.values():
        if f.path not in keep:
            (out_dir / f.path).unlink(missing_ok=True)
    if entry.sidecar not in keep:
        (out_dir / entry.sidecar).unlink(missing_ok=True)


def _entry(
    fig: FigurePlan,
    info,
    files: manifest.Files,
    render_seconds: float,
    cue_lines: list[dict],
    voices: list[str],
) -> PublishedFigure:
    """The figure's manifest record: what the plan knows of it, and what its render and publishing made."""
    return PublishedFigure(
        fig.chapter,
        fig.id,
        fig.title,
        round(info.video_seconds, 3),
        info.width,
        info.height,
        thawed(fig.facts),
        files,
        fig.key.digest,
        fig.key.parts,
        fig.attachment_notes,
        round(render_seconds, 1),
        fig.source,
        cue_lines,
        thawed(fig.checks),
        voices,
    )


def publish(
    fig: FigurePlan,
    held: Held,
    allow_long: bool,
    tracker: progress.BuildProgress,
    rendered: render.Rendered,
    render_seconds: float,
    voices: list[str],
) -> PublishedFigure:
    """Stage a rendered figure's files, then move them in, record them and save the manifest.

    A figure over the time limit is not published (its previous files stay)
    unless allow_long; one under the lower limit is published with a warning.
    """
    out_dir = held.out_dir
    target_dir = out_dir / fig.chapter
    started = time.monotonic()
    with scratch.staging(target_dir) as staged:
        cue_lines = figure_notes.transcript(fig.id, [planned.cue for planned in fig.cues], rendered.cue_times)
        info = clip.stage_clip(fig.id, fig.title, fig.attachments, rendered, staged)
        fact_tracks.write(staged, fig.id, rendered.fact_boxes, fig.facts, cue_lines)
        if info.video_seconds > FIGURE_SECONDS[1] and not allow_long:
            raise too_long(fig, info.video_seconds, "the rendered video runs")
        with held.changing() as man:
            files = clip.move_in(staged, target_dir, f"{fig.chapter}/")
            entry = _entry(fig, info, files, render_seconds, cue_lines, voices)
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


# -- render ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Draft:
    """A render that lecture preview shows and nothing publishes: manim runs with `config_file` (encoded for
    speed), without the fill that makes a build's bytes reproducible, cut where the `costs` of the draft
    before say (if any), and `deliver` gets the whole render (parts joined, in a work folder removed after)
    and what it cost where, in place of publishing."""

    config_file: Path
    deliver: Callable[[FigurePlan, render.Rendered, Costs], None]
    costs: Costs | None = None


class Renders:
    """The build's renders on a WorkQueue, longest first, each figure published as soon as it is complete.

    A figure starts as one process; a core that would idle takes over half of what the running figure
    with the most left still has to render (tools/publish/rendering/segments.py). Publishing goes to `held`, the
    manifest the build holds; a `draft` is handed over instead.
    """

    def __init__(
        self,
        quality: str,
        jobs: int,
        allow_long: bool,
        tracker: progress.BuildProgress,
        remote: Cluster | None,
        narration: Narration,
        held: Held | None,
        draft: Draft | None = None,
    ):
        self.quality, self.allow_long, self.tracker, self.remote, self.narration = (
            quality,
            allow_long,
            tracker,
            remote,
            narration,
        )
        self.held, self.draft = held, draft
        self.queue = WorkQueue(jobs, idle=self._split_one)
        self._running: dict[str, tuple[FigurePlan, FigureRender]] = {}
        self._all: list[FigureRender] = []
        self._limits: dict[str, settings.Limit] = {}  # each figure's render time limit, for each of its parts
        self._lock = threading.Lock()

    def add(self, fig: FigurePlan, render_seconds: float, video_seconds: float, limit: settings.Limit) -> None:
        self._limits[fig.id] = limit
        self.queue.add(render_seconds, functools.partial(self._first, fig, render_seconds, video_seconds))

    def run(self) -> None:
        try:
            self.queue.run()
        finally:  # work folders of figures a failure left unfinished
            for job in self._all:
                job.close()

    def _first(self, fig: FigurePlan, render_seconds: float, video_seconds: float) -> None:
        job = FigureRender(
            video_seconds,
            render_seconds,
            functools.partial(render.work_folder, fig.scene, self.quality),
            self.draft.costs if self.draft is not None else None,
        )
        with self._lock:
            self._running[fig.id] = (fig, job)
            self._all.append(job)
        self._render_part(fig, job, job.first())

    def _render_part(self, fig: FigurePlan, job: FigureRender, part: Part) -> None:
        self.tracker.start(fig.id, part.progress_file)
        limit = self._limits[fig.id]
        if self.draft is not None:
            rendered = render.render(
                fig.scene,
                self.quality,
                part.work,
                start=part.start,
                limit=limit,
                config_file=self.draft.config_file,
                reproducible=False,
            )
        elif self.remote is None:
            rendered = render.render(fig.scene, self.quality, part.work, start=part.start, limit=limit)
        else:
            rendered = self.remote.render(
                fig.scene, self.quality, self.narration.paths[fig.id], part.work, part.start, limit
            )
        if job.finished(part, rendered):  # the figure's last part: join, publish, drop the work folders
            with self._lock:
                del self._running[fig.id]
            with job:
                if self.draft is not None:
                    self.draft.deliver(fig, job.whole(part.work), job.measured_costs())
                    return
                publish(
                    fig,
                    self.held,
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
        for fig, job in sorted(running, key=lambda item: -item[1].left()):
            part = job.split()
            if part is not None:
                self.tracker.say(f"  {fig.chapter}/{fig.id}: from {part.start:.1f} s on in another process")
                return functools.partial(self._render_part, fig, job, part)
        return None


def expected_render_seconds(fig: FigurePlan, narration_seconds: float, render_rate: float, quality: str) -> float:
    """How long `fig`'s render should take: its last recorded render time; else, when its lint run timed a
    whole frame (at 480p), its frames times that, scaled by the quality's pixels; else its narration's length
    times `render_rate`, the median render time per second of video of the published figures."""
    if fig.recorded_render_seconds > 0:
        return fig.recorded_render_seconds
    if fig.lint_frame_seconds is not None:
        pixels = (PIXEL_WIDTH[quality] / PIXEL_WIDTH["l"]) ** 2
        return narration_seconds * FPS[quality] * fig.lint_frame_seconds * pixels
    return render_rate * narration_seconds


def render_all(
    plan: Plan,
    narration: Narration,
    jobs: int,
    say: Say,
    held: Held,
    allow_long: bool,
    remote: Cluster | None,
) -> None:
    """Render every figure the plan renders, each published as soon as it is complete."""
    todo = plan.to_render
    video_seconds = {
        fig.id: fig.recorded_duration if fig.recorded_duration is not None else narration.seconds[fig.id]
        for fig in todo
    }
    live = bool(todo) and say is print and progress.on_terminal()  # else plain lines, one per figure done
    tracker = progress.BuildProgress(video_seconds, FPS[plan.quality], say, live)
    renders = Renders(plan.quality, jobs, allow_long, tracker, remote, narration, held)
    for fig in todo:
        expected = expected_render_seconds(fig, narration.seconds[fig.id], plan.render_rate, plan.quality)
        limit = render.time_limit(plan.quality, fig.recorded_render_seconds, video_seconds[fig.id])
        renders.add(fig, expected, video_seconds[fig.id], limit)
    with tracker.shown():
        renders.run()
    say(f"{len(todo)} rendered, {len(plan.figures) - len(todo)} unchanged → {plan.out_dir}")


def render_draft(fig: FigurePlan, engine: Engine, jobs: int, say: Say, draft: Draft) -> None:
    """Render `fig` at -q l as a build renders it (its narration made or found cached, split over `jobs`
    processes), then hand it to `draft.deliver` rather than publish it: lecture preview's draft."""
    quality = "l"
    narration = narrate((fig,), engine, say)
    seconds = narration.seconds[fig.id]
    tracker = progress.BuildProgress({fig.id: seconds}, FPS[quality], say, False)
    renders = Renders(quality, jobs, True, tracker, None, narration, None, draft)
    renders.add(fig, seconds, seconds, render.time_limit(quality, 0.0, seconds))
    with tracker.shown():
        renders.run()


# -- finish ----------------------------------------------------------------------------------------------------


def republish(figures: tuple[FigurePlan, ...], held: Held, say: Say) -> None:
    """Write again the entries and sidecars of figures whose clips stand but whose notes changed."""
    for fig in figures:
        entry = dataclasses.replace(
            held.manifest.figures[fig.id],
            facts=thawed(fig.facts),
            checks=thawed(fig.checks),
            source=fig.source,
            attachments=fig.attachment_notes,
        )
        manifest.write_sidecar(held.out_dir, entry)
        held.manifest.figures[fig.id] = entry
        say(f"  {fig.chapter}/{fig.id}: republished ({'; '.join(fig.why)})")


def prune(man: Manifest, out_dir: Path, figures: tuple[str, ...], chapters: tuple[str, ...], say: Say) -> None:
    """Drop the published `figures` and chapter videos of `chapters` (the catalogue no longer has them), with
    their files."""
    for fig_id in figures:
        _remove_figure(man.figures.pop(fig_id), out_dir)
        say(f"  {fig_id}: no longer in the catalogue, its files removed")
    for ch_id in chapters:
        chapter_video.remove(man.chapter_videos.pop(ch_id), out_dir)
        say(f"  chapter {ch_id}: no longer in the catalogue, its video removed")


def sweep(out_dir: Path, say: Say) -> None:
    """Remove what a killed build left behind (call under the manifest's lock)."""
    for path in scratch.sweep(out_dir):
        say(f"  removed {path.relative_to(out_dir)}, left by a build that was stopped")


def finish(plan: Plan, held: Held, say: Say) -> None:
    """Republish, prune, join complete chapters, save, rewrite the embed kit."""
    man = held.manifest
    man.chapters = list(plan.chapters)
    republish(plan.to_republish, held, say)
    prune(man, held.out_dir, plan.gone_figures, plan.gone_chapters, say)
    chapter_video.build_all(man, held.out_dir, say)
    held.save()
    say(site.summary(site.write_kit(held.out_dir, man, plan.site_title)))
