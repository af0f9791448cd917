"""The generated docs (``lecture readme``): the chapter table, the worked example and docs/figures.md.

Each is written only from its source. The chapter table (README.md) comes from the catalogue: a chapter's
title and ``summary``, or until a summary is written its figures' titles; its topic from ``TOPICS``; the
counts from the figures registered. The worked example (CONTRIBUTING.md) comes from the templates
``lecture new`` fills in, so it is exactly what the scaffold writes and what its tests check. Both sit
between two marker lines in their file. docs/figures.md is written whole from the catalogue and the
narration (tools/author/figures.py). ``lecture new`` rewrites them all, and ``lecture readme --check``, which
the tests run, fails when any no longer matches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools import settings
from tools.author import figures, scaffold
from tools.course import catalogue

README = Path("README.md")  # the files, relative to the repository root
CONTRIBUTING = Path("CONTRIBUTING.md")
EXAMPLE = ("optimizer", "demo_figure", "示例")  # the worked example: lecture new optimizer/demo_figure "示例"


class ReadmeError(Exception):
    """A file lacks the markers a generated part goes between, or (``--check``) a part is out of date."""


@dataclass(frozen=True)
class Block:
    name: str
    file: Path  # relative to the repository root
    begin: str
    end: str
    write: Callable[[], list[str]]  # the lines between the markers

    def text(self) -> str:
        return "\n".join([self.begin, *self.write(), self.end])


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _chapter_table() -> list[str]:
    chapters = catalogue.chapters()
    total = sum(len(ch.figures) for ch in chapters)
    lines = [
        f"Chapters, in the order the course plays them ({total} figures), under their topics",
        "(`TOPICS` in `tools/course/catalogue.py`; the gallery heads each topic):",
        "",
        "| topic | chapter | file | figures | what they show |",
        "| --- | --- | --- | ---: | --- |",
    ]
    shown_topic = None
    for ch in chapters:
        topic = ch.topic.label if ch.topic != shown_topic else ""
        shown_topic = ch.topic
        summary = ch.summary or "、".join(fig.title for fig in ch.figures) or "(no figures yet)"
        lines.append(f"| {topic} | {_cell(ch.title)} | `scenes/{ch.id}.py` | {len(ch.figures)} | {_cell(summary)} |")
    return lines


def _worked_example() -> list[str]:
    """The three parts `lecture new` appends, each under the file it goes to, its imports as the file gets them."""
    chapter_id, figure_id, title = EXAMPLE
    fields = scaffold.figure_fields(chapter_id, figure_id, title)
    files = (f"tools/chapters/{chapter_id}.py", f"narration/{chapter_id}.toml", f"scenes/{chapter_id}.py")
    lines = []
    for path, name in zip(files, scaffold.FIGURE_PARTS):
        piece = scaffold.part(name)
        imports = [f"from {module} import {', '.join(names)}" for module, names in piece.needs.items()]
        body = piece.text.substitute(fields).strip("\n").splitlines()
        if imports:
            body = [*imports, "", "...", "", "", *body]  # as ruff format sets them
        lines += [f"`{path}`:", "", "```" + ("toml" if path.endswith(".toml") else "python"), *body, "```", ""]
    return lines[:-1]


BLOCKS = (
    Block(
        "chapter table",
        README,
        "<!-- catalogue: written by `lecture readme` from tools/course/catalogue.py; edit there, not here -->",
        "<!-- /catalogue -->",
        _chapter_table,
    ),
    Block(
        "worked example",
        CONTRIBUTING,
        "<!-- example: written by `lecture readme` from tools/author/templates; edit there, not here -->",
        "<!-- /example -->",
        _worked_example,
    ),
)


# Written whole: the file and what it holds.
PAGES = {"figures page": (figures.PATH, figures.page)}


def _split(text: str, path: Path, block: Block) -> tuple[str, str, str]:
    start, end = text.find(block.begin), text.find(block.end)
    if start < 0 or end < start:
        raise ReadmeError(
            f"{path}: no generated {block.name}; put the lines\n{block.begin}\n{block.end}\n"
            f"where the {block.name} belongs, then run lecture readme"
        )
    return text[:start], text[start : end + len(block.end)], text[end + len(block.end) :]


def _written(root: Path) -> dict[Path, tuple[str, str, list[str]]]:
    """Every generated file under `root`: its text now, its text as generated, the names of its stale parts."""
    files: dict[Path, tuple[str, str, list[str]]] = {}
    for block in BLOCKS:
        path = root / block.file
        old, new, stale = files.get(path) or (path.read_text(encoding="utf-8"),) * 2 + ([],)
        before, now, after = _split(new, path, block)
        if now != block.text():
            stale = [*stale, f"the {block.name} in {block.file}"]
        files[path] = (old, before + block.text() + after, stale)
    for name, (file, write) in PAGES.items():
        path = root / file
        old, new = (path.read_text(encoding="utf-8") if path.exists() else ""), write()
        files[path] = (old, new, [f"the {name} {file}"] if old != new else [])
    return files


def stale(root: Path | None = None) -> list[str]:
    """The generated parts out of date under `root` (the repository by default), e.g. 'the chapter table in
    README.md'."""
    return [name for _, _, names in _written(root or settings.ROOT).values() for name in names]


def rewrite(root: Path | None = None) -> list[str]:
    """Write every generated part under `root` (the repository by default); the names of the files rewritten."""
    root = root or settings.ROOT
    changed = []
    for path, (old, new, _) in _written(root).items():
        if old != new:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(new, encoding="utf-8")
            changed.append(str(path.relative_to(root)))
    return changed
