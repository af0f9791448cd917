"""The render queue: longest expected render first, from recorded render times or the narration's length;
a figure that would hold up the build cut into segments."""

import json
import threading
import time

import pytest

from tools.course import catalogue
from tools.publish import build, manifest, segments
from tools.publish.manifest import PublishedFigure
from tools.publish.segments import Segment
from tools.publish.work_queue import WorkQueue


def _published(fig_id: str, duration: float, render_seconds: float) -> PublishedFigure:
    fig = catalogue.figure(fig_id)
    return PublishedFigure(fig.chapter, fig_id, fig.title, duration, 854, 480, {}, {}, "key", {}, {}, render_seconds)


OPTIMIZER = [fig.id for fig in catalogue.chapter("optimizer").figures]


def _run_order(expected: dict[str, float]) -> list[str]:
    """The order a one-thread WorkQueue starts tasks queued with these estimates."""
    queue, started = WorkQueue(1), []
    for fig_id, seconds in expected.items():
        queue.add(seconds, lambda fig_id=fig_id: started.append(fig_id))
    queue.run()
    return started


def test_recorded_render_times_put_the_longest_render_first():
    figures = [catalogue.figure(fig_id) for fig_id in OPTIMIZER]
    recorded = {fig_id: 10.0 + n for n, fig_id in enumerate(OPTIMIZER)}
    recorded["saddle_3d_rotating"] = 71.0
    published = {fig_id: _published(fig_id, 60.0, seconds) for fig_id, seconds in recorded.items()}
    expected = build.expected_render_seconds(figures, published, {fig_id: 60.0 for fig_id in OPTIMIZER})
    assert _run_order(expected) == sorted(OPTIMIZER, key=lambda fig_id: -recorded[fig_id])
    assert _run_order(expected)[0] == "saddle_3d_rotating"


def test_a_figure_never_rendered_is_estimated_from_its_narration_at_the_median_rate():
    a, b, new = (catalogue.figure(fig_id) for fig_id in OPTIMIZER[:3])
    # Renders took 2 and 3 s per second of video: the median rate is 3 (the upper middle of two).
    published = {a.id: _published(a.id, 40.0, 80.0), b.id: _published(b.id, 20.0, 60.0)}
    expected = build.expected_render_seconds([a, b, new], published, {a.id: 40.0, b.id: 20.0, new.id: 50.0})
    assert expected == {a.id: 80.0, b.id: 60.0, new.id: 150.0}
    assert _run_order(expected) == [new.id, a.id, b.id]


def test_with_no_render_times_at_all_the_longest_narration_goes_first():
    figures = [catalogue.figure(fig_id) for fig_id in OPTIMIZER[:3]]
    narration = dict(zip(OPTIMIZER[:3], (30.0, 90.0, 60.0)))
    expected = build.expected_render_seconds(figures, {}, narration)
    assert _run_order(expected) == [OPTIMIZER[1], OPTIMIZER[2], OPTIMIZER[0]]


def test_a_manifest_from_before_render_times_loads_with_none_recorded(tmp_path):
    entry = _published("optimal_step_parabola", 40.0, 12.5)
    raw = manifest.to_json(manifest.Manifest("480p15", [], {entry.figure: entry}))
    assert raw["figures"][entry.figure]["render_seconds"] == 12.5
    del raw["figures"][entry.figure]["render_seconds"]
    (tmp_path / manifest.NAME).write_text(json.dumps(raw))
    assert manifest.load(tmp_path).figures[entry.figure].render_seconds == 0.0


def test_a_task_can_queue_more_and_the_longer_one_runs_first():
    queue, started = WorkQueue(1), []

    def plan():
        started.append("plan")
        queue.add(5.0, lambda: started.append("segment 1"))
        queue.add(9.0, lambda: started.append("segment 0"))

    queue.add(7.0, lambda: started.append("other"))
    queue.add(20.0, plan)
    queue.run()
    assert started == ["plan", "segment 0", "other", "segment 1"]


def test_the_first_failure_stops_the_queue_and_is_raised():
    queue, started, other_running = WorkQueue(2), [], threading.Event()

    def fails():
        other_running.wait(5)
        raise RuntimeError("manim failed on optimizer/saddle_3d_rotating")

    def running():  # still running when the other fails: it finishes
        other_running.set()
        time.sleep(0.3)
        started.append("running")

    queue.add(10.0, fails)
    queue.add(9.0, running)
    queue.add(1.0, lambda: started.append("never"))
    with pytest.raises(RuntimeError, match="saddle_3d_rotating"):
        queue.run()
    assert started == ["running"]


def test_cuts_fall_between_plays_cover_every_play_once_and_balance_the_work():
    frames = [15, 90, 30, 30, 120, 45, 15, 60, 30, 15]
    for pieces in (2, 3, 4):
        cuts = segments.cut(frames, pieces)
        assert len(cuts) == pieces and cuts[0].first == 0 and cuts[-1].last is None
        assert all(a.last + 1 == b.first for a, b in zip(cuts, cuts[1:]))
        worst = max(segments.cost(frames, c.first, len(frames) - 1 if c.last is None else c.last) for c in cuts)
        # No other cut into as many pieces has a cheaper worst segment (all of them, tried for 2 pieces).
        if pieces == 2:
            assert worst == min(max(segments.cost(frames, 0, k - 1), segments.cost(frames, k, len(frames) - 1))
                                for k in range(1, len(frames)))
    assert segments.cut(frames, 1) == [Segment(0, None)]
    assert segments.cut([40], 2) == [Segment(0, None)]  # one play cannot be cut
    assert Segment(3, 7).flag == "3,7" and Segment(8, None).flag == "8"


def test_a_lone_figure_is_split_across_the_workers_and_a_chapter_of_similar_ones_is_not():
    assert segments.pieces_for({"saddle_3d_rotating": 71.0}, jobs=2) == {"saddle_3d_rotating": 2}
    assert segments.pieces_for({"saddle_3d_rotating": 71.0}, jobs=1) == {"saddle_3d_rotating": 1}
    similar = {f"figure_{n}": 20.0 + n for n in range(6)}
    assert set(segments.pieces_for(similar, jobs=2).values()) == {1}
    # One figure far longer than the rest: it is cut, the rest are not.
    lopsided = {"long": 120.0, "a": 10.0, "b": 12.0}
    assert segments.pieces_for(lopsided, jobs=2) == {"long": 2, "a": 1, "b": 1}
    assert segments.makespan(lopsided, {"long": 2, "a": 1, "b": 1}, 2) < segments.makespan(
        lopsided, dict.fromkeys(lopsided, 1), 2)
