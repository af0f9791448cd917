"""manim processes forked from a server that has imported manim once.

``python -m manim`` spends about a second importing manim (scipy, networkx,
…) before a figure's code runs, and a build starts one per figure and per
part of a figure. multiprocessing's fork server imports manim once
(tools/publish/rendering/warm_manim.py); each render is a fork of it that runs
manim's command line as ``python -m manim`` would, its output in the
render's log.

Each render runs in a process group of its own under a time limit (tools/files.py: wait_limited):
past it, or when the build fails or is stopped, the whole group is killed.

glibc reads ``MALLOC_PERTURB_`` (render.MALLOC_FILL) when a process starts,
so the server is started with the value the first render asks for (a build starts it for its quality before
its checks, and the layout lint forks from it too). A render that asks for another restarts the server when
none of its forks is running, else runs ``python -m tools.publish.rendering.fast_manim`` (manim's command
line in a new process); so does a render from a daemonic process, which multiprocessing allows no children
(a Dask worker started without ``DASK_DISTRIBUTED__WORKER__DAEMON=False``: docs/cluster.md).

The server and its forks, and fast_manim's processes, copy mobjects, parse texts and shade 3-D faces the fast
way (tools/publish/rendering/fast_manim.py).
"""

from __future__ import annotations

import errno
import multiprocessing
import multiprocessing.forkserver
import os
import subprocess
import sys
import threading
from pathlib import Path

from tools import settings
from tools.files import own_group_and_die_with_parent, run_limited, wait_limited
from tools.settings import Limit

AT_START = ("MALLOC_PERTURB_",)  # read once, when a process starts: the server's value holds in its forks
_context = multiprocessing.get_context("forkserver")
_lock = threading.Lock()
_server_env: dict[str, str] | None = None  # the AT_START variables the server was started with
_forks_running = 0  # forks of the server not yet joined: it is not restarted under them


def run_manim(args: list[str], env: dict[str, str], log: Path, limit: Limit | None = None, what: str = "manim") -> int:
    """``manim <args>`` from the repository root with environment `env`, its output to `log`; its exit code.
    Past `limit` (by default a render's floor) its process group is killed and TimeLimitError names `what`
    (the figure or its part)."""
    limit = limit or settings.time_limit("render")
    command = f"`manim {' '.join(args)}` (log {log})"
    if _claim_server(env):
        try:
            process = _context.Process(target=_manim_main, args=(args, env, str(log)), name=f"manim {log.stem}")
            process.start()

            def ended(seconds: float) -> bool:
                process.join(seconds)
                return process.exitcode is not None

            wait_limited(process.pid, ended, limit, what, command, process.join)
            return process.exitcode
        finally:
            _release_server()
    with open(log, "w", encoding="utf-8") as stream:
        return run_limited(
            [sys.executable, "-m", "tools.publish.rendering.fast_manim", *args],
            limit,
            what,
            cwd=settings.ROOT,
            stdout=stream,
            stderr=subprocess.STDOUT,
            env=env,
        ).returncode


# Less room than this left where a failed run wrote: the disk filled up under it.
NEARLY_FULL = 1 << 20


def out_of_space(log: Path, folder: Path) -> bool:
    """Whether a failed run ran out of disk space: its log says so, or the disk that holds `folder` (where it
    wrote) has next to no room left, as when the log itself was cut short there. Its traceback then only hides
    that."""
    try:
        said = f"[Errno {errno.ENOSPC}]" in log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        said = False
    return said or settings.free_bytes(folder) < NEARLY_FULL


def log_tail(log: Path, lines: int = 25) -> str:
    """The last lines of a manim run's log, for an error; or that there is none (a fork that died before its
    log was opened, such as one whose server could not start)."""
    try:
        return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no log: the manim process ended before writing {log})"


def _at_start(env: dict[str, str]) -> dict[str, str]:
    return {name: env[name] for name in AT_START if name in env}


def _server_for(env: dict[str, str]) -> bool:
    """Whether a render with `env` can be forked from the server (started here, the first time)."""
    global _server_env
    if multiprocessing.current_process().daemon:
        return False
    with _lock:
        if _server_env is None:
            _start_server(_at_start(env))
            _server_env = _at_start(env)
        return _server_env == _at_start(env)


def start_server(env: dict[str, str]) -> bool:
    """Start the server for renders with `env` now (it imports manim in the background), if none runs yet;
    whether renders with `env` fork from it (not in a daemonic process, nor when it runs with other AT_START
    values)."""
    return _server_for(env)


def server_settings() -> dict[str, str] | None:
    """The AT_START variables the server was started with (its forks' malloc fill), or None when none was."""
    with _lock:
        return None if _server_env is None else dict(_server_env)


def _claim_server(env: dict[str, str]) -> bool:
    """Whether this render forks from the server (counted as running until released): as _server_for says,
    or after restarting a server started with other AT_START values when none of its forks is running."""
    global _server_env, _forks_running
    forkable = _server_for(env)
    with _lock:
        if (
            not forkable
            and _server_env is not None
            and _forks_running == 0
            and not multiprocessing.current_process().daemon
        ):
            multiprocessing.forkserver._forkserver._stop()
            _start_server(_at_start(env))
            _server_env = _at_start(env)
            forkable = True
        forkable = forkable and _server_env == _at_start(env)
        _forks_running += forkable
        return forkable


def _release_server() -> None:
    global _forks_running
    with _lock:
        _forks_running -= 1


def _start_server(wanted: dict[str, str]) -> None:
    """Start the fork server with `wanted` as its AT_START variables (it inherits this process's environment)."""
    saved = {name: os.environ.pop(name) for name in AT_START if name in os.environ}
    os.environ.update(wanted)
    try:
        _context.set_forkserver_preload([_main_module(), "tools.publish.rendering.warm_manim"])
        multiprocessing.forkserver.ensure_running()
    finally:
        for name in AT_START:
            os.environ.pop(name, None)
        os.environ.update(saved)


def _main_module() -> str:
    """The module multiprocessing has each fork import again as ``__mp_main__`` (the build's entry point,
    ``tools.cli`` and all it imports: half a second), unless the server imported it already."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)  # set when run with python -m
    return spec.name if spec is not None else "__main__"  # a script: the server imports it by path


def _manim_main(args: list[str], env: dict[str, str], log: str) -> None:
    """In a fork of the server: ``python -m manim <args>``, as its own process would run it."""
    own_group_and_die_with_parent()
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    if _at_start(dict(os.environ)) != _at_start(env):  # a server restarted with another environment
        raise SystemExit(
            f"the manim fork server runs with {_at_start(dict(os.environ))}, this render needs "
            f"{_at_start(env)}: run the build again"
        )
    os.environ.clear()
    os.environ.update(env)
    os.chdir(settings.ROOT)
    sys.path.insert(0, str(settings.ROOT))  # as `python -m` run from the root has it
    sys.argv = ["manim", *args]  # what the command line would be, for any code that reads it
    from manim.__main__ import main

    main(args=args, prog_name="manim")
