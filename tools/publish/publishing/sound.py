"""Sound through PyAV: decode to samples, fit to a length, encode AAC; a chapter's sound from its clips' packets.

Encoding a chapter's sound whole costs seconds per minute of it, so a
chapter re-joined after one clip changed would pay for every clip again.
Instead the join copies each clip's own AAC packets, as publishing
encoded them.

AAC codes frames of FRAME samples with windows two frames long that
overlap: the frame before a clip's start is decoded from the last window
of the clip before and the first window of this clip, which its own
encoding filled with silence there. So the copy is exact where the clip
before is silent in that frame (a figure ends on a silent hold), and
each clip's sound must start on a frame: the one nearest its video
start, at most half a frame (10.7 ms) early or late, an error that does
not add up along the chapter. Where a clip before is not silent there,
:func:`chapter_packets` says so and the chapter's sound is encoded whole.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np

AUDIO_RATE, AUDIO_LAYOUT = 48000, "mono"
FRAME = 1024  # samples in one AAC frame
SILENT = 2**-16  # below half a 16-bit step: a clip quieter than this is silent
TAIL = 2 * FRAME  # a clip's last samples read: the next clip's first frame starts at most a frame before its end


def decoded(path: Path) -> np.ndarray:
    """The first audio stream of a WAV or a clip as float samples, shape (1, n),
    at AUDIO_RATE (a clip's AAC encoder delay is dropped by the decoder)."""
    with av.open(str(path)) as source:
        resampler = av.AudioResampler(format="fltp", layout=AUDIO_LAYOUT, rate=AUDIO_RATE)
        chunks = [out.to_ndarray() for frame in source.decode(audio=0) for out in resampler.resample(frame)]
        chunks += [out.to_ndarray() for out in resampler.resample(None)]
    return np.concatenate(chunks, axis=1) if chunks else np.zeros((1, 0), np.float32)


def fitted(samples: np.ndarray, wanted: int) -> np.ndarray:
    """Samples cut or padded with silence to exactly `wanted`."""
    return np.pad(samples[:, :wanted], ((0, 0), (0, max(0, wanted - samples.shape[1]))))


def encoded(samples: np.ndarray, stream) -> list:
    """AAC packets of the samples, pts in samples from 0."""
    packets = []
    for start in range(0, samples.shape[1], FRAME):
        frame = av.AudioFrame.from_ndarray(
            np.ascontiguousarray(samples[:, start : start + FRAME]), format="fltp", layout=AUDIO_LAYOUT
        )
        frame.rate, frame.pts = stream.rate, start
        packets += stream.encode(frame)
    return packets + list(stream.encode(None))


@dataclass(frozen=True)
class ClipSound:
    """One clip's AAC packets as published, with pts from its start (the first, priming, at -FRAME),
    the samples it lasts, and its last TAIL samples decoded."""

    packets: list
    length: int
    tail: np.ndarray

    def silent(self, start: int) -> bool:
        """Whether it is silent for the FRAME samples from `start` (at least length - TAIL), or has ended."""
        offset = start - (self.length - TAIL)
        return bool(np.abs(self.tail[max(offset, 0) : max(offset + FRAME, 0)]).max(initial=0) <= SILENT)


TAIL_PACKETS = TAIL // FRAME + 3  # decoded for a clip's last TAIL samples (the first only overlaps the next)


def own_sound(clip: Path) -> ClipSound:
    """The clip's AAC packets, read without decoding them but the last few."""
    with av.open(str(clip)) as source:
        stream = source.streams.audio[0]
        packets = [p for p in source.demux(stream) if p.size]
        length = packets[-1].pts + packets[-1].duration
        decoder = av.CodecContext.create(stream.codec_context.name, "r")
        decoder.extradata = stream.codec_context.extradata
        tail, first = np.zeros(TAIL, np.float32), length - TAIL  # samples [first, length)
        for n, packet in enumerate(packets[-TAIL_PACKETS:]):
            for frame in decoder.decode(packet):
                samples, at = frame.to_ndarray()[0], packet.pts - first
                lo, hi = max(at, 0), min(at + len(samples), TAIL)
                if n and lo < hi:  # the first packet decoded lacks the overlap with the one before it
                    tail[lo:hi] = samples[lo - at : hi - at]
    return ClipSound(packets, length, tail)


def placed_starts(edges: list[int]) -> list[int]:
    """Where each clip's sound starts: on the AAC frame nearest its video start (edges in samples)."""
    return [0] + [round(edge / FRAME) * FRAME for edge in edges[1:-1]]


def chapter_packets(clips: list[Path], edges: list[int]) -> list | None:
    """The clips' own AAC packets one after another (edges: where each clip's video starts, then
    the end, in samples); None where that would not be exact (a clip not silent in the frame before
    the next starts): then the chapter's sound must be encoded whole."""
    starts = placed_starts(edges)
    ends = [*starts[1:], edges[-1]]
    packets = []
    for index, (clip, start, end) in enumerate(zip(clips, starts, ends)):
        sound = own_sound(clip)
        last = index == len(clips) - 1
        if not last and not sound.silent(end - start - FRAME):
            return None
        for packet in sound.packets:
            if packet.pts < end - start - (0 if last else FRAME):
                packet.pts = packet.dts = packet.pts + start
                packets.append(packet)
    gaps = [b.pts - a.pts for a, b in itertools.pairwise(packets) if b.pts - a.pts != FRAME]
    return None if gaps else packets
