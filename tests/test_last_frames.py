"""Each figure's last frame against its control data (see frames.py): a changed look fails with a picture.
The same frames drawn as an x86-64 without AVX2 or FMA computes them must match the same control data."""

import json
import os
import platform
import re
import shutil
import sys
from pathlib import Path

import pytest
from frames import compare, control_png, record_stack, stack_mismatch, store
from helpers import DISPATCHED, OLDER_X86, ROOT, SIMD_PROBE, run
from PIL import Image

from tools.course import catalogue
from tools.publish.checks import stills

FIGURES = [fig.id for fig in catalogue.figures()]
# Drawn on an older CPU's paths in the suite: formulas (a fraction's rule, a square root), a turning 3-D surface
# and plotted curves (about 25 CPU-seconds). LECTURE_FRAMES_NARROWED=all draws every figure so (about 150).
ON_OLDER_CPU = (
    FIGURES
    if os.environ.get("LECTURE_FRAMES_NARROWED") == "all"
    else ["adam_update_rms", "saddle_3d_rotating", "lr_numbers", "mup_lr_transfer"]
)
# A process that draws last frames into its own cache (no parsed text or still of this process reused), then
# says what numpy and OpenBLAS ran on.
DRAW_LAST_FRAMES = f"""
import json, sys
from tools.course import catalogue
from tools.publish.checks import stills
found = stills.current([catalogue.figure(f) for f in sys.argv[1:]], say=lambda line: None)
print(json.dumps({{f: str(still.png) for f, still in found.items()}}))
{SIMD_PROBE}
"""


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


@pytest.fixture(scope="session")
def older_cpu_frames(tmp_path_factory) -> dict[str, Path]:
    """The last frames of ON_OLDER_CPU, drawn by a new process with numpy's dispatch narrowed to its baseline
    and OpenBLAS on Sandybridge, with a cache of its own; checked to have run on those paths."""
    if platform.machine() != "x86_64" or not DISPATCHED:
        pytest.skip("not an x86-64 that runs more than numpy's baseline: nothing older to draw with")
    env = {**OLDER_X86, "LECTURE_CACHE": str(tmp_path_factory.mktemp("older-cpu-cache"))}
    done = run([sys.executable, "-c", DRAW_LAST_FRAMES, *ON_OLDER_CPU], env=env, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    pngs, ran_on = (json.loads(line) for line in done.stdout.splitlines()[-2:])
    assert ran_on == {"dispatch": [], "core": "Sandybridge"}, ran_on
    return {figure: Path(png) for figure, png in pngs.items()}


@pytest.mark.slow  # manim on the chosen figures, in a new process with a cache of its own
@pytest.mark.parametrize("figure", ON_OLDER_CPU)
def test_last_frame_drawn_on_an_older_cpus_paths_matches_the_same_control(figure, older_cpu_frames, tmp_path):
    """scenes/grid_camera.py hands Cairo every number on a fixed grid, so numpy's SIMD paths and OpenBLAS's core
    change no pixel past the tolerance (reported from an AVX2 machine before it: adam_update_rms's fraction
    rule, 80 pixels)."""
    if why := stack_mismatch(stills.drawing_stack()):
        pytest.skip(f"control data was drawn on another stack ({why})")
    problem = compare(older_cpu_frames[figure], control_png(figure), tmp_path / f"{figure}.diff.png")
    assert problem is None, f"{figure}, drawn with {OLDER_X86}: {problem}"


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


def test_control_data_from_an_older_text_shapes_format_fails_and_another_font_skips(tmp_path, monkeypatch):
    """A part of the stack the repository owns is the same on every machine: a difference there means the
    control data is stale, not foreign."""
    import frames

    here = {"manim": "0.22.0", "text shapes": "2", "font DejaVu Sans": "DejaVu Sans 155320"}
    monkeypatch.setattr(frames, "STACK", tmp_path / "drawing_stack.json")
    frames.STACK.write_text(json.dumps({**here, "text shapes": "1"}), encoding="utf-8")
    with pytest.raises(AssertionError, match=r"predates this checkout's text shapes .*--set_test"):
        stack_mismatch(here)
    frames.STACK.write_text(json.dumps({**here, "font DejaVu Sans": "DejaVu Sans 1"}), encoding="utf-8")
    assert stack_mismatch(here) == "font DejaVu Sans: control 'DejaVu Sans 1', here 'DejaVu Sans 155320'"
    frames.STACK.write_text(json.dumps(here), encoding="utf-8")
    assert stack_mismatch(here) is None
