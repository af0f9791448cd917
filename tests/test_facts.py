"""Facts: the gates circuit's numbers, their two routes, and the errors a tamper gets."""

import json
import sys

import pytest
from helpers import BIN, run

from tools import cli
from tools.chapters import backprop
from tools.course import catalogue
from tools.course.facts import Check, FactError
from tools.models import circuit


def test_gates_circuit_gradients_are_the_pages():
    facts = catalogue.facts("gates_circuit")
    assert [facts[f"grad_{n}"].value for n in "abc"] == [4.0, 4.0, -1.0]
    assert (facts["grad_c"].text, facts["grad_c"].spoken) == ("\u22121", "负一")


def test_each_gate_applies_its_local_rule():
    values = circuit.forward(backprop.GATES, backprop.GATES_INPUTS)
    grads = circuit.backward(backprop.GATES, values)
    assert grads["m"] == values["c"]
    assert grads["c"] == values["m"]
    assert grads["d"] == 0.0
    assert grads["q"] == grads["m"]
    assert grads["a"] == grads["b"] == grads["q"]  # add distributes


def test_finite_differences_agree_with_backward():
    numeric = circuit.finite_differences(backprop.GATES, backprop.GATES_INPUTS)
    grads = circuit.backward(backprop.GATES, circuit.forward(backprop.GATES, backprop.GATES_INPUTS))
    for name, value in numeric.items():
        assert value == pytest.approx(grads[name], abs=1e-6)


def test_tampered_input_is_refused_naming_figure_fact_expected_computed():
    tampered = {**backprop.GATES_INPUTS, "c": 5.0}
    with pytest.raises(FactError) as err:
        backprop.gates_circuit(Check("gates_circuit"), tampered)
    assert (err.value.figure, err.value.fact) == ("gates_circuit", "grad_a")
    assert "expected 4.0" in str(err.value)
    assert "computed 5.0" in str(err.value)


def test_a_max_that_no_longer_routes_is_refused():
    # d wins the max: a and b would get nothing, which the page's numbers rule out.
    with pytest.raises(FactError, match="grad_a"):
        backprop.gates_circuit(Check("gates_circuit"), {**backprop.GATES_INPUTS, "d": 3.0})


@pytest.mark.slow  # every figure's facts in a new process
def test_facts_modules_do_not_import_manim():
    code = (
        "import sys, tools.course.catalogue as c; [c.facts(f.id) for f in c.figures()]; "
        "import tools.voice.cues, tools.publish.build.build; sys.exit('manim' in sys.modules)"
    )
    assert run([sys.executable, "-c", code]).returncode == 0


def test_lecture_facts_json_lists_every_figure_with_values(capsys):
    assert cli.main(["facts", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert set(table) == {fig.id for fig in catalogue.figures()}
    grad_c = table["gates_circuit"]["grad_c"]
    assert {k: grad_c[k] for k in ("value", "text", "spoken")} == {"value": -1.0, "text": "−1", "spoken": "负一"}
    assert grad_c["how"].endswith("−1 × 1")  # the formula with its inputs, for the numbers panel


def test_every_shown_fact_says_how_it_is_computed_and_where_it_comes_from():
    """The site's numbers panel gives each number its formula (or what input it is) and its source."""
    without_how, without_source = [], []
    for fig in catalogue.figures():
        for name, fact in catalogue.facts(fig.id).items():
            if fact.text and not fact.how.strip():
                without_how.append(f"{fig.id}.{name}")
            if fact.text and not (fact.source or fig.source).strip():
                without_source.append(f"{fig.id}.{name}")
    assert without_how == [], "give each a .via(...) in its builder"
    assert without_source == [], "give the figure a source= or the fact its own"


@pytest.mark.slow  # the layout lint runs every figure with animations skipped (cached in .cache/stills)
@pytest.mark.xdist_group("course_stills")  # beside the last-frame tests, which read the same stills
def test_lecture_check_passes_on_the_repository():
    done = run([str(BIN / "lecture"), "check"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok:")


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--only", "backprop/"], "names no figure after the '/'"),
        (["-j", "0"], "at least one figure must render at a time"),
        (["-j", "-3"], "at least one figure must render at a time"),
        (["-j", "two"], "is not a whole number"),
    ],
)
def test_lecture_build_refuses_bad_arguments_before_doing_anything(args, complaint, tmp_path):
    done = run(
        [str(BIN / "lecture"), "build", "-q", "l", *args],
        env={"LECTURE_RENDERS": str(tmp_path / "r"), "LECTURE_CACHE": str(tmp_path / "c")},
    )
    assert done.returncode == 2, done.stderr
    assert complaint in done.stderr, done.stderr
    assert not (tmp_path / "r").exists()
