"""The checks before rendering: one list of named steps, run the same way by `lecture check` and `lecture build`."""

import pytest

from tools import cli
from tools.course import catalogue
from tools.publish.build import build
from tools.publish.checks import checks
from tools.voice import cues

ONE = "backprop/gates_circuit"


@pytest.fixture
def recorded(monkeypatch):
    """Every step replaced by one that records its name and the lint's job count; the build stops after its plan."""
    ran: list[tuple[str, int]] = []
    fakes = {name: (lambda checking, name=name: ran.append((name, checking.jobs))) for name in checks.STEPS}
    monkeypatch.setattr(checks, "STEPS", fakes)
    monkeypatch.setattr(build, "_run", lambda *args: None)
    return ran


def _names(ran: list[tuple[str, int]]) -> list[str]:
    return [name for name, _ in ran]


def test_check_and_build_run_every_step_in_one_order(recorded, isolated):
    assert cli.main(["check", "--only", ONE]) == 0
    by_check = _names(recorded)
    recorded.clear()
    assert cli.main(["build", "-q", "l", "--only", ONE]) == 0
    assert _names(recorded) == by_check == list(checks.STEPS)


def test_no_layout_skips_the_lint_and_the_fact_boxes_in_both_and_layout_runs_it_alone(recorded, isolated):
    assert cli.main(["check", "--no-layout", "--only", ONE]) == 0
    by_check = _names(recorded)
    recorded.clear()
    assert cli.main(["build", "-q", "l", "--no-layout", "--only", ONE]) == 0
    assert _names(recorded) == by_check == [name for name in checks.STEPS if name not in checks.RUN_MANIM]
    recorded.clear()
    assert cli.main(["check", "--layout", "-j", "3", "--only", ONE]) == 0
    assert recorded == [(checks.LAYOUT, 3)]


def test_a_one_job_build_lints_with_two_processes(recorded, isolated):
    assert cli.main(["build", "-q", "l", "-j", "1", "--only", ONE]) == 0
    assert (checks.LAYOUT, 2) in recorded


def test_the_quick_steps_pass_on_a_figure_and_say_what_they_counted(isolated):
    said: list[str] = []
    fig = catalogue.figure("gates_circuit")
    checking = checks.run([fig], said.append, layout=False)
    facts, figure_cues = len(catalogue.facts(fig.id)), len(cues.figure_cues(fig.id))
    assert checking.counted == {"facts": facts, "cues": figure_cues}
    assert said[0] == f"ok: 1 figures, {facts} facts, {figure_cues} cues"
