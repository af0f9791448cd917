"""The serving engine (tools/models/serving.py) against closed forms: intensities from array shapes, KV bytes,
the latency model, an uninterrupted decode stream when disaggregated, and the reference script's one rule."""

import itertools
import math

import numpy as np
import pytest

from tools.models import serving as sv

MODEL = sv.LLAMA_31_70B
H100 = sv.Instance()


# -- the model and the roofline ----------------------------------------------------------------


def test_llama_31_70b_shape_from_its_config_rule():
    assert (MODEL.head_dim, MODEL.ffn) == (128, 28672)
    assert MODEL.params == 70_553_706_496
    assert MODEL.matmul_params == MODEL.params - 128256 * 8192


@pytest.mark.parametrize("kv_heads", [1, 8, 64])
def test_kv_bytes_are_two_layers_heads_dims_bytes(kv_heads):
    assert MODEL.kv_bytes_per_token(kv_heads) == 2 * 80 * kv_heads * 128 * 2
    assert MODEL.kv_bytes_per_token() == 327_680


def test_mla_caches_one_latent_and_one_rope_key_per_layer():
    assert sv.mla_kv_bytes_per_token(512, 64, 61) == 70_272


@pytest.mark.parametrize("n", [1, 7, 64, 319, 2048, 8192])
def test_intensity_from_array_shapes_is_the_closed_form(n):
    d = 8192
    from_arrays = sv.linear_intensity_of_arrays(n, d, d)
    assert from_arrays == pytest.approx(n * d / (d + 2 * n), rel=1e-12)
    assert from_arrays == pytest.approx(sv.linear_intensity(n, d, d), rel=1e-12)


def test_the_arrays_take_no_memory_but_count_their_bytes():
    x = sv._shaped(2048, 8192)
    assert x.nbytes == 2048 * 8192 * 2
    assert x.base is not None
    assert x.base.nbytes == 2


@pytest.mark.parametrize("context", [1, 100, 4096, 131072])
def test_decode_attention_intensity_is_heads_over_kv_heads_whatever_the_context(context):
    assert sv.decode_attention_intensity(MODEL, context) == 64 / 8
    assert sv.decode_attention_intensity(MODEL, context, kv_heads=64) == 1.0


def test_the_roofline_bends_at_the_ridge():
    ridge = sv.ridge(989.4e12, 3.35e12)
    assert sv.attainable(ridge, 989.4e12, 3.35e12) == pytest.approx(989.4e12)
    assert sv.attainable(ridge / 2, 989.4e12, 3.35e12) == pytest.approx(989.4e12 / 2)
    assert sv.attainable(ridge * 2, 989.4e12, 3.35e12) == 989.4e12


# -- the latency model ---------------------------------------------------------------------------


def test_prefill_is_linear_plus_causal_attention_flops_at_half_the_peak():
    s = 4096
    expected = (2 * MODEL.matmul_params * s + 2 * 80 * s * s * 8192) / (8 * 989.4e12 * 0.5)
    assert H100.prefill([s]) == pytest.approx(expected, rel=1e-12)
    assert H100.prefill([1000, 3000]) == pytest.approx(H100.prefill([1000]) + H100.prefill([3000]), rel=1e-12)


def test_a_decode_step_reads_the_weights_once_and_every_kv_entry():
    memory = (2 * MODEL.params + 327_680 * 4097) / (8 * 3.35e12 * 0.7)
    assert H100.decode_step(1, 4097) == pytest.approx(memory, rel=1e-12)
    assert H100.decode_step(1, 4097) == pytest.approx(7.593e-3, abs=5e-7)
    big = 2000  # enough requests that the step's FLOPs outlast its bytes
    assert H100.decode_step(big, 0) == pytest.approx(2 * MODEL.matmul_params * big / H100.flops, rel=1e-12)


def test_streaming_exposes_one_layer_when_the_link_keeps_up_and_the_difference_when_not():
    done, exposed = sv.streamed_transfer(2.0, 0.5, 80)
    assert (done, exposed) == (160.5, 0.5)
    done, exposed = sv.streamed_transfer(1.0, 3.0, 10)  # link-bound: it starts after layer 1 and never waits
    assert done == pytest.approx(1 + 10 * 3.0)
    assert exposed == pytest.approx(10 * (3.0 - 1.0) + 1.0)


# -- the simulator -------------------------------------------------------------------------------


def test_the_workload_is_the_seeded_draw_in_order_gaps_prompts_outputs():
    requests = sv.workload(10, 12, 3)
    assert [round(r.arrival, 4) for r in requests[:3]] == [0.011, 0.05, 0.1899]
    assert [(r.prompt, r.output) for r in requests[:2]] == [(2018, 356), (2055, 376)]
    rng = np.random.default_rng(3)
    assert requests[-1].arrival == pytest.approx(float(np.cumsum(rng.exponential(0.1, 12))[-1]))


def test_one_request_disaggregated_is_prefill_then_transfer_then_an_uninterrupted_decode_stream():
    s, o = 3000, 40
    run = sv.simulate([sv.Request(0, 0.5, s, o)], sv.Layout(prefill=1, decode=1), trace=True)
    (out,) = run.outcomes
    assert out.ttft == pytest.approx(H100.prefill([s]), rel=1e-12)
    steps = [seg for seg in run.segments if seg.kind == "decode"]
    assert len(steps) == o - 1
    assert {seg.instance for seg in steps} == {1}
    assert steps[0].start == pytest.approx(out.first_token + H100.transfer(s), rel=1e-12)
    for a, b in itertools.pairwise(steps):
        assert b.start == a.end  # no gap between two steps: nothing else runs on a decode instance
    for k, seg in enumerate(steps, start=1):  # the k-th step reads the prompt and the k tokens so far
        assert seg.end - seg.start == pytest.approx(H100.decode_step(1, s + k), rel=1e-12)
    expected = (H100.transfer(s) + sum(H100.decode_step(1, s + k) for k in range(1, o))) / (o - 1)  # TPOT pays the hop
    assert out.tpot == pytest.approx(expected, rel=1e-12)


def test_a_decode_instance_runs_only_decode_steps_one_after_another():
    run = sv.simulate(sv.workload(10, 12, 3), sv.Layout(prefill=1, decode=1), trace=True)
    lane = sorted((seg for seg in run.segments if seg.instance == 1), key=lambda seg: seg.start)
    assert {seg.kind for seg in lane} == {"decode"}
    assert all(b.start >= a.end for a, b in itertools.pairwise(lane))
    assert sum(b.start > a.end for a, b in itertools.pairwise(lane)) < len(lane) / 10  # it rarely idles


def test_colocated_prefill_cuts_in_and_every_decoding_request_waits():
    first, second = sv.Request(0, 0.0, 1000, 200), sv.Request(1, 0.3, 4000, 10)
    run = sv.simulate([first, second], sv.Layout(colocated=1), trace=True)
    block = next(seg for seg in run.segments if seg.kind == "prefill" and seg.requests == (1,))
    before = max(seg.end for seg in run.segments if seg.kind == "decode" and seg.end <= block.start)
    assert block.start == before  # it waited for the step in progress, then went first
    gap = max(b - a for a, b in itertools.pairwise(run.token_times(0)))
    assert gap == pytest.approx(block.end - block.start + _step_after(run, block), rel=1e-9)  # its stall


def _step_after(run: sv.Run, block: sv.Segment) -> float:
    after = min((seg for seg in run.segments if seg.kind == "decode" and seg.start >= block.end), key=lambda s: s.start)
    return after.end - after.start


def test_a_layout_is_colocated_or_split_never_both():
    with pytest.raises(ValueError, match="either colocated"):
        sv.Layout(colocated=2, prefill=1)
    with pytest.raises(ValueError, match="at least one prefill and one decode"):
        sv.Layout(prefill=2)


# -- the reference script's rule -----------------------------------------------------------------


def test_the_reference_values_come_back_when_a_newcomer_joins_the_step_in_progress():
    """docs/figures.md#pd_timeline: the chapter's spec printed the 1P1D TPOT and gaps of a script that gave a
    request reaching a busy decode instance a token from the step already running. This engine lets it join
    the next step; with the script's rule instead, every printed digit comes back."""
    requests = sv.workload(10, 12, 3)
    ours = sv.simulate(requests, sv.Layout(prefill=1, decode=1), trace=True)
    theirs = sv.simulate(requests, sv.Layout(prefill=1, decode=1), trace=True, into_running_step=True)
    assert " ".join(f"{o.tpot * 1e3:.2f}" for o in theirs.outcomes) == (
        "7.88 7.86 7.86 7.93 7.83 7.90 8.06 7.84 7.84 7.97 8.01 7.96"
    )
    assert " ".join(f"{theirs.longest_gap(i) * 1e3:.1f}" for i in range(12)) == (
        "15.2 9.6 16.1 13.0 8.0 12.6 16.5 16.5 19.1 11.2 11.2 12.3"
    )
    assert sum(s.kind != "transfer" for s in theirs.segments) == 633
    assert f"{max(ours.longest_gap(i) for i in range(12)) * 1e3:.1f}" == "27.1"
    assert [o.ttft for o in ours.outcomes] == [o.ttft for o in theirs.outcomes]
    for o, t in zip(ours.outcomes, theirs.outcomes):
        assert o.tpot >= t.tpot  # joining the next step never makes a request faster
        assert math.isfinite(o.tpot)
