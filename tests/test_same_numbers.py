"""Every number on screen and in the voice is the same on every machine that runs the locked stack.

numpy picks its SIMD kernels by CPU, and OpenBLAS its core type, so the last digits of a computed value
differ from machine to machine. Those digits must never reach a fact's screen text or reading:

- `lecture facts --json` in fresh processes, as usual, with numpy's dispatch narrowed to its baseline and
  with OpenBLAS on an older core, gives the same text and reading for every fact; the narrowed processes
  also run `lecture readme --check` on the facts they computed, so the generated page is the same too;
- no fact shows a residual a check compares with zero (such noise is shown as its bound,
  `Check.residual`), and one ulp on the float inputs of a figure with such a check changes no text;
- no shown number sits within a relative 10⁻⁹ of a rounding edge, where noise could flip its last digit.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import platform
import subprocess
import sys

import numpy as np
import pytest
from helpers import BIN, DISPATCHED, ROOT, SIMD_PROBE

from tools.course import catalogue, numbers
from tools.course.facts import Check, FactError

OLDER_BLAS_CORE = {"x86_64": "Nehalem", "aarch64": "ARMV8"}.get(platform.machine())
RELATIVE_EDGE = 1e-9
SETTINGS = {
    "narrowed dispatch": {"NPY_DISABLE_CPU_FEATURES": " ".join(DISPATCHED)},
    "older OpenBLAS core": {"OPENBLAS_CORETYPE": OLDER_BLAS_CORE or ""},
}


# In one process, so the facts are computed once: the generated docs checked (their output kept off stdout),
# then the facts as JSON.
FACTS_AND_PAGE = """
import contextlib, sys
from tools import cli
with contextlib.redirect_stdout(sys.stderr):
    if cli.main(["readme", "--check"]) != 0:
        sys.exit("lecture readme --check failed")
sys.exit(cli.main(["facts", "--json"]))
"""


def _shown(facts) -> dict[str, list[str]]:
    return {name: [fact.text, fact.spoken] for name, fact in facts.items() if fact.text or fact.spoken}


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")}
    return {**env, **extra}


@pytest.mark.slow  # every figure's facts, in three new processes
def test_facts_and_the_page_read_the_same_with_other_simd_paths_and_blas_cores():
    if not DISPATCHED:
        pytest.skip("this CPU runs numpy's baseline only: there is no narrower dispatch to compare with")
    if OLDER_BLAS_CORE is None:
        pytest.skip(f"no older OpenBLAS core named for {platform.machine()}")
    runs = {
        name: subprocess.Popen(
            [str(BIN / "lecture"), "facts", "--json"] if name == "as usual" else [sys.executable, "-c", FACTS_AND_PAGE],
            cwd=ROOT,
            env=_env(extra),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, extra in {"as usual": {}, **SETTINGS}.items()
    }
    tables = {}
    for name, process in runs.items():
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, f"{name}: {err[-2000:]}"
        tables[name] = {
            fig: {fact: [v["text"], v["spoken"]] for fact, v in facts.items() if v["text"] or v["spoken"]}
            for fig, facts in json.loads(out).items()
        }
    probes = {
        name: json.loads(
            subprocess.run(
                [sys.executable, "-c", SIMD_PROBE], env=_env(extra), capture_output=True, text=True, check=True
            ).stdout
        )
        for name, extra in {"as usual": {}, **SETTINGS}.items()
    }
    assert probes["narrowed dispatch"]["dispatch"] == [] != probes["as usual"]["dispatch"], probes
    assert probes["older OpenBLAS core"]["core"] == OLDER_BLAS_CORE != probes["as usual"]["core"], probes
    usual = tables["as usual"]
    for name in SETTINGS:
        differ = [
            f"{fig}.{fact}: {usual[fig][fact]} here, {shown} with {name}"
            for fig, facts in tables[name].items()
            for fact, shown in facts.items()
            if usual.get(fig, {}).get(fact) != shown
        ]
        assert not differ, "\n".join(differ)
        assert tables[name].keys() == usual.keys()


# -- every builder once more, watched ----------------------------------------------------------------------


class WatchingCheck(Check):
    """A Check that notes every residual: a value checked against zero with an absolute tolerance."""

    def __init__(self, figure: str):
        super().__init__(figure)
        self.residuals: list[tuple[str, float]] = []

    def close(self, fact, computed, expected, *, rel=1e-9, abs=0.0):
        if expected == 0 and abs > 0:
            self.residuals.append((fact, float(computed)))
        super().close(fact, computed, expected, rel=rel, abs=abs)

    def residual(self, fact, computed, bound):
        self.residuals.append((fact, float(computed)))
        return super().residual(fact, computed, bound)


@pytest.fixture(scope="module")
def rebuilt():
    """Each figure's builder run again with a WatchingCheck, and every number it formats probed a relative
    10⁻⁹ either way: {figure: (its check, its facts)}, and the numbers that sat on a rounding edge."""
    for fig in catalogue.figures():
        catalogue.facts(fig.id)  # cited facts are computed before the watch starts, so edges are not misplaced
    edges: list[str] = []
    building = [""]
    signed, scientific = numbers.signed, numbers.scientific

    def probed(format_, name):
        def probe(x, digits=0 if name == "signed" else 1):
            shown = format_(x, digits)
            if isinstance(x, float | np.floating) and x != 0:
                near = {format_(x * (1 + RELATIVE_EDGE), digits), format_(x * (1 - RELATIVE_EDGE), digits)}
                if near != {shown}:
                    edges.append(f"{building[0]}: {x!r} with {digits} digits shows {shown}, a hair away {near}")
            return shown

        return probe

    runs = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(numbers, "signed", probed(signed, "signed"))
        patch.setattr(numbers, "scientific", probed(scientific, "scientific"))
        for fig in catalogue.figures():
            building[0] = fig.id
            check = WatchingCheck(fig.id)
            runs[fig.id] = (check, fig.build(check))
    return runs, edges


@pytest.mark.slow
def test_no_fact_shows_a_residual(rebuilt):
    runs, _ = rebuilt
    shown_noise = [
        f"{fig}.{name} shows {fact.text}, the residual of the check '{check_name}'"
        for fig, (check, facts) in runs.items()
        for name, fact in facts.items()
        for check_name, residual in check.residuals
        if fact.text and residual != 0 and isinstance(fact.value, float | np.floating) and float(fact.value) == residual
    ]
    assert not shown_noise, "\n".join(shown_noise) + "\nshow the bound the check asserts: Check.residual"


@pytest.mark.slow
def test_no_shown_number_sits_on_a_rounding_edge(rebuilt):
    _, edges = rebuilt
    assert not edges, "\n".join(edges)


def _one_ulp_up(value):
    """`value` with every nonzero float in it one ulp larger (None when it holds none)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float):
        return math.nextafter(value, math.inf) if value else None
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return np.where(value != 0, np.nextafter(value, np.inf), value)
    if isinstance(value, tuple | list):
        parts = [_one_ulp_up(v) for v in value]
        if all(p is None for p in parts):
            return None
        return type(value)(v if p is None else p for v, p in zip(value, parts))
    return None


@pytest.mark.slow
def test_one_ulp_on_the_inputs_of_a_residual_check_changes_no_text(rebuilt):
    """A figure whose checks measure a residual is built again with each float input one ulp larger; an
    input its checks then refuse is exact by meaning (1.0 that must be 1) and is left as it is."""
    runs, _ = rebuilt
    changed, nudged = [], 0
    for fig_id, (check, facts) in runs.items():
        if not any(residual for _, residual in check.residuals):
            continue
        fig = catalogue.figure(fig_id)
        for name, parameter in inspect.signature(fig.build).parameters.items():
            if (moved := _one_ulp_up(parameter.default)) is None:
                continue
            try:
                again = fig.build(Check(fig_id), **{name: moved})
            except FactError:
                continue
            nudged += 1
            before, after = _shown(facts), _shown(again)
            changed += [
                f"{fig_id}.{fact}: {before[fact]} → {after.get(fact)} with '{name}' one ulp up"
                for fact in before
                if after.get(fact) != before[fact]
            ]
    assert nudged, "no input was nudged: the test no longer reaches any figure"
    assert not changed, "\n".join(changed)


def test_a_residual_is_shown_as_its_bound_and_checked_against_it():
    check = Check("first_gradient")
    fact = check.residual("p − y (finite differences)", 3.9e-11, 1e-8)
    assert (fact.value, fact.text, fact.spoken) == (1e-8, "< 10⁻⁸", "小于十的负八次方")
    with pytest.raises(FactError) as refused:
        check.residual("p − y (finite differences)", -2e-8, 1e-8)
    assert refused.value.fact == "p − y (finite differences)"
    assert "-2e-08" in str(refused.value)
    bound = Check("x").residual("gap", 0.0, 5e-7)
    assert (bound.value, bound.text, bound.spoken) == (5e-7, "< 5.0×10⁻⁷", "小于五点零乘以十的负七次方")
