"""The render queue: longest expected render first, from recorded render times or the narration's length."""

import json

from tools.course import catalogue
from tools.publish import build, manifest
from tools.publish.manifest import PublishedFigure
from tools.publish.render import RenderKey


def _published(fig_id: str, duration: float, render_seconds: float) -> PublishedFigure:
    fig = catalogue.figure(fig_id)
    return PublishedFigure(fig.chapter, fig_id, fig.title, duration, 854, 480, {}, {}, "key", {}, {}, render_seconds)


OPTIMIZER = [fig.id for fig in catalogue.chapter("optimizer").figures]


def test_recorded_render_times_put_the_longest_render_first():
    figures = [catalogue.figure(fig_id) for fig_id in OPTIMIZER]
    recorded = {fig_id: 10.0 + n for n, fig_id in enumerate(OPTIMIZER)}
    recorded["saddle_3d_rotating"] = 71.0
    published = {fig_id: _published(fig_id, 60.0, seconds) for fig_id, seconds in recorded.items()}
    expected = build.expected_render_seconds(figures, published, {fig_id: 60.0 for fig_id in OPTIMIZER})
    queue = build.longest_first([(fig, RenderKey({})) for fig in figures], expected)
    assert [fig.id for fig, _ in queue] == sorted(OPTIMIZER, key=lambda fig_id: -recorded[fig_id])
    assert queue[0][0].id == "saddle_3d_rotating"


def test_a_figure_never_rendered_is_estimated_from_its_narration_at_the_median_rate():
    a, b, new = (catalogue.figure(fig_id) for fig_id in OPTIMIZER[:3])
    # Renders took 2 and 3 s per second of video: the median rate is 3 (the upper middle of two).
    published = {a.id: _published(a.id, 40.0, 80.0), b.id: _published(b.id, 20.0, 60.0)}
    expected = build.expected_render_seconds([a, b, new], published, {a.id: 40.0, b.id: 20.0, new.id: 50.0})
    assert expected == {a.id: 80.0, b.id: 60.0, new.id: 150.0}
    queue = build.longest_first([(fig, RenderKey({})) for fig in (a, b, new)], expected)
    assert [fig.id for fig, _ in queue] == [new.id, a.id, b.id]


def test_with_no_render_times_at_all_the_longest_narration_goes_first():
    figures = [catalogue.figure(fig_id) for fig_id in OPTIMIZER[:3]]
    narration = dict(zip(OPTIMIZER[:3], (30.0, 90.0, 60.0)))
    expected = build.expected_render_seconds(figures, {}, narration)
    queue = build.longest_first([(fig, RenderKey({})) for fig in figures], expected)
    assert [fig.id for fig, _ in queue] == [OPTIMIZER[1], OPTIMIZER[2], OPTIMIZER[0]]


def test_a_manifest_from_before_render_times_loads_with_none_recorded(tmp_path):
    entry = _published("optimal_step_parabola", 40.0, 12.5)
    raw = manifest.to_json(manifest.Manifest("480p15", [], {entry.figure: entry}))
    assert raw["figures"][entry.figure]["render_seconds"] == 12.5
    del raw["figures"][entry.figure]["render_seconds"]
    (tmp_path / manifest.NAME).write_text(json.dumps(raw))
    assert manifest.load(tmp_path).figures[entry.figure].render_seconds == 0.0
