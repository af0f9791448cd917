"""The layout lint: its rules on made-up looks, the probe in a 3-D scene, the stills cache, and a
deliberately misplaced label in a scratch copy of a scene, reported with figure, cue and both texts."""

import shutil
import sys

import numpy as np
import pytest
from helpers import ROOT, run

from tools.course import catalogue
from tools.publish.checks import layout, stills
from tools.publish.checks.layout import END
from tools.publish.keys import render_key

FRAME = {"width": 14.222, "height": 8.0, "edge": 0.35, "caption_band": 0.15}  # the band's top is y = -2.8


def _text(words, box):
    return {"kind": "text", "what": words, "box": list(box)}


def _shape(name, box):
    return {"kind": "shape", "what": name, "box": list(box)}


def _look(moment, *items, waivers=()):
    return {"figure": "demo", "moment": moment, "items": list(items), "frame": FRAME, "waivers": list(waivers)}


def _rules(findings):
    return [(f.moment, f.rule) for f in findings]


# -- the rules --------------------------------------------------------------------------------


def test_two_labels_on_each_other_are_reported_with_both_texts_and_boxes():
    look = _look("cue_a", _text("梯度", (0, 0, 1, 0.3)), _text("权重", (0.5, 0.1, 1.5, 0.4)))
    findings = layout.judge("demo", [look])
    assert _rules(findings) == [("cue_a", "overlap")]
    message = str(findings[0])
    assert message.startswith("demo, cue 'cue_a': overlap:")
    assert "「梯度」 at (0.00, 0.00)–(1.00, 0.30)" in message
    assert "「权重」 at (0.50, 0.10)–(1.50, 0.40)" in message


def test_neighbours_that_only_touch_or_graze_are_not_an_overlap():
    touching = _look("cue_a", _text("甲", (0, 0, 1, 0.3)), _text("乙", (1, 0, 2, 0.3)))
    grazing = _look("cue_b", _text("甲", (0, 0, 1, 0.3)), _text("乙", (0.97, 0, 2, 0.3)))  # 3% of the smaller box
    assert layout.judge("demo", [touching, grazing]) == []
    assert layout.overlap_share([0, 0, 1, 0.3], [0.97, 0, 2, 0.3]) == pytest.approx(0.03)


def test_a_label_on_a_shape_is_fine():
    look = _look("cue_a", _shape("Rectangle", (-1, -1, 1, 1)), _text("权重", (-0.3, -0.1, 0.3, 0.1)))
    assert layout.judge("demo", [look]) == []


def test_anything_past_the_safe_margin_is_off_frame():
    inside = _text("标题", (-6.76, 3.2, 0, 3.65))  # title.to_corner(UP + LEFT, buff=EDGE)
    past = _text("图例", (3.0, 3.0, 6.8, 3.3))
    arrow = _shape("Arrow", (5.0, 0, 7.2, 0.1))
    findings = layout.judge("demo", [_look("cue_a", inside, past, arrow)])
    assert [(f.rule, "「图例」" in f.detail or "Arrow" in f.detail) for f in findings] == [("off frame", True)] * 2
    assert all("right safe margin (0.35" in f.detail for f in findings)


def test_the_caption_band_is_clear_while_a_cue_plays_and_the_source_line_may_sit_there_after():
    note = _text("注：示意数", (-3, -3.1, 3, -2.85))
    source = _text("课程页 §1", (-6.76, -3.65, 0, -3.37))
    findings = layout.judge("demo", [_look("cue_a", note), _look(END, note, source)])
    assert _rules(findings) == [("cue_a", "caption band")]
    assert "reaches below y = -2.80" in findings[0].detail


def test_a_row_of_shapes_in_the_band_is_one_finding():
    cards = [_shape("Square", (x, -3.1, x + 0.27, -2.83)) for x in np.arange(-4.8, 6.0, 0.34)]
    findings = layout.judge("demo", [_look("cue_a", *cards)])
    assert len(findings) == 1
    assert f"{len(cards)} × Square" in findings[0].detail


def test_the_same_fault_at_later_cues_is_folded_into_its_first():
    clash = (_text("甲", (0, 0, 1, 0.3)), _text("乙", (0.2, 0, 1.2, 0.3)))
    findings = layout.judge("demo", [_look("one", *clash), _look("two", *clash), _look(END, *clash)])
    assert len(findings) == 1
    assert findings[0].also == ("two", END)
    assert str(findings[0]).endswith("(still at two, (end))")


def test_a_waiver_names_one_pair_and_a_reason():
    clash = (_text("甲", (0, 0, 1, 0.3)), _text("乙", (0.2, 0, 1.2, 0.3)), _text("丙", (0.3, 0, 1.3, 0.3)))
    waived = layout.judge("demo", [_look("one", *clash, waivers=[("乙", "甲", "甲 sits on 乙 on purpose")])])
    assert [("甲" in f.detail and "乙" in f.detail) for f in waived] == [False, False]  # 甲–丙 and 乙–丙 remain
    stale = layout.judge("demo", [_look("one", clash[0], waivers=[("甲", "丁", "once needed")])])
    assert _rules(stale) == [(END, "waiver")]
    assert "matches no overlap" in stale[0].detail
    silent = layout.judge("demo", [_look("one", *clash[:2], waivers=[("甲", "乙", " ")])])
    assert _rules(silent) == [(END, "waiver")]
    assert "gives no reason" in silent[0].detail


def test_a_scene_that_recorded_nothing_is_a_finding():
    assert _rules(layout.judge("demo", [])) == [(END, "no looks")]


# -- the probe ----------------------------------------------------------------------------------


def test_the_probe_projects_3d_mobjects_and_leaves_text_fixed_in_frame_where_it_is():
    from manim import DEGREES, Dot, Text, ThreeDScene, ValueTracker

    from scenes import layout_probe

    scene = ThreeDScene()
    scene.set_camera_orientation(phi=70 * DEGREES, theta=-30 * DEGREES)
    raised = Dot((2.0, 0.0, 2.0), radius=0.05)
    label = Text("固定", font_size=24).move_to((-5.0, 3.0, 0))
    scene.renderer.camera.add_fixed_in_frame_mobjects(label)
    scene.add(raised, label, ValueTracker(7.0))
    items = layout_probe.items(scene)
    assert [i["kind"] for i in items] == ["shape", "text"]  # the ValueTracker is never drawn
    projected = scene.renderer.camera.project_point(np.array((2.0, 0.0, 2.0)))
    assert np.allclose(np.mean(np.reshape(items[0]["box"], (2, 2)), axis=0), projected[:2], atol=0.01)
    assert not np.allclose(projected[:2], (2.0, 0.0), atol=0.3)
    assert np.allclose(np.mean(np.reshape(items[1]["box"], (2, 2)), axis=0), (-5.0, 3.0), atol=0.01)


def test_a_still_is_the_screen_at_its_look_though_the_next_look_draws_before_it_is_saved(tmp_path, monkeypatch):
    """The still is saved on a thread while the scene runs on; the screen drawn for the next look must not
    reach it (the camera's image shares the camera's pixels). The saving thread is held until the next draw."""
    import threading

    from manim import RED, Circle, Scene, Square
    from PIL import Image

    from scenes import layout_probe
    from tools import settings

    monkeypatch.setenv(settings.STILLS_OUT_ENV, str(tmp_path))
    monkeypatch.delenv(settings.STILLS_HAVE_ENV, raising=False)
    scene = Scene()
    scene.add(Square(color=RED, fill_opacity=1))
    held = threading.Event()
    layout_probe._saver().submit(held.wait)  # the saver is busy until the next look has drawn
    first = layout_probe._still(scene)["still"]
    expected = scene.renderer.camera.pixel_array.copy()
    scene.clear().add(Circle())
    second = layout_probe._still(scene)["still"]
    held.set()
    layout_probe._stills_written()
    assert first != second
    assert np.array_equal(np.asarray(Image.open(tmp_path / f"{first}.png")), expected)


def test_invisible_mobjects_are_not_looked_at():
    from manim import Scene, Square, Text

    from scenes import layout_probe

    scene = Scene()
    scene.add(Square().set_opacity(0), Text("看不见").set_opacity(0), Text("看得见"))
    assert [i["what"] for i in layout_probe.items(scene)] == ["看得见"]


# -- the cache ----------------------------------------------------------------------------------


@pytest.fixture
def counted_runs(isolated, monkeypatch, tmp_path):
    """stills.run replaced by a stand-in that records which figures it was asked to run."""
    asked = []

    def fake_run(figures, work, jobs=2):
        asked.append([fig.id for fig in figures])
        png = tmp_path / "frame.png"
        png.write_bytes(b"png")
        return {fig.id: stills.Still([{"figure": fig.id, "moment": END}], png) for fig in figures}

    monkeypatch.setattr(stills, "run", fake_run)
    return asked


def test_an_unchanged_figure_is_not_run_again_and_an_edited_one_is(counted_runs, tmp_path, monkeypatch):
    figures = [catalogue.figure("gates_circuit"), catalogue.figure("exchange_rate")]
    first = stills.current(figures, say=lambda line: None)
    assert counted_runs == [["gates_circuit", "exchange_rate"]]
    assert first["gates_circuit"].png.read_bytes() == b"png"
    assert first["gates_circuit"].png.parent == stills.cache_dir()
    stills.current(figures, say=lambda line: None)
    assert counted_runs == [["gates_circuit", "exchange_rate"]]
    scene_file = tmp_path / "backprop.py"
    source = catalogue.chapter("backprop").scene_file.read_text(encoding="utf-8")
    header = "class GatesCircuit(LectureScene):\n"
    scene_file.write_text(source.replace(header, header + "    EDITED = 1\n"))
    monkeypatch.setattr(catalogue.Chapter, "scene_file", property(lambda ch: scene_file))
    stills.current(figures, say=lambda line: None)
    assert counted_runs[-1] == ["gates_circuit"]


def test_the_probe_is_in_the_stills_key_but_not_in_the_render_key():
    chapter_ids = {ch.id for ch in catalogue.chapters()}
    assert "layout_probe.py" not in {p.name for p in render_key.shared_scene_files(chapter_ids)}
    assert stills.PROBE.exists()
    assert "layout_probe" in stills.PROBE.name


# -- a misplaced label, for real ------------------------------------------------------------------


@pytest.mark.slow  # runs manim, animations skipped
def test_a_misplaced_label_in_a_scratch_copy_is_reported_by_check_and_build_with_figure_cue_and_both_texts(tmp_path):
    """`lecture check --layout` reports it; `lecture build` lints first and refuses before rendering (the other
    tests build with --no-layout)."""
    copy = tmp_path / "project"
    for part in ("tools", "scenes", "narration"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "manim.cfg", copy / "manim.cfg")
    scenes = copy / "scenes" / "backprop.py"
    source = scenes.read_text(encoding="utf-8")
    # The gradient labels go above their wires, onto the values, instead of under them.
    grad_label = (
        "style.zh(text, size=style.LABEL_SIZE, color=style.BACKWARD).next_to(\n"
        "            self._anchor(name, wires), DOWN"
    )
    assert grad_label in source
    scenes.write_text(source.replace(grad_label, grad_label[:-4] + "UP"), encoding="utf-8")
    env = {"PYTHONPATH": str(copy), "LECTURE_CACHE": str(tmp_path / "cache")}
    done = run(
        [sys.executable, "-m", "tools.cli", "check", "--layout", "--only", "backprop/gates_circuit"], cwd=copy, env=env
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "gates_circuit, cue 'gates_seed': overlap: 「−4」 at" in done.stderr
    assert "and 「1」 at" in done.stderr
    renders = tmp_path / "renders"
    built = run(
        [sys.executable, "-m", "tools.cli", "build", "-q", "l", "--only", "backprop/gates_circuit"],
        cwd=copy,
        env=env | {"LECTURE_RENDERS": str(renders)},
    )
    assert built.returncode == 2, built.stderr
    assert "gates_circuit, cue 'gates_seed': overlap: 「−4」 at" in built.stderr, built.stderr
    assert not list(renders.rglob("*.mp4"))
