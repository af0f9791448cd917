"""``lecture preview CHAPTER/FIGURE``: a figure's stills at every cue in the browser, redrawn on every save.

A page on 127.0.0.1 shows the still at the end of each cue, in cue order,
with the cue's words and when it starts, then a playable ``-q l`` draft.
Every save of the figure's scene file, its chapter builder, its narration
file, ``scenes/style.py`` or ``scenes/widgets.py`` runs the checks before
rendering and the layout lint's skipped-animation run again
(:mod:`tools.publish.checks.stills`, ``scenes/layout_probe.py``); the page is told
at once (server-sent events) and fetches the new state. A failed check
shows on the page in the words ``lecture check`` prints, in place of the
stills; the next save tries again. Once the stills are up, the draft is
rendered as ``lecture build -q l`` renders the figure (in two processes),
encoded for speed and kept in ``.cache/preview/drafts/``, not published; a
newer save cancels a draft that is out of date.

Speed comes from a warm process: it imports manim, the tools, the chapter
builders and the pinyin dictionaries once, and every run is a fork of it
that re-imports only what changed since (the scene modules, a changed
builder). A still is drawn only for a look whose screen changed
(``layout_probe.screen_digest``): an edit to one cue's words redraws
nothing, and a change to one label redraws only the cues that show it.

Ctrl-C stops it: the runs in progress are stopped (their process groups
killed), their work folders removed, and nothing half-written is left in
the cache (a draft and each still are moved into place whole).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from tools import settings
from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.course.facts import FactError
from tools.files import write_atomically
from tools.publish.build.plan import FigurePlan
from tools.publish.build.stages import Draft
from tools.publish.checks import checks, glyphs, layout, stills
from tools.publish.keys import fonts
from tools.publish.keys.fonts import FontError
from tools.publish.rendering import render, scratch, segments, text_shapes
from tools.publish.rendering.render import BuildError
from tools.publish.site import serve
from tools.voice.cues import NarrationError
from tools.voice.engine import SpeechError

Say = Callable[[str], None]
# What `lecture check` refuses with (and prints as "lecture check: refused: …"); anything else is a crash.
REFUSALS = (
    FactError,
    NarrationError,
    SpeechError,
    BuildError,
    catalogue.UnknownFigure,
    catalogue.CitationCycle,
    layout.LayoutError,
    FontError,
    settings.SettingsError,
)
QUALITY = "l"  # drafts are -q l
# A draft is watched once, here: libx264's fastest preset (a build encodes with manim.cfg's veryfast) cut
# a part's render by about a sixth; its files are larger.
DRAFT_ENCODER = {"preset": "ultrafast"}
STOP_GRACE = 3.0  # seconds a stopped run has to clean up after SIGTERM before its group is killed


def preview_dir() -> Path:
    return settings.cache_root() / "preview"


def stills_dir() -> Path:
    """Every still drawn so far, by the digest of its screen (so a page's URL never changes under it)."""
    return preview_dir() / "stills"


def watched(fig: Figure) -> list[Path]:
    """The files whose save redraws the figure."""
    chapter = catalogue.chapter(fig.chapter)
    return [
        chapter.scene_file,
        settings.CHAPTERS_DIR / f"{fig.chapter}.py",
        settings.NARRATION_DIR / f"{fig.chapter}.toml",
        settings.SCENES_DIR / "style.py",
        settings.SCENES_DIR / "widgets.py",
    ]


def refused(err: BaseException) -> str:
    """What `lecture check` prints for a refusal."""
    return f"lecture check: refused: {err}"


# -- the warm process ----------------------------------------------------------------------------------
# Started once per preview (python -c), it imports what every run needs, then forks one child per run
# it is asked for (a line of JSON on its stdin) and reports each child's pid and exit on its stdout.
# A child has a process group of its own, dies with the warm process, and runs one job function below.


def _warm_main(figure_id: str | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal's Ctrl-C is the preview's to handle
    started = time.time()
    _preload()
    if figure_id:
        _precompute(figure_id)
    os.chdir(settings.ROOT)
    out = sys.stdout
    out.write(json.dumps({"ready": time.time() - started}) + "\n")
    out.flush()
    children: set[int] = set()
    inbox, pending = sys.stdin.fileno(), b""  # read raw: a buffered reader would hide a second line from select
    while True:
        readable, _, _ = select.select([inbox], [], [], 0.02) if b"\n" not in pending else ([inbox], [], [])
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if not pid:
                break
            children.discard(pid)
            out.write(json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status)}) + "\n")
            out.flush()
        if not readable:
            continue
        if b"\n" not in pending:
            chunk = os.read(inbox, 1 << 16)
            if not chunk:  # the preview is gone: so are its runs
                for pid in children:
                    _kill_group(pid)
                return
            pending += chunk
            if b"\n" not in pending:
                continue
        line, pending = pending.split(b"\n", 1)
        job = json.loads(line)
        if "remember" in job:  # the text shapes the last run used: held here, each run finds them in memory
            text_shapes.remember(job["remember"])
            continue
        pid = os.fork()
        if pid == 0:
            _child(job, started)
        children.add(pid)
        out.write(json.dumps({"started": job["id"], "pid": pid}) + "\n")
        out.flush()


def _preload() -> None:
    """Import what a run needs and what no save changes: manim (its mobjects copied the fast way, parsed texts
    kept by content: text_shapes.py), the tools, the chapter builders, the pinyin dictionaries (each best
    effort: a chapter someone is writing may not import yet), the drawing stack of the stills' key (the
    versions of manim, cairo, the fonts) and the fonts the glyph check reads."""
    import manim
    import manim.__main__

    from tools.publish.build import build
    from tools.publish.rendering import fast_manim
    from tools.voice import readings

    del manim, build
    fast_manim.install()
    stills.drawing_stack()
    glyphs.typst_families()
    with contextlib.suppress(Exception):  # a missing font: the run's glyph check says so
        for family in fonts.style_fonts().values():
            fonts.resolve(family)
    catalogue.import_builders()
    with contextlib.suppress(Exception):
        readings._phrases()
        readings._segmenter()
        readings._standard_readings("的")


def _precompute(figure_id: str) -> None:
    """The figure's facts and cues, which every run needs first, and the string literals of the scene files
    (the glyph check's): a run inherits them while the chapter builders, the narration and the scene files
    are as they were when the warm process started (see _purge; a saved scene file is parsed again)."""
    from tools.voice import cues

    with contextlib.suppress(Exception):  # a failing fact or cue: the run computes it again and says why
        cues.figure_cues(figure_id)
        fonts.shown_text([catalogue.figure(figure_id)])  # every scene file's strings, parsed once


def _purge(started: float) -> None:
    """Forget the project modules saved since the warm process imported them, and those that import them:
    every scene module (they import each other), a chapter builder and the builders that import it; and
    what was computed from them: the facts and the chapters after a builder changed, the cues after that
    or after a narration file (or the lexicon) changed. A scene edit keeps the facts and cues."""
    changed = set()
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and name.startswith(("scenes", "tools.chapters.")):
            with contextlib.suppress(OSError):
                if os.stat(path).st_mtime >= started:
                    changed.add(name)
    if any(name.startswith("scenes") for name in changed):
        changed |= {name for name in sys.modules if name == "scenes" or name.startswith("scenes.")}
    for name in [n for n in changed if n.startswith("tools.chapters.")]:
        stem = name.rsplit(".", 1)[1]
        pattern = re.compile(rf"\btools\.chapters\b.*\b{stem}\b")
        for other, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None)
            if other.startswith("tools.chapters.") and path and pattern.search(Path(path).read_text("utf-8")):
                changed.add(other)
    for name in changed:
        sys.modules.pop(name, None)
    from tools.voice import cues

    builders = any(name.startswith("tools.chapters.") for name in changed)
    words = builders or any(_saved_since(path, started) for path in settings.NARRATION_DIR.glob("*.toml"))
    for cached in (catalogue.chapters, catalogue.facts) if builders else ():
        cached.cache_clear()
    for cached in (cues.lexicon, cues.chapter_cues) if words else ():
        cached.cache_clear()


def _saved_since(path: Path, started: float) -> bool:
    try:
        return os.stat(path).st_mtime >= started
    except OSError:
        return True


def _child(job: dict, started: float) -> None:
    """A forked run: its own group, SIGKILL when the warm process dies, SIGTERM a clean stop."""
    code = 1
    try:
        os.setpgid(0, 0)
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        signal.signal(signal.SIGTERM, _stop_here)
        signal.signal(signal.SIGINT, _stop_here)
        work = Path(job["work"])
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        log = os.open(work / "run.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        _purge(started)
        JOBS[job["kind"]](job["figure"], work, **job.get("options", {}))
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _stop_here(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _kill_group(pid: int, signum: int = signal.SIGKILL) -> None:
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


@dataclass
class Run:
    """One forked run: its work folder, its pid once started, its exit code once done."""

    kind: str
    work: Path
    pid: int | None = None
    code: int | None = None
    began: float = field(default_factory=time.monotonic)
    started: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)

    def result(self) -> dict | None:
        try:
            return json.loads((self.work / "result.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def log_tail(self, lines: int = 25) -> str:
        with contextlib.suppress(OSError):
            return "\n".join((self.work / "run.log").read_text("utf-8", errors="replace").splitlines()[-lines:])
        return ""

    def stop(self) -> None:
        """SIGTERM to its group (it removes what it made), then SIGKILL if it is still there."""
        self.started.wait(5)
        if self.pid is None or self.ended.is_set():
            return
        _kill_group(self.pid, signal.SIGTERM)
        if not self.ended.wait(STOP_GRACE):
            _kill_group(self.pid)
            self.ended.wait(STOP_GRACE)


class Warm:
    """The warm process, seen from the preview: start runs in it, learn when they end."""

    def __init__(self, say: Say, folder: Path, fig: Figure):
        self.say = say
        self._runs: dict[str, Run] = {}
        self._by_pid: dict[int, Run] = {}
        self._count = 0
        self._lock = threading.Lock()
        # No run of the preview is published, so none needs the fill that makes a build's bytes repeat.
        env = {name: value for name, value in os.environ.items() if name not in render.MALLOC_FILL}
        env["PYTHONUNBUFFERED"] = "1"
        log = open(folder / "warm.log", "w", encoding="utf-8")  # noqa: SIM115 -- kept open for the process
        self._log = log
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from tools.publish.preview.preview import _warm_main; _warm_main(sys.argv[1])",
                fig.id,
            ],
            cwd=settings.ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
        )
        ready = self.process.stdout.readline()
        if not ready:
            raise BuildError(f"the preview's warm process did not start; see {folder / 'warm.log'}")
        self.ready_seconds = json.loads(ready)["ready"]
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            message = json.loads(line)
            with self._lock:
                if "started" in message:
                    run = self._runs.pop(message["started"])
                    run.pid = message["pid"]
                    self._by_pid[run.pid] = run
                    run.started.set()
                elif "exit" in message and (run := self._by_pid.pop(message["exit"], None)) is not None:
                    run.code = message["code"]
                    run.ended.set()
        with self._lock:  # the warm process is gone: so is every run
            for run in [*self._runs.values(), *self._by_pid.values()]:
                run.started.set()
                run.ended.set()

    def start(self, kind: str, fig: Figure, work: Path, **options) -> Run:
        run = Run(kind, work)
        with self._lock:
            self._count += 1
            name = f"{kind}-{self._count}"
            self._runs[name] = run
        job = {"id": name, "kind": kind, "figure": fig.id, "work": str(work)}
        job["options"] = options
        try:
            self.process.stdin.write((json.dumps(job) + "\n").encode())
            self.process.stdin.flush()
        except (ValueError, OSError):  # the warm process is closed or gone: the run ends without a result
            run.started.set()
            run.ended.set()
        return run

    def remember(self, shapes: list[str]) -> None:
        """Have the warm process read these text shapes now, between saves, for the runs after."""
        with contextlib.suppress(ValueError, OSError):
            self.process.stdin.write((json.dumps({"remember": shapes}) + "\n").encode())
            self.process.stdin.flush()

    def close(self) -> None:
        with self._lock:
            running = list(self._by_pid.values())
        for run in running:
            run.stop()
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


# -- the runs (each in a fork of the warm process, with fresh modules) -----------------------------------


def _write_result(work: Path, result: dict) -> None:
    write_atomically(work / "result.json", json.dumps(result, ensure_ascii=False))


def _stills_run(figure_id: str, work: Path, config_file: str, media: str) -> None:
    """The checks before rendering (in a fork of this run, on the other core), and beside them the figure with
    animations skipped: its looks, each with a still. Writes result.json: the error `lecture check` would
    print (a check's before the run's own), or the cues with their stills."""
    began = time.monotonic()
    notes: list[str] = []
    try:
        fig = catalogue.figure(figure_id)
        checking = _checks_beside(fig, work / "checks.json")
        try:
            key = stills.still_key(fig)
            records, last_frame = _skipped_run(fig, work, config_file, Path(media))
        finally:
            notes += _checks_passed(checking, work / "checks.json")
        if findings := layout.judge(fig.id, records):
            raise layout.LayoutError(layout.report(findings))
    except (*REFUSALS, CheckRefused) as err:
        error = str(err) if isinstance(err, CheckRefused) else refused(err)
        _write_result(work, {"error": error, "notes": notes, "seconds": time.monotonic() - began})
        return
    texts = {}
    from tools.voice import cues

    for cue in cues.figure_cues(fig.id):
        texts[cue.id] = cue.caption
    looks = [
        {
            "id": record["moment"],
            "text": texts.get(record["moment"], ""),
            "start": record.get("start"),
            "end": record.get("end"),
            "still": record["still"],
            "drawn": record["drawn"],
        }
        for record in records
    ]
    _write_result(
        work,
        {
            "figure": {"id": fig.id, "chapter": fig.chapter, "title": fig.title},
            "looks": looks,
            "key": key,
            "records": records,
            "last_frame": str(last_frame),
            "notes": notes,
            "seconds": time.monotonic() - began,
            # this run's CPU seconds (the checks' fork included): its cost however busy the machine is
            "cpu": time.process_time() + _children_cpu(),
            "shapes": text_shapes.used(),
        },
    )


def _checks_beside(fig: Figure, out: Path) -> int:
    """Fork the checks before rendering; the fork writes `out`: what they noted, or the refusal."""
    pid = os.fork()
    if pid:
        return pid
    result: dict = {"notes": []}
    try:
        checks.run([fig], result["notes"].append, 1, layout=False)
    except REFUSALS as err:
        result["error"] = refused(err)
    except BaseException:
        result["error"] = f"lecture check: the checks failed:\n{traceback.format_exc()}"
    finally:
        with contextlib.suppress(BaseException):
            write_atomically(out, json.dumps(result, ensure_ascii=False))
        os._exit(0)


def _checks_passed(pid: int, out: Path) -> list[str]:
    """Wait for the checks' fork; its notes, or its refusal raised as `lecture check` words it."""
    os.waitpid(pid, 0)
    result = _read_json(out) or {"error": "lecture check: the checks ended without a result"}
    if "error" in result:
        raise CheckRefused(result["error"])
    return result["notes"]


class CheckRefused(Exception):
    """A check refused in the checks' fork, with the words `lecture check` prints."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _skipped_run(fig: Figure, work: Path, config_file: str, media: Path) -> tuple[list[dict], Path]:
    """manim -s on the figure, in this process (manim is imported already), as the layout lint runs it. Its
    media folder is the preview's own, the same for every run: a text's SVG file is made once per session."""
    from manim.__main__ import main

    looks, new = work / "looks.jsonl", work / "stills"
    new.mkdir()
    os.environ.update(
        {
            "LECTURE_VOICE": "silent",
            settings.LAYOUT_OUT_ENV: str(looks),
            settings.STILLS_OUT_ENV: str(new),
            settings.STILLS_HAVE_ENV: str(stills_dir()),
        }
    )
    os.environ.pop(settings.AUDIO_OUT_ENV, None)
    scene_file = catalogue.chapter(fig.chapter).scene_file
    args = ["render", "-s", "-q", "l", "--config_file", config_file, "--media_dir", str(media)]
    args += ["--progress_bar", "none", str(scene_file), fig.scene_class]
    sys.argv = ["manim", *args]
    try:
        main(args=args, prog_name="manim", standalone_mode=False)
        failed = None
    except SystemExit as stop:
        failed = None if not stop.code else f"exit {stop.code}"
    except Exception as err:  # the scene's own error, as the lint's log would end
        failed = "".join(traceback.format_exception(err)[-6:]).rstrip()
    pngs = sorted((media / "images").glob(f"**/{fig.scene_class}_*.png"))
    if failed or not pngs:
        raise BuildError(
            f"manim failed with animations skipped on {fig.chapter}/{fig.id} ({failed or 'no last frame'})"
        )
    records = [json.loads(line) for line in looks.read_text(encoding="utf-8").splitlines()] if looks.exists() else []
    return [r for r in records if r["figure"] == fig.id], pngs[0]


def _fork_renders_here() -> None:
    """Render the draft's parts as forks of this run (manim and the figure's code are imported already),
    not of the build's fork server: starting that server costs what the draft is meant to save."""
    import multiprocessing

    from tools.publish.rendering import launch

    launch._context = multiprocessing.get_context("fork")
    launch._server_for = lambda env: not multiprocessing.current_process().daemon
    launch._server_env = launch._at_start(dict(os.environ))  # as the warm process was started (Warm)


def _draft_run(figure_id: str, work: Path) -> None:
    """Render the figure at -q l as `lecture build -q l -j 2` renders it (two processes, its narration as
    cached), encoded with DRAFT_ENCODER, and lay the narration under it into draft_file(); then ready.json
    with each cue's start. Nothing is published: `lecture build` renders its own clips."""
    from tools.publish.build import build
    from tools.publish.publishing import figure_notes, media

    _fork_renders_here()
    fig = catalogue.figure(figure_id)
    said: list[str] = []
    began = time.monotonic()

    def say(line: str) -> None:
        said.append(f"{time.monotonic() - began:5.2f} s  {line.strip()}")
        print(line, flush=True)

    def deliver(planned: FigurePlan, rendered: render.Rendered, costs: segments.Costs) -> None:
        clip = work / "draft.mp4"
        media.mux_web(rendered.video, rendered.track, clip, {"title": planned.title})
        lines = figure_notes.transcript(fig.id, [c.cue for c in planned.cues], rendered.cue_times)
        starts = {line["cue"]: line["start"] for line in lines}
        os.replace(clip, draft_file(fig))  # whole, in one step: the page may be playing the one before
        write_atomically(costs_file(fig), costs.to_json())
        write_atomically(work / "ready.json", json.dumps({"starts": starts, "said": said}, ensure_ascii=False))

    known = costs_file(fig)
    costs = segments.Costs.from_json(known.read_text(encoding="utf-8")) if known.exists() else None
    build.render_draft(fig, 2, say, Draft(render.one_figure_cfg(DRAFT_ENCODER), deliver, costs))
    _write_result(work, {"said": said})


JOBS = {"stills": _stills_run, "draft": _draft_run}


# -- what the page shows ---------------------------------------------------------------------------------


class Board:
    """The page's state, versioned: a change wakes every page waiting for one (server-sent events)."""

    def __init__(self, fig: Figure):
        self._changed = threading.Condition()
        self.state: dict = {
            "version": 0,
            "figure": {"id": fig.id, "chapter": fig.chapter, "title": fig.title},
            "status": "drawing",
            "error": None,
            "notes": [],
            "looks": [],
            "redrawn": [],
            "seconds": None,
            "saves": 0,
            "draft": {"status": "waiting"},
        }

    def update(self, **changes) -> None:
        with self._changed:
            self.state.update(changes)
            self.state["version"] += 1
            self._changed.notify_all()

    def draft(self, **changes) -> None:
        with self._changed:
            self.state["draft"] = changes
            self.state["version"] += 1
            self._changed.notify_all()

    def snapshot(self) -> dict:
        with self._changed:
            return json.loads(json.dumps(self.state))

    def wait(self, version: int, timeout: float) -> int:
        with self._changed:
            self._changed.wait_for(lambda: self.state["version"] != version, timeout)
            return self.state["version"]


class _Handler(serve._Handler):
    """The page, its state and events; the stills by digest and the draft clip, with byte ranges."""

    board: Board
    draft_file: Path
    closing: threading.Event

    def _inside(self) -> str | None:
        """A still by its digest or the draft, when it is a regular file in the folder the preview keeps it in (a
        symlink planted there that leads elsewhere is not followed); ValueError for a path with a NUL byte."""
        path = self.path.split("?", 1)[0]
        if "\0" in urllib.parse.unquote(path):
            raise ValueError("a NUL byte in the path")
        if match := re.fullmatch(r"/stills/([0-9a-f]{32})\.png", path):
            target = stills_dir() / f"{match.group(1)}.png"
        elif path == "/draft.mp4":
            target = self.draft_file
        else:
            return None
        real = os.path.realpath(target)
        if os.path.dirname(real) != os.path.realpath(target.parent) or not os.path.isfile(real):
            return None
        return real

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            return self._send(PAGE.encode(), "text/html; charset=utf-8")
        if path == "/state.json":
            return self._send(json.dumps(self.board.snapshot(), ensure_ascii=False).encode(), "application/json")
        if path == "/events":
            return self._events()
        return super().do_GET()

    def _send(self, body: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _events(self) -> None:
        """Server-sent events: the state's version, now and at every change (a comment every 15 s)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        version = -1
        try:
            while not self.closing.is_set():
                now = self.board.wait(version, 1.0)
                if now != version:
                    version = now
                    self.wfile.write(f"data: {version}\n\n".encode())
                    self.wfile.flush()
                elif int(time.monotonic()) % 15 == 0:
                    self.wfile.write(b": still here\n\n")
                    self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


def make_server(board: Board, draft_file: Path, closing: threading.Event, port: int) -> serve.LocalServer:
    handler = type("PreviewHandler", (_Handler,), {"board": board, "draft_file": draft_file, "closing": closing})
    try:
        return serve.LocalServer(("127.0.0.1", port), partial(handler, directory=str(stills_dir())))
    except OSError as err:
        raise BuildError(f"cannot serve on 127.0.0.1:{port}: {err.strerror}") from None


# -- the loop --------------------------------------------------------------------------------------------


class Preview:
    """Watch, redraw, draft: one run of each kind at a time, a newer save stopping what is out of date."""

    def __init__(self, fig: Figure, say: Say, draft: bool = True):
        self.fig, self.say, self.with_draft = fig, say, draft
        self.board = Board(fig)
        self.closing = threading.Event()
        self._save = threading.Event()
        self._lock = threading.Lock()
        self._draft_run: Run | None = None
        self._stills_run: Run | None = None
        self.config_file = str(render.one_figure_cfg())
        stills_dir().mkdir(parents=True, exist_ok=True)
        # This preview's own folder, locked while it runs: manim's media folder for the runs with animations
        # skipped (the same every run, so a text's SVG file is made once) and the warm process's log.
        self._session = contextlib.ExitStack()
        self.folder = self._session.enter_context(scratch.owned_folder(preview_dir(), "session-"))
        self.media = self.folder / "media"
        self.warm = Warm(say, self.folder, fig)

    # each run in a work folder of its own, locked while in use, removed after
    def _work(self, prefix: str) -> tuple[Path, contextlib.ExitStack]:
        folders = contextlib.ExitStack()
        path = folders.enter_context(scratch.owned_folder(preview_dir() / "work", prefix))
        return path, folders

    def watch(self) -> None:
        """Wake the redraw loop on every save of a watched file (a save through a rename counts too)."""
        import watchfiles

        files = {p.resolve() for p in watched(self.fig)}
        folders = sorted({p.parent for p in files})
        for changes in watchfiles.watch(
            *folders,
            watch_filter=lambda change, path: Path(path).resolve() in files,
            debounce=40,
            step=10,
            recursive=False,
            stop_event=self.closing,
            rust_timeout=500,
            yield_on_timeout=False,
        ):
            if changes:
                self._save.set()
                with self._lock:
                    running = self._stills_run
                if running is not None:  # out of date already: stop it, the loop starts the next
                    threading.Thread(target=running.stop, daemon=True).start()

    def loop(self) -> None:
        """Redraw now, then after every save, until closing."""
        self._save.set()
        while not self.closing.is_set():
            if not self._save.wait(0.2):
                continue
            self._save.clear()
            self._redraw()

    def _redraw(self) -> None:
        saved = time.monotonic()
        self._stop_draft()  # out of date
        self.board.update(status="drawing", saves=self.board.state["saves"] + 1, draft={"status": "waiting"})
        stills_up = threading.Event()
        work, folders = self._work("stills-")
        with folders:
            run = self.warm.start("stills", self.fig, work, config_file=self.config_file, media=str(self.media))
            with self._lock:
                self._stills_run = run
            run.ended.wait()
            with self._lock:
                self._stills_run = None
            result = run.result()
            if result is None or run.code != 0:  # stopped or failed mid-run: a text's SVG may be half-written
                shutil.rmtree(self.media, ignore_errors=True)
            if self.closing.is_set() or self._save.is_set():
                return  # stopped, or out of date: the next save's run follows
            if result is None:
                self._failed(
                    f"lecture check: the preview's run ended without a result (exit {run.code}):\n{run.log_tail()}"
                )
                return
            if result.get("error"):
                self._failed(result["error"], result.get("notes", []))
                return
            self._show(result, work, time.monotonic() - saved)
            stills_up.set()
        if self.with_draft and not self.closing.is_set() and not self._save.is_set():
            self.board.draft(status="rendering")
            self._start_draft(stills_up)

    def _failed(self, text: str, notes: list[str] = ()) -> None:
        self._stop_draft()  # of code that fails a check
        self.say(text)
        self.board.update(status="failed", error=text, notes=list(notes))
        self.board.draft(status="waiting")

    def _show(self, result: dict, work: Path, seconds: float) -> None:
        """Move the new stills in whole, keep the looks for the layout lint, and put them on the page."""
        for png in (work / "stills").glob("*.png"):
            os.replace(png, stills_dir() / png.name)
        stills._store(self.fig, result["key"], stills.Still(result["records"], Path(result["last_frame"])))
        looks = result["looks"]
        redrawn = [look["id"] for look in looks if look["drawn"]]
        self.warm.remember(result["shapes"])
        self.board.update(
            status="ok",
            error=None,
            notes=result["notes"],
            looks=looks,
            redrawn=redrawn,
            seconds=round(seconds, 3),
            cpu=round(result["cpu"], 3),
        )
        cues_shown = sum(1 for look in looks if look["id"] != layout.END)
        self.say(
            f"stills: {cues_shown} cues in {seconds:.2f} s, {len(redrawn)} redrawn"
            + (f" ({', '.join(redrawn)})" if redrawn else "")
        )

    def _start_draft(self, stills_up: threading.Event) -> None:
        """Build the draft; put it on the page once it is published and `stills_up` is set."""
        work, folders = self._work("draft-")
        run = self.warm.start("draft", self.fig, work)
        began = time.monotonic()
        with self._lock:
            self._draft_run = run

        def current() -> bool:
            return not self.closing.is_set() and self._draft_run is run

        def follow() -> None:
            with folders:
                while not run.ended.wait(0.02):
                    if (work / "ready.json").exists():
                        break
                ready = _read_json(work / "ready.json")
                while ready is not None and current() and not stills_up.wait(0.05):
                    pass
                if ready is not None and current():
                    seconds = time.monotonic() - began
                    self.board.draft(
                        status="ready",
                        url=f"/draft.mp4?v={self.board.state['version']}",
                        seconds=round(seconds, 3),
                        starts=ready["starts"],
                        said=ready["said"],
                    )
                    self.say(f"draft: {self.fig.chapter}/{self.fig.id} playable after {seconds:.1f} s")
                run.ended.wait()
                stopped = self.closing.is_set() or self._draft_run is not run
                if ready is None and run.code not in (0, None) and not stopped:
                    tail = run.log_tail()
                    self.board.draft(status="failed", error=tail)
                    self.say(f"draft failed:\n{tail}")

        threading.Thread(target=follow, daemon=True).start()

    def _stop_draft(self) -> None:
        """Stop a draft that a save made out of date (without waiting for it: the stills come first)."""
        with self._lock:
            run, self._draft_run = self._draft_run, None
        if run is not None and not run.ended.is_set():
            threading.Thread(target=run.stop, daemon=True).start()
            if not (run.work / "ready.json").exists():
                self.say("draft: stopped (out of date)")

    def close(self) -> None:
        """Stop every run, the warm process, and sweep what a stopped run may have left."""
        self.closing.set()
        with self._lock:
            runs = [r for r in (self._stills_run, self._draft_run) if r is not None]
        for run in runs:
            run.stop()
        self.warm.close()
        self._session.close()
        _sweep(self.fig)


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _sweep(fig: Figure) -> None:
    """What a stopped run can leave: manim work folders of the figure nobody holds, runs' work folders."""
    left = [*render.work_root().glob(f"{fig.id}.{QUALITY}.*"), *(preview_dir() / "work").glob("*")]
    for folder in [*left, *preview_dir().glob("session-*")]:
        if folder.is_dir() and not scratch.in_use(folder):
            shutil.rmtree(folder, ignore_errors=True)


def preview(only: str, port: int = 8001, say: Say = print, draft: bool = True) -> None:
    """Serve the preview of one figure ('chapter/figure_id') until Ctrl-C."""
    chosen = catalogue.select(only)
    if "/" not in only or len(chosen) != 1:
        raise catalogue.UnknownFigure(f"lecture preview shows one figure: write chapter/figure_id, not '{only}'")
    fig = chosen[0]
    preview_dir().mkdir(parents=True, exist_ok=True)
    _sweep(fig)
    session = Preview(fig, say, draft)
    draft_file(fig).parent.mkdir(parents=True, exist_ok=True)
    server = make_server(session.board, draft_file(fig), session.closing, port)
    threads = [
        threading.Thread(target=server.serve_forever, daemon=True),
        threading.Thread(target=session.watch, daemon=True),
        threading.Thread(target=session.loop, daemon=True),
    ]
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # each stops it cleanly, as Ctrl-C does
        signal.signal(signum, _interrupt)
    try:
        for thread in threads:
            thread.start()
        say(
            f"previewing {fig.chapter}/{fig.id} at http://127.0.0.1:{server.server_address[1]}/ "
            f"(redraws on every save of {', '.join(p.relative_to(settings.ROOT).as_posix() for p in watched(fig))}; "
            "Ctrl-C stops)"
        )
        while True:
            time.sleep(0.2)
    except KeyboardInterrupt:
        say("preview: stopping")
    finally:
        session.close()
        server.shutdown()
        server.server_close()
        for thread in threads:
            thread.join(STOP_GRACE)
        say("preview: stopped")


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def draft_file(fig: Figure) -> Path:
    """Where the figure's latest draft is kept (replaced whole by the next)."""
    return preview_dir() / "drafts" / f"{fig.id}.mp4"


def costs_file(fig: Figure) -> Path:
    """What the figure's latest draft spent where (segments.Costs): the next draft is cut by it."""
    return draft_file(fig).with_suffix(".costs.json")


PAGE = """<!doctype html>
<html lang="zh"><head><meta charset="utf-8"><title>lecture preview</title>
<style>
body{font-family:system-ui,"Noto Sans CJK SC",sans-serif;background:#0e1116;color:#dde;margin:1.2em}
h1{font-size:1.2em;margin:0 0 .3em} #status{color:#9ab;margin-bottom:1em}
#grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(360px,1fr));gap:14px}
.cue{background:#171b22;border-radius:6px;padding:8px;border:2px solid transparent}
.cue.redrawn{border-color:#d9a93e} .cue img{width:100%;display:block;border-radius:3px}
.meta{font-size:.85em;color:#9ab;margin:.4em 0 .2em} .badge{float:right;color:#d9a93e}
.text{font-size:.95em;line-height:1.45}
#error{white-space:pre-wrap;background:#2a1416;color:#f3b6b6;padding:1em;border-radius:6px;display:none}
#draft{margin-top:1.5em} #draft video{width:min(854px,100%);display:block}
.notes{color:#c9b37a;font-size:.85em;white-space:pre-wrap}
</style></head>
<body data-version="0" data-status="drawing">
<h1 id="title">…</h1><div id="status">connecting…</div>
<pre id="error"></pre><div class="notes" id="notes"></div><div id="grid"></div>
<section id="draft"><h2 style="font-size:1em">draft (-q l)</h2><div id="draftstatus">waiting</div>
<video id="player" controls preload="metadata" hidden></video></section>
<script>
let shown = -1, draftUrl = null;
const $ = id => document.getElementById(id);
const clock = s => s == null ? "" : `${Math.floor(s / 60)}:${(s % 60).toFixed(1).padStart(4, "0")}`;
function show(state) {
  document.body.dataset.version = state.version;
  document.body.dataset.status = state.status;
  $("title").textContent = `${state.figure.title}  (${state.figure.chapter}/${state.figure.id})`;
  const took = state.seconds == null ? "" : ` in ${state.seconds.toFixed(2)} s`;
  $("status").textContent = {drawing: "drawing…", failed: "a check failed (below); save again to retry",
    ok: `${state.looks.length} stills${took}, redrawn: ${state.redrawn.join(", ") || "none"}`}[state.status];
  $("notes").textContent = (state.notes || []).filter(n => !n.startsWith("ok:")).join("\\n");
  if (state.status === "failed") {
    $("error").textContent = state.error; $("error").style.display = "block"; $("grid").replaceChildren();
  } else if (state.status === "ok") {
    $("error").style.display = "none";
    const starts = (state.draft && state.draft.starts) || {};
    $("grid").replaceChildren(...state.looks.map(look => {
      const card = document.createElement("div");
      card.className = "cue" + (look.drawn ? " redrawn" : "");
      card.dataset.cue = look.id;
      const start = starts[look.id] ?? look.start;
      const label = look.id === "(end)" ? "after the last cue" : `${look.id} · starts ${clock(start)}`;
      card.innerHTML = `<img alt=""><div class="meta"><span class="badge"></span></div><div class="text"></div>`;
      card.querySelector("img").src = `/stills/${look.still}.png`;
      card.querySelector("img").alt = look.id;
      card.querySelector(".meta").prepend(label);
      card.querySelector(".badge").textContent = look.drawn ? "redrawn" : "";
      card.querySelector(".text").textContent = look.text;
      return card;
    }));
  }
  const d = state.draft || {};
  $("draftstatus").textContent = {waiting: "waiting for the stills", rendering: "rendering the draft…",
    ready: `ready after ${d.seconds} s`, failed: "draft failed:\\n" + (d.error || "")}[d.status] || d.status;
  $("draft").dataset.status = d.status;
  if (d.status === "ready" && d.url !== draftUrl) {
    draftUrl = d.url; $("player").src = d.url; $("player").hidden = false;
  } else if (d.status !== "ready") { $("player").hidden = true; }
}
async function refresh() {
  const state = await (await fetch("/state.json", {cache: "no-store"})).json();
  if (state.version !== shown) { shown = state.version; show(state); }
}
const events = new EventSource("/events");
events.onmessage = () => refresh();
events.onerror = () => setTimeout(refresh, 500);
refresh();
</script></body></html>
"""
