"""Video files through PyAV: probe streams, grab frames, remux for the web."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import av

from tools.publish.publishing.sound import AUDIO_LAYOUT, AUDIO_RATE, chapter_packets, decoded, encoded, fitted


@dataclass(frozen=True)
class Probe:
    video_codec: str | None
    audio_codec: str | None
    video_seconds: float
    audio_seconds: float
    width: int
    height: int

    @property
    def seconds(self) -> float:
        return max(self.video_seconds, self.audio_seconds)


def _stream_seconds(stream) -> float:
    if stream.duration is not None:
        return float(stream.duration * stream.time_base)
    return 0.0


def probe(path: Path) -> Probe:
    """Codecs and per-stream durations of a media file."""
    with av.open(str(path)) as container:
        video = next(iter(container.streams.video), None)
        audio = next(iter(container.streams.audio), None)
        return Probe(
            video.codec_context.name if video else None,
            audio.codec_context.name if audio else None,
            _stream_seconds(video) if video else 0.0,
            _stream_seconds(audio) if audio else 0.0,
            video.codec_context.width if video else 0,
            video.codec_context.height if video else 0,
        )


def frame_at(path: Path, seconds: float | None = None):
    """The decoded frame at `seconds` (the last frame when None), as a PIL image.

    Decoding starts at the keyframe before a second ahead of it (every play of a render starts on one), not at
    the file's start: the last frame of a 100 s figure at 1080p60 took 3 s to reach from the start."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        until = seconds if seconds is not None else (_stream_seconds(stream) or math.inf)
        if until < math.inf:
            container.seek(int(max(0.0, until - 1.0) / stream.time_base), stream=stream)
        chosen = None
        for frame in container.decode(stream):
            if frame.time is not None and frame.time > until + 1e-6 and chosen is not None:
                break
            chosen = frame
        if chosen is None:
            raise ValueError(f"{path}: no video frame")
        return chosen.to_image()


def _interleave(target, video_packets, audio_packets: list) -> None:
    """Mux video packets (already pointed at their output stream) and audio
    packets in decoding-time order."""
    pending = list(audio_packets)
    for packet in video_packets:
        if packet.dts is None:
            continue
        now = float(packet.dts * packet.time_base)
        while pending and float(pending[0].pts * pending[0].time_base) <= now:
            target.mux(pending.pop(0))
        target.mux(packet)
    for packet in pending:
        target.mux(packet)


def _web_output(dst: Path, metadata: dict[str, str] | None):
    target = av.open(str(dst), "w", format="mp4", options={"movflags": "+faststart"})
    for key, val in (metadata or {}).items():
        target.metadata[key] = val
    return target


def _aac_stream(target):
    """FFmpeg's AAC encoder with its fast coder: a third of the default's time (0.8 s, not 2.4 s, for a
    106 s figure), about 90 kbit/s for speech where the default makes 80, and closer to the samples."""
    return target.add_stream("aac", rate=AUDIO_RATE, layout=AUDIO_LAYOUT, options={"aac_coder": "fast"})


def mux_web(video: Path, wav: Path, dst: Path, metadata: dict[str, str] | None = None) -> None:
    """Write an MP4 for the web: the video's h264 packets copied, the WAV as
    AAC of exactly the video's length, interleaved in time, moov first."""
    with av.open(str(video)) as source, _web_output(dst, metadata) as target:
        v_in = source.streams.video[0]
        v_out = target.add_stream_from_template(v_in)
        a_out = _aac_stream(target)
        samples = fitted(decoded(wav), round(_stream_seconds(v_in) * AUDIO_RATE))

        def copied():
            for packet in source.demux(v_in):
                packet.stream = v_out
                yield packet

        _interleave(target, copied(), encoded(samples, a_out))


def moov_before_mdat(path: Path) -> bool:
    """Whether the MP4's index (moov) precedes its media data (web streaming)."""
    order = []
    with open(path, "rb") as f:
        while True:
            header = f.read(8)
            if len(header) < 8:
                break
            size, kind = int.from_bytes(header[:4], "big"), header[4:8].decode("latin-1")
            if size == 1:
                size = int.from_bytes(f.read(8), "big")
                f.seek(size - 16, 1)
            else:
                f.seek(size - 8, 1)
            order.append(kind)
            if size == 0:
                break
    return "moov" in order and "mdat" in order and order.index("moov") < order.index("mdat")


@dataclass(frozen=True)
class Joined:
    """What :func:`concat` wrote: where each clip starts, and how."""

    starts: list[float]  # seconds, one per clip, then the end of the last
    copied: bool  # video packets copied (True) or re-encoded (False)
    sound_copied: bool  # the clips' own AAC packets copied (True) or the whole sound encoded again


def _video_signature(stream) -> tuple:
    """What must agree for h264 packets of two files to share one stream."""
    ctx = stream.codec_context
    # The nominal frame rate (not average_rate, which each clip's own length skews).
    return (
        ctx.name,
        ctx.width,
        ctx.height,
        ctx.pix_fmt,
        ctx.profile,
        bytes(ctx.extradata or b""),
        stream.time_base,
        stream.guessed_rate,
    )


def concat(clips: list[Path], dst: Path, titles: list[str], metadata: dict[str, str] | None = None) -> Joined:
    """Join clips into one web MP4 with one chapter marker per clip.

    Video packets are copied with shifted timestamps when every clip's
    h264 stream has the same parameters (always true for clips of one
    quality rendered by one manim), else re-encoded to the first clip's
    size and rate. The clips' AAC packets are copied too, each clip's
    sound starting on the AAC frame nearest its video start, when that
    joins them exactly (:func:`tools.publish.publishing.sound.chapter_packets`); else
    each clip's sound is decoded, fitted to its video length, and the whole
    encoded once. Either way there is no click or drift at a boundary.
    """
    from contextlib import ExitStack
    from fractions import Fraction

    import numpy as np

    with ExitStack() as stack:
        sources = [stack.enter_context(av.open(str(clip))) for clip in clips]
        streams = [source.streams.video[0] for source in sources]
        lengths = [Fraction(s.duration) * s.time_base for s in streams]
        starts = [sum(lengths[:i], Fraction(0)) for i in range(len(lengths) + 1)]
        copy = len({_video_signature(s) for s in streams}) == 1
        target = stack.enter_context(_web_output(dst, metadata))
        first = streams[0]
        if copy:
            v_out = target.add_stream_from_template(first)
        else:
            v_out = target.add_stream("libx264", rate=first.guessed_rate)
            v_out.width, v_out.height, v_out.pix_fmt = first.codec_context.width, first.codec_context.height, "yuv420p"
        edges = [round(start * AUDIO_RATE) for start in starts]
        sound = chapter_packets(clips, edges)
        sound_copied = sound is not None
        if not sound_copied:
            a_out = _aac_stream(target)
            samples = np.concatenate(
                [fitted(decoded(clip), b - a) for clip, a, b in zip(clips, edges, edges[1:])], axis=1
            )
            sound = encoded(samples, a_out)
        else:
            a_out = target.add_stream_from_template(sources[0].streams.audio[0])  # what encoded the packets
            for packet in sound:
                packet.stream = a_out
        target.set_chapters(
            [
                {
                    "id": i + 1,
                    "start": round(start * 1000),
                    "end": round(end * 1000),
                    "time_base": Fraction(1, 1000),
                    "metadata": {"title": title},
                }
                for i, (start, end, title) in enumerate(zip(starts, starts[1:], titles))
            ]
        )

        def copied():
            for source, stream, start in zip(sources, streams, starts):
                shift = int(start / stream.time_base)
                for packet in source.demux(stream):
                    if packet.dts is None:
                        continue
                    packet.dts += shift
                    if packet.pts is not None:
                        packet.pts += shift
                    packet.stream = v_out
                    yield packet

        def reencoded():
            rate, last = first.guessed_rate, -1
            for source, stream, start in zip(sources, streams, starts):
                for frame in source.decode(stream):
                    pts = round((start + Fraction(frame.pts) * stream.time_base) * rate)
                    if pts <= last:  # a faster clip: drop the frames that fall between two
                        continue
                    last = pts
                    frame = frame.reformat(v_out.width, v_out.height, "yuv420p")
                    frame.pts, frame.time_base = pts, Fraction(1) / rate
                    yield from v_out.encode(frame)
            yield from v_out.encode(None)

        _interleave(target, copied() if copy else reencoded(), sound)
    return Joined([float(s) for s in starts], copy, sound_copied)


def chapter_marks(path: Path) -> list[tuple[float, float, str]]:
    """The file's chapter markers as (start, end, title), in seconds."""
    with av.open(str(path)) as container:
        return [
            (float(ch["start"] * ch["time_base"]), float(ch["end"] * ch["time_base"]), ch["metadata"].get("title", ""))
            for ch in container.chapters()
        ]


def _ink(image) -> float:
    """Share of pixels that stand out from the frame's background colour."""
    import numpy as np

    gray = np.asarray(image.convert("L"), dtype=np.int16)
    return float(np.mean(np.abs(gray - np.median(gray)) > 24))


def poster_frame(path: Path, seconds: float):
    """A frame that shows the figure: of the frames at 1/4, 1/2, 3/4 and the
    end, the latest with at least 90% of the most drawn content (a figure
    usually ends complete; a black or emptied end is passed over)."""
    candidates = [frame_at(path, f * seconds) for f in (0.25, 0.5, 0.75)] + [frame_at(path)]
    inks = [_ink(image) for image in candidates]
    return next(image for image, ink in reversed(list(zip(candidates, inks))) if ink >= 0.9 * max(inks))
