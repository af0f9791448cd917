"""A figure's facts as plain JSON: the one form `lecture facts --json`, the manifest and the embed kit give."""

from __future__ import annotations

from tools.course import catalogue


def fact_values(figure_id: str) -> dict:
    """A figure's facts as {name: {value, text, spoken}}, computed (and checked) by its builder."""
    return {name: fact.as_json() for name, fact in catalogue.facts(figure_id).items()}
