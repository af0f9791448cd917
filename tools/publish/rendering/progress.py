"""How far a build's renders are: figures done, frames rendered across the running manim processes, ETA.

Each manim process (a whole figure or one segment of it) adds a line to a file after every play
(``LECTURE_PROGRESS_OUT``, see scenes/base.py): the seconds of video it has rendered, where it is, and when; the
build reads those files. On a terminal a live ``rich`` display shows
figures done/total, frames rendered/total, elapsed time and ETA, and the
build's other lines print above it. Without a terminal (CI, a log) there
is no live display: one plain line is printed each time a figure is done.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

POLL_SECONDS = 0.5


def samples(path: Path) -> list[tuple[float, float, float]]:
    """Every line a render wrote, one per play: the seconds of video it had rendered, the time it was at in
    the figure, and the seconds since its scene was made (a line still being written is left out)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    found = []
    for line in text.splitlines(keepends=True):
        with contextlib.suppress(ValueError):
            if line.endswith("\n"):
                rendered, at, elapsed = map(float, line.split())
                found.append((rendered, at, elapsed))
    return found


def reported(path: Path) -> tuple[float, float]:
    """What a running render last reported: the seconds of video it rendered, and the time it is at in the
    figure (zeros before its first play)."""
    lines = samples(path)
    return lines[-1][:2] if lines else (0.0, 0.0)


def rendered_seconds(path: Path) -> float:
    return reported(path)[0]


class BuildProgress:
    """Figures and frames of one build's renders, shown live (`say` then prints above the display)
    or as plain lines through `say`."""

    def __init__(self, expected_seconds: dict[str, float], fps: int, say: Callable[[str], None], live: bool):
        self.expected = {fig_id: max(1, round(seconds * fps)) for fig_id, seconds in expected_seconds.items()}
        self.fps = fps
        self.done: dict[str, int] = {}  # frames of each figure finished
        self.running: dict[str, list[Path]] = {}  # each figure in progress and its renders' progress files
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._say = say
        self._progress = (
            Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(file=sys.stdout),
                transient=False,
            )
            if live
            else None
        )
        if self._progress is not None:
            self._figures = self._progress.add_task("figures", total=len(self.expected))
            self._frames = self._progress.add_task("frames ", total=sum(self.expected.values()))

    def say(self, line: str) -> None:
        if self._progress is not None:
            self._progress.console.print(line, markup=False, highlight=False)
        else:
            self._say(line)

    def frames(self) -> tuple[int, int]:
        """Frames rendered so far (finished figures and the running ones) and the expected total."""
        with self._lock:
            running = {
                fig_id: min(round(sum(map(rendered_seconds, paths)) * self.fps), self.expected[fig_id])
                for fig_id, paths in self.running.items()
            }
            finished = dict(self.done)
        total = sum(finished.get(fig_id, frames) for fig_id, frames in self.expected.items())
        return sum(finished.values()) + sum(running.values()), total

    def start(self, fig_id: str, progress_file: Path) -> None:
        """A render of the figure (the whole of it, or one segment) began, reporting to `progress_file`."""
        with self._lock:
            self.running.setdefault(fig_id, []).append(progress_file)

    def finish(self, fig_id: str, seconds: float) -> None:
        with self._lock:
            self.running.pop(fig_id, None)
            self.done[fig_id] = round(seconds * self.fps)
        if self._progress is None:
            rendered, total = self.frames()
            elapsed = time.monotonic() - self.started
            eta = elapsed * (total - rendered) / rendered if rendered else 0.0
            self.say(
                f"  progress: {len(self.done)}/{len(self.expected)} figures, {rendered}/{total} frames, "
                f"{elapsed:.0f} s elapsed, about {eta:.0f} s to go"
            )
        else:
            self._update()

    def _update(self) -> None:
        rendered, total = self.frames()
        self._progress.update(self._figures, completed=len(self.done))
        self._progress.update(self._frames, completed=rendered, total=total)

    @contextmanager
    def shown(self) -> Iterator[BuildProgress]:
        """The live display while the block runs (refreshed from the progress files), when there is one."""
        if self._progress is None:
            yield self
            return
        stop = threading.Event()

        def poll() -> None:
            while not stop.wait(POLL_SECONDS):
                self._update()

        poller = threading.Thread(target=poll, daemon=True)
        with self._progress:
            poller.start()
            try:
                yield self
            finally:
                stop.set()
                poller.join()
                self._update()


def on_terminal() -> bool:
    return sys.stdout.isatty()
