"""Authoring (issue 18): the README's chapter table written from the catalogue, and chapter modules no topic names."""

import pytest

from tools import cli, settings
from tools.author import readme
from tools.course import catalogue


def test_the_readmes_chapter_table_matches_the_catalogue():
    assert readme.current() == readme.block(), "README.md's chapter table is stale: run .venv/bin/lecture readme"
    assert cli.main(["readme", "--check"]) == 0


def test_the_table_counts_every_figure_and_lists_every_chapter_in_play_order():
    block = readme.block()
    assert f"({len(catalogue.figures())} figures)" in block
    rows = [line for line in block.splitlines() if "`scenes/" in line]
    assert [row.split("`scenes/")[1].split(".py`")[0] for row in rows] == list(catalogue.CHAPTER_ORDER)
    for row, chapter in zip(rows, catalogue.chapters()):
        assert f"| {chapter.title} |" in row and f"| {len(chapter.figures)} |" in row


def test_a_stale_table_is_found_and_rewritten_and_nothing_else_is_touched(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "README.md"
    text = settings.ROOT.joinpath("README.md").read_text(encoding="utf-8")
    stale.write_text(text.replace(f"({len(catalogue.figures())} figures)", "(2 figures)"), encoding="utf-8")
    monkeypatch.setattr(readme, "README", stale)
    assert cli.main(["readme", "--check"]) == 2
    assert "out of date; run lecture readme" in capsys.readouterr().err
    assert cli.main(["readme"]) == 0 and stale.read_text(encoding="utf-8") == text
    assert readme.rewrite(stale) is False


def test_a_readme_without_the_markers_is_refused_saying_what_to_add(tmp_path):
    bare = tmp_path / "README.md"
    bare.write_text("# a readme\n", encoding="utf-8")
    with pytest.raises(readme.ReadmeError, match=f"no generated catalogue block; put the lines\n{readme.BEGIN}"):
        readme.rewrite(bare)


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
