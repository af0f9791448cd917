"""Faults on the cluster path, with a real Dask scheduler and two worker processes on this machine, each with its
own scratch folder and cache: a worker killed mid-task, a worker whose checkout differs, the scheduler stopped
mid-build, and a result that comes back cut short or with another sha256. Published files are whole either way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import BIN, BUILD, build_env, copy_project

from tools.course import catalogue
from tools.files import file_sha256
from tools.publish.build import plan, stages
from tools.publish.keys import render_key
from tools.publish.publishing import manifest
from tools.publish.rendering import cluster
from tools.publish.rendering.cluster import ClusterError
from tools.voice import speech

pytestmark = pytest.mark.slow  # a scheduler and two workers in processes of their own, real renders
FIGURE = "optimizer/optimal_step_parabola"

# The damaging task functions below run on the workers, which import this file (tests/ is on their PYTHONPATH, and
# the scheduler's, which unpickles each task).
SCHEDULER = [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
IN_COPY = [str(BIN / "python"), "-m", "tools.cli"]  # `lecture`, run in the copy of the checkout
WORKER = [str(BIN / "dask"), "worker", "--nthreads", "1", "--no-nanny", "--no-dashboard"]


@dataclass
class LocalDask:
    project: Path  # the scratch copy of the checkout the workers and the build run in
    address: str
    scheduler: subprocess.Popen
    workers: list[subprocess.Popen]
    caches: list[Path]  # each worker's LECTURE_CACHE (its logs say which one rendered)

    def stop(self) -> None:
        for process in [*self.workers, self.scheduler]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _start(args: list[str], env: dict, cwd: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        args,
        cwd=cwd,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


@pytest.fixture
def dask(tmp_path) -> LocalDask:
    """`dask scheduler` and two `dask worker --no-nanny` processes (a killed one stays dead), each worker in the
    checkout with a scratch folder and cache of its own and no voice (it must use the audio it is sent)."""
    # A copy of the checkout, so that the workers and the build hash the same source while files here change.
    project = copy_project(tmp_path / "project")
    path = {"PYTHONPATH": f"{project}{os.pathsep}{project / 'tests'}"}
    info = tmp_path / "scheduler.json"
    scheduler = _start(
        [*SCHEDULER, "--scheduler-file", str(info)],
        path,  # it unpickles the tasks too
        tmp_path,
        tmp_path / "scheduler.log",
    )
    deadline = time.monotonic() + 60
    while not info.exists() or "address" not in info.read_text():
        assert scheduler.poll() is None, (tmp_path / "scheduler.log").read_text()
        assert time.monotonic() < deadline, "the scheduler never started"
        time.sleep(0.1)
    address = json.loads(info.read_text())["address"]
    workers, caches = [], []
    for n in range(2):
        scratch = tmp_path / f"worker{n}"
        scratch.mkdir()
        caches.append(scratch / "cache")
        workers.append(
            _start(
                [*WORKER, address, "--local-directory", str(scratch / "dask"), "--name", f"w{n}"],
                {"LECTURE_CACHE": str(caches[-1]), "LECTURE_VOICE": "no-such-voice", **path},
                project,
                scratch / "worker.log",
            )
        )
    running = LocalDask(project, address, scheduler, workers, caches)
    from distributed import Client

    with Client(address, timeout="30s") as client:
        client.wait_for_workers(2, timeout=90)
    yield running
    running.stop()


def _build(tmp_path: Path, dask: LocalDask, jobs: int = 1) -> subprocess.Popen:
    """`lecture build` of FIGURE on the cluster, run in the copy of the checkout."""
    return subprocess.Popen(
        [*IN_COPY, *BUILD[1:], "-j", str(jobs), "--only", FIGURE, "--scheduler", dask.address],
        cwd=dask.project,
        env={**os.environ, **build_env(tmp_path / "client"), "PYTHONPATH": str(dask.project)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _rendering_on(dask: LocalDask, build_process: subprocess.Popen, timeout: float = 240) -> int:
    """The index of the worker whose render of the figure has begun (its log appeared)."""
    deadline = time.monotonic() + timeout
    while True:
        for n, cache in enumerate(dask.caches):
            if (cache / "logs").is_dir() and any((cache / "logs").iterdir()):
                return n
        assert build_process.poll() is None, build_process.communicate()[0]
        assert time.monotonic() < deadline, "no worker started rendering"
        time.sleep(0.05)


def _only_whole_files(out: Path) -> None:
    """Every published file is the one the manifest lists, with its sha256."""
    man = manifest.load(out)
    for entry in [*man.figures.values(), *man.chapter_videos.values()]:
        for f in entry.files.values():
            assert file_sha256(out / f.path) == f.sha256, f.path
    for path in out.rglob("*"):
        assert not path.name.startswith(".staging-"), path


def test_a_worker_killed_mid_task_has_its_task_retried_on_the_other(tmp_path, dask):
    process = _build(tmp_path, dask)
    first = _rendering_on(dask, process)
    time.sleep(1.0)  # well into the render
    os.killpg(dask.workers[first].pid, signal.SIGKILL)
    output = process.communicate(timeout=600)[0]
    out = tmp_path / "client" / "renders" / "480p15"
    print(f"killed worker {first}; the build {'completed' if process.returncode == 0 else 'failed'}")
    if process.returncode == 0:
        assert "optimal_step_parabola: done" in output, output
        other = dask.caches[1 - first] / "logs"
        assert other.is_dir(), f"the other worker never rendered it:\n{output}"
    else:  # allowed: the build fails, naming the figure
        assert "optimal_step_parabola" in output, output
        assert "Traceback" not in output, output
    _only_whole_files(out)


def test_a_worker_whose_checkout_differs_refuses_naming_both_digests(tmp_path, dask, monkeypatch):
    monkeypatch.setenv("LECTURE_CACHE", str(tmp_path / "client-cache"))
    monkeypatch.setenv("LECTURE_VOICE", "silent")
    fig = catalogue.figure(FIGURE.split("/")[1])
    narration = stages.narrate((plan.draft(fig, speech.Silent()),), speech.Silent(), lambda line: None)
    remote = cluster.Cluster(dask.address)
    try:
        remote.source = "0" * 64  # as if the client's checkout were another commit
        with pytest.raises(ClusterError) as refused:
            remote.render(render_key.scene_ref(fig), "l", narration.paths[fig.id], tmp_path / "work")
    finally:
        remote.close()
    message = str(refused.value)
    assert f"refuses {fig.id}" in message
    assert "000000000000" in message
    assert "same commit" in message
    assert not (tmp_path / "work").exists()


def test_the_scheduler_stopped_mid_build_fails_it_clearly_within_the_connect_timeout(tmp_path, dask):
    process = _build(tmp_path, dask)
    _rendering_on(dask, process)
    os.killpg(dask.scheduler.pid, signal.SIGKILL)
    stopped = time.monotonic()
    try:
        output = process.communicate(timeout=60)[0]
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail(f"the build still waited 60 s after the scheduler stopped:\n{process.communicate()[0]}")
    waited = time.monotonic() - stopped
    assert process.returncode == 2, output
    assert f"lost the Dask scheduler at {dask.address}" in output, output
    assert "optimal_step_parabola" in output, output
    assert "Traceback" not in output, output
    connect = float(cluster.CONNECT_TIMEOUT.removesuffix("s"))
    assert waited < connect + 15, f"{waited:.1f} s after the scheduler stopped:\n{output}"
    out = tmp_path / "client" / "renders" / "480p15"
    assert not (out / "optimizer").exists() or not list((out / "optimizer").glob("*.mp4"))


def _cut_short(task):
    """On the worker: a render's result whose video lost its second half on the way (its sha256 as sent)."""
    files = cluster.shipped({"video": b"\x00\x00\x00\x18ftypisom" * 400, "srt": b"1\n"})
    files["video"]["bytes"] = files["video"]["bytes"][:2000]
    return files


def _other_digest(task):
    """On the worker: a result whose captions changed on the way (same length, another sha256)."""
    files = cluster.shipped({"video": b"\x00\x00\x00\x18ftypisom" * 400, "srt": b"1\n"})
    files["srt"]["bytes"] = b"2\n"
    return files


@pytest.mark.parametrize(
    ("damage", "said"), [(_cut_short, "video damaged (2000 bytes"), (_other_digest, "srt damaged")]
)
def test_a_result_cut_short_or_with_another_sha256_is_refused_and_not_published(
    tmp_path, dask, monkeypatch, damage, said
):
    monkeypatch.setenv("LECTURE_CACHE", str(tmp_path / "client-cache"))
    monkeypatch.setenv("LECTURE_VOICE", "silent")
    fig = catalogue.figure(FIGURE.split("/")[1])
    narration = stages.narrate((plan.draft(fig, speech.Silent()),), speech.Silent(), lambda line: None)
    remote = cluster.Cluster(dask.address)
    monkeypatch.setattr(remote, "task_function", damage)
    try:
        with pytest.raises(ClusterError) as refused:
            remote.render(render_key.scene_ref(fig), "l", narration.paths[fig.id], tmp_path / "work")
    finally:
        remote.close()
    assert said in str(refused.value), str(refused.value)
    assert "refused, nothing published" in str(refused.value)
    assert "optimizer/optimal_step_parabola" in str(refused.value)
    assert not (tmp_path / "work").exists()  # nothing of it was written
