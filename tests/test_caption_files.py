"""Every caption file a test build publishes (each figure's .srt and .vtt, the chapter video's), read back and held
to the rules of tools/voice/captions.py; a failure names the file, the event and the rule."""

import pytest

from tools.publish.publishing import manifest
from tools.voice import captions

pytestmark = pytest.mark.slow  # the real backprop build

CAPTION_FILES = ("srt", "vtt")  # the captions; chapters.vtt (the chapter marks) and other tracks are not captions
FPS = 15  # the test build's -q l


def _read(path) -> list[captions.Caption]:
    text = path.read_text(encoding="utf-8")
    return captions.parse_vtt(text) if path.suffix == ".vtt" else captions.parse_srt(text)


def test_every_published_caption_file_keeps_the_rules(backprop_build):
    out = backprop_build.out
    man = manifest.load(out)
    published = [f for entry in man.figures.values() for kind, f in entry.files.items() if kind in CAPTION_FILES]
    published += [
        f for video in man.chapter_videos.values() for kind, f in video.files.items() if kind in CAPTION_FILES
    ]
    assert len(published) == 2 * (len(man.figures) + len(man.chapter_videos)) > 2
    found = []
    for f in published:
        events = _read(out / f.path)
        assert events, f"{f.path}: no events"
        found += [f"{f.path}: {rule}" for rule in captions.violations(events, FPS)]
    assert found == []


def test_no_event_of_a_figure_breaks_inside_a_word_of_its_cue(backprop_build):
    """Each figure's events, grouped by the cue whose voice they follow (the transcript's starts), break only
    between jieba words of that cue's caption."""
    out = backprop_build.out
    found = []
    for entry in manifest.load(out).figures.values():
        events = captions.parse_srt((out / entry.files["srt"].path).read_text(encoding="utf-8"))
        starts = [line["start"] for line in entry.cues] + [float("inf")]
        for line, start, after in zip(entry.cues, starts, starts[1:], strict=False):
            own = [e.text for e in events if start - 0.002 <= e.start < after - 0.002]
            assert own, f"{entry.figure}: no event for cue {line['cue']} (its voice starts at {start:.3f} s)"
            found += [f"{entry.figure}/{line['cue']}: {b}" for b in captions.word_breaks(line["text"], own)]
    assert found == []
