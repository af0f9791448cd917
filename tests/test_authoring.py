"""Authoring (issue 18): `lecture new` on a scratch copy of the project and what it refuses, the source edits it
makes, the README's chapter table written from the catalogue, chapter modules no topic names."""

import ast
import sys

import pytest
from helpers import BIN, build_env, copy_project, run

from tools import cli, settings
from tools.author import edits, readme, scaffold
from tools.course import catalogue

TABLE, EXAMPLE = readme.BLOCKS
LECTURE = [sys.executable, "-m", "tools.cli"]  # run in a copy (cwd), this imports the copy's code

# -- lecture new on a scratch copy --------------------------------------------------------------


@pytest.mark.slow
def test_a_scaffolded_figure_checks_builds_and_passes_its_test_with_no_hand_edits(tmp_path):
    """The issue's 'done when': new, check, build; then the new figure's test, the lint, the README's table.
    `check --no-layout` checks every figure's facts, narration and readings; the build lints the new one's layout."""
    project, env = copy_project(tmp_path / "project"), build_env(tmp_path)
    figures = len(catalogue.figures())
    new = run([*LECTURE, "new", "optimizer/demo_figure", "示例"], cwd=project, env=env)
    assert new.returncode == 0, new.stderr
    assert "wrote tests/test_optimizer_demo_figure.py" in new.stdout
    assert "rewrote the generated parts of README.md" in new.stdout
    written = (project / "scenes" / "optimizer.py").read_text(encoding="utf-8")
    assert EXAMPLE.text().split("class DemoFigure")[1].split("```")[0] in written  # the README shows what is written
    check = run([*LECTURE, "check", "--no-layout"], cwd=project, env=env)
    assert check.returncode == 0, check.stderr
    assert f"ok: {figures + 1} figures" in check.stdout, check.stdout
    assert "warning" not in check.stdout
    built = run([*LECTURE, "build", "-q", "l", "--only", "optimizer/demo_figure"], cwd=project, env=env)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "renders" / "480p15" / "optimizer" / "demo_figure.mp4").is_file()
    assert "optimizer/demo_figure: done" in built.stdout
    assert "warning" not in built.stdout
    test = run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "tests/test_optimizer_demo_figure.py",
        ],
        cwd=project,
    )
    assert "2 passed" in test.stdout, test.stdout
    assert run([str(BIN / "ruff"), "check", "."], cwd=project).returncode == 0
    table = run([*LECTURE, "readme", "--check"], cwd=project)
    assert table.returncode == 0
    assert f"({figures + 1} figures)" in (project / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow  # four `lecture` runs over the whole course, in a scratch copy
def test_a_scaffolded_chapter_joins_the_last_topic_and_takes_a_figure(tmp_path):
    """`lecture new <chapter>`, then a figure in it: the catalogue plays it, check passes, the lint is clean."""
    project, env = copy_project(tmp_path / "project"), build_env(tmp_path)
    made = run([*LECTURE, "new", "demo_chapter", "示例章"], cwd=project, env=env)
    assert made.returncode == 0, made.stderr
    topics = (project / "tools" / "course" / "catalogue.py").read_text(encoding="utf-8")
    last = catalogue.TOPICS[-1]
    assert f'"{last.title}", {(*last.chapters, "demo_chapter")!r}'.replace("'", '"') in topics
    assert run([*LECTURE, "check", "--no-layout"], cwd=project, env=env).returncode == 0
    figure = run([*LECTURE, "new", "demo_chapter/first_one", "第一个", "--source", "示例出处"], cwd=project, env=env)
    assert figure.returncode == 0, figure.stderr
    check = run([*LECTURE, "check", "--no-layout", "--only", "demo_chapter"], cwd=project, env=env)
    assert check.returncode == 0, check.stderr
    assert "ok: 1 figures, 5 facts, 2 cues" in check.stdout, check.stdout
    assert "class FirstOne(LectureScene)" in (project / "scenes" / "demo_chapter.py").read_text(encoding="utf-8")
    assert "| 示例章 | `scenes/demo_chapter.py` | 1 | 第一个 |" in (project / "README.md").read_text(encoding="utf-8")
    assert run([str(BIN / "ruff"), "check", "."], cwd=project).returncode == 0


@pytest.mark.parametrize(
    ("target", "complaint"),
    [
        ("optimizer/gates_circuit", "figure 'gates_circuit' exists already, in chapter 'backprop'"),
        ("nowhere/demo_figure", "no chapter 'nowhere'"),
        ("optimizer/DemoFigure", "figure id 'DemoFigure' is not snake_case"),
        ("optimizer/demo-figure", "figure id 'demo-figure' is not snake_case"),
        ("optimizer/2nd_try", "figure id '2nd_try' is not snake_case"),
        ("optimizer/demo__figure", "figure id 'demo__figure' is not snake_case"),
        ("optimizer", "chapter 'optimizer': "),
        ("Optimizer2", "chapter id 'Optimizer2' is not snake_case"),
    ],
)
def test_lecture_new_refuses_before_writing_anything(target, complaint, capsys):
    project_files = {
        path: path.read_bytes()
        for folder in ("tools", "scenes", "narration", "tests")
        for path in (settings.ROOT / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    project_files[settings.ROOT / "README.md"] = (settings.ROOT / "README.md").read_bytes()
    assert cli.main(["new", target, "示例"]) == 2
    assert complaint in capsys.readouterr().err
    assert {path: path.read_bytes() for path in project_files} == project_files
    assert not (settings.ROOT / "tests" / "test_optimizer_demo_figure.py").exists()


def test_a_figure_needs_a_one_line_title_and_source_is_a_figures_option(capsys):
    with pytest.raises(scaffold.ScaffoldError, match="give one line of Chinese"):
        scaffold.new_figure("optimizer", "demo_figure", "  ")
    assert cli.main(["new", "demo_chapter", "示例章", "--source", "书"]) == 2
    assert "--source is a figure's" in capsys.readouterr().err


# -- the source edits: what the lint would write itself -----------------------------------------


def test_names_merge_into_an_import_in_the_lints_order_and_keep_its_shape():
    source = '"""Doc."""\n\nfrom manim import (\n    UP,\n    Dot,\n)\nfrom scenes import style\n'
    merged = edits.merge(source, "manim", ["Create", "DOWN", "Dot"])
    assert merged == (
        '"""Doc."""\n\nfrom manim import (\n    DOWN,\n    UP,\n    Create,\n    Dot,\n)\nfrom scenes import style\n'
    )
    assert edits.merge(merged, "manim", ["UP"]) == merged
    assert edits.merge("from a import b\n", "a", ["c"]) == "from a import b, c\n"


def test_a_new_import_goes_in_its_section():
    source = (
        '"""Doc."""\n\nfrom __future__ import annotations\n\nimport math\n\nimport numpy as np\n\n'
        "from tools.models import descent\n\nX = 1\n"
    )
    with_first_party = edits.merge(source, "tools.course.facts", ["number", "Check"])
    assert (
        "import numpy as np\n\nfrom tools.course.facts import Check, number\nfrom tools.models import descent\n"
        in with_first_party
    )
    assert "import math\nfrom collections import deque\n\nimport numpy" in edits.merge(source, "collections", ["deque"])
    assert edits.merge('"""Doc."""\n', "manim", ["Dot"]) == '"""Doc."""\n\nfrom manim import Dot\n'


def test_a_long_import_wraps_one_name_a_line():
    names = [f"name_{i:02}" for i in range(14)]
    merged = edits.merge("from a import b\n", "a", names)
    assert merged.startswith("from a import (\n    b,\n    name_00,\n")
    assert merged.endswith("    name_13,\n)\n")


def test_a_tuple_of_strings_grows_on_its_line_or_wraps_when_it_would_run_long():
    source = 'T = (\n    Topic("五", "题", ("pipeline",)),\n)\n'
    node = ast.parse(source).body[0].value.elts[0].args[2]
    assert edits.append_to_tuple(source, node, "demo") == 'T = (\n    Topic("五", "题", ("pipeline", "demo")),\n)\n'
    long = 'T = (\n    Topic("四", "训练一步的账", ("backprop", "recompute", "optimizer", "adaptive", "ledger")),\n)\n'
    node = ast.parse(long).body[0].value.elts[0].args[2]
    grown = edits.append_to_tuple(long, node, "stability_and_more")
    assert all(edits.width(line) <= edits.line_length() for line in grown.splitlines())
    assert ast.literal_eval(ast.parse(grown).body[0].value.elts[0].args[2]) == (
        "backprop",
        "recompute",
        "optimizer",
        "adaptive",
        "ledger",
        "stability_and_more",
    )
    assert edits.width("训练") == 4


# -- the README's chapter table -----------------------------------------------------------------


def test_the_generated_docs_are_up_to_date():
    assert readme.stale() == [], "the generated docs are out of date: run .venv/bin/lecture readme"
    assert cli.main(["readme", "--check"]) == 0


def test_each_generated_part_lives_in_its_file():
    assert TABLE.text() in settings.ROOT.joinpath("README.md").read_text(encoding="utf-8")
    assert EXAMPLE.text() in settings.ROOT.joinpath("CONTRIBUTING.md").read_text(encoding="utf-8")


def test_the_table_counts_every_figure_and_lists_every_chapter_in_play_order():
    block = TABLE.text()
    assert f"({len(catalogue.figures())} figures)" in block
    rows = [line for line in block.splitlines() if "`scenes/" in line]
    assert [row.split("`scenes/")[1].split(".py`")[0] for row in rows] == list(catalogue.CHAPTER_ORDER)
    for row, chapter in zip(rows, catalogue.chapters()):
        assert f"| {chapter.title} |" in row
        assert f"| {len(chapter.figures)} |" in row


def test_the_worked_example_is_the_scaffolds_templates_filled_in():
    example = EXAMPLE.text()
    assert "from tools.course.facts import Check, data, number" in example
    assert '@CHAPTER.figure("demo_figure", "示例", source="出处待补")' in example
    assert 'with self.narrate("demo_figure_start") as beat:' in example
    assert "class DemoFigure(LectureScene):" in example


def _copy_docs(root):
    """The generated files of the repository, copied under `root`."""
    for name in ("README.md", "CONTRIBUTING.md", "docs/figures.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(settings.ROOT.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8")
    return root


def test_a_stale_table_is_found_and_rewritten_and_nothing_else_is_touched(tmp_path, monkeypatch, capsys):
    root = _copy_docs(tmp_path)
    text = (root / "README.md").read_text(encoding="utf-8")
    (root / "README.md").write_text(text.replace(f"({len(catalogue.figures())} figures)", "(2 figures)"), "utf-8")
    monkeypatch.setattr(settings, "ROOT", root)
    assert cli.main(["readme", "--check"]) == 2
    assert "the chapter table in README.md out of date; run lecture readme" in capsys.readouterr().err
    assert cli.main(["readme"]) == 0
    assert "rewrote the generated parts of README.md" in capsys.readouterr().out
    assert (root / "README.md").read_text(encoding="utf-8") == text
    assert readme.rewrite(root) == []


def test_a_stale_or_missing_figures_page_is_found_and_written(tmp_path):
    root = _copy_docs(tmp_path)
    page = root / "docs" / "figures.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("| `years` | 9,506 年 |", "| `years` | 9,507 年 |"), encoding="utf-8")
    assert readme.stale(root) == ["the figures page docs/figures.md"]
    page.unlink()
    assert readme.rewrite(root) == ["docs/figures.md"]
    assert page.read_text(encoding="utf-8") == text


def test_a_file_without_the_markers_is_refused_saying_what_to_add(tmp_path):
    root = _copy_docs(tmp_path)
    (root / "README.md").write_text("# a readme\n", encoding="utf-8")
    with pytest.raises(readme.ReadmeError, match=f"no generated chapter table; put the lines\n{TABLE.begin}"):
        readme.rewrite(root)


def test_a_chapter_module_no_topic_names_is_refused(tmp_path, monkeypatch):
    for name in (*catalogue.CHAPTER_ORDER, "__init__", "stray"):
        (tmp_path / f"{name}.py").touch()
    monkeypatch.setattr(settings, "CHAPTERS_DIR", tmp_path)
    with pytest.raises(catalogue.UnknownFigure, match="stray belongs to no topic: add each to a topic's chapters"):
        catalogue.chapters.__wrapped__()


def test_the_play_order_is_the_topics_chapters_that_have_a_module():
    named = [ch for topic in catalogue.TOPICS for ch in topic.chapters]
    assert list(catalogue.CHAPTER_ORDER) == [ch for ch in named if (settings.CHAPTERS_DIR / f"{ch}.py").exists()]
    assert [ch.id for ch in catalogue.chapters()] == list(catalogue.CHAPTER_ORDER)
