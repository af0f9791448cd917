"""Faults during a build: killed while rendering or publishing, a render killed, stopped while the site is written, two
builds of one figure, a full disk.

Afterwards renders/ holds only whole files: every file is one the manifest
lists with its sha256 (or the manifest, a sidecar, the lock), and a rebuild
completes."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import BUILD, ROOT, build_env, tmpfs

from tools.files import file_sha256
from tools.publish.publishing import manifest

pytestmark = pytest.mark.slow  # real renders

FIGURE = "backprop/gates_circuit"


def _start(env: dict, only: str = FIGURE) -> subprocess.Popen:
    """`lecture build` in its own process group, so a kill takes its manim with it."""
    return subprocess.Popen(
        [*BUILD, "--only", only],
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _kill_when(process: subprocess.Popen, appears, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not appears():
        assert process.poll() is None, "the build ended before the moment to kill it"
        assert time.monotonic() < deadline, "the moment to kill never came"
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _only_whole_files(out: Path) -> None:
    man = manifest.load(out)
    listed = {
        f.path: f.sha256 for item in [*man.figures.values(), *man.chapter_videos.values()] for f in item.files.values()
    }
    sidecars = {item.sidecar for item in [*man.figures.values(), *man.chapter_videos.values()]}
    for path in out.rglob("*"):
        relative = path.relative_to(out).as_posix()
        if relative.startswith(("site/", "frames/")) or relative in ("site", "frames"):
            continue
        assert not path.name.startswith((".staging-", ".site-")), f"left behind: {relative}"
        if path.is_dir():
            continue
        if relative in listed:
            assert file_sha256(path) == listed[relative], f"{relative} is not the file the manifest lists"
        else:
            assert relative in sidecars | {"manifest.json", ".lock"}, f"unlisted file: {relative}"


def _rebuild(env: dict) -> str:
    process = _start(env)
    output = process.communicate(timeout=600)[0]
    assert process.returncode == 0, output
    return output


def test_killed_while_rendering_then_rebuilt(tmp_path):
    env = build_env(tmp_path)
    work = tmp_path / "cache" / "manim"
    _kill_when(_start(env), lambda: work.is_dir() and any(work.iterdir()))
    output = _rebuild(env)
    assert "gates_circuit: done" in output
    _only_whole_files(tmp_path / "renders" / "480p15")


def test_killed_while_publishing_then_rebuilt(tmp_path):
    env = build_env(tmp_path)
    chapter = tmp_path / "renders" / "480p15" / "backprop"
    _kill_when(_start(env), lambda: chapter.is_dir() and any(p.name.startswith(".staging-") for p in chapter.iterdir()))
    assert any(p.name.startswith(".staging-") for p in chapter.iterdir())  # the kill left a half-staged clip
    output = _rebuild(env)
    assert "left by a build that was stopped" in output
    _only_whole_files(tmp_path / "renders" / "480p15")


def test_two_builds_of_the_same_figure_at_once_both_finish_and_it_is_listed_once(tmp_path):
    env = build_env(tmp_path)
    builds = [_start(env), _start(env)]
    outputs = [b.communicate(timeout=600)[0] for b in builds]
    assert [b.returncode for b in builds] == [0, 0], "\n".join(outputs)
    out = tmp_path / "renders" / "480p15"
    waited = [o for o in outputs if f"waiting for another build into {out} to finish" in o]
    assert len(waited) == 1, "\n".join(outputs)  # one after the other, the second saying so
    assert "backprop/gates_circuit: unchanged" in waited[0]  # it planned against what the first published
    assert list(manifest.load(out).figures) == ["gates_circuit"]
    _only_whole_files(out)


def test_a_full_disk_fails_naming_the_path_and_keeps_the_files_already_there(tmp_path):
    with tmpfs(tmp_path / "renders", "size=20m") as renders:
        env = build_env(tmp_path)
        _rebuild(env)
        out = renders / "480p15"
        before = {f.path: f.sha256 for f in manifest.load(out).figures["gates_circuit"].files.values()}
        filler = renders / "filler"
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True)  # until full
        process = _start(env, "optimizer/optimal_step_parabola")
        output = process.communicate(timeout=600)[0]
        assert process.returncode == 2, output
        assert "Traceback" not in output, output
        assert f"failed writing {renders}" in output, output
        assert "No space left on device: the disk is full (" in output, output
        filler.unlink()
        assert {path: file_sha256(out / path) for path in before} == before
        assert list(manifest.load(out).figures) == ["gates_circuit"]


def test_a_full_cache_fails_naming_it_without_a_traceback_and_the_next_build_with_room_succeeds(tmp_path):
    """Seen: with LECTURE_CACHE on a full disk the build printed manim's traceback (cut short: the log is on that
    disk too), or `failed writing (no file named)`."""
    env = build_env(tmp_path)
    with tmpfs(tmp_path / "cache", "size=20m") as cache:
        filler = cache / "filler"
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k", "count=160"], capture_output=True, check=True)
        process = _start(env)
        output = process.communicate(timeout=600)[0]
        assert process.returncode == 2, output
        assert "Traceback" not in output, output
        assert f"LECTURE_CACHE={cache}" in output, output
        assert "the disk is full" in output, output
        out = tmp_path / "renders" / "480p15"
        assert not [p for p in out.rglob("*") if p.suffix in (".mp4", ".json") and p.name != "manifest.json"]
        _only_whole_files(out)
        assert manifest.load(out).figures == {}
    output = _rebuild({**env, "LECTURE_CACHE": str(tmp_path / "roomy-cache")})
    assert "gates_circuit: done" in output
    _only_whole_files(tmp_path / "renders" / "480p15")


def _descendants(pid: int) -> list[int]:
    """Every process below `pid`, from /proc (a render is a fork of the build's fork server, not its child)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def _command_line(pid: int) -> bytes:
    """A process's command line, or nothing when it has ended since it was listed."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _renders(build: int) -> list[int]:
    """The manim renders running under a build: the children of its fork server."""
    servers = [p for p in _descendants(build) if b"multiprocessing.forkserver" in _command_line(p)]
    return [p for server in servers for p in _descendants(server)]


def test_a_render_killed_with_minus_9_is_named_nothing_is_published_and_the_rebuild_succeeds(tmp_path):
    env = build_env(tmp_path)
    process = _start(env)
    deadline = time.monotonic() + 300
    while not (renders := _renders(process.pid)) or not list((tmp_path / "cache" / "manim").rglob("*.mp4")):
        assert process.poll() is None, process.communicate()[0]
        assert time.monotonic() < deadline, "no render started"
        time.sleep(0.05)
    for pid in renders:
        os.kill(pid, signal.SIGKILL)
    output = process.communicate(timeout=120)[0]
    assert process.returncode == 2, output
    assert "lecture build: refused: manim was killed (SIGKILL) on backprop/gates_circuit" in output, output
    assert "Traceback" not in output
    _only_whole_files(tmp_path / "renders" / "480p15")
    assert "gates_circuit: done" in _rebuild(env)
    _only_whole_files(tmp_path / "renders" / "480p15")


def test_sigterm_while_the_site_is_written_leaves_a_whole_site_and_the_rebuild_succeeds(tmp_path):
    env = build_env(tmp_path)
    _rebuild(env)
    out = tmp_path / "renders" / "480p15"
    before = {p.relative_to(out / "site"): p.read_bytes() for p in (out / "site").rglob("*") if p.is_file()}
    process = _start(env)  # nothing to render: it writes the site again
    deadline = time.monotonic() + 300
    while not any(p.name.startswith(".site-") for p in out.iterdir()):
        assert process.poll() is None, "the build ended before it wrote the site"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=120)
    assert process.returncode == -signal.SIGTERM
    after = {p.relative_to(out / "site"): p.read_bytes() for p in (out / "site").rglob("*") if p.is_file()}
    assert after == before  # the old site, whole (the new one would be the same: nothing changed)
    for f in manifest.load(out).figures["gates_circuit"].files.values():
        assert file_sha256(out / f.path) == f.sha256
    output = _rebuild(env)  # sweeps the stopped build's staging folder
    assert "left by a build that was stopped" in output
    _only_whole_files(out)


def test_a_stop_between_the_two_renames_that_swap_the_site_in_leaves_the_new_site_whole(tmp_path):
    """write_kit moves the old site aside, then the new one in: a SIGTERM between the two (forced here) waits until
    the new one is in place. Seen: no site/ at all, the old and the new both under staging names."""
    script = """
import os, signal, sys
from pathlib import Path
from tools import files
from tools.publish.publishing.manifest import Manifest
from tools.publish.site import site
out = Path(sys.argv[1])
site.write_kit(out, Manifest("480p15"), "旧的站点")
files.forward_signals()
rename = os.rename
def stopped_between(src, dst):
    rename(src, dst)
    if Path(dst).name.startswith(".site-old-"):
        os.kill(os.getpid(), signal.SIGTERM)
site.os.rename = stopped_between
site.write_kit(out, Manifest("480p15"), "新的站点")
print("not stopped")
"""
    out = tmp_path / "480p15"
    out.mkdir()
    done = subprocess.run([sys.executable, "-c", script, str(out)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == -signal.SIGTERM, done.stdout + done.stderr
    assert "not stopped" not in done.stdout
    assert "新的站点" in (out / "site" / "index.html").read_text(encoding="utf-8")
    assert (out / "site" / "embed.json").is_file()
