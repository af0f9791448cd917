"""The README's chapter table and figure count, written from the catalogue (``lecture readme``).

They live in README.md between BEGIN and END and nowhere else by hand: a
chapter's line comes from its registration (title, ``summary``; until a
summary is written, its figures' titles), its topic from ``TOPICS``, the
counts from the figures registered. ``lecture new`` rewrites the block, and
a test fails when it no longer matches the catalogue.
"""

from __future__ import annotations

from pathlib import Path

from tools import settings
from tools.course import catalogue

README = settings.ROOT / "README.md"
BEGIN = "<!-- catalogue: written by `lecture readme` from tools/course/catalogue.py; edit there, not here -->"
END = "<!-- /catalogue -->"


class ReadmeError(Exception):
    """README.md lacks the markers the generated block goes between."""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def block() -> str:
    """The generated part, markers included."""
    chapters = catalogue.chapters()
    total = sum(len(ch.figures) for ch in chapters)
    lines = [BEGIN,
             f"Chapters, in the order the course plays them ({total} figures), under their topics",
             "(`TOPICS` in `tools/course/catalogue.py`; the gallery heads each topic):",
             "",
             "| topic | chapter | file | figures | what they show |",
             "| --- | --- | --- | ---: | --- |"]
    shown_topic = None
    for ch in chapters:
        topic = ch.topic.label if ch.topic != shown_topic else ""
        shown_topic = ch.topic
        summary = ch.summary or "、".join(fig.title for fig in ch.figures) or "(no figures yet)"
        lines.append(f"| {topic} | {_cell(ch.title)} | `scenes/{ch.id}.py` | {len(ch.figures)} | {_cell(summary)} |")
    return "\n".join([*lines, END])


def _split(text: str, path: Path) -> tuple[str, str, str]:
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ReadmeError(f"{path}: no generated catalogue block; put the lines\n{BEGIN}\n{END}\n"
                          "where the chapter table belongs, then run lecture readme")
    return text[:start], text[start:end + len(END)], text[end + len(END):]


def current(path: Path | None = None) -> str:
    """The block as README.md (or `path`) has it now."""
    path = path or README
    return _split(path.read_text(encoding="utf-8"), path)[1]


def rewrite(path: Path | None = None) -> bool:
    """Write the block from the catalogue into README.md (or `path`); whether anything changed."""
    path = path or README
    before, old, after = _split(path.read_text(encoding="utf-8"), path)
    new = block()
    if new == old:
        return False
    path.write_text(before + new + after, encoding="utf-8")
    return True
