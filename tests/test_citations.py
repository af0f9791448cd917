"""A figure's builder citing another figure's fact: one object, computed and checked once, cycles refused."""

from dataclasses import replace

import pytest

from tools.course import catalogue
from tools.course.facts import Fact


@pytest.fixture
def fresh_facts():
    """Every figure's facts computed anew in this test (and again after it)."""
    catalogue.facts.cache_clear()
    yield
    catalogue.facts.cache_clear()


@pytest.fixture
def scratch_figures(monkeypatch, fresh_facts):
    """Add figures to the backprop chapter for this test only: add(figure_id, build)."""
    chapter = catalogue.chapter("backprop")
    monkeypatch.setattr(chapter, "figures", list(chapter.figures))

    def add(figure_id, build):
        chapter.figures.append(catalogue.Figure(figure_id, figure_id, "backprop", "", build))

    return add


def test_a_cited_fact_is_the_citing_figures_own_object():
    assert catalogue.cite("activation_mountain.keep_all") is catalogue.facts("activation_mountain")["keep_all"]


def test_a_cited_figure_is_built_once_however_often_it_is_cited(scratch_figures):
    builds = []

    def source(check):
        builds.append(1)
        return {"value": Fact(7, "7", "七")}

    scratch_figures("scratch_source", source)
    scratch_figures("scratch_first", lambda check: {"copy": catalogue.cite("scratch_source.value")})
    scratch_figures("scratch_second", lambda check: {"copy": catalogue.cite("scratch_source.value")})
    first, second = catalogue.facts("scratch_first")["copy"], catalogue.facts("scratch_second")["copy"]
    assert first is second is catalogue.facts("scratch_source")["value"]
    assert len(builds) == 1


def test_figures_that_cite_each_other_are_refused_naming_the_circle(scratch_figures):
    scratch_figures("scratch_a", lambda check: {"x": catalogue.cite("scratch_b.y")})
    scratch_figures("scratch_b", lambda check: {"y": catalogue.cite("scratch_a.x")})
    with pytest.raises(catalogue.CitationCycle, match="scratch_a -> scratch_b -> scratch_a"):
        catalogue.facts("scratch_a")


@pytest.mark.parametrize(
    ("ref", "complaint"),
    [
        ("keep_all", "write 'figure_id.fact_name'"),
        ("activation_mountain.", "write 'figure_id.fact_name'"),
        ("no_such_figure.x", "no figure 'no_such_figure'"),
        ("activation_mountain.no_such_fact", "figure 'activation_mountain' has no fact 'no_such_fact'"),
    ],
)
def test_a_bad_citation_names_what_is_missing(ref, complaint):
    with pytest.raises(catalogue.UnknownFigure, match=complaint):
        catalogue.cite(ref)


def test_a_change_in_the_cited_figure_shows_up_where_it_is_cited(scratch_figures, monkeypatch):
    scratch_figures("scratch_source", lambda check: {"value": Fact(7, "7", "七")})
    scratch_figures("scratch_citer", lambda check: {"copy": catalogue.cite("scratch_source.value")})
    assert catalogue.facts("scratch_citer")["copy"].text == "7"
    chapter = catalogue.chapter("backprop")
    source = next(f for f in chapter.figures if f.id == "scratch_source")
    chapter.figures[chapter.figures.index(source)] = replace(source, build=lambda check: {"value": Fact(8, "8", "八")})
    catalogue.facts.cache_clear()
    assert catalogue.facts("scratch_citer")["copy"].text == "8"
