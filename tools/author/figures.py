"""docs/figures.md (``lecture readme``): every figure of the catalogue with its facts, its checks and its cues.

Per figure: its id (the anchor comments link to, ``docs/figures.md#<figure_id>``), title, chapter, source line
(出处), builder and scene; every fact with its screen text, reading and value; every check its builder passed
(``catalogue.checks``: what was compared, by which route, within which tolerance); its cues as written in the
narration file.

The page must read the same on every machine (``lecture readme --check`` runs in the tests): values are printed
as tools/course/shown.py prints them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from tools import settings
from tools.course import catalogue
from tools.course.facts import Checked
from tools.course.shown import cell, check_cells, shown

PATH = Path("docs") / "figures.md"  # relative to the repository root


def _check_row(check: Checked) -> str:
    return "|" + "|".join(f" {cell} " if cell else " " for cell in check_cells(check).values()) + "|"


def _cues(chapter_id: str) -> dict[str, list[tuple[str, str]]]:
    """The narration file's cues by figure, (id, text) as written, placeholders and inline readings included."""
    path = settings.NARRATION_DIR / f"{chapter_id}.toml"
    if not path.exists():
        return {}
    table = tomllib.loads(path.read_text(encoding="utf-8"))
    return {fig: [(str(c.get("id", "")), str(c.get("text", ""))) for c in cues] for fig, cues in table.items()}


def _link(path: str) -> str:
    """A link from docs/ to a file of the repository."""
    return f"[{path}](../{path})"


def _figure(fig: catalogue.Figure, cues: list[tuple[str, str]]) -> list[str]:
    chapter = fig.chapter
    lines = [
        f'<a id="{fig.id}"></a>',
        "",
        f"### `{fig.id}`: {fig.title}",
        "",
        f"- chapter: [{chapter}](#{chapter}); builder `{fig.build.__name__}` in "
        f"{_link(f'tools/chapters/{chapter}.py')}, "
        f"scene `{fig.scene_class}` in {_link(f'scenes/{chapter}.py')}, cues in {_link(f'narration/{chapter}.toml')}",
        "- source (出处): " + (" / ".join(cell(line) for line in fig.source.splitlines()) or "(none yet)"),
    ]
    if fig.attachments:
        lines.append("- attachments: " + ", ".join(f"`{fig.id}.{a.suffix}` ({cell(a.label)})" for a in fig.attachments))
    facts = catalogue.facts(fig.id)
    lines += ["", "| fact | on screen | read as | value | how (怎么算) |", "| --- | --- | --- | --- | --- |"]
    for name, fact in facts.items():
        value = "(drawn, not shown)" if not (fact.text or fact.spoken) else shown(fact.value)
        how = " ".join(part for part in (cell(fact.how), "(示意)" * fact.schematic, cell(fact.source)) if part)
        lines.append(f"| `{name}` | {cell(fact.text)} | {cell(fact.spoken)} | {value} | {how} |")
    checks = catalogue.checks(fig.id)
    lines += [
        "",
        f"{len(checks)} checks, in the order the builder makes them:",
        "",
        "| check | kind | computed | expected (second route, page, or what holds) | tolerance |",
        "| --- | --- | --- | --- | --- |",
        *map(_check_row, checks),
        "",
        "| cue | text as written |",
        "| --- | --- |",
        *(f"| `{cue_id}` | {cell(text)} |" for cue_id, text in cues),
        "",
    ]
    return lines


def page() -> str:
    """docs/figures.md as `lecture readme` writes it."""
    chapters = catalogue.chapters()
    lines = [
        "<!-- written by `lecture readme` from the catalogue (tools/course/catalogue.py, tools/chapters/) and",
        "narration/; edit there, not here. `lecture readme --check` fails when this page is out of date. -->",
        "",
        "# The figures",
        "",
        f"Every figure of the course ({sum(len(ch.figures) for ch in chapters)}), in play order: the numbers it shows,",
        "the checks its builder passes before the first frame is drawn, and its cues. Code comments cite a figure",
        "as `docs/figures.md#<figure_id>`. A check's kind is `equal` (exactly), `close` (within the tolerance),",
        "`residual` (float noise below a bound, shown as that bound) or `holds` (a stated property). Values a",
        "machine's last digits could change are printed to the digits every machine agrees on.",
        "",
    ]
    for ch in chapters:
        links = ", ".join(f"[`{fig.id}`](#{fig.id})" for fig in ch.figures) or "(no figures yet)"
        lines.append(f"- [{ch.id}](#{ch.id}), {ch.title}: {links}")
    lines.append("")
    for ch in chapters:
        cues = _cues(ch.id)
        lines += [f'<a id="{ch.id}"></a>', "", f"## {ch.id}: {ch.title}", "", f"Topic: {ch.topic.label}.", ""]
        for fig in ch.figures:
            lines += _figure(fig, cues.get(fig.id, []))
    return "\n".join(lines).rstrip("\n") + "\n"
