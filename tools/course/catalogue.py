"""The course's chapters and figures, in page order, and their checked facts.

Each chapter module in ``tools/chapters`` makes one :class:`Chapter` and
registers a builder per figure with ``@CHAPTER.figure(id, title, source)``.
docs/figures.md lists every figure by id (``lecture readme`` writes it from here); the scene class of a
figure is its id in CamelCase (``gates_circuit`` -> ``GatesCircuit``).

A builder may show another figure's number: ``cite("activation_mountain.keep_all")``
returns that figure's checked fact, the same object its own figure and the
narration's ``{figure.fact}`` get, so it is computed and checked once and a
change to it shows up everywhere it is cited.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tools import settings
from tools.course.facts import Check, Checked, Fact


@dataclass(frozen=True)
class Topic:
    """A topic of the course (专题): its number, its title, its chapters in play order."""

    number: str
    title: str
    chapters: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{self.number}　{self.title}"


# Every chapter belongs to one topic; a topic's chapters play one after another.
# A topic names its chapters, including those still being written (skipped until their module exists).
TOPICS = (
    Topic("专题四", "训练一步的账", ("backprop", "recompute", "optimizer", "adaptive", "ledger", "stability")),
    Topic("专题五", "切开模型：流水线与专家并行", ("pipeline", "moe")),
    Topic("专题六", "少用几位：FP8 与 FP4", ("fp8",)),
    Topic("专题七", "推理服务：预填充与解码分开跑", ("serving",)),
    Topic("专题八", "μP：模型变宽，学习率不用重调", ("mup",)),
)

# Chapter modules in the order the course plays them: the topics' chapters that have a module in
# tools/chapters (a chapter a topic names may still be being written).
CHAPTER_ORDER = tuple(ch for topic in TOPICS for ch in topic.chapters if (settings.CHAPTERS_DIR / f"{ch}.py").exists())


def course_title() -> str:
    """The course site's title, from the topics: 专题四至专题八 (one topic: its own label)."""
    return TOPICS[0].label if len(TOPICS) == 1 else f"{TOPICS[0].number}至{TOPICS[-1].number}"


def topic_of(chapter_id: str) -> Topic:
    for topic in TOPICS:
        if chapter_id in topic.chapters:
            return topic
    raise UnknownFigure(f"chapter '{chapter_id}' belongs to no topic: add it to TOPICS in tools/course/catalogue.py")


class UnknownFigure(KeyError):
    def __str__(self) -> str:
        return self.args[0]


class CitationCycle(Exception):
    """Figures whose builders cite each other in a circle: neither can be computed first."""


@dataclass(frozen=True)
class Attachment:
    """A file published beside a figure's clip, e.g. its simulated timeline as a trace.

    It goes out as ``<figure>.<suffix>``, is recorded in the manifest with its
    sha256, and the embed page links it with `label` and the one line `how_to`.
    """

    suffix: str
    label: str
    how_to: str
    make: Callable[[], str] = field(repr=False)


@dataclass(frozen=True)
class Figure:
    id: str
    title: str
    chapter: str
    source: str
    build: Callable[[Check], dict[str, Fact]] = field(repr=False)
    attachments: tuple[Attachment, ...] = ()

    @property
    def scene_class(self) -> str:
        return scene_class_of(self.id)


def scene_class_of(figure_id: str) -> str:
    """A figure's scene class: its id in CamelCase (``saddle_3d_rotating`` -> ``Saddle3dRotating``)."""
    return "".join(part.capitalize() for part in figure_id.split("_"))


@dataclass
class Chapter:
    id: str
    title: str
    summary: str = ""  # what its figures show, in one line: the README's chapter table (``lecture readme``)
    figures: list[Figure] = field(default_factory=list)

    @property
    def scene_file(self) -> Path:
        return settings.SCENES_DIR / f"{self.id}.py"

    @property
    def topic(self) -> Topic:
        return topic_of(self.id)

    def figure(self, figure_id: str, title: str, source: str = "", attachments: tuple[Attachment, ...] = ()):
        """Register the decorated function as the builder of one figure's facts (and its attached files)."""

        def register(build: Callable[[Check], dict[str, Fact]]):
            self.figures.append(Figure(figure_id, title, self.id, source, build, attachments))
            return build

        return register


class FigureFacts(Mapping):
    """A figure's facts by name; a missing name is an error naming the figure."""

    def __init__(self, figure: str, facts: dict[str, Fact]):
        self.figure, self._facts = figure, facts

    def __getitem__(self, name: str) -> Fact:
        try:
            return self._facts[name]
        except KeyError:
            known = ", ".join(sorted(self._facts)) or "none"
            raise UnknownFigure(f"figure '{self.figure}' has no fact '{name}' (it has: {known})") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts)

    def __len__(self) -> int:
        return len(self._facts)


@cache
def chapters() -> tuple[Chapter, ...]:
    """Every chapter in play order; refuses a chapter module no topic names (it would never play)."""
    if strays := sorted(
        p.stem for p in settings.CHAPTERS_DIR.glob("*.py") if p.stem != "__init__" and p.stem not in CHAPTER_ORDER
    ):
        raise UnknownFigure(
            f"{settings.CHAPTERS_DIR}: {', '.join(strays)} belong{'s' * (len(strays) == 1)} to no "
            "topic: add each to a topic's chapters in TOPICS in tools/course/catalogue.py"
        )
    return tuple(importlib.import_module(f"tools.chapters.{name}").CHAPTER for name in CHAPTER_ORDER)


def import_builders() -> None:
    """Import every chapter's builder module, best effort, for a process that forks runs of figures: each fork
    finds them imported. A module that fails here is imported again in the fork, which says why. chapters()
    is left uncomputed (it is cached), so a fork still reads the topics."""
    for name in CHAPTER_ORDER:
        with contextlib.suppress(Exception):  # a chapter someone is writing may not import yet
            importlib.import_module(f"tools.chapters.{name}")


def chapter(chapter_id: str) -> Chapter:
    for ch in chapters():
        if ch.id == chapter_id:
            return ch
    raise UnknownFigure(f"no chapter '{chapter_id}' (chapters: {', '.join(CHAPTER_ORDER)})")


def figures() -> list[Figure]:
    return [fig for ch in chapters() for fig in ch.figures]


def figure(figure_id: str) -> Figure:
    for fig in figures():
        if fig.id == figure_id:
            return fig
    raise UnknownFigure(f"no figure '{figure_id}' in the catalogue")


# Figures whose builders are running, innermost last: a builder citing one of them is a cycle.
_building: list[str] = []


@cache
def facts(figure_id: str) -> FigureFacts:
    """Compute and check one figure's facts; raises FactError on a mismatch."""
    fig = figure(figure_id)
    if figure_id in _building:
        chain = " -> ".join([*_building[_building.index(figure_id) :], figure_id])
        raise CitationCycle(f"figures cite each other in a circle: {chain}")
    _building.append(figure_id)
    check = Check(figure_id)
    try:
        built = FigureFacts(figure_id, fig.build(check))
    finally:
        _building.pop()
    _checked[figure_id] = tuple(check.checked)
    return built


# The checks each figure's builder passed, by figure id, kept as its facts are computed (see `checks`).
_checked: dict[str, tuple[Checked, ...]] = {}


def checks(figure_id: str) -> tuple[Checked, ...]:
    """The checks that guard one figure's facts, in the order its builder made them (docs/figures.md)."""
    facts(figure_id)
    return _checked[figure_id]


def cite(ref: str) -> Fact:
    """Another figure's checked fact by 'figure_id.fact_name', as {figure.fact} cites it in narration."""
    figure_id, dot, name = ref.partition(".")
    if not dot or not figure_id or not name:
        raise UnknownFigure(f"cite({ref!r}): write 'figure_id.fact_name'")
    return facts(figure_id)[name]


def select(only: str | None) -> list[Figure]:
    """Figures named by 'chapter' or 'chapter/figure_id' (all when None)."""
    if not only:
        return figures()
    chapter_id, slash, figure_id = only.partition("/")
    if slash and not figure_id:
        raise UnknownFigure(
            f"'{only}' names no figure after the '/': write '{chapter_id}' for the whole chapter "
            f"or '{chapter_id}/<figure_id>' for one figure"
        )
    chosen = chapter(chapter_id).figures
    if figure_id:
        chosen = [fig for fig in chosen if fig.id == figure_id]
        if not chosen:
            raise UnknownFigure(f"no figure '{figure_id}' in chapter '{chapter_id}'")
    return list(chosen)
