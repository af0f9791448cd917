"""The project's files and keys: written so no reader sees half of one, and hashed one way each.

Every cache key is :func:`content_key` of a JSON value (one serialisation, so two caches never key the
same material two ways), every file's digest is :func:`file_sha256`, and the checkout's source is
:func:`source_digest`.

Every outside program runs through :func:`run_limited` (or, for a forked manim, :func:`wait_limited`): in a
process group of its own, under a time limit (settings.time_limit), the whole group killed when the limit
passes, when the caller fails, or when the build itself is stopped (:func:`forward_signals`).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import secrets
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path

from tools import settings
from tools.settings import Limit

# What a render depends on in the checkout: the code, the narration and its recordings, manim's settings.
SOURCE_GLOBS = ("tools/**/*.py", "scenes/**/*.py", "narration/**/*", "manim.cfg", "pyproject.toml")


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write `data` to a temporary file beside `path`, then move it over `path` in one step; on any
    failure the temporary file is removed and `path` is as it was.

    The temporary file is made as ``open`` makes one (the umask's permissions, not mkstemp's 0600):
    the manifest and the sidecars are published, for a web server to read.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}-{secrets.token_hex(6)}.tmp")
    try:
        with open(tmp, "xb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _plain(value: object) -> object:
    """The rule for what JSON has no form for: a path is its POSIX text, an array (numpy) its nested list;
    anything else is refused, not keyed by a ``str()`` that may drop digits or differ between runs."""
    if isinstance(value, Path):
        return value.as_posix()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"content_key: no stable form for {type(value).__name__} {value!r}")


def content_key(value: object) -> str:
    """sha256 of a JSON value, serialised one way: keys sorted, non-ASCII kept, see _plain for the rest."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=_plain)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def bytes_sha256(data: bytes) -> str:
    """sha256 of bytes in memory (a file shipped back by a cluster worker), as file_sha256 gives it of a file."""
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read a block at a time (a clip or a voice model may be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def source_digest(root: Path = settings.ROOT) -> str:
    """sha256 over the project files a render depends on (paths and contents), and manim's version."""
    digest = hashlib.sha256(version("manim").encode())
    files = sorted({p for pattern in SOURCE_GLOBS for p in root.glob(pattern) if p.is_file()})
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


# -- outside processes under a time limit ------------------------------------------------------------------


class TimeLimitError(Exception):
    """An outside process ran past its time limit and was stopped; the message names what it was for, the
    command, the limit and how to raise it (settings.Limit.exceeded)."""


_groups: set[int] = set()  # process groups of outside processes running now (each its leader's pid)
_groups_lock = threading.Lock()


def own_group_and_die_with_parent() -> None:
    """In a new child, before it runs anything: a process group of its own (killed whole when its time is up),
    and SIGKILL when its parent dies (a build killed with SIGKILL leaves no child running on)."""
    os.setpgid(0, 0)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (Linux)


def kill_group(pid: int) -> None:
    """SIGKILL to the process group led by `pid` (all it started), or to `pid` alone if it has none yet."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def _tracked(pid: int) -> Iterator[None]:
    """The group of `pid` is known while the block runs (a signal to the build is passed on to it), and
    killed when the block ends (its leader done or not: nothing it started is left running)."""
    with _groups_lock:
        _groups.add(pid)
    try:
        yield
    finally:  # its leader is reaped by now: only the group, never a pid that may be another process's
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        with _groups_lock:
            _groups.discard(pid)


def wait_limited(
    pid: int, wait: Callable[[float], bool], limit: Limit, what: str, command: str, reap: Callable[[], object]
) -> None:
    """Wait for the process `pid` (leading its own group) with `wait(seconds)` (True once it ended); past
    `limit`, or on any failure here (Ctrl-C), kill its whole group, `reap` it and, for the limit, raise
    TimeLimitError naming `what` and `command`."""
    with _tracked(pid):
        try:
            ended = wait(limit.seconds)
        except BaseException:
            kill_group(pid)
            reap()
            raise
        if not ended:
            kill_group(pid)
            reap()
            raise TimeLimitError(limit.exceeded(what, command))


def run_limited(
    command: list[str] | str,
    limit: Limit,
    what: str,
    stdin: bytes | None = None,
    **popen,
) -> subprocess.CompletedProcess:
    """``subprocess.run`` of `command` (a shell line when a str) with `stdin` as its input, output captured
    unless `popen` says where it goes, under `limit`: see wait_limited. `what` names the cue or figure."""
    shell = isinstance(command, str)
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    process = subprocess.Popen(
        command,
        shell=shell,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        preexec_fn=own_group_and_die_with_parent,  # in the child: setpgid and prctl, nothing that takes a lock
        **popen,
    )
    out: list[tuple[bytes, bytes]] = []

    def wait(seconds: float) -> bool:
        try:
            out.append(process.communicate(stdin, timeout=seconds))
        except subprocess.TimeoutExpired:
            return False
        return True

    shown = command if shell else " ".join(command)
    wait_limited(process.pid, wait, limit, what, f"`{shown}`", process.wait)
    stdout, stderr = out[0]
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


_held: list[int] | None = None  # signals that arrived inside signals_held(), to act on when it ends


def _passed_on(signum: int, frame) -> None:
    """Ctrl-C, SIGTERM or SIGHUP: passed on to the process groups running now, then acted on here as before (or
    later, when it arrives while signals are held)."""
    if _held is not None:
        _held.append(signum)
        return
    with _groups_lock:
        groups = list(_groups)
    for pid in groups:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def forward_signals() -> None:
    """In the main thread of a command that runs outside processes: Ctrl-C, SIGTERM and SIGHUP reach the
    process groups running now (each has its own group, so the terminal's signal no longer does), then act
    on this process as before."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) in (signal.default_int_handler, signal.SIG_DFL):
            signal.signal(signum, _passed_on)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold the signals forward_signals passes on until the block ends, then act on them: for a step that must
    not stop halfway, such as swapping a folder for another with two renames (a process stopped between them
    would leave neither in place)."""
    global _held
    if _held is not None:  # held already, by an enclosing block
        yield
        return
    _held = []
    try:
        yield
    finally:
        arrived, _held = _held, None
        for signum in dict.fromkeys(arrived):
            _passed_on(signum, None)
