"""Renders on a Dask cluster: ``lecture build --scheduler tcp://HOST:8786``.

A worker is a machine with the project checked out and installed
(``pip install '.[cluster]'``) running ``dask worker tcp://HOST:8786`` from
the repository root. The build sends it one figure, or one part of a
figure (tools/publish/rendering/segments.py), at a time, with every
cue's audio in the task (a worker never synthesizes), and gets the render's
files back as bytes (no shared disk); publishing then goes on locally as
for a local render. A worker whose project source or manim version differs
from the client's refuses the task, naming both, rather than render a
different video. Fonts, cairo and pango are not in that hash: the layout
lint and the last-frame tests check them where they run, so install the
same system packages on every worker (``make system``).

A task runs under the render's time limit on the worker (its manim process group is killed past it) and
under that limit plus a minute to ship its files on the client. Every file comes back with its size and
sha256, checked before anything is written: a file cut short or changed on the way is refused, never
published. A worker that dies mid-task has its task retried by Dask on another worker; a task that kills
its workers, a scheduler that goes away and a task past its limit each fail the build naming the figure.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from pathlib import Path

from tools import settings
from tools.files import bytes_sha256, source_digest, write_atomically
from tools.publish.rendering import launch, render
from tools.publish.rendering.render import BuildError, Rendered, SceneRef
from tools.voice import audio

# What a worker should run with (docs/cluster.md gives them as environment variables for `dask worker`):
# - not as a daemonic process, which multiprocessing allows no children: a worker that is one cannot fork its
#   renders from a render server (tools/publish/rendering/launch.py) and starts manim anew for each, about two
#   seconds of CPU a render part;
# - without what watches a worker at work many times a second (its statistical profiler every 10 ms, the GIL
#   every 1 ms, the event loop every 20 ms, its memory every 100 ms): a task here waits on a manim process, and
#   two workers whose tasks waited spent 5.6% of a core on being watched (0.6% with these settings).
WORKER_CONFIG = {
    "distributed.worker.daemon": False,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
}
CONNECT_TIMEOUT = "5s"
RELAY_SECONDS = 0.5
SHIP_SECONDS = 60.0  # what a task's limit on the client adds to the render's own, to ship the files
CHANNEL_FILES = ("progress", "stop")  # what a part's relay carries


class ClusterError(BuildError):
    """A cluster that cannot take the build, or a worker that refused a task."""


@dataclass(frozen=True)
class Task:
    """One figure to render on a worker, with what the client knows that the worker must match."""

    scene: SceneRef  # its scene file relative to the checkout's root, which may lie elsewhere on the worker
    quality: str
    source: str  # the client's source_digest()
    manim: str  # the client's manim version
    cue_audio: dict[str, bytes]  # cue id -> its WAV
    start: float = 0.0  # the part of it from here on (tools/publish/rendering/segments.py)
    channel: str = ""  # names the Dask Variables that carry its progress and its stop time (see _Relay)
    limit: float = 0.0  # the render's time limit in seconds (0: a render's floor on the worker)
    cue_timing: dict[str, bytes] = field(default_factory=dict)  # cue id -> when its syllables are said, if known


def shipped(files: dict[str, bytes]) -> dict[str, dict]:
    """What a task returns: each file's bytes with its size and sha256, for the client to check."""
    return {name: {"bytes": data, "size": len(data), "sha256": bytes_sha256(data)} for name, data in files.items()}


def received(figure: str, result: object) -> dict[str, bytes]:
    """The files of a task's `result`, each checked against the size and sha256 the worker sent with it;
    refuses (naming the figure and the file) a result that is not that shape, or any file cut or changed."""
    if not isinstance(result, dict):
        raise ClusterError(f"the render of {figure} came back as {type(result).__name__}, not its files: refused")
    files = {}
    for name, item in result.items():
        data = item.get("bytes") if isinstance(item, dict) else None
        if not isinstance(data, bytes) or not isinstance(item.get("sha256"), str):
            raise ClusterError(f"the render of {figure} came back with {name!r} malformed: refused, nothing published")
        if len(data) != item.get("size") or bytes_sha256(data) != item["sha256"]:
            raise ClusterError(
                f"the render of {figure} came back with {name} damaged ({len(data)} bytes, sha256 "
                f"{bytes_sha256(data)[:12]}; the worker sent {item.get('size')} bytes, sha256 "
                f"{item['sha256'][:12]}): refused, nothing published"
            )
        files[name] = data
    return files


def render_task(task: Task) -> dict[str, dict]:
    """Run on a worker: check the source, render the figure with the shipped audio, return its files (shipped)."""
    ours = (source_digest(), version("manim"))
    if ours != (task.source, task.manim):
        raise ClusterError(
            f"worker refuses {task.scene.figure}: its project source {ours[0][:12]} / manim {ours[1]} "
            f"differ from the client's {task.source[:12]} / manim {task.manim}; check out and "
            f"install the same commit on every worker"
        )
    scene = replace(task.scene, scene_file=settings.ROOT / task.scene.scene_file)
    with tempfile.TemporaryDirectory(prefix=f"lecture-{scene.figure}-") as tmp:
        folder = Path(tmp)
        paths = {}
        for cue_id, wav in task.cue_audio.items():
            paths[cue_id] = str(folder / f"{cue_id}.wav")
            Path(paths[cue_id]).write_bytes(wav)
            if cue_id in task.cue_timing:  # beside the WAV, where the scene reads it (audio.cue_timing)
                audio.timing_path(Path(paths[cue_id])).write_bytes(task.cue_timing[cue_id])
        cue_map = folder / "cue_audio.json"
        cue_map.write_text(json.dumps(paths), encoding="utf-8")
        media = folder / "media"
        media.mkdir()
        # The worker's half of the relay: its progress out, a stop time in.
        limit = settings.Limit(task.limit, "render") if task.limit > 0 else None
        with _Relay(task.channel, ("progress", render.progress_file(media)), ("stop", render.stop_file(media))):
            rendered = render.render(
                scene, task.quality, media, {settings.CUE_AUDIO_ENV: str(cue_map)}, task.start, limit
            )
        files = {name: path.read_bytes() for name, path in _files(rendered).items() if path.exists()}
        partials = {f"partial {movie.name}": movie.read_bytes() for movie in rendered.partials.glob("*.mp4")}
        return shipped(files | partials)


def warm_worker(quality: str) -> bool:
    """Run on every worker when a build connects: start its render server for `quality` now, so it imports
    manim while the build checks and narrates (as the local build's does); whether the worker can fork its
    renders from it (a daemonic worker cannot: WORKER_CONFIG)."""
    return launch.start_server(render.render_env(quality, Path(os.devnull), Path(os.devnull)))


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
        sent = got = None
        while not self._done.wait(RELAY_SECONDS):
            try:
                text = self._send.read_text(encoding="utf-8")
            except OSError:
                text = None
            try:
                if text and text != sent:
                    self._out.set(text)
                    sent = text
                value = self._in.get(timeout=CONNECT_TIMEOUT)
            except Exception:  # the scheduler is gone: the task's own result says so, the relay just stops
                return
            if value and value != got:
                write_atomically(self._receive, value)
                got = value


def _files(rendered: Rendered) -> dict[str, Path]:
    """A render's files by name, as a task ships them back (a part may lack its video, track, captions, cue
    times or where its facts are drawn)."""
    return {
        "video": rendered.video,
        "track": rendered.track,
        "srt": rendered.srt,
        "cues": rendered.cue_times,
        "facts": rendered.fact_boxes,
    }


def _log_to_file() -> Path:
    """Dask's own log lines (a lost connection comes with a traceback) go to the cache's logs, not the terminal:
    the build's error says what failed, and names this file."""
    import logging

    path = settings.cache_root() / "logs" / "dask-client.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    dask_log = logging.getLogger("distributed")
    for name in ["distributed", *(n for n in logging.root.manager.loggerDict if n.startswith("distributed."))]:
        each = logging.getLogger(name)
        for handler in list(each.handlers):
            each.removeHandler(handler)
        each.propagate = True
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    dask_log.addHandler(handler)
    dask_log.propagate = False
    return path


class Cluster:
    """The client's side: a connection to the scheduler, and renders sent through it."""

    def __init__(self, address: str, quality: str = "l", say: Callable[[str], None] = print):
        """Connect to the scheduler at `address` and have its workers start their render servers for `quality`;
        `say` names the workers that cannot fork their renders."""
        try:
            from distributed import Client
        except ImportError:
            raise ClusterError("--scheduler needs Dask's distributed: pip install '.[cluster]'") from None
        self.log = _log_to_file()
        try:
            self.client = Client(address, timeout=CONNECT_TIMEOUT)
        except OSError as err:
            raise ClusterError(f"no Dask scheduler at {address}: {err}") from None
        self.source = source_digest()
        self.address = address
        try:
            forking = self.client.run(warm_worker, quality)
        except Exception as err:  # a worker whose checkout lacks it: its first task refuses, naming the source
            forking = {}
            say(f"  the workers could not start their render servers ({type(err).__name__}: {err})")
        daemonic = sorted(worker for worker, forks in forking.items() if not forks)
        if daemonic:
            say(
                f"  {len(daemonic)} of {len(forking)} workers run as daemonic processes ({', '.join(daemonic)}): "
                "each of their renders starts manim anew; start them with DASK_DISTRIBUTED__WORKER__DAEMON=False "
                "(docs/cluster.md)"
            )

    task_function = staticmethod(render_task)  # what a worker runs (a test may wrap it)

    def _failed(self, what: str, err: BaseException, waiting: settings.Limit) -> ClusterError:
        """The error for a task that did not come back: past its limit, its workers killed, the scheduler gone."""
        name = type(err).__name__
        if name == "TimeoutError":
            return ClusterError(waiting.exceeded(f"{what} on the cluster at {self.address}", "the Dask task"))
        if name == "KilledWorker":
            return ClusterError(
                f"{what} on the cluster at {self.address}: the workers running it died, "
                f"each time it was tried ({err}); nothing was published"
            )
        if "Cancelled" in name or isinstance(err, OSError) or "Comm" in name:
            return ClusterError(
                f"{what}: lost the Dask scheduler at {self.address} ({name}: {str(err).strip()}); nothing was "
                f"published; start the scheduler and its workers again, then build again (Dask's log: {self.log})"
            )
        return ClusterError(f"{what} on the cluster at {self.address} failed: {name}: {err} (Dask's log: {self.log})")

    def render(
        self,
        scene: SceneRef,
        quality: str,
        cue_audio: dict[str, Path],
        work: Path,
        start: float = 0.0,
        limit: settings.Limit | None = None,
    ) -> Rendered:
        """Render a figure (or its part from `start` seconds on) on some worker, under `limit` there (by default
        a render's floor) and that plus SHIP_SECONDS here; its files, checked, are written into `work` as a local
        render would write them."""
        limit = limit or settings.time_limit("render")
        task = Task(
            replace(scene, scene_file=scene.scene_file.relative_to(settings.ROOT)),
            quality,
            self.source,
            version("manim"),
            {cue_id: path.read_bytes() for cue_id, path in cue_audio.items()},
            start,
            f"lecture-{uuid.uuid4()}",
            limit.seconds,
            {
                cue_id: audio.timing_path(path).read_bytes()
                for cue_id, path in cue_audio.items()
                if audio.timing_path(path).exists()
            },
        )
        waiting = settings.time_limit("cluster", limit.seconds + SHIP_SECONDS)
        what = f"rendering {scene.chapter}/{scene.figure}" + (f" from {start:.1f} s on" if start else "")
        # The client's half of the relay: the stop time the build may write out, the worker's progress in.
        future = None
        try:
            _Relay.open(task.channel, self.client)
            with _Relay(
                task.channel, ("stop", render.stop_file(work)), ("progress", render.progress_file(work)), self.client
            ):
                future = self.client.submit(self.task_function, task, pure=False)
                result = future.result(timeout=waiting.seconds)
        except BuildError:  # the worker's own refusal or render failure, as it said it
            raise
        except Exception as err:
            if future is not None:
                with contextlib.suppress(Exception):
                    future.cancel()
            raise self._failed(what, err, waiting) from None
        finally:
            with contextlib.suppress(Exception):
                _Relay.forget(task.channel, self.client)
        files = received(f"{what.removeprefix('rendering ')}", result)
        out = render.outputs(scene, quality, work)
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
