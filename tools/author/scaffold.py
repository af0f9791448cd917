"""``lecture new``: a working figure, or an empty chapter, from the templates in ``templates/``.

A figure gets its builder appended to ``tools/chapters/<chapter>.py``, two
cues to ``narration/<chapter>.toml``, its scene class (the id in CamelCase)
to ``scenes/<chapter>.py`` and a test file; a template's ``# needs:`` lines
name the imports it uses, which are merged into the file's own. What it
writes passes ``lecture check`` and builds as it stands, so an author starts
from a figure that works and changes one piece at a time.

A chapter gets its module, narration file and scene file; a chapter no
topic names yet joins the last topic in ``TOPICS`` (the play order follows
the topics).
"""

from __future__ import annotations

import ast
import json
import keyword
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from string import Template

from tools import settings
from tools.author import edits
from tools.course import catalogue

TEMPLATES = Path(__file__).parent / "templates"
TESTS_DIR = settings.ROOT / "tests"
CATALOGUE = settings.ROOT / "tools" / "course" / "catalogue.py"
SNAKE_CASE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
DEFAULT_SOURCE = "出处待补"  # shown by finish() until the author names the figure's source
CUES = ("start", "end")  # the template's cue ids are <figure_id>_<this>
# A figure's builder, cues and scene, appended to the chapter's three files (README's worked example shows them).
FIGURE_PARTS = ("figure_builder.py.tmpl", "figure_cues.toml.tmpl", "figure_scene.py.tmpl")


class ScaffoldError(Exception):
    """What `lecture new` was asked to make cannot be made; the message says why, naming the file."""


@dataclass(frozen=True)
class Part:
    """A template: the imports it needs (module -> names) and its text, with $placeholders."""

    needs: dict[str, list[str]]
    text: Template


def part(name: str) -> Part:
    needs: dict[str, list[str]] = {}
    lines = (TEMPLATES / name).read_text(encoding="utf-8").splitlines(keepends=True)
    while lines and lines[0].startswith("# needs: "):
        module, _, names = lines.pop(0).removeprefix("# needs: ").partition(":")
        needs[module.strip()] = [n.strip() for n in names.split(",")]
    return Part(needs, Template("".join(lines)))


def _literal(text: str) -> str:
    """A Python (and TOML) string literal for `text`."""
    return json.dumps(text, ensure_ascii=False)


def _check_id(kind: str, name: str) -> None:
    if not SNAKE_CASE.fullmatch(name) or keyword.iskeyword(name):
        raise ScaffoldError(
            f"{kind} id {name!r} is not snake_case: lower-case letters and digits, words joined "
            "by single underscores, starting with a letter (e.g. demo_figure)"
        )


def _check_title(title: str) -> None:
    """One line of text: not blank, and no control character, line or paragraph separator (str.isprintable)."""
    if not title.strip() or not title.isprintable():
        raise ScaffoldError(f'title {title!r}: give one line of Chinese, e.g. "示例"')


def _top_level_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _cue_ids(path: Path) -> set[str]:
    table = tomllib.loads(path.read_text(encoding="utf-8"))
    return {cue.get("id") for cues in table.values() if isinstance(cues, list) for cue in cues}


def _appended(path: Path, block: Part, fields: dict[str, str]) -> str:
    """The file's text with the block at its end and the block's imports merged in."""
    text = path.read_text(encoding="utf-8").rstrip("\n") + "\n" + block.text.substitute(fields)
    for module, names in block.needs.items():
        text = edits.merge(text, module, names)
    return text


def _write(files: dict[Path, str]) -> list[Path]:
    """Write what differs from what is there; returns the paths written."""
    changed = [path for path, text in files.items() if not path.exists() or path.read_text(encoding="utf-8") != text]
    for path in changed:
        path.write_text(files[path], encoding="utf-8")
    return changed


def figure_fields(chapter_id: str, figure_id: str, title: str, source: str = DEFAULT_SOURCE) -> dict[str, str]:
    """What a figure's templates are filled in with."""
    return {
        "chapter": chapter_id,
        "figure_id": figure_id,
        "scene_class": catalogue.scene_class_of(figure_id),
        "title_literal": _literal(title),
        "source_literal": _literal(source or DEFAULT_SOURCE),
    }


def new_figure(chapter_id: str, figure_id: str, title: str, source: str = DEFAULT_SOURCE) -> list[Path]:
    """Scaffold one figure at the end of its chapter; returns the files written. Refuses, before
    writing anything, an unknown chapter, an id that is not snake_case or is taken, an empty title."""
    _check_id("figure", figure_id)
    _check_title(title)
    try:
        chapter = catalogue.chapter(chapter_id)
    except catalogue.UnknownFigure as err:
        raise ScaffoldError(f'{err}; lecture new {chapter_id} "标题" makes a new chapter') from None
    if figure_id in {fig.id for fig in catalogue.figures()}:
        raise ScaffoldError(f"figure '{figure_id}' exists already, in chapter '{catalogue.figure(figure_id).chapter}'")
    module = settings.CHAPTERS_DIR / f"{chapter_id}.py"
    narration = settings.NARRATION_DIR / f"{chapter_id}.toml"
    scenes = chapter.scene_file
    test = TESTS_DIR / f"test_{chapter_id}_{figure_id}.py"
    scene_class = catalogue.scene_class_of(figure_id)
    cue_ids = {f"{figure_id}_{cue}" for cue in CUES}
    if figure_id in _top_level_names(module):
        raise ScaffoldError(f"{module}: the name '{figure_id}' is taken there; choose another figure id")
    if scene_class in _top_level_names(scenes):
        raise ScaffoldError(f"{scenes}: class {scene_class} exists already; choose another figure id")
    if taken := sorted(cue_ids & _cue_ids(narration)):
        raise ScaffoldError(f"{narration}: cue ids {', '.join(taken)} exist already; choose another figure id")
    if test.exists():
        raise ScaffoldError(f"{test} exists already; choose another figure id")
    fields = figure_fields(chapter_id, figure_id, title, source)
    builder, narrated, staged = (part(name) for name in FIGURE_PARTS)
    return _write(
        {
            module: _appended(module, builder, fields),
            narration: _appended(narration, narrated, fields),
            scenes: _appended(scenes, staged, fields),
            test: part("figure_test.py.tmpl").text.substitute(fields),
        }
    )


def _in_a_topic(source: str, chapter_id: str) -> str:
    """catalogue.py's source with the chapter in a topic: as it is if a topic names it, else the last topic's."""
    if any(chapter_id in topic.chapters for topic in catalogue.TOPICS):
        return source
    topics = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TOPICS" for t in node.targets)
    )
    last = topics.value.elts[-1]
    chapters = last.args[2] if len(last.args) > 2 else next(k.value for k in last.keywords if k.arg == "chapters")
    return edits.append_to_tuple(source, chapters, chapter_id)


def new_chapter(chapter_id: str, title: str) -> list[Path]:
    """Scaffold an empty chapter (module, narration file, scene file) and give it a topic; returns the files
    written. Refuses an id that is not snake_case or whose files exist."""
    _check_id("chapter", chapter_id)
    _check_title(title)
    module = settings.CHAPTERS_DIR / f"{chapter_id}.py"
    narration = settings.NARRATION_DIR / f"{chapter_id}.toml"
    scenes = settings.SCENES_DIR / f"{chapter_id}.py"
    if taken := [str(p) for p in (module, narration, scenes) if p.exists()]:
        raise ScaffoldError(f"chapter '{chapter_id}': {', '.join(taken)} exist{'s' * (len(taken) == 1)} already")
    fields = {"chapter": chapter_id, "chapter_title": title, "title_literal": _literal(title)}
    return _write(
        {
            module: part("chapter_module.py.tmpl").text.substitute(fields),
            narration: part("chapter_cues.toml.tmpl").text.substitute(fields),
            scenes: part("chapter_scenes.py.tmpl").text.substitute(fields),
            CATALOGUE: _in_a_topic(CATALOGUE.read_text(encoding="utf-8"), chapter_id),
        }
    )
