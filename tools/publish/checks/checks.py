"""Every check before rendering, as one list of named steps: ``lecture check`` and ``lecture build`` run it.

A step is given the same :class:`Checking` (the figures, how many manim processes the layout lint may
run, where to say things, what the steps before it counted) and either passes, says a warning, or
raises the refusal that names the file and the way out. The quick steps come first, so a typo is
refused in a second; the layout lint runs manim, so it comes last, and the count of the facts that have
boxes on screen reads what its run recorded (``--no-layout`` skips both). A new check is a function here
and a line in :data:`STEPS`; what it knows of a figure stays in its own module (the attachments' names in
clip, the glyphs in glyphs, the rules in layout, the lengths in pacing, the classes of facts in fact_boxes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.publish.checks import fact_boxes, glyphs, layout, stills
from tools.publish.keys import scene_source
from tools.publish.publishing import clip
from tools.publish.rendering.render import BuildError
from tools.voice import cues, pacing
from tools.voice.cues import NarrationError

Say = Callable[[str], None]
LAYOUT = "layout"  # the step that runs manim
FACT_BOXES = "fact boxes"  # reads what the layout step's run recorded


@dataclass
class Checking:
    """What every step is given."""

    figures: list[Figure]
    jobs: int = 2  # manim processes the layout lint runs at once
    say: Say = print
    counted: dict[str, int] = field(default_factory=dict)  # e.g. {"facts": 12}, for the summary line


def _facts(checking: Checking) -> None:
    """Compute every fact; a builder's Check raises FactError on one that disagrees with its claim."""
    checking.counted["facts"] = sum(len(catalogue.facts(fig.id)) for fig in checking.figures)


def _cues(checking: Checking) -> None:
    """Read every cue (placeholders filled with the facts); a malformed one raises NarrationError."""
    checking.counted["cues"] = sum(len(cues.figure_cues(fig.id)) for fig in checking.figures)


def _scene_classes(checking: Checking) -> None:
    for fig in checking.figures:
        scene_file = catalogue.chapter(fig.chapter).scene_file
        if fig.scene_class not in scene_source.scene_classes(scene_file):
            raise BuildError(f"{scene_file}: no scene class {fig.scene_class} for figure '{fig.id}'")


def _attachments(checking: Checking) -> None:
    """Each attachment makes a non-empty file under a name of its own."""
    for fig in checking.figures:
        seen = set()
        for attached in fig.attachments:
            if attached.suffix in clip.CLIP_FILES or attached.suffix in seen or "/" in attached.suffix:
                raise BuildError(
                    f"figure '{fig.id}': attachment '{attached.suffix}' would collide with another "
                    f"of its files ({', '.join(sorted(clip.CLIP_FILES | seen))})"
                )
            seen.add(attached.suffix)
            if not attached.make().strip():
                raise BuildError(f"figure '{fig.id}': attachment '{attached.suffix}' is empty")


def _readings(checking: Checking) -> None:
    """Every polyphone the voice would read has a settled reading."""
    if undecided := cues.undecided_readings([fig.id for fig in checking.figures]):
        raise NarrationError(
            f"{len(undecided)} polyphone{'s' if len(undecided) > 1 else ''} with no settled "
            "reading: add the phrase to [pinyin] in narration/lexicon.toml, fix it inline "
            "([重|chong2]) or say it in other words\n" + "\n".join(undecided)
        )


def _cue_ids(checking: Checking) -> None:
    """The cues a scene narrates and the cues its narration file has must be the same, both ways."""
    for fig in checking.figures:
        scene_file = catalogue.chapter(fig.chapter).scene_file
        narrated = scene_source.narrated_cues(scene_file, fig.scene_class)
        written = [c.id for c in cues.figure_cues(fig.id)]
        if unknown := [cue for cue in narrated.ids if cue not in written]:
            raise BuildError(
                f"{scene_file}: {fig.scene_class} narrates cue{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(unknown)}, which narration/{fig.chapter}.toml does not have for "
                f"'{fig.id}' (it has: {', '.join(written)})"
            )
        unplayed = [cue for cue in written if cue not in narrated.ids]
        if unplayed and not narrated.dynamic:
            raise BuildError(
                f"narration/{fig.chapter}.toml: cue{'s' if len(unplayed) > 1 else ''} "
                f"{', '.join(unplayed)} of '{fig.id}' {'are' if len(unplayed) > 1 else 'is'} never "
                f"narrated by {fig.scene_class} in {scene_file}"
            )


def _fonts(checking: Checking) -> None:
    glyphs.check(checking.figures)


def _summary(checking: Checking) -> None:
    """Say that the quick steps passed, before the slower ones take their time."""
    counted = checking.counted
    checking.say(f"ok: {len(checking.figures)} figures, {counted['facts']} facts, {counted['cues']} cues")


def _pacing(checking: Checking) -> None:
    """Warn (not refuse) about a figure whose narration makes it too short or too long."""
    for line in pacing.warnings(checking.figures):
        checking.say(line)


def _layout(checking: Checking) -> None:
    layout.check(checking.figures, checking.jobs, checking.say)


def _fact_boxes(checking: Checking) -> None:
    """Say how many shown facts have boxes on screen, per figure (the layout lint's run recorded them)."""
    fact_boxes.check(checking.figures, checking.jobs, checking.say)


STEPS: dict[str, Callable[[Checking], None]] = {
    "facts": _facts,
    "cues": _cues,
    "scene classes": _scene_classes,
    "attachments": _attachments,
    "readings": _readings,
    "cue ids": _cue_ids,
    "fonts": _fonts,
    "summary": _summary,
    "pacing": _pacing,
    LAYOUT: _layout,
    FACT_BOXES: _fact_boxes,
}
RUN_MANIM = (LAYOUT, FACT_BOXES)  # skipped with the layout lint


def run(
    figures: list[Figure], say: Say = print, jobs: int = 2, layout: bool = True, only: str | None = None
) -> Checking:
    """Run STEPS in order over the figures: all of them, all but the layout lint (`layout` False), or the
    one step named `only`. Returns what they counted."""
    checking = Checking(figures, jobs, say)
    if layout and only in (None, *RUN_MANIM):
        stills.warm_up()  # the render server imports manim while the quick steps run
    for name, step in STEPS.items():
        if (only is None or name == only) and (layout or name not in RUN_MANIM):
            step(checking)
    return checking
