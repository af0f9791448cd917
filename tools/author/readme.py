"""The README's generated parts (``lecture readme``): the chapter table with the figure count, and the worked example.

Each lives in README.md between its two marker lines and is written only
from its source: the table from the catalogue (a chapter's title and
``summary``, or until a summary is written its figures' titles; its topic
from ``TOPICS``; the counts from the figures registered), the worked example
from the templates ``lecture new`` fills in, so the example is exactly what
the scaffold writes and what its tests check. ``lecture new`` rewrites them,
and a test fails when README.md no longer matches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools import settings
from tools.author import scaffold
from tools.course import catalogue

README = settings.ROOT / "README.md"
EXAMPLE = ("optimizer", "demo_figure", "示例")  # the worked example: lecture new optimizer/demo_figure "示例"


class ReadmeError(Exception):
    """README.md lacks the markers a generated part goes between, or (``--check``) a part is out of date."""


@dataclass(frozen=True)
class Block:
    name: str
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
        "<!-- catalogue: written by `lecture readme` from tools/course/catalogue.py; edit there, not here -->",
        "<!-- /catalogue -->",
        _chapter_table,
    ),
    Block(
        "worked example",
        "<!-- example: written by `lecture readme` from tools/author/templates; edit there, not here -->",
        "<!-- /example -->",
        _worked_example,
    ),
)


def _split(text: str, path: Path, block: Block) -> tuple[str, str, str]:
    start, end = text.find(block.begin), text.find(block.end)
    if start < 0 or end < start:
        raise ReadmeError(
            f"{path}: no generated {block.name}; put the lines\n{block.begin}\n{block.end}\n"
            f"where the {block.name} belongs, then run lecture readme"
        )
    return text[:start], text[start : end + len(block.end)], text[end + len(block.end) :]


def stale(path: Path | None = None) -> list[str]:
    """The names of the generated parts README.md (or `path`) has out of date."""
    path = path or README
    text = path.read_text(encoding="utf-8")
    return [block.name for block in BLOCKS if _split(text, path, block)[1] != block.text()]


def rewrite(path: Path | None = None) -> bool:
    """Write every generated part into README.md (or `path`); whether anything changed."""
    path = path or README
    old = text = path.read_text(encoding="utf-8")
    for block in BLOCKS:
        before, _, after = _split(text, path, block)
        text = before + block.text() + after
    if text == old:
        return False
    path.write_text(text, encoding="utf-8")
    return True
