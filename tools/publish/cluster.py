"""Renders on a Dask cluster: ``lecture build --scheduler tcp://HOST:8786``.

A worker is a machine with the project checked out and installed
(``pip install '.[cluster]'``) running ``dask worker tcp://HOST:8786`` from
the repository root. The build sends it one figure, or one part of a
figure (tools/publish/segments.py), at a time, with every
cue's audio in the task (a worker never synthesizes), and gets the render's
files back as bytes (no shared disk); publishing then goes on locally as
for a local render. A worker whose project source or manim version differs
from the client's refuses the task, naming both, rather than render a
different video. Fonts, cairo and pango are not in that hash: the layout
lint and the last-frame tests check them where they run, so install the
same system packages on every worker (``make system``).
"""

from __future__ import annotations

import json
import tempfile
import threading
import uuid
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from tools import settings
from tools.course import catalogue
from tools.files import source_digest, write_atomically
from tools.publish import render
from tools.publish.render import BuildError, Rendered

CONNECT_TIMEOUT = "5s"
RELAY_SECONDS = 0.5
CHANNEL_FILES = ("progress", "stop")  # what a part's relay carries


class ClusterError(BuildError):
    """A cluster that cannot take the build, or a worker that refused a task."""


@dataclass(frozen=True)
class Task:
    """One figure to render on a worker, with what the client knows that the worker must match."""

    figure: str
    quality: str
    source: str  # the client's source_digest()
    manim: str  # the client's manim version
    cue_audio: dict[str, bytes]  # cue id -> its WAV
    start: float = 0.0  # the part of it from here on (tools/publish/segments.py)
    channel: str = ""  # names the Dask Variables that carry its progress and its stop time (see _Relay)


def render_task(task: Task) -> dict[str, bytes]:
    """Run on a worker: check the source, render the figure with the shipped audio, return its files."""
    ours = (source_digest(), version("manim"))
    if ours != (task.source, task.manim):
        raise ClusterError(
            f"worker refuses {task.figure}: its project source {ours[0][:12]} / manim {ours[1]} "
            f"differ from the client's {task.source[:12]} / manim {task.manim}; check out and "
            f"install the same commit on every worker"
        )
    fig = catalogue.figure(task.figure)
    with tempfile.TemporaryDirectory(prefix=f"lecture-{fig.id}-") as tmp:
        folder = Path(tmp)
        paths = {}
        for cue_id, wav in task.cue_audio.items():
            paths[cue_id] = str(folder / f"{cue_id}.wav")
            Path(paths[cue_id]).write_bytes(wav)
        cue_map = folder / "cue_audio.json"
        cue_map.write_text(json.dumps(paths), encoding="utf-8")
        media = folder / "media"
        media.mkdir()
        # The worker's half of the relay: its progress out, a stop time in.
        with _Relay(task.channel, ("progress", render.progress_file(media)), ("stop", render.stop_file(media))):
            rendered = render.render(fig, task.quality, media, {settings.CUE_AUDIO_ENV: str(cue_map)}, task.start)
        files = {name: path.read_bytes() for name, path in _files(rendered).items() if path.exists()}
        return files | {f"partial {movie.name}": movie.read_bytes() for movie in rendered.partials.glob("*.mp4")}


class _Relay:
    """Carries one small file's text across the cluster while a part renders, in both directions: the
    worker sends its progress file and receives the stop file the client's build writes, as if the two
    shared a disk. Each side polls every RELAY_SECONDS, through two Dask Variables named by the channel."""

    def __init__(self, channel: str, send: tuple[str, Path], receive: tuple[str, Path], client=None):
        from distributed import Variable, get_client

        client = client or get_client()  # in a task: the worker's client
        self._out, self._in = (Variable(f"{channel}-{name}", client) for name, _ in (send, receive))
        self._send, self._receive = send[1], receive[1]
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def open(channel: str, client) -> None:
        """Create a part's two Variables, empty: reading one never waits (nor logs a timeout on the scheduler)."""
        from distributed import Variable

        for name in CHANNEL_FILES:
            Variable(f"{channel}-{name}", client).set("")

    @staticmethod
    def forget(channel: str, client) -> None:
        """Drop a finished part's Variables from the scheduler."""
        from distributed import Variable

        for name in CHANNEL_FILES:
            Variable(f"{channel}-{name}", client).delete()

    def __enter__(self) -> _Relay:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()

    def _run(self) -> None:
        sent = received = None
        while not self._done.wait(RELAY_SECONDS):
            try:
                text = self._send.read_text(encoding="utf-8")
            except OSError:
                text = None
            if text and text != sent:
                self._out.set(text)
                sent = text
            value = self._in.get()
            if value and value != received:
                write_atomically(self._receive, value)
                received = value


def _files(rendered: Rendered) -> dict[str, Path]:
    """A render's files by name, as a task ships them back (a part may lack its video, track or captions)."""
    return {"video": rendered.video, "track": rendered.track, "srt": rendered.srt}


class Cluster:
    """The client's side: a connection to the scheduler, and renders sent through it."""

    def __init__(self, address: str):
        try:
            from distributed import Client
        except ImportError:
            raise ClusterError("--scheduler needs Dask's distributed: pip install '.[cluster]'") from None
        try:
            self.client = Client(address, timeout=CONNECT_TIMEOUT)
        except OSError as err:
            raise ClusterError(f"no Dask scheduler at {address}: {err}") from None
        self.source = source_digest()

    def render(self, fig_id: str, quality: str, cue_audio: dict[str, Path], work: Path, start: float = 0.0) -> Rendered:
        """Render a figure (or its part from `start` seconds on) on some worker; its files are written into
        `work` as a local render would write them."""
        task = Task(
            fig_id,
            quality,
            self.source,
            version("manim"),
            {cue_id: path.read_bytes() for cue_id, path in cue_audio.items()},
            start,
            f"lecture-{uuid.uuid4()}",
        )
        # The client's half of the relay: the stop time the build may write out, the worker's progress in.
        _Relay.open(task.channel, self.client)
        try:
            with _Relay(
                task.channel, ("stop", render.stop_file(work)), ("progress", render.progress_file(work)), self.client
            ):
                files = self.client.submit(render_task, task, pure=False).result()
        finally:
            _Relay.forget(task.channel, self.client)
        out = render.outputs(catalogue.figure(fig_id), quality, work)
        written = _files(out) | {
            name: out.partials / name.removeprefix("partial ") for name in files if name.startswith("partial ")
        }
        for name, path in written.items():
            if name in files:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(files[name])
        return out

    def close(self) -> None:
        self.client.close()
