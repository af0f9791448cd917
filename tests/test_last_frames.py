"""Each figure's last frame against its control data (see frames.py): a changed look fails with a picture."""

import re
import shutil
import sys
from pathlib import Path

import pytest
from frames import compare, control_png, record_stack, stack_mismatch, store
from helpers import ROOT, run
from PIL import Image

from tools.course import catalogue
from tools.publish.checks import stills

FIGURES = [fig.id for fig in catalogue.figures()]


@pytest.fixture(scope="session")
def last_frames(request):
    """The last frames of the figures whose tests were collected, one skipped-animation run for all."""
    wanted = dict.fromkeys(
        item.callspec.params["figure"]
        for item in request.session.items
        if "last_frames" in getattr(item, "fixturenames", ()) and hasattr(item, "callspec")
    )
    return stills.current([catalogue.figure(f) for f in wanted], say=lambda line: None)


@pytest.mark.slow  # every figure run with animations skipped, once for all (cached in .cache/stills)
@pytest.mark.parametrize("figure", FIGURES)
def test_last_frame_matches_its_control(figure, last_frames, request, tmp_path):
    frame = last_frames[figure].png
    if request.config.getoption("--set_test"):
        store(frame, control_png(figure))
        record_stack(stills.drawing_stack())
        return
    if why := stack_mismatch(stills.drawing_stack()):
        pytest.skip(f"control data was drawn on another stack ({why}): compare on that stack, or --set_test here")
    problem = compare(frame, control_png(figure), tmp_path / f"{figure}.diff.png")
    assert problem is None, f"{figure}: {problem}"


@pytest.mark.slow  # every figure run with animations skipped, once for all (cached in .cache/stills)
def test_the_lint_times_a_turning_surface_dearer_per_frame_than_a_flat_figure(last_frames):
    """Each lint run times its last frame drawn whole: the build's guess at a figure never rendered."""
    costs = {fig_id: still.records[-1].get("frame_seconds") for fig_id, still in last_frames.items()}
    costs = {fig_id: seconds for fig_id, seconds in costs.items() if seconds is not None}  # preview's: untimed
    if "saddle_3d_rotating" not in costs or len(costs) < 5:
        pytest.skip("the 3-D figure and a few flat ones are not among the figures collected")
    flat = sorted(seconds for fig_id, seconds in costs.items() if fig_id != "saddle_3d_rotating")
    assert all(seconds > 0 for seconds in flat)
    assert costs["saddle_3d_rotating"] > 2 * flat[len(flat) // 2]


@pytest.mark.slow  # runs manim on gates_circuit, three times
def test_a_moved_label_fails_with_a_picture_and_passes_after_set_test(tmp_path):
    """In a scratch copy, one muted label of gates_circuit moves by style.GAP_S: its frame test fails and
    draws the diff; --set_test writes new control data, and then it passes."""
    copy = tmp_path / "project"
    for part in ("tools", "scenes", "narration", "tests"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("manim.cfg", "pyproject.toml"):
        shutil.copy(ROOT / name, copy / name)
    scenes = copy / "scenes" / "backprop.py"
    source = scenes.read_text(encoding="utf-8")
    placed = "            self._anchor(name, wires), DOWN, buff=style.GAP_S\n        )\n"
    assert source.count(placed) == 1
    scenes.write_text(
        source.replace(placed, placed.rstrip() + '.shift(style.GAP_S * RIGHT if name == "d" else 0)\n'),
        encoding="utf-8",
    )
    pytest_args = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-n",
        "0",
        "-p",
        "no:cacheprovider",
        "tests/test_last_frames.py",
        "-k",
        "matches_its_control and gates_circuit",
        "--basetemp",
        str(tmp_path / "runs"),
    ]
    env = {"PYTHONPATH": str(copy), "LECTURE_CACHE": str(tmp_path / "cache")}
    failed = run(pytest_args, cwd=copy, env=env)
    assert failed.returncode == 1, failed.stdout[-2000:]
    assert "gates_circuit: " in failed.stdout
    assert "pixels changed" in failed.stdout
    diff = Path(re.search(r"diff: (\S+\.png)", failed.stdout).group(1))
    assert Image.open(diff).size == (3 * 854, 480)
    assert run([*pytest_args, "--set_test"], cwd=copy, env=env).returncode == 0
    passed = run(pytest_args, cwd=copy, env=env)
    assert passed.returncode == 0
    assert "1 passed" in passed.stdout
    control = copy / "tests" / "control" / "last_frames" / "gates_circuit.png"
    assert control.read_bytes() != control_png("gates_circuit").read_bytes()
