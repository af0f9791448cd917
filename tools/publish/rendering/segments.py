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

Where the render time falls in a figure is known only roughly from its
progress: a figure whose costly plays sit at its end is cut too early.
Given the :class:`Costs` its last render measured (what each stretch of
the figure cost to draw, and to step through without drawing), a cut is
placed where both sides finish together, the new part's stepping to the
cut included. lecture preview keeps them from one draft to the next.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import av
import numpy as np

from tools.files import write_atomically
from tools.publish.rendering import progress, render
from tools.publish.rendering.render import Rendered

# What a new part costs before it draws its first frame: forked from the warm server
# (tools/publish/rendering/launch.py), manim's command line, the figure's code, and stepping to the cut without
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


@dataclass(frozen=True)
class Costs:
    """What a figure's last render spent, as wall seconds summed up to each figure time: drawing its plays
    (`drawn`, at the times `drawn_at`), and stepping through plays without drawing them, as a part does up
    to its cut (`stepped`, at `stepped_at`)."""

    drawn_at: tuple[float, ...]
    drawn: tuple[float, ...]
    stepped_at: tuple[float, ...] = (0.0,)
    stepped: tuple[float, ...] = (0.0,)

    def drawing(self, start: float, end: float) -> float:
        """Seconds to draw the figure from `start` to `end`."""
        return float(np.interp(end, self.drawn_at, self.drawn) - np.interp(start, self.drawn_at, self.drawn))

    def stepping(self, to: float) -> float:
        """Seconds to step from the figure's start to `to` (past what was measured, at its mean pace; never
        measured, a tenth of drawing there)."""
        last, spent = self.stepped_at[-1], self.stepped[-1]
        if last <= 0:
            return 0.1 * self.drawing(0.0, to)
        return float(np.interp(to, self.stepped_at, self.stepped)) + max(0.0, to - last) * spent / last

    @classmethod
    def measured(cls, parts: list[list[tuple[float, float, float]]]) -> Costs:
        """From each part's progress lines (rendered seconds, figure time, seconds since its scene was made):
        a line whose rendered seconds grew drew the stretch since the line before, any other stepped it.
        Stepping is taken from the part that stepped furthest."""
        drawn: list[tuple[float, float, float]] = []
        stepped: list[tuple[float, float, float]] = []
        for lines in parts:
            own: list[tuple[float, float, float]] = []
            before = (0.0, 0.0, 0.0)
            for line in lines:
                (drawn if line[0] > before[0] else own).append((before[1], line[1], line[2] - before[2]))
                before = line
            if sum(seconds for *_, seconds in own) > sum(seconds for *_, seconds in stepped):
                stepped = own
        return cls(*_summed(drawn), *_summed(stepped))

    def to_json(self) -> str:
        return json.dumps(self.__dict__)

    @classmethod
    def from_json(cls, text: str) -> Costs | None:
        """Costs written by to_json, or None for anything else (a file from another version, cut short)."""
        try:
            fields = {name: tuple(float(v) for v in values) for name, values in json.loads(text).items()}
            costs = cls(**fields)
        except (ValueError, TypeError, AttributeError):
            return None
        ok = len(costs.drawn_at) == len(costs.drawn) >= 1 and len(costs.stepped_at) == len(costs.stepped) >= 1
        return costs if ok and all(np.diff(costs.drawn_at) >= 0) and all(np.diff(costs.stepped_at) >= 0) else None


def _summed(stretches: list[tuple[float, float, float]]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(times, seconds spent up to each) from (start, end, seconds) stretches that do not overlap."""
    times, spent = [0.0], [0.0]
    for start, end, seconds in sorted(stretches):
        if start > times[-1]:
            times.append(start)
            spent.append(spent[-1])
        if end > times[-1]:
            times.append(end)
            spent.append(spent[-1] + seconds)
        else:  # a play of no figure time, or one that overlaps: its seconds counted where the sum is
            spent[-1] += seconds
    return tuple(times), tuple(spent)


class FigureRender:
    """A figure's parts, as they are split and finished; the one that finishes last has the whole figure."""

    def __init__(
        self,
        video_seconds: float,
        render_seconds: float,
        work_folder: Callable[[], AbstractContextManager[Path]],
        costs: Costs | None = None,
    ):
        self.video_seconds = video_seconds  # expected length of the figure
        self.costs = costs  # what its last render spent where, if known
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
        """(render seconds it has left, the figure time it is at), from its progress and its rate so far, or
        from the costs of the last render."""
        rendered, at = progress.reported(part.progress_file)
        at = max(at, part.start)
        end = part.stop if part.stop is not None else self.video_seconds
        if self.costs is not None:
            return self.costs.drawing(at, end), at
        rate = (time.monotonic() - part.began) / rendered if rendered > 1.0 else self.rate
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
            end = part.stop if part.stop is not None else self.video_seconds
            if self.costs is not None:
                cut = self._balanced_cut(at, end)
                if cut is None:
                    return None
            else:
                rate = max(left / max(end - at, 1e-3), 1e-3)
                cut = at + (left + START_SECONDS) / 2 / rate  # both sides done at about the same time
            old_stop = part.stop
            part.tell_stop(cut)
            return self._add(cut, old_stop)

    def _balanced_cut(self, at: float, end: float) -> float | None:
        """The time between `at` and `end` where drawing up to it takes as long as a new part's start, its
        stepping to it and drawing the rest (bisection: the first side grows, the second shrinks); None when
        a new part could not finish before the running one alone."""
        costs = self.costs

        def ahead(cut: float) -> float:  # how much longer the running side takes than the new one
            return costs.drawing(at, cut) - START_SECONDS - costs.stepping(cut) - costs.drawing(cut, end)

        if ahead(end) <= 0:
            return None
        low, high = at, end
        for _ in range(40):
            middle = (low + high) / 2
            low, high = (middle, high) if ahead(middle) < 0 else (low, middle)
        return high

    def measured_costs(self) -> Costs:
        """What this render spent where, from its parts' progress lines (call before close)."""
        with self._lock:
            return Costs.measured([progress.samples(part.progress_file) for part in self.parts])

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
        join(each_play_once([p.rendered.partials for p in parts]), video)
        return Rendered(video, last.srt, last.track, last.progress, last.partials)


def each_play_once(folders: list[Path]) -> list[Path]:
    """The partial movies in the parts' `folders`, in play order (each is named by its play's number), each play
    once. A part whose stop time reached it late (over a cluster, up to a relay's poll after the cut) has
    rendered plays past the cut that the next part renders too: the same frames (scenes/segments.py), joined
    once, or the figure would show them twice."""
    movies: dict[str, Path] = {}
    for folder in folders:
        for movie in folder.glob("*.mp4"):
            movies.setdefault(movie.name, movie)
    return [movies[name] for name in sorted(movies)]


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
