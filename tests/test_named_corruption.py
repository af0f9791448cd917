"""Named corruption: `--rescan` names every sidecar it cannot read and what it did with it; a cache entry that
fails to decode is named, deleted and made again, never used."""

from __future__ import annotations

import json

import pytest

from tools.course import catalogue
from tools.files import file_sha256
from tools.publish.build import build, plan, stages
from tools.publish.checks import stills
from tools.publish.publishing import manifest
from tools.publish.publishing.manifest import PublishedFigure, PublishedFile
from tools.voice import audio, cues, speech

CORRUPT = {
    "exchange_rate": "{{{",  # the issue's: not JSON
    "first_gradient": '{"figure": {"chapter": "backprop", "figu',  # cut short
    "backprop_nudge_3b1b": "[1, 2, 3]",  # JSON, not a record
    "layer_two_matmuls": '{"figure": "a string"}',  # a record of the wrong shape
    "vanishing_gradients": '{"figure": {"chapter": "backprop"}}',  # fields missing
}


def _publish_stand_in(out, chapter: str, fig_id: str) -> None:
    """Files and a sidecar for one figure, as publish leaves them (as in test_manifest)."""
    files = {}
    for ext in ("mp4", "srt", "vtt", "png", "webp"):
        path = out / chapter / f"{fig_id}.{ext}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"clip {ext}")
        files[ext] = PublishedFile(f"{chapter}/{fig_id}.{ext}", file_sha256(path))
    manifest.write_sidecar(out, PublishedFigure(chapter, fig_id, "t", 42.0, 854, 480, {}, files, "key", {}))


def test_rescan_names_every_sidecar_it_cannot_read_and_what_it_did(isolated):
    """Seen: a sidecar overwritten by `{{{` made `lecture build --rescan` say "0 restored", never naming it."""
    out = build.renders_dir("l")
    _publish_stand_in(out, "backprop", "gates_circuit")
    for fig_id, text in CORRUPT.items():
        _publish_stand_in(out, "backprop", fig_id)
        (out / "backprop" / f"{fig_id}.json").write_bytes(text.encode())
    (out / "backprop.json").write_bytes(b"\xff\xfe not text")  # the chapter video's sidecar
    said: list[str] = []
    result = build.rescan("l", said.append)
    report = "\n".join(said)
    assert list(result.manifest.figures) == ["gates_circuit"]
    for fig_id in CORRUPT:
        line = next((s for s in said if f"backprop/{fig_id}.json" in s), None)
        assert line is not None, f"{fig_id}.json is not named:\n{report}"
        assert "cannot read" in line
        assert "left as it is" in line, line
        assert "needs a render" in line, line
        assert fig_id in result.to_render
    chapter_line = next((s for s in said if "backprop.json" in s), "")
    assert "cannot read" in chapter_line, report
    assert "joined again" in chapter_line, report
    assert "Traceback" not in report


def _silent_cue_audio():
    cue = cues.figure_cues("gates_circuit")[0]
    return cue, audio.cue_audio(cue, speech.Silent())


@pytest.mark.parametrize("damage", [b"", b"RIFF\x00\x00", b"not a wav at all"])
def test_a_cached_cue_audio_that_fails_to_decode_is_named_deleted_and_made_again(isolated, damage, monkeypatch):
    monkeypatch.setenv("LECTURE_VOICE", "silent")
    cue, made = _silent_cue_audio()
    good = made.path.read_bytes()
    made.path.write_bytes(damage)
    said: list[str] = []
    planned = plan.draft(catalogue.figure("gates_circuit"), speech.Silent())
    narration = stages.narrate((planned,), speech.Silent(), said.append)
    again = narration.paths["gates_circuit"][cue.id]
    assert again.read_bytes() == good
    assert narration.seconds["gates_circuit"] > 0
    warning = [s for s in said if str(made.path) in s]
    assert warning, "\n".join(said)
    assert "could not be decoded" in warning[0]
    assert "deleted and made again" in warning[0]


@pytest.mark.parametrize("damage", ["[]", '{"key": "k"}', '{"key": "k", "records": 3}', "{{{"])
def test_a_cached_still_that_fails_to_decode_is_named_deleted_and_never_used(isolated, damage):
    fig = catalogue.figure("gates_circuit")
    folder = stills.cache_dir()
    folder.mkdir(parents=True)
    (folder / f"{fig.id}.png").write_bytes(b"\x89PNG not really")
    (folder / f"{fig.id}.json").write_text(damage.replace('"k"', json.dumps("k")))
    said: list[str] = []
    assert stills._cached(fig, "k", said.append) is None
    assert said, "the damaged entry was not named"
    assert f"{fig.id}.json" in said[0]
    assert "deleted" in said[0]
    assert not (folder / f"{fig.id}.json").exists()


@pytest.mark.parametrize(
    "damage",
    ["{{{", '{"pinyin": "chong2"}', '{"pinyin": 1, "undecided": []}', '{"pinyin": "x", "undecided": [[1]]}', "\udcff"],
)
def test_a_cached_reading_that_fails_to_decode_is_named_deleted_and_read_again(isolated, capsys, damage):
    text = "重算一遍"
    cues._READ.clear()
    first = cues._reading(text)
    (kept,) = (isolated / "cache" / "readings").glob("*.json")
    kept.write_text(damage, encoding="utf-8", errors="surrogateescape")
    cues._READ.clear()
    again = cues._reading(text)
    assert again == first
    assert f"readings: cached {kept} could not be decoded" in capsys.readouterr().err
    assert json.loads(kept.read_text(encoding="utf-8"))["pinyin"] == first.pinyin
