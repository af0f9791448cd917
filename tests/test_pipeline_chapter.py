"""The pipeline chapter (专题五): each figure's facts against figures.md Part C, a tamper test per figure,
the traces it publishes, the topics of the catalogue."""

import json
from fractions import Fraction

import pytest
from helpers import in_play_order, refused

from tools.chapters import pipeline as chapter
from tools.course import catalogue
from tools.models import pipeline as pp

FIGURES = (
    "pipeline_gpipe",
    "pipeline_1f1b",
    "pipeline_interleaved",
    "pipeline_zero_bubble",
    "pipeline_bidirectional",
    "pipeline_summary",
    "moe_flow",
)


def texts(figure, *names):
    facts = catalogue.facts(figure)
    return tuple(facts[name].text for name in names)


# -- the figures' numbers --------------------------------------------------------------------


def test_the_chapter_opens_topic_5():
    assert catalogue.chapter("pipeline").topic.chapters[0] == "pipeline"
    assert in_play_order("pipeline", FIGURES) == list(FIGURES)
    assert catalogue.chapter("pipeline").topic.number == "专题五"


def test_gpipe_bubble_idle_and_in_flight():
    assert texts("pipeline_gpipe", "bubble", "ratio", "idle_total", "area", "peak") == (
        "27.3%",
        "3/11",
        "36",
        "132",
        "8",
    )
    rows = catalogue.facts("pipeline_gpipe")["rows"].value
    assert [(r["m"], r["bubble"], r["peak"]) for r in rows] == [
        ("4", "42.9%", "4"),
        ("8", "27.3%", "8"),
        ("16", "15.8%", "16"),
    ]


def test_1f1b_same_bubble_fewer_in_flight_and_the_notes_recipe_from_1():
    assert texts("pipeline_1f1b", "bubble", "gpipe_bubble", "idle_total", "gpipe_idle_total") == (
        "27.3%",
        "27.3%",
        "36",
        "36",
    )
    assert texts("pipeline_1f1b", "peak_0", "peak_1", "peak_2", "peak_3", "gpipe_peak") == ("4", "3", "2", "1", "8")
    recipe = catalogue.facts("pipeline_1f1b")["recipe"].value
    assert [(r["warmup"], r["up_front"], r["notes_1"], r["notes_0"]) for r in recipe] == [
        ("3", "4", "4", "5"),
        ("2", "3", "3", "4"),
        ("1", "2", "2", "3"),
        ("0", "1", "1", "2"),
    ]


def test_interleaving_halves_the_triangle_and_doubles_the_sends():
    assert texts("pipeline_interleaved", "bubble", "base_bubble", "ratio", "last_start", "base_last_start") == (
        "15.8%",
        "27.3%",
        "3/19",
        "1.5",
        "3",
    )
    assert texts("pipeline_interleaved", "sends", "base_sends", "hops", "base_hops") == ("16", "8", "7", "3")
    assert texts("pipeline_interleaved", "peak_0", "peak_1", "peak_2", "peak_3") == ("5.5", "4.5", "3.5", "2.5")
    assert catalogue.facts("pipeline_interleaved")["notes_placement"].value == "s0 0 4 / s1 1 5 / s2 2 6 / s3 3 7"


def test_zero_bubble_keeps_a_third_and_h2_pays_in_flight():
    assert texts("pipeline_zero_bubble", "base_idle", "h1_idle", "third", "base_bubble", "h1_bubble") == (
        "9",
        "3",
        "1/3",
        "27.3%",
        "11.1%",
    )
    assert texts("pipeline_zero_bubble", "h1_peak", "base_peak", "h2_peak", "h2_span_idle", "h2_edges") == (
        "4",
        "4",
        "7",
        "0",
        "3",
    )


def test_bidirectional_v3_table_and_the_v_placement():
    assert texts("pipeline_bidirectional", "one_f_one_b_units", "zb1p_units", "dualpipe_units") == ("21", "7", "6")
    assert texts("pipeline_bidirectional", "chimera_idle", "base_idle", "chimera_weights", "v_idle", "v_peak") == (
        "2",
        "6",
        "2×",
        "6",
        "9",
    )
    table = catalogue.facts("pipeline_bidirectional")["table"].value
    assert [(r["name"], r["bubble"], r["simulated"], r["weights"], r["activation"], r["devices"]) for r in table] == [
        ("1F1B", "21", "21", "1×", "PP", "PP"),
        ("ZB1P", "7", "7", "1×", "PP", "PP"),
        ("DualPipe", "6", "6", "2×", "PP + 1", "PP"),
        ("DualPipeV", "6", "6", "2×", "PP + 1", "PP/2"),
    ]
    assert catalogue.facts("pipeline_bidirectional")["notes_placement"].value == "s0 0 7 / s1 1 6 / s2 2 5 / s3 3 4"


def test_summary_rows_come_from_the_simulator():
    rows = {r["name"]: r for r in catalogue.facts("pipeline_summary")["rows"].value}
    assert {n: (r["bubble"], r["peak"], r["weights"]) for n, r in rows.items()} == {
        "GPipe": ("27.3%", "8", "1×"),
        "1F1B": ("27.3%", "4", "1×"),
        "交错 1F1B": ("15.8%", "5.5", "1×"),
        "ZB-H1": ("11.1%", "4", "1×"),
        "ZB-H2": ("11.1%", "7", "1×"),
        "Chimera": ("11.1%", "4", "2×"),
        "DualPipe": ("7.7%", "5", "2×"),
        "DualPipeV": ("11.1%", "4.5", "1×"),
    }
    assert [n for n, r in rows.items() if r["own_span_zero"]] == ["ZB-H2"]


def test_moe_nine_copies_are_the_activation_tables():
    assert texts("moe_flow", "experts", "top_k", "shared", "copies", "dispatched") == (
        "256",
        "8",
        "1",
        "9",
        "15.75 GiB",
    )
    assert catalogue.facts("moe_flow")["copies"].value == catalogue.facts("activation_mountain")["copies"].value


# -- tamper tests ----------------------------------------------------------------------------


def test_gpipe_refuses_a_schedule_that_is_not_gpipe():
    assert refused(chapter.pipeline_gpipe, "pipeline_gpipe", schedule=pp.one_f_one_b).fact == "peak in-flight rank 0"


def test_1f1b_refuses_the_notes_recipe_counted_from_0():
    # D21: with stages counted from 0, the recipe's count (one more than Megatron's) is not Part C's order.
    assert refused(chapter.pipeline_1f1b, "pipeline_1f1b", warmup=lambda p, m, r: min(p - r, m)).fact == "order rank 0"


def test_interleaving_refuses_an_order_that_is_not_part_cs(monkeypatch):
    swapped = list(chapter.VPP_PAGE_ORDERS)
    swapped[1] = swapped[1].replace("F0.4 B1.0", "B1.0 F0.4")
    monkeypatch.setattr(chapter, "VPP_PAGE_ORDERS", tuple(swapped))
    assert refused(chapter.pipeline_interleaved, "pipeline_interleaved").fact == "order rank 1"


def test_interleaving_refuses_a_placement_that_is_not_the_notes(monkeypatch):
    monkeypatch.setattr(chapter, "NOTES_VPP_PLACEMENT", ((0, 7), (1, 6), (2, 5), (3, 4)))
    assert refused(chapter.pipeline_interleaved, "pipeline_interleaved").fact.startswith("placement")


def test_zero_bubble_needs_equal_times_for_h2_to_close_every_gap():
    uneven = pp.Times(f=Fraction(1), b=Fraction(3), w=Fraction(1))
    assert (
        refused(chapter.pipeline_zero_bubble, "pipeline_zero_bubble", times=uneven).fact
        == "ZB-H2 idle within rank 0's own span"
    )


def test_bidirectional_refuses_the_v3_table_at_another_pp():
    assert refused(chapter.pipeline_bidirectional, "pipeline_bidirectional", pp_stages=6).fact == "V3 table 1F1B bubble"


def test_summary_refuses_a_1f1b_row_that_holds_what_gpipe_holds(monkeypatch):
    monkeypatch.setattr(chapter, "one_f_one_b_timeline", chapter.gpipe_timeline)
    assert refused(chapter.pipeline_summary, "pipeline_summary").fact == "1F1B peak in-flight"


def test_moe_refuses_a_routing_that_does_not_make_nine_copies():
    assert refused(chapter.moe_flow, "moe_flow", top_k=7).fact == "copies per token"


# -- the traces ------------------------------------------------------------------------------

TRACED = {
    "pipeline_gpipe": (chapter.gpipe_timeline, "bubble"),
    "pipeline_1f1b": (chapter.one_f_one_b_timeline, "bubble"),
    "pipeline_interleaved": (chapter.interleaved_timeline, "bubble"),
    "pipeline_zero_bubble": (lambda: chapter.zero_bubble_timelines()[0], "h1_bubble"),
    "pipeline_bidirectional": (chapter.dualpipe_v_timeline, None),
}


def test_every_schedule_figure_and_only_those_publish_a_trace():
    traced = {fig.id for fig in catalogue.chapter("pipeline").figures if fig.attachments}
    assert traced == set(TRACED)
    for fig_id in traced:
        (attached,) = catalogue.figure(fig_id).attachments
        assert attached.suffix == "trace.json"
        assert "perfetto" in attached.how_to.lower()
        assert "chrome://tracing" in attached.how_to


@pytest.mark.parametrize("fig_id", sorted(TRACED))
def test_a_trace_parses_matches_the_simulator_and_its_idle_time_is_the_bubble(fig_id):
    (attached,) = catalogue.figure(fig_id).attachments
    trace = json.loads(attached.make())
    timeline_of, bubble_fact = TRACED[fig_id]
    tl = timeline_of()
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    ops = sorted((e["pid"], e["name"], e["ts"], e["dur"]) for e in slices if e["name"] != "bubble")
    assert ops == sorted((s.rank, s.name, int(s.start * 1000), int((s.end - s.start) * 1000)) for s in tl.slots)
    processes = {e["pid"] for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
    assert processes == set(range(tl.ranks))
    idle = Fraction(sum(e["dur"] for e in slices if e["name"] == "bubble"), 1000)
    assert idle / (tl.ranks * tl.makespan) == tl.bubble()
    if bubble_fact:  # the bubble the figure asserts and shows
        shown = catalogue.facts(fig_id)[bubble_fact]
        assert float(idle / (tl.ranks * tl.makespan)) == pytest.approx(shown.value, abs=1e-12)
    else:  # DualPipeV: the V3 table's idle time per rank, as the figure shows it
        assert idle / tl.ranks == catalogue.facts(fig_id)["v_idle"].value


# -- topics ----------------------------------------------------------------------------------


def test_every_chapter_has_one_topic_and_a_topics_chapters_play_together():
    order = [catalogue.topic_of(ch).number for ch in catalogue.CHAPTER_ORDER]
    assert order == sorted(order, key=[t.number for t in catalogue.TOPICS].index)
    for topic in catalogue.TOPICS:
        assert all(sum(ch in t.chapters for t in catalogue.TOPICS) == 1 for ch in topic.chapters)
    assert [catalogue.topic_of(ch).number for ch in ("backprop", "optimizer", "ledger")] == ["专题四"] * 3


def test_a_chapter_without_a_topic_is_named():
    with pytest.raises(catalogue.UnknownFigure, match="chapter 'nowhere' belongs to no topic"):
        catalogue.topic_of("nowhere")
