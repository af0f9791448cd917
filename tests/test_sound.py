"""A chapter's sound joined from its clips' AAC packets: in place, click-free, and encoded only where it must be.

The clips are tiny synthetic ones (a 64×36 picture at 15 fps, tones for
sound) muxed the way publishing muxes a figure, so these run in seconds."""

import numpy as np
from helpers import synthetic_clip

from tools.publish.publishing import media, sound
from tools.publish.publishing.sound import AUDIO_RATE, FRAME

FPS = 15
PER_FRAME = AUDIO_RATE // FPS  # 3200 samples of sound per video frame
TONE = 0.3


def _tone(first: int, count: int, hz: float = 440.0) -> np.ndarray:
    """Samples first..first+count of one steady tone (so two pieces of it join seamlessly)."""
    return (TONE * np.sin(2 * np.pi * hz * np.arange(first, first + count) / AUDIO_RATE)).astype(np.float32)


# A ends in silence, 37 frames long, so B's video starts off the AAC frame grid (B's sound is placed
# 384 samples late). B ends in silence too; in the second chapter B' does not: its tone runs to its
# last sample and C carries it on, so that boundary must be seamless.
FRAMES = {"a": 37, "b": 40, "c": 30}


FADE = AUDIO_RATE // 100  # 10 ms: an abrupt start or stop smears over a frame in any AAC encoding


def _faded(samples: np.ndarray, at: int) -> np.ndarray:
    """Faded in, and silent from `at`, faded out over the FADE before."""
    out = samples.copy()
    out[:FADE] *= np.linspace(0, 1, FADE, dtype=np.float32)
    out[at - FADE : at] *= np.linspace(1, 0, FADE, dtype=np.float32)
    out[at:] = 0
    return out


def _sounds(b_ends_silent: bool) -> list[np.ndarray]:
    a = _faded(_tone(0, FRAMES["a"] * PER_FRAME, 330.0), 20 * PER_FRAME)
    b = _tone(0, FRAMES["b"] * PER_FRAME)
    c = _tone(FRAMES["b"] * PER_FRAME, FRAMES["c"] * PER_FRAME)
    if b_ends_silent:  # then each clip fades in and out
        return [a, _faded(b, 30 * PER_FRAME), _faded(c, len(c) - FADE)]
    return [a, b, c]


def _chapter(tmp_path, b_ends_silent: bool) -> tuple[media.Joined, np.ndarray, np.ndarray]:
    """Three clips joined: what the join reports, the joined sound decoded, and each clip's own sound
    decoded, in its place (on the AAC frame grid when the sound was copied), one after another."""
    paths = [tmp_path / f"{name}.mp4" for name in FRAMES]
    for path, samples in zip(paths, _sounds(b_ends_silent)):
        synthetic_clip(path, samples, FRAMES[path.stem], tmp_path / "work")
    joined = media.concat(paths, tmp_path / "joined.mp4", ["A", "B", "C"])
    heard = sound.decoded(tmp_path / "joined.mp4")[0]
    edges = _edges()
    starts = sound.placed_starts(edges) if joined.sound_copied else edges[:-1]
    expected = np.zeros(edges[-1], np.float32)
    for start, end, path in zip(starts, [*starts[1:], edges[-1]], paths):
        expected[start:end] = sound.fitted(sound.decoded(path), end - start)[0]
    return joined, heard[: len(expected)], expected


def _edges() -> list[int]:
    return [int(n) for n in np.cumsum([0] + [n * PER_FRAME for n in FRAMES.values()])]


def test_each_clip_sound_starts_on_the_aac_frame_nearest_its_picture():
    edges = _edges()
    starts = sound.placed_starts(edges)
    assert starts == [0, 116 * FRAME, 241 * FRAME]
    assert all(abs(start - edge) <= FRAME // 2 for start, edge in zip(starts, edges))


def test_clips_ending_in_silence_join_by_copying_their_own_sound(tmp_path):
    joined, heard, expected = _chapter(tmp_path, b_ends_silent=True)
    assert joined.copied
    assert joined.sound_copied
    # Each clip's packets decode in the chapter to what they decode to alone, in its place (but for the
    # faint start of its first window in the silent frame before it, which a clip alone trims); one
    # frame out of place would leave an error near the tone's own size.
    assert np.abs(heard - expected).max() < 0.01
    assert np.abs(expected).max() > 0.25  # there is sound to compare
    info = media.probe(tmp_path / "joined.mp4")
    assert abs(info.audio_seconds - info.video_seconds) < FRAME / AUDIO_RATE + 1e-3


def test_a_clip_that_does_not_end_in_silence_makes_the_join_encode_the_sound_whole(tmp_path):
    joined, heard, expected = _chapter(tmp_path, b_ends_silent=False)
    assert joined.copied
    assert not joined.sound_copied
    # Across B|C the tone goes on (C's own encoding smeared its abrupt start a little): a click, a
    # frame lost or repeated there would leave an error near the tone's own size.
    seam = _edges()[2]
    around = slice(seam - 4 * FRAME, seam + 4 * FRAME)
    assert np.abs(heard[around] - expected[around]).max() < TONE / 5


def test_copying_clip_sound_where_a_tone_runs_on_would_click(tmp_path):
    """Why the join checks for silence: the clips' own packets across B|C, where B's tone runs on."""
    for name, samples in zip(FRAMES, _sounds(b_ends_silent=False)):
        synthetic_clip(tmp_path / f"{name}.mp4", samples, FRAMES[name], tmp_path / "work")
    assert sound.chapter_packets([tmp_path / f"{name}.mp4" for name in FRAMES], _edges()) is None
    b = sound.own_sound(tmp_path / "b.mp4")
    assert not b.silent(b.length - FRAME)
    assert b.silent(b.length)
