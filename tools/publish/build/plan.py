"""The build plan: what one ``lecture build`` will do to each figure, and why, decided once before any work.

:func:`make` reads, once, what the build needs to know: each figure's catalogue entry, its facts and checks
(computed by the checks before rendering), its cues with their audio keys, its render key, and the manifest
the build holds open. Against the manifest it decides each figure's action:

- ``render``: it is new, its render key changed (each changed part says why), or its files are missing;
- ``republish``: its key is the same and its files are there, but what the site says beside the clip
  changed (how a number is computed, a check, the source line, an attachment's label): its manifest entry
  and sidecar are written again, nothing is rendered;
- ``keep``: nothing to do.

It also says what the chapter videos and the site will need, which published figures and chapter videos
the catalogue no longer has, and whether the figures it speaks would join a course published in another
voice (a ``VoiceMix``: the build stops there unless ``--voice`` confirms it). The stages in
tools/publish/build/stages.py (narrate, render, publish, chapters, site, prune) read the plan, or their part of
it: none goes back to the catalogue or reopens the manifest.
``lecture build --plan`` prints it and stops, as ``make -n`` does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.course.shown import check_cells
from tools.publish.keys import render_key
from tools.publish.keys.render_key import RenderKey
from tools.publish.publishing.clip import Attached
from tools.publish.publishing.manifest import ChapterList, Manifest, PublishedFigure
from tools.publish.rendering.render import QUALITIES, SceneRef
from tools.voice import audio, cues, speech
from tools.voice.cues import Cue
from tools.voice.engine import Engine

Action = Literal["render", "republish", "keep"]


def frozen(value: Any) -> Any:
    """A JSON value that cannot be changed: dicts as read-only mappings, lists as tuples."""
    if isinstance(value, dict):
        return MappingProxyType({key: frozen(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(frozen(item) for item in value)
    return value


def thawed(value: Any) -> Any:
    """A frozen JSON value as plain dicts and lists again, for the manifest."""
    if isinstance(value, Mapping):
        return {key: thawed(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thawed(item) for item in value]
    return value


@dataclass(frozen=True)
class PlannedCue:
    cue: Cue  # its caption, what the voice is handed, its recording
    audio_key: str  # the key its finished audio is cached under (tools/voice/audio.py), known before it is made


@dataclass(frozen=True)
class FigurePlan:
    """One figure as the build will treat it: what it is, what it shows and says, and what happens to it."""

    scene: SceneRef  # its id, chapter, scene class and scene file
    title: str
    source: str  # its source line (出处)
    facts: Mapping[str, Mapping]  # as `lecture facts --json` gives them, frozen
    checks: tuple[Mapping, ...]  # every check its builder passed, as the site prints them, frozen
    cues: tuple[PlannedCue, ...]  # in play order
    attachments: tuple[Attached, ...]
    key: RenderKey | None  # None for a preview's draft, which publishes nothing
    action: Action
    why: tuple[str, ...]  # why it renders or is republished; empty when kept
    recorded_render_seconds: float  # its last render's wall time (0: never recorded), to queue the longest first
    recorded_duration: float | None  # its published video's length, None when it has none
    lint_frame_seconds: float | None  # how long its lint run took to draw its last frame, if it ran

    @property
    def id(self) -> str:
        return self.scene.figure

    @property
    def chapter(self) -> str:
        return self.scene.chapter

    @property
    def attachment_notes(self) -> dict:
        """What the site says of each attachment, as the manifest records it: {suffix: {label, how_to}}."""
        return _site_notes(self.attachments)

    def line(self, quality: str) -> str:
        """What the build says it will do with this figure, and why."""
        where = f"  {self.chapter}/{self.id}"
        if self.action == "keep":
            return f"{where}: unchanged"
        if self.action == "republish":
            return f"{where}: to republish, not render ({'; '.join(self.why)})"
        return f"{where}: to render at {QUALITIES[quality]} ({'; '.join(self.why)})"


@dataclass(frozen=True)
class ChapterPlan:
    """What a chapter video will need once the figures are published."""

    chapter: ChapterList
    line: str  # what the build expects to do with it, and why


@dataclass(frozen=True)
class VoiceMix:
    """A build that would leave the figures published at its quality spoken in more than one synthesized voice:
    the figures it speaks in its voice, and those that keep another."""

    voice: str  # the engine this build speaks with, by name (espeak-ng, neural, …)
    speaking: tuple[str, ...]  # the chapter/figure ids it would speak in that voice
    others: Mapping[str, tuple[str, ...]]  # each other voice the published figures keep: their chapter/figure ids

    def line(self) -> str:
        """The plan's line: what would be spoken in which voice."""
        return f"  voices: this build speaks {_by_chapter(self.speaking)} with {self.voice}, beside {self._kept()}"

    def refusal(self) -> str:
        """Why the build stops, and the two ways on: speak as the rest does, or publish the mix on purpose."""
        rest = " or ".join(f"LECTURE_VOICE={speech.choice_of(voice)}" for voice in self.others)
        return (
            f"this build would speak {_by_chapter(self.speaking)} with {self.voice}, beside {self._kept()}: the "
            f"course would speak in {len(self.others) + 1} voices and its site credit each. Speak as they do "
            f"({rest}), or publish the mix on purpose with --voice {speech.choice_of(self.voice)}"
        )

    def _kept(self) -> str:
        """The figures published in other voices, e.g. 'figures published with neural (11 figures of backprop)'."""
        return " and ".join(
            f"figures published with {voice} ({_by_chapter(ids)})" for voice, ids in self.others.items()
        )


def _by_chapter(ids: tuple[str, ...]) -> str:
    """chapter/figure ids, shortened: a chapter with more than three of them by its count."""
    chapters: dict[str, list[str]] = {}
    for ref in ids:
        chapter, figure = ref.split("/")
        chapters.setdefault(chapter, []).append(figure)
    return ", ".join(
        f"{len(figs)} figures of {chapter}" if len(figs) > 3 else ", ".join(f"{chapter}/{fig}" for fig in figs)
        for chapter, figs in chapters.items()
    )


def published_voices(man: Manifest, leave_out: frozenset[str] = frozenset()) -> dict[str, tuple[str, ...]]:
    """The synthesized voices the manifest's figures (but those in `leave_out`) were published with: {voice:
    their chapter/figure ids}. A recording is a person, not a voice that could be mixed up."""
    voices: dict[str, list[str]] = {}
    for fig_id, entry in man.figures.items():
        if fig_id not in leave_out:
            for voice in entry.voices:
                if voice != "recording":
                    voices.setdefault(voice, []).append(f"{entry.chapter}/{fig_id}")
    return {voice: tuple(ids) for voice, ids in sorted(voices.items())}


def _voice_mix(plans: tuple[FigurePlan, ...], man: Manifest, known: set[str], engine: Engine) -> VoiceMix | None:
    """A mix, if the figures this build renders (those with a cue not recorded by a person) would be spoken in
    another voice than the figures it leaves published (and the catalogue still has) were."""
    rendered = {fig.id for fig in plans if fig.action == "render"}
    speaking = tuple(
        f"{fig.chapter}/{fig.id}"
        for fig in plans
        if fig.action == "render" and any(planned.cue.recording is None for planned in fig.cues)
    )
    gone = frozenset(fig_id for fig_id in man.figures if fig_id not in known)
    others = {v: ids for v, ids in published_voices(man, frozenset(rendered) | gone).items() if v != engine.name}
    return VoiceMix(engine.name, speaking, frozen(others)) if speaking and others else None


@dataclass(frozen=True)
class Plan:
    quality: str
    out_dir: Path
    voice: Engine  # who speaks the cues that are made now
    voice_line: str  # the voice, as the build's first line names it
    figures: tuple[FigurePlan, ...]  # the figures asked for, in page order
    chapters: tuple[
        ChapterList, ...
    ]  # every chapter of the course: the manifest's list, the chapter videos' and the site's
    chapter_plans: tuple[ChapterPlan, ...]
    site_title: str
    gone_figures: tuple[str, ...]  # published figures the catalogue no longer has: their files are removed
    gone_chapters: tuple[str, ...]  # chapter videos the catalogue no longer has
    render_rate: float  # median render seconds per second of video of the published figures (1 when none)
    voice_mix: VoiceMix | None  # the figures it speaks would join others published in another voice

    @property
    def to_render(self) -> tuple[FigurePlan, ...]:
        return tuple(fig for fig in self.figures if fig.action == "render")

    @property
    def to_republish(self) -> tuple[FigurePlan, ...]:
        return tuple(fig for fig in self.figures if fig.action == "republish")

    def lines(self) -> list[str]:
        """The plan as the build prints it: every figure, every chapter video, what is pruned, the site, and a mix of
        voices if it would make one."""
        said = [f"plan for {QUALITIES[self.quality]} in {_shown(self.out_dir)}; {self.voice_line}"]
        said += [fig.line(self.quality) for fig in self.figures]
        said += [chapter.line for chapter in self.chapter_plans]
        said += [f"  {fig_id}: no longer in the catalogue, its files will be removed" for fig_id in self.gone_figures]
        said += [
            f"  chapter {ch_id}: no longer in the catalogue, its video will be removed" for ch_id in self.gone_chapters
        ]
        said.append(f"  site: written again from the manifest ({_shown(self.out_dir / 'site')})")
        if self.voice_mix is not None:
            said.append(self.voice_mix.line())
        return said


# -- what a figure's render key is made of --------------------------------------------------------------------


def _shown(path: Path) -> str:
    """A folder as the plan names it: relative to where the command runs when it lies under it."""
    return os.path.relpath(path) if path.is_relative_to(Path.cwd()) else str(path)


# -- deciding --------------------------------------------------------------------------------------------------


def _site_notes(attachments: tuple[Attached, ...]) -> dict:
    return {a.suffix: {"label": a.label, "how_to": a.how_to} for a in attachments}


def _notes_changed(old: PublishedFigure, facts: dict, checks: list[dict], source: str, attached: tuple) -> list[str]:
    """What the site says beside the clip that differs from what `old` was published with."""
    changed = [
        what
        for what, before, now in (
            ("how its numbers are computed", old.facts, facts),
            ("its checks", old.checks, checks),
            ("its source line", old.source, source),
            ("its attachments' labels", old.attachments, _site_notes(attached)),
        )
        if before != now
    ]
    return [f"what the site says beside it changed: {', '.join(changed)}"] if changed else []


def _decide(old: PublishedFigure | None, key: RenderKey, out_dir: Path, notes: list[str]) -> tuple[Action, list[str]]:
    if old is not None and old.key == key.digest:
        if not old.present(out_dir):
            return "render", ["files missing"]
        return ("republish", notes) if notes else ("keep", [])
    return "render", render_key.reasons(old.key_parts if old else None, key)


def _figure_plan(
    fig: Figure, quality: str, out_dir: Path, man: Manifest, engine: Engine, lint_frame_seconds: float | None
) -> FigurePlan:
    planned = tuple(PlannedCue(cue, audio.cache_key(cue, engine)) for cue in cues.figure_cues(fig.id))
    attachments = render_key.attached(fig)
    material = render_key.material(fig, [(c.cue, c.audio_key) for c in planned], attachments)
    key = render_key.render_key(material, quality)
    facts = {name: fact.as_json() for name, fact in catalogue.facts(fig.id).items()}
    checks = [check_cells(check) for check in catalogue.checks(fig.id)]
    old = man.figures.get(fig.id)
    notes = _notes_changed(old, facts, checks, fig.source, attachments) if old is not None else []
    action, why = _decide(old, key, out_dir, notes)
    return FigurePlan(
        render_key.scene_ref(fig),
        fig.title,
        fig.source,
        frozen(facts),
        frozen(checks),
        planned,
        attachments,
        key,
        action,
        tuple(why),
        old.render_seconds if old is not None else 0.0,
        old.duration if old is not None else None,
        lint_frame_seconds,
    )


def course_chapters() -> tuple[ChapterList, ...]:
    """Every chapter of the course in play order, as the manifest lists them."""
    return tuple(
        ChapterList(ch.id, ch.title, [f.id for f in ch.figures], ch.topic.label) for ch in catalogue.chapters()
    )


def _chapter_plan(chapter: ChapterList, man: Manifest, out_dir: Path, rendered: set[str]) -> ChapterPlan:
    """What the chapter video will need once this build's figures are published (if they all are)."""
    where = f"  chapter {chapter.id}"
    ids = chapter.figures
    missing = [i for i in ids if i not in rendered and not (i in man.figures and man.figures[i].present(out_dir))]
    if missing:
        return ChapterPlan(
            chapter,
            f"{where}: no chapter video, {len(ids) - len(missing)} of {len(ids)} figures at {man.quality} "
            f"after this build (missing: {', '.join(missing)})",
        )
    old = man.chapter_videos.get(chapter.id)
    if again := [i for i in ids if i in rendered]:
        return ChapterPlan(chapter, f"{where}: joined again ({', '.join(again)} rendered)")
    if old is None or not old.present(out_dir):
        return ChapterPlan(chapter, f"{where}: joined (no chapter video yet)")
    if old.figures != ids or old.title != chapter.title:
        return ChapterPlan(chapter, f"{where}: joined again (its figures or its title changed)")
    return ChapterPlan(chapter, f"{where}: unchanged")


def _render_rate(man: Manifest) -> float:
    rates = sorted(
        entry.render_seconds / entry.duration
        for entry in man.figures.values()
        if entry.render_seconds > 0 and entry.duration > 0
    )
    return rates[len(rates) // 2] if rates else 1.0


def make(
    figures: list[Figure],
    quality: str,
    out_dir: Path,
    man: Manifest,
    engine: Engine,
    voice_line: str,
    lint_frame_seconds: Mapping[str, float] = MappingProxyType({}),
) -> Plan:
    """The plan for building `figures` at `quality` into `out_dir`, whose manifest `man` the build holds, with
    `engine` speaking what is not yet made; `lint_frame_seconds` is what the layout lint measured of figures
    never rendered (tools/publish/checks/stills.py), to queue them by."""
    plans = tuple(_figure_plan(fig, quality, out_dir, man, engine, lint_frame_seconds.get(fig.id)) for fig in figures)
    chapters = course_chapters()
    rendered = {fig.id for fig in plans if fig.action == "render"}
    known = {fig_id for ch in chapters for fig_id in ch.figures}
    touched = {fig.chapter for fig in figures}  # the chapters of the figures asked for
    return Plan(
        quality,
        out_dir,
        engine,
        voice_line,
        plans,
        chapters,
        tuple(_chapter_plan(ch, man, out_dir, rendered) for ch in chapters if ch.id in touched),
        catalogue.course_title(),
        tuple(fig_id for fig_id in man.figures if fig_id not in known),
        tuple(ch_id for ch_id in man.chapter_videos if ch_id not in {ch.id for ch in chapters}),
        _render_rate(man),
        _voice_mix(plans, man, known, engine),
    )


def draft(fig: Figure, engine: Engine) -> FigurePlan:
    """`fig` to be rendered at -q l for lecture preview's draft: rendered whatever was published, not keyed."""
    planned = tuple(PlannedCue(cue, audio.cache_key(cue, engine)) for cue in cues.figure_cues(fig.id))
    facts = {name: fact.as_json() for name, fact in catalogue.facts(fig.id).items()}
    return FigurePlan(
        render_key.scene_ref(fig),
        fig.title,
        fig.source,
        frozen(facts),
        (),
        planned,
        render_key.attached(fig),
        None,
        "render",
        ("draft",),
        0.0,
        None,
        None,
    )
