"""``lecture build``: check, plan, then the stages; and the commands that read what a build published.

A build runs in one direction:

1. **check** (tools/publish/checks/checks.py): every fact computed and checked, every cue read, the layout lint;
2. **plan** (tools/publish/build/plan.py): with the manifest read once and locked until the build ends, what
   happens to each figure and why (``--plan`` prints it and stops here);
3. the **stages** (tools/publish/build/stages.py): narrate, render and publish each figure, then republish,
   prune, join the chapters and write the site, each reading the plan.

Two builds into one folder run one after the other: the second waits for the lock, then plans against what
the first published.

One course speaks one voice: a build that would speak its figures in a voice other than the one the figures
published beside them were spoken with stops after its plan, unless ``--voice`` names the voice on purpose;
then its last line names the mix, and the site credits every voice.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tools import settings
from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.publish.build import plan, stages
from tools.publish.build.stages import Draft
from tools.publish.checks import checks, stills
from tools.publish.publishing import manifest
from tools.publish.publishing.manifest import Manifest
from tools.publish.rendering import launch, render
from tools.publish.rendering.cluster import Cluster
from tools.publish.rendering.render import QUALITIES, BuildError
from tools.publish.site import site
from tools.voice import speech
from tools.voice.pacing import FIGURE_SECONDS

Say = Callable[[str], None]


def renders_dir(quality: str) -> Path:
    return settings.renders_root() / QUALITIES[quality]


def build(
    quality: str = "h",
    only: str | None = None,
    jobs: int = 1,
    say: Say = print,
    lint: bool = True,
    allow_long: bool = False,
    scheduler: str | None = None,
    plan_only: bool = False,
    voice: str | None = None,
) -> Manifest:
    """Check the selected figures as `lecture check` does (the layout lint too, unless `lint` is False), plan
    their build, then build them, rendering here or, given a Dask `scheduler` address, on its workers; returns
    the manifest as this build left it. With `plan_only`, say the plan and stop: nothing is narrated,
    rendered or written. `voice` (--voice) picks the engine outright, and publishes it beside figures spoken
    in another voice, which a build with LECTURE_VOICE's engine refuses to do."""
    if quality not in QUALITIES:
        raise BuildError(f"unknown quality {quality!r}: choose one of {', '.join(QUALITIES)}")
    figures = catalogue.select(only)
    with manifest.held(renders_dir(quality), say) as held:  # a corrupt manifest is refused before the checks
        remote = Cluster(scheduler, quality, say) if scheduler and not plan_only else None  # refused before any work
        if not plan_only and (remote is None or lint):  # it imports manim while the checks run; the lint forks too
            launch.start_server(render.render_env(quality, Path(os.devnull), Path(os.devnull)))
        try:
            # Two lint processes even for a one-job build: each draws only its figures' last frames.
            checks.run(figures, say, max(jobs, 2), layout=lint and not plan_only)
            the_plan = _plan(figures, quality, held, voice)
            for line in the_plan.lines():
                say(line)
            if plan_only:
                return held.manifest
            if the_plan.voice_mix is not None and voice is None:
                raise BuildError(the_plan.voice_mix.refusal())
            _run(the_plan, held, jobs, say, allow_long, remote)
            if len(mix := plan.published_voices(held.manifest)) > 1:
                said = "; ".join(f"{name}: {len(ids)} figure{'s' * (len(ids) != 1)}" for name, ids in mix.items())
                say(f"voices: the figures published at {QUALITIES[quality]} speak in {len(mix)} voices ({said})")
        finally:
            if remote is not None:
                remote.close()
        return held.manifest


def _plan(figures: list[Figure], quality: str, held: manifest.Held, voice: str | None) -> plan.Plan:
    """The plan, spoken by `voice` (LECTURE_VOICE's when None), with what the layout lint measured of figures
    never rendered (to queue them by)."""
    never_rendered = [fig for fig in figures if fig.id not in held.manifest.figures]
    engine = speech.from_env(voice)
    return plan.make(
        figures,
        quality,
        held.out_dir,
        held.manifest,
        engine,
        speech.describe(voice),
        stills.frame_seconds(never_rendered),
    )


def _run(the_plan: plan.Plan, held: manifest.Held, jobs: int, say: Say, allow_long: bool, remote) -> None:
    stages.sweep(held.out_dir, say)
    narration = stages.narrate(the_plan.to_render, the_plan.voice, say)
    for fig in the_plan.to_render:  # a video is never shorter than its narration: refuse before rendering
        if narration.seconds[fig.id] > FIGURE_SECONDS[1] and not allow_long:
            raise stages.too_long(fig, narration.seconds[fig.id], "its narration alone lasts")
    stages.render_all(the_plan, narration, jobs, say, held, allow_long, remote)
    stages.finish(the_plan, held, say)


def render_draft(fig: Figure, jobs: int, say: Say, draft: Draft) -> None:
    """Render `fig` at -q l as a build renders it (its narration made or found cached, split over `jobs`
    processes), then hand it to `draft.deliver` rather than publish it: lecture preview's draft."""
    engine = speech.from_env()
    say(speech.describe())
    stages.render_draft(plan.draft(fig, engine), engine, jobs, say, draft)


def rescan(quality: str, say: Say = print) -> manifest.Rescan:
    """Rebuild renders/<quality>/manifest.json from the sidecar records, without rendering."""
    out_dir = renders_dir(quality)
    with manifest.locked(out_dir):
        result = manifest.rescan(out_dir, list(plan.course_chapters()))
        manifest.save(out_dir, result.manifest)
        for line in result.unreadable:
            say(f"  {line}")
        say(
            f"manifest rebuilt from sidecars: {len(result.restored)} restored "
            f"({len(result.manifest.figures)} figures, {len(result.manifest.chapter_videos)} chapter videos)"
        )
        if result.to_render:
            say(f"  need a render (no sidecar, or files missing or changed): {', '.join(result.to_render)}")
        say(site.summary(site.write_kit(out_dir, result.manifest, catalogue.course_title())))
    return result


def write_site(quality: str) -> site.Kit:
    """Rewrite renders/<quality>/site/ from what is published there (``lecture site``)."""
    out_dir = renders_dir(quality)
    if not (out_dir / manifest.NAME).exists():
        raise site.KitError(f"nothing rendered in {out_dir}: run lecture build first")
    with manifest.held(out_dir) as held:
        return site.write_kit(out_dir, held.manifest, catalogue.course_title())
