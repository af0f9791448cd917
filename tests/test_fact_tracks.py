"""tools/publish/publishing/fact_tracks.py: the render's record of where each number is drawn, as a figure's
metadata and descriptions tracks, and a chapter's, moved to where each figure starts."""

import json

import pytest

from tools.publish.publishing import fact_tracks
from tools.publish.rendering.render import BuildError

FRAME = [14.222, 8.0]  # frame units of a 16:9 manim frame
FACTS = {
    "mixed_gap": {"text": "414.1 ms", "how": "模拟：最大的相邻 token 间隔"},
    "e4m3_max": {"text": "448", "how": "E4M3 的最大值 1.75 × 2⁸：最大的 |x| 被放到这里"},
    "rate": {"text": "2", "how": "差商：0.06 ÷ 0.03"},
    "spoken_only": {"text": "12", "how": "输入：请求数"},
}


def _interval(fact, start, end, box, words, at, formula=False, found="tag"):
    return {
        "fact": fact,
        "start": start,
        "end": end,
        "box": box,
        "words": words,
        "at": at,
        "formula": formula,
        "found": found,
    }


def _record(tmp_path, intervals):
    path = tmp_path / "narration.facts.json"
    path.write_text(json.dumps({"frame": FRAME, "intervals": intervals}), encoding="utf-8")
    return path


def _at(words, shown):
    return [words.index(shown), words.index(shown) + len(shown)]


LINE = "混部　平均首字 0.121 s　最长停顿 414.1 ms"
TOP = "4 个正数 · 7 段 · 最大 448"
SIGHTINGS = [
    _interval("mixed_gap", 47.556, 59.045, [2.251, -2.268, 3.604, -2.018], LINE, _at(LINE, "414.1 ms")),
    _interval("e4m3_max", 10.0, 30.0, [-7.111, 3.5, -6.0, 4.0], TOP, _at(TOP, "448")),
    _interval("rate", 12.0, 20.0, [4.213, 1.936, 4.355, 2.172], "0.06 div 0.03 = 2", [16, 17], formula=True),
]
LINES = [
    {"cue": "a", "start": 2.0, "duration": 20.0, "cites": ["rate"]},  # speaks 2 while it appears
    {"cue": "b", "start": 40.0, "duration": 10.0, "cites": ["other_figure.mixed_gap"]},
]


def _cues(text):
    return fact_tracks.cues_of(text, "test")


def test_each_interval_is_a_cue_whose_json_gives_the_fact_its_box_in_fractions_and_its_name(tmp_path):
    sightings = fact_tracks.read_sightings("pd_timeline", _record(tmp_path, SIGHTINGS), FACTS)
    track = fact_tracks.facts_track("pd_timeline", sightings, FACTS)
    assert track.startswith("WEBVTT\n\n00:00:47.556 --> 00:00:59.045\n{")
    cues = _cues(track)
    assert [(start, end) for start, end, _ in cues] == [(47.556, 59.045), (10.0, 30.0), (12.0, 20.0)]
    gap = json.loads(cues[0][2])
    assert (gap["figure"], gap["fact"]) == ("pd_timeline", "mixed_gap")
    # x from the frame's left edge, y down from its top edge, as fractions
    expected = [(2.251 + 7.111) / 14.222, (4 + 2.018) / 8, (3.604 + 7.111) / 14.222, (4 + 2.268) / 8]
    assert gap["box"] == pytest.approx(expected, abs=1e-4)
    assert gap["name"] == "414.1 ms：最长停顿"  # the words beside it in its clause
    assert json.loads(cues[1][2])["name"] == "448：最大"
    assert json.loads(cues[2][2])["name"] == "2：差商"  # a formula's number: named by how it is computed


def test_a_payload_never_holds_the_cue_arrow(tmp_path):
    facts = {"x": {"text": "1", "how": "a --> b"}}
    sighting = [_interval("x", 0, 1, [0, 0, 0.1, 0.1], "1", [0, 1])]
    track = fact_tracks.facts_track("f", fact_tracks.read_sightings("f", _record(tmp_path, sighting), facts), facts)
    ((_, _, payload),) = _cues(track)
    assert "-->" not in payload
    assert json.loads(payload)["name"] == "1：a --> b"


def test_a_number_that_appears_unspoken_is_described_once_and_a_spoken_one_is_not(tmp_path):
    sightings = fact_tracks.read_sightings("pd_timeline", _record(tmp_path, SIGHTINGS), FACTS)
    cues = _cues(fact_tracks.descriptions_track("pd_timeline", sightings, FACTS, LINES))
    # rate appears at 12 s while cue a, which cites it, plays; 448 at 10 s, unsaid; 414.1 ms at 47.6 s during cue b,
    # which cites another figure's mixed_gap
    assert cues == [(10.0, 13.0, "屏幕上：最大 448"), (47.556, 50.556, "屏幕上：最长停顿 414.1 ms")]


def test_a_descriptions_words_are_escaped_as_cue_text_and_a_payloads_are_not(tmp_path):
    facts = {"gap": {"text": "< 10⁻⁸", "how": "两条路之差"}}
    sighting = [_interval("gap", 1.0, 9.0, [0, 0, 1, 1], "误差 < 10⁻⁸", [3, 9])]
    sightings = fact_tracks.read_sightings("f", _record(tmp_path, sighting), facts)
    assert "屏幕上：误差 &lt; 10⁻⁸" in fact_tracks.descriptions_track("f", sightings, facts, [])
    ((_, _, payload),) = _cues(fact_tracks.facts_track("f", sightings, facts))
    assert json.loads(payload)["name"] == "< 10⁻⁸：误差"  # a metadata cue's text is handed over raw


def test_a_figure_with_nothing_unspoken_gets_a_track_with_no_cues(tmp_path):
    said = [{"cue": "all", "start": 0.0, "duration": 100.0, "cites": ["mixed_gap", "e4m3_max", "rate"]}]
    sightings = fact_tracks.read_sightings("pd_timeline", _record(tmp_path, SIGHTINGS), FACTS)
    assert fact_tracks.descriptions_track("pd_timeline", sightings, FACTS, said) == "WEBVTT\n\n"


def test_a_chapters_tracks_are_its_figures_moved_to_where_each_starts(tmp_path):
    sightings = fact_tracks.read_sightings("pd_timeline", _record(tmp_path, SIGHTINGS), FACTS)
    first, second = tmp_path / "a.facts.vtt", tmp_path / "b.facts.vtt"
    first.write_text(fact_tracks.facts_track("pd_timeline", sightings[:1], FACTS), encoding="utf-8")
    second.write_text(fact_tracks.facts_track("pd_timeline", sightings[1:2], FACTS), encoding="utf-8")
    cues = _cues(fact_tracks.shifted([(first, 0.0), (second, 61.5)]))
    assert [(start, end) for start, end, _ in cues] == [(47.556, 59.045), (71.5, 91.5)]
    assert json.loads(cues[1][2])["fact"] == "e4m3_max"  # the payload as it was


@pytest.mark.parametrize(
    ("written", "said"),
    [
        (None, "no readable record of where its facts are drawn"),
        ("{not json", "no readable record"),
        (json.dumps({"frame": FRAME, "intervals": [{"fact": "mixed_gap"}]}), "no readable record"),
        (json.dumps({"frame": FRAME, "intervals": [_interval("nope", 0, 1, [0, 0, 1, 1], "x", [0, 1])]}), "nope"),
    ],
)
def test_a_bad_record_is_refused_naming_the_figure_and_the_file(tmp_path, written, said):
    path = tmp_path / "narration.facts.json"
    if written is not None:
        path.write_text(written, encoding="utf-8")
    with pytest.raises(BuildError, match=f"figure 'pd_timeline'.*{said}") as refused:
        fact_tracks.read_sightings("pd_timeline", path, FACTS)
    assert str(path) in str(refused.value)


def test_a_track_that_is_not_webvtt_is_refused_by_name(tmp_path):
    bad = tmp_path / "x.facts.vtt"
    bad.write_text("00:00:01.000 --> 00:00:02.000\n{}\n", encoding="utf-8")
    with pytest.raises(BuildError, match=r"x\.facts\.vtt: not a WebVTT file"):
        fact_tracks.shifted([(bad, 0.0)])
