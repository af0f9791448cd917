"""The serving chapter (专题七): each figure's facts against the chapter's reference values, a tamper test per
figure, the trace pd_timeline publishes, and the time its facts take."""

import json
import time
from dataclasses import replace

import pytest
from helpers import in_play_order, refused

from tools.chapters import serving as chapter
from tools.course import catalogue
from tools.course.facts import Check
from tools.models import serving as sv

FIGURES = ("pd_roofline", "pd_kv_cache_bytes", "pd_timeline", "pd_ratio_sweep", "pd_goodput")


def texts(figure, *names):
    facts = catalogue.facts(figure)
    return tuple(facts[name].text for name in names)


def test_the_chapter_opens_topic_7_in_its_order():
    assert in_play_order("serving", FIGURES) == list(FIGURES)
    assert catalogue.chapter("serving").topic.number == "专题七"


# -- the figures' numbers --------------------------------------------------------------------


def test_roofline_ridge_intensities_and_attention():
    assert texts("pd_roofline", "ridge", "ai_1", "ai_64", "ai_2048", "n_ridge") == (
        "295",
        "1.0",
        "63.0",
        "1,365",
        "319",
    )
    assert texts("pd_roofline", "attn_decode", "attn_mha", "attn_prefill") == ("8", "1", "1,820")


def test_kv_cache_bytes_prompts_compression_and_transfer():
    assert texts("pd_kv_cache_bytes", "per_token", "per_token_kib", "gib_4k", "gib_32k", "gib_128k", "gb_128k") == (
        "327,680 B",
        "320 KiB",
        "1.25 GiB",
        "10 GiB",
        "40 GiB",
        "42.95 GB",
    )
    assert texts("pd_kv_cache_bytes", "mha_mib", "mha_times", "mla", "mla_times") == (
        "2.5 MiB",
        "8×",
        "70,272 B",
        "4.7×",
    )
    assert texts("pd_kv_cache_bytes", "move_4k", "move_4k_fast", "move_128k", "move_128k_fast") == (
        "15.4 ms",
        "7.1 ms",
        "0.49 s",
        "0.23 s",
    )
    assert texts("pd_kv_cache_bytes", "prefill_4k", "per_layer", "wire", "exposed_streamed", "share_128k") == (
        "149 ms",
        "1.87 ms",
        "0.19 ms",
        "0.19 ms",
        "4.8%",
    )


def test_timeline_colocated_stalls_and_the_split_queues():
    assert texts("pd_timeline", "mixed_gap", "split_gap", "mixed_ttft", "split_ttft") == (
        "414.1 ms",
        "27.1 ms",
        "0.121 s",
        "0.279 s",
    )
    assert texts("pd_timeline", "mixed_tpot", "split_tpot", "blocks", "block_short", "block_long") == (
        "8.87 ms",
        "7.95 ms",
        "12",
        "40.1 ms",
        "143.5 ms",
    )
    assert texts("pd_timeline", "segments_mixed", "segments_split", "transfers", "worst_request") == (
        "1,074",
        "634",
        "12",
        "2",
    )


def test_ratio_sweep_utilisation_attainment_and_v3():
    assert texts("pd_ratio_sweep", "mean_prefill", "util_1", "util_2", "util_3") == (
        "83.0 ms",
        "1.993",
        "0.996",
        "0.664",
    )
    assert texts("pd_ratio_sweep", "met_0", "met_1", "met_2", "met_3") == ("0.47", "0.03", "0.70", "1.00")
    facts = catalogue.facts("pd_ratio_sweep")
    assert facts["ttft90"].value == ["0.163 s", "10.664 s", "0.729 s", "0.197 s"]
    assert facts["tpot90"].value == ["18.93 ms", "8.09 ms", "8.97 ms", "11.21 ms"]  # the reference: 8.05, 8.93, 11.15
    assert facts["why"].value == ["TPOT", "TTFT", "TTFT", ""]
    assert texts("pd_ratio_sweep", "tokens_per_s", "v3_ratio") == ("6,912 token/s", "10×")


def test_goodput_doubles_under_a_strict_slo_and_loses_under_a_loose_one():
    facts = catalogue.facts("pd_goodput")
    assert facts["goodput"].value == {"strict": (16, 8, 20, 32), "loose": (44, 8, 20, 32)}
    assert texts("pd_goodput", "strict_ratio", "loose_ratio", "per_gpu_mixed", "per_gpu_split") == (
        "2.00×",
        "0.73×",
        "0.50",
        "1.00",
    )


# -- tamper tests ----------------------------------------------------------------------------


def test_roofline_refuses_another_gpu():
    faster = replace(sv.Instance(), peak_bandwidth=4.8e12)
    assert refused(chapter.pd_roofline, "pd_roofline", instance=faster).fact == "ridge point (FLOP/B)"


def test_kv_bytes_refuse_an_fp8_cache():
    fp8 = replace(sv.LLAMA_31_70B, bytes_per_value=1)
    assert refused(chapter.pd_kv_cache_bytes, "pd_kv_cache_bytes", model=fp8).fact == "KV bytes per token (reference)"


def test_timeline_refuses_other_runs():
    def three_colocated():
        requests = sv.workload(10, 12, 3)
        return (
            sv.simulate(requests, sv.Layout(colocated=3), trace=True),
            sv.simulate(requests, sv.Layout(prefill=1, decode=1), trace=True),
        )

    assert (
        refused(chapter.pd_timeline, "pd_timeline", runs=three_colocated).fact
        == "colocated ttft per request (reference)"
    )


def test_ratio_sweep_refuses_another_rate():
    assert refused(chapter.pd_ratio_sweep, "pd_ratio_sweep", rate=20).fact == "prefill utilisation P = 1"


def test_goodput_refuses_another_threshold():
    assert refused(chapter.pd_goodput, "pd_goodput", share=0.8).fact == "goodput, strict SLO (reference)"


# -- the trace -------------------------------------------------------------------------------


def test_only_the_timeline_publishes_a_trace():
    traced = {fig.id for fig in catalogue.chapter("serving").figures if fig.attachments}
    assert traced == {"pd_timeline"}
    (attached,) = catalogue.figure("pd_timeline").attachments
    assert attached.suffix == "trace.json"
    assert "perfetto" in attached.how_to.lower()


def test_the_trace_has_a_track_per_instance_and_every_block_and_transfer_of_the_simulator():
    (attached,) = catalogue.figure("pd_timeline").attachments
    trace = json.loads(attached.make())
    processes = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"}
    assert len(processes) == 4
    assert [name.split(" · ")[0] for name in processes.values()] == ["混部", "混部", "分离", "分离"]
    mixed, split = chapter.timeline_runs()
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(slices) == len(mixed.segments) + len(split.segments)
    kinds = {k: sum(e["cat"] == k for e in slices) for k in ("prefill", "decode", "transfer")}
    assert kinds == {
        k: sum(s.kind == k for run in (mixed, split) for s in run.segments) for k in ("prefill", "decode", "transfer")
    }
    assert {e["tid"] for e in slices if e["cat"] == "transfer"} == {1}
    assert {e["pid"] for e in slices if e["cat"] == "transfer"} == {2}  # the prefill instance's link
    ends = max(e["ts"] + e["dur"] for e in slices)
    assert ends == pytest.approx(max(s.end for run in (mixed, split) for s in run.segments) * 1e6, abs=1e-2)


# -- speed -----------------------------------------------------------------------------------


def test_the_chapters_facts_take_at_most_3_s_of_cpu():
    chapter.timeline_runs.cache_clear()
    chapter.sweep_run.cache_clear()
    start = time.process_time()
    for fig in catalogue.chapter("serving").figures:
        fig.build(Check(fig.id))
    assert time.process_time() - start < 3.0
