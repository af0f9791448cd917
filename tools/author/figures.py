"""docs/figures.md (``lecture readme``): every figure of the catalogue with its facts, its checks and its cues.

Per figure: its id (the anchor comments link to, ``docs/figures.md#<figure_id>``), title, chapter, source line
(出处), builder and scene; every fact with its screen text, reading and value; every check its builder passed
(``catalogue.checks``: what was compared, by which route, within which tolerance); its cues as written in the
narration file.

The page must read the same on every machine (``lecture readme --check`` runs in the tests). A fact is given by
its screen text, which tests/test_same_numbers.py keeps machine-independent; a float that only a check holds is
printed to the most significant digits (at most six) that a relative 10⁻⁹ either way cannot change, and a
value a check compares with zero is given as its bound, never as the noise itself.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from tools import settings
from tools.course import catalogue
from tools.course.facts import Checked, Fact

PATH = Path("docs") / "figures.md"  # relative to the repository root
NOISE = 1e-9  # the relative change a float's printed digits must survive
TIGHT = 1e-6  # an absolute tolerance this small is there for float noise around zero
MAX_ITEMS = 8  # a longer collection is given by its size
MAX_CHARS = 160  # a longer value is cut, saying so
_LONG_FLOAT = re.compile(r"-?\d+\.\d{7,}(?:e[-+]?\d+)?")


def _float(x: float) -> str:
    """The most digits (at most six significant) that a relative `NOISE` either way leaves as they are."""
    if x == 0:
        return "0"  # and never "-0.0", whose sign is noise
    if not math.isfinite(x):
        return str(x).replace("inf", "∞")
    for digits in range(6, 0, -1):
        text = f"{x:.{digits}g}"
        if f"{x * (1 + NOISE):.{digits}g}" == text == f"{x * (1 - NOISE):.{digits}g}":
            return text
    return f"{x:.0e}"


def _cell(text: str) -> str:
    """A string as a table cell, as it is: one line, bars escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _text(text: str) -> str:
    """A string a check wrote, as a table cell: a long float repr in it (float noise) shortened."""
    return _cell(_LONG_FLOAT.sub(lambda m: _float(float(m.group())), str(text)))


def shown(value: Any) -> str:
    """A value as the page prints it, the same on every machine (see the module's docstring)."""
    if isinstance(value, Fact):
        return _cell(value.text) or "(drawn, not shown)"
    if isinstance(value, bool) or value is None:
        return str(value)
    if hasattr(value, "tolist") and getattr(value, "ndim", 1) == 0:  # a numpy scalar
        value = value.item()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Fraction):
        return str(value) if value.denominator < 10**6 else _float(float(value))
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _text(value)
    if hasattr(value, "shape"):  # a numpy array
        return f"array of shape {tuple(value.shape)}" if value.size > MAX_ITEMS else shown(value.tolist())
    if isinstance(value, Mapping):
        items = sorted(value.items(), key=lambda kv: str(kv[0]))
        if len(items) > MAX_ITEMS:
            return f"{len(items)} entries"
        return _cut("{" + ", ".join(f"{shown(k)}: {shown(v)}" for k, v in items) + "}")
    if isinstance(value, Iterable):
        items = list(value)
        if isinstance(value, set | frozenset):
            items = sorted(items, key=str)
        if len(items) > MAX_ITEMS:
            return f"{len(items)} values"
        return _cut("(" + ", ".join(shown(item) for item in items) + ")")
    return _text(type(value).__name__)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def _tolerance(check: Checked) -> str:
    if check.kind == "close":
        parts = [f"rel {check.rel:g}" if check.rel else "", f"abs {check.abs:g}" if check.abs else ""]
        return ", ".join(p for p in parts if p) or "exact"
    if check.kind == "residual":
        return f"below {check.abs:g}"
    return "exact" if check.kind == "equal" else ""


def _near_zero(check: Checked, value: Any) -> bool:
    """A value a check takes to be zero up to a tight absolute tolerance: float noise, given as that bound."""
    try:
        return 0 < check.abs <= TIGHT and abs(float(value)) <= check.abs
    except (TypeError, ValueError):
        return False


def _check_row(check: Checked) -> str:
    name = _text(check.name)
    if check.kind == "that":
        return f"| {name} | holds | {shown(check.expected)} | | |"
    if check.kind == "residual":
        return f"| {name} | residual | | 0 | {_tolerance(check)} |"
    if check.kind == "equal":
        return f"| {name} | equal | {shown(check.computed)} | {shown(check.expected)} | exact |"
    computed = f"≈ 0 (below {check.abs:g})" if _near_zero(check, check.computed) else shown(check.computed)
    expected = f"≈ 0 (below {check.abs:g})" if _near_zero(check, check.expected) else shown(check.expected)
    return f"| {name} | close | {computed} | {expected} | {_tolerance(check)} |"


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
        "- source (出处): " + (" / ".join(_cell(line) for line in fig.source.splitlines()) or "(none yet)"),
    ]
    if fig.attachments:
        lines.append(
            "- attachments: " + ", ".join(f"`{fig.id}.{a.suffix}` ({_cell(a.label)})" for a in fig.attachments)
        )
    facts = catalogue.facts(fig.id)
    lines += ["", "| fact | on screen | read as | value |", "| --- | --- | --- | --- |"]
    for name, fact in facts.items():
        value = "(drawn, not shown)" if not (fact.text or fact.spoken) else shown(fact.value)
        lines.append(f"| `{name}` | {_cell(fact.text)} | {_cell(fact.spoken)} | {value} |")
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
        *(f"| `{cue_id}` | {_cell(text)} |" for cue_id, text in cues),
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
