"""Video files through PyAV: probe streams, grab frames, remux for the web."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import av


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
    """The decoded frame at `seconds` (the last frame when None), as a PIL image."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        if seconds is not None:
            container.seek(int(max(0.0, seconds - 1.0) / stream.time_base), stream=stream)
        chosen = None
        for frame in container.decode(stream):
            if seconds is not None and frame.time is not None and frame.time > seconds + 1e-6 and chosen is not None:
                break
            chosen = frame
        if chosen is None:
            raise ValueError(f"{path}: no video frame")
        return chosen.to_image()


def _encoded_audio(wav: Path, seconds: float, stream) -> list:
    """AAC packets of the WAV, cut or padded with silence to `seconds`."""
    import numpy as np

    with av.open(str(wav)) as source:
        resampler = av.AudioResampler(format="fltp", layout="mono", rate=stream.rate)
        chunks = [out.to_ndarray() for frame in source.decode(audio=0) for out in resampler.resample(frame)]
        chunks += [out.to_ndarray() for out in resampler.resample(None)]
    samples = np.concatenate(chunks, axis=1) if chunks else np.zeros((1, 0), np.float32)
    wanted = round(seconds * stream.rate)
    samples = np.pad(samples[:, :wanted], ((0, 0), (0, max(0, wanted - samples.shape[1]))))
    packets, block = [], stream.codec_context.frame_size or 1024
    for start in range(0, wanted, block):
        frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(samples[:, start:start + block]),
                                           format="fltp", layout="mono")
        frame.rate, frame.pts = stream.rate, start
        packets += stream.encode(frame)
    return packets + list(stream.encode(None))


def mux_web(video: Path, wav: Path, dst: Path, metadata: dict[str, str] | None = None) -> None:
    """Write an MP4 for the web: the video's h264 packets copied, the WAV as
    AAC of exactly the video's length, interleaved in time, moov first."""
    with av.open(str(video)) as source, av.open(str(dst), "w", format="mp4",
                                                options={"movflags": "+faststart"}) as target:
        for key, val in (metadata or {}).items():
            target.metadata[key] = val
        v_in = source.streams.video[0]
        v_out = target.add_stream_from_template(v_in)
        a_out = target.add_stream("aac", rate=48000, layout="mono")
        pending = _encoded_audio(wav, _stream_seconds(v_in), a_out)
        for packet in source.demux(v_in):
            if packet.dts is None:
                continue
            now = float(packet.dts * packet.time_base)
            while pending and float(pending[0].pts * pending[0].time_base) <= now:
                target.mux(pending.pop(0))
            packet.stream = v_out
            target.mux(packet)
        for packet in pending:
            target.mux(packet)


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
