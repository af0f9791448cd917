"""A figure's attachments (extra published files, e.g. a schedule's trace) and the topics in the embed kit,
without rendering: the render key, the checks, the manifest record, the kit's links and headings."""

import json
from dataclasses import replace

import pytest

from tools.course import catalogue
from tools.course.catalogue import Attachment
from tools.files import file_sha256
from tools.publish.checks import checks
from tools.publish.keys import render_key
from tools.publish.publishing.manifest import ChapterList, Manifest, PublishedFigure, PublishedFile, from_json, to_json
from tools.publish.rendering.render import BuildError
from tools.publish.site import site
from tools.voice.speech import Silent

TRACE = Attachment("trace.json", "模拟时间线", "在 Perfetto 打开", lambda: '{"traceEvents": []}')


def test_only_a_figure_with_attachments_has_them_in_its_render_key():
    plain = render_key.figure_key(catalogue.figure("gates_circuit"), "l", Silent())
    assert "attachments" not in plain.parts  # figures published before attachments existed keep their key
    traced = render_key.figure_key(catalogue.figure("pipeline_gpipe"), "l", Silent())
    assert set(traced.parts["attachments"]) == {"trace.json"}


def test_a_changed_attachment_is_named_as_the_reason_to_republish():
    fig = catalogue.figure("pipeline_gpipe")
    key = render_key.figure_key(fig, "l", Silent())
    old = {**key.parts, "attachments": {"trace.json": "an older trace"}}
    assert render_key.reasons(old, key) == ["attached files changed"]


@pytest.mark.parametrize("suffix", ["mp4", "json", "vtt", "facts.vtt"])
def test_an_attachment_may_not_take_a_clip_files_name(suffix):
    fig = replace(catalogue.figure("pipeline_gpipe"), attachments=(replace(TRACE, suffix=suffix),))
    with pytest.raises(BuildError, match=f"attachment '{suffix}' would collide"):
        checks.run([fig], only="attachments")


def test_an_empty_attachment_is_refused():
    fig = replace(catalogue.figure("pipeline_gpipe"), attachments=(replace(TRACE, make=lambda: " "),))
    with pytest.raises(BuildError, match=r"attachment 'trace\.json' is empty"):
        checks.run([fig], only="attachments")


def _published(out, chapter: str, fig_id: str, attachments: bool) -> PublishedFigure:
    folder = out / chapter
    folder.mkdir(parents=True, exist_ok=True)
    kinds = ["mp4", "srt", "vtt", "png", "webp"] + (["trace.json"] if attachments else [])
    for kind in kinds:
        (folder / f"{fig_id}.{kind}").write_text("WEBVTT\n" if kind == "vtt" else f"{kind} bytes", encoding="utf-8")
    files = {
        kind: PublishedFile(f"{chapter}/{fig_id}.{kind}", file_sha256(folder / f"{fig_id}.{kind}")) for kind in kinds
    }
    about = {"trace.json": {"label": TRACE.label, "how_to": TRACE.how_to}} if attachments else {}
    return PublishedFigure(chapter, fig_id, f"图 {fig_id}", 42.0, 854, 480, {}, files, attachments=about)


@pytest.fixture
def kit(tmp_path):
    out = tmp_path / "480p15"
    man = Manifest(
        "480p15",
        [
            ChapterList("ledger", "账本", ["zero_stages"], "专题四　训练一步的账"),
            ChapterList("pipeline", "流水线", ["pipeline_gpipe"], "专题五　切开模型"),
        ],
        {
            "zero_stages": _published(out, "ledger", "zero_stages", False),
            "pipeline_gpipe": _published(out, "pipeline", "pipeline_gpipe", True),
        },
    )
    return site.write_kit(out, man, catalogue.course_title()).path, man


def test_the_embed_page_links_the_trace_with_a_line_on_how_to_open_it(kit):
    path, _ = kit
    page = (path / "embed" / "pipeline_gpipe.html").read_text(encoding="utf-8")
    assert (
        '<p class="attachment"><a href="../media/pipeline/pipeline_gpipe.trace.json" download>模拟时间线</a>'
        "：在 Perfetto 打开</p>"
    ) in page
    assert (path / "media" / "pipeline" / "pipeline_gpipe.trace.json").read_text() == "trace.json bytes"
    assert '<p class="attachment">' not in (path / "embed" / "zero_stages.html").read_text(encoding="utf-8")


def test_embed_json_lists_a_figures_attachments(kit):
    path, _ = kit
    embed = json.loads((path / "embed.json").read_text(encoding="utf-8"))
    assert embed["figures"]["pipeline_gpipe"]["attachments"] == [
        {"path": "media/pipeline/pipeline_gpipe.trace.json", "label": "模拟时间线", "how_to": "在 Perfetto 打开"}
    ]
    assert embed["figures"]["zero_stages"]["attachments"] == []
    assert [ch["topic"] for ch in embed["chapters"]] == ["专题四　训练一步的账", "专题五　切开模型"]


def test_the_gallery_heads_each_topic_before_its_chapters(kit):
    path, _ = kit
    index = (path / "index.html").read_text(encoding="utf-8")
    order = [
        index.index(mark)
        for mark in (
            '<h2 class="topic-title">专题四',
            'id="chapter-ledger"',
            '<h2 class="topic-title">专题五',
            'id="chapter-pipeline"',
        )
    ]
    assert order == sorted(order)
    assert index.count('<section class="topic"') == 2
    assert 'href="#topic-2">专题五' in index


def test_the_manifest_keeps_attachments_and_topics_through_json(kit):
    _, man = kit
    again = from_json(json.loads(json.dumps(to_json(man))))
    assert again.figures["pipeline_gpipe"].attachments == man.figures["pipeline_gpipe"].attachments
    assert [ch.topic for ch in again.chapters] == [ch.topic for ch in man.chapters]
    old = to_json(man)
    for ch in old["chapters"]:
        del ch["topic"]  # a manifest written before topics existed still loads
    assert [ch.topic for ch in from_json(old).chapters] == ["", ""]
