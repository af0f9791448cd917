"""tools/publish/checks/fact_boxes.py: each shown fact sorted by what the lint's run saw of it, with why it has no
box; and, across the whole course, the share of facts drawn as text that have boxes."""

import pytest

from tools.course import catalogue
from tools.publish.checks import fact_boxes, stills

SHOWN = {key: key.upper() for key in ("tagged", "worded", "cut", "unmapped", "bar", "said", "idle")}


def _interval(fact: str, found: str) -> dict:
    return {"fact": fact, "found": found, "start": 0.0, "end": 1.0, "box": [0, 0, 1, 1], "words": "", "at": [0, 1]}


RECORD = {
    "frame": [14.2, 8.0],
    "intervals": [_interval("tagged", "tag"), _interval("tagged", "text"), _interval("worded", "text")],
    "read_text": ["tagged", "cut", "unmapped"],
    "read_value": ["bar", "cut"],
    "unmapped": {"unmapped": "0.06 div 0.03 = 2"},
}


def test_each_fact_falls_in_one_class_and_each_without_a_box_says_why():
    found = fact_boxes.coverage("fig", SHOWN, RECORD, spoken={"said"})
    assert found.tagged == ("tagged",)
    assert found.by_words == ("worded",)
    assert found.no_box == {
        "cut": "its text is never seen whole",
        "unmapped": "its glyphs in 「0.06 div 0.03 = 2」 were not found",
    }
    assert found.shapes == {"bar": "its value is drawn, not its text"}
    assert found.undrawn == {"said": "only said", "idle": "not used by the scene"}
    assert (found.boxed, found.as_text) == (2, 4)
    line = found.line()
    assert line.startswith("  fig: 2 of 4 facts drawn as text have boxes (1 found by their words: worded)")
    assert "no box: cut (its text is never seen whole)" in line
    assert "drawn as shapes: bar (its value is drawn, not its text)" in line
    assert "never drawn: said (only said), idle (not used by the scene)" in line
    assert fact_boxes.summary([found]) == (
        "fact boxes: 2 of 4 shown facts drawn as text have boxes (50.0%), 1 of them found by their words; "
        "1 drawn as shapes, 2 never drawn"
    )


def test_a_run_that_recorded_nothing_leaves_every_fact_without_a_box():
    found = fact_boxes.coverage("fig", {"a": "1"}, None, spoken=set())
    assert found.no_box == {"a": "its lint run recorded no facts (an older probe)"}


@pytest.fixture(scope="session")
def course_coverage() -> list[fact_boxes.Coverage]:
    """Every figure's facts as its lint run saw them (the stills the last frames take: conftest.SHARED keeps this on
    their worker, so they are run once)."""
    figures = catalogue.figures()
    ran = stills.current(figures, say=lambda line: None)
    return [fact_boxes.figure_coverage(fig, ran[fig.id]) for fig in figures]


@pytest.mark.slow  # every figure run with animations skipped (cached in .cache/stills, as the last frames are)
def test_nearly_every_fact_the_course_draws_as_text_has_a_box(course_coverage):
    found = course_coverage
    as_text, boxed = sum(c.as_text for c in found), sum(c.boxed for c in found)
    print(fact_boxes.summary(found))
    assert as_text > 900  # the course's numbers on screen, not a run that saw none
    assert boxed >= 0.95 * as_text, [c.line() for c in found if c.no_box]
    # by their tag, the rule; by their words, the fallback
    assert sum(len(c.by_words) for c in found) <= 0.1 * boxed
