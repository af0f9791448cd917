"""One figure on several cores: an idle core takes over the second half of what a running render has left.

Each manim process renders a *part* of a figure: its plays from ``start``
seconds on, until it is told to stop. When the build's queue is empty and
a core would idle, :meth:`FigureRender.split` picks the part with the most
left to render (where it is comes from its progress file) and cuts it at
a time T in the middle of what it has left, a little later to make up
for the new process's start: T goes into the part's stop file, and a new
part renders from T on. scenes/segments.py makes both processes agree
on the cut (the first play that starts at or after T, on the same
clock) and makes the new one step through the plays before T exactly as
a render would. When every part is done, their partial movies (one per
play) are joined as manim joins a whole render's, which gives the whole
render's file byte for byte. The part that reached the figure's end
hands over the whole narration track and captions.

A cut is made only while the part has more than two START_SECONDS (and
a second) of rendering left, so short figures and the last seconds of a
figure stay in one process.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import av

from tools.files import write_atomically
from tools.publish import progress, render
from tools.publish.render import Rendered

# What a new part costs before it draws its first frame: forked from the warm server
# (tools/publish/launch.py), manim's command line, the figure's code, and stepping to the cut without
# drawing (measured at -q l: 0.6-1.0 s, for saddle_3d_rotating from 1 s and 25 s, optimal_step_parabola
# from 29 s).
START_SECONDS = 1.0


@dataclass
class Part:
    """One manim process's share of a figure: its plays from `start` seconds, up to `stop` (None: the end)."""

    start: float
    work: Path  # its manim work folder
    stop: float | None = None
    began: float = field(default_factory=time.monotonic)
    rendered: Rendered | None = None  # when its process is done
    ended: float | None = None

    @property
    def stop_file(self) -> Path:
        return render.stop_file(self.work)

    @property
    def progress_file(self) -> Path:
        return render.progress_file(self.work)

    def tell_stop(self, seconds: float) -> None:
        """Have the process stop at the first play starting at or after `seconds` (repr: read back exactly)."""
        self.stop = seconds
        write_atomically(self.stop_file, repr(seconds))


class FigureRender:
    """A figure's parts, as they are split and finished; the one that finishes last has the whole figure."""

    def __init__(
        self, video_seconds: float, render_seconds: float, work_folder: Callable[[], AbstractContextManager[Path]]
    ):
        self.video_seconds = video_seconds  # expected length of the figure
        self.rate = render_seconds / max(video_seconds, 1.0)  # expected render seconds per second of video
        self._work_folder = work_folder  # a fresh, locked work folder for a part
        self.parts: list[Part] = []
        self._lock = threading.Lock()
        self._folders = ExitStack()  # the parts' work folders, kept until the figure is joined

    def __enter__(self) -> FigureRender:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Remove the parts' work folders."""
        with self._lock:
            self._folders.close()

    def first(self) -> Part:
        with self._lock:
            return self._add(0.0, None)

    def _add(self, start: float, stop: float | None) -> Part:
        part = Part(start, self._folders.enter_context(self._work_folder()))
        if stop is not None:
            part.tell_stop(stop)
        self.parts.append(part)
        return part

    def left(self) -> float:
        """Render seconds the running parts still have, estimated; 0 when none runs."""
        with self._lock:
            return max((self._left(part)[0] for part in self.parts if part.rendered is None), default=0.0)

    def _left(self, part: Part) -> tuple[float, float]:
        """(render seconds it has left, the figure time it is at), from its progress and its rate so far."""
        rendered, at = progress.reported(part.progress_file)
        at = max(at, part.start)
        rate = (time.monotonic() - part.began) / rendered if rendered > 1.0 else self.rate
        end = part.stop if part.stop is not None else self.video_seconds
        return max(0.0, end - at) * rate, at

    def split(self) -> Part | None:
        """Cut the running part with the most left in two; the new part (its process not started yet), or None
        when no part has enough left to be worth a second process."""
        with self._lock:
            running = [part for part in self.parts if part.rendered is None]
            if not running:
                return None
            part = max(running, key=lambda p: self._left(p)[0])
            left, at = self._left(part)
            if left < 2 * START_SECONDS + 1.0:
                return None
            rate = max(left / max((part.stop or self.video_seconds) - at, 1e-3), 1e-3)
            cut = at + (left + START_SECONDS) / 2 / rate  # both sides done at about the same time
            old_stop = part.stop
            part.tell_stop(cut)
            return self._add(cut, old_stop)

    def finished(self, part: Part, rendered: Rendered) -> bool:
        """Record a part's files; True for the call that completes the figure."""
        with self._lock:
            part.rendered, part.ended = rendered, time.monotonic()
            return all(p.rendered is not None for p in self.parts)

    def render_seconds(self) -> float:
        """The parts' render times, summed: the whole figure's, as the manifest records it."""
        return sum(p.ended - p.began for p in self.parts if p.ended is not None)

    def whole(self, work: Path) -> Rendered:
        """The figure from its parts: their partial movies joined in play order (in `work`), under the track and
        captions of the part that ran to the end."""
        parts = sorted(self.parts, key=lambda p: p.start)
        last = next(p.rendered for p in parts if p.stop is None)
        if len(parts) == 1:
            return last
        video = work / "joined.mp4"
        join(sorted((path for p in parts for path in p.rendered.partials.glob("*.mp4")), key=lambda f: f.name), video)
        return Rendered(video, last.srt, last.track, last.progress, last.partials)


def join(partial_movies: list[Path], dst: Path) -> None:
    """One video from the parts' partial movies (one per play, in play order), joined as manim joins a
    whole render's: FFmpeg's concat demuxer, packets copied. Each play is encoded alone, so a part's
    partial movies are the whole render's, and the joined file is the whole render's file."""
    listing = "".join(f"file 'file:{path.as_posix()}'\n" for path in partial_movies)
    with (
        av.open(io.BytesIO(listing.encode()), format="concat", options={"safe": "0", "an": "1"}) as source,
        av.open(str(dst), "w") as target,
    ):
        stream = source.streams.video[0]
        v_out = target.add_stream_from_template(template=stream)
        for packet in source.demux(stream):
            if packet.dts is None:
                continue
            packet.dts = None  # as manim does: libav computes it across the files
            packet.stream = v_out
            target.mux(packet)
