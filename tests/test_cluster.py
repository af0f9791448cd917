"""Renders on a Dask cluster: the source check, and one figure split across a two-worker LocalCluster giving the
same video as a local render of it whole."""

import hashlib
import multiprocessing
import os
import re
from importlib.metadata import version

import pytest
from helpers import BIN, ROOT, build_env, build_figure, run

from tools import files
from tools.course import catalogue
from tools.publish.keys import render_key
from tools.publish.rendering import cluster
from tools.publish.rendering.cluster import ClusterError, Task


def test_the_source_digest_follows_the_code_and_the_narration(tmp_path):
    for part in ("tools", "scenes", "narration"):
        (tmp_path / part).mkdir()
    (tmp_path / "scenes" / "a.py").write_text("x = 1")
    (tmp_path / "narration" / "a.toml").write_text("[[f]]")
    (tmp_path / "notes.txt").write_text("not part of a render")
    before = files.source_digest(tmp_path)
    (tmp_path / "notes.txt").write_text("changed")
    assert files.source_digest(tmp_path) == before
    (tmp_path / "narration" / "a.toml").write_text("[[g]]")
    assert files.source_digest(tmp_path) != before


def test_a_worker_with_other_source_refuses_the_task_naming_both():
    task = Task(render_key.scene_ref(catalogue.figure("optimal_step_parabola")), "l", "0" * 64, version("manim"), {})
    with pytest.raises(ClusterError) as refused:
        cluster.render_task(task)
    message = str(refused.value)
    assert "refuses optimal_step_parabola" in message
    assert "000000000000" in message
    assert files.source_digest()[:12] in message
    assert "same commit" in message


@pytest.mark.slow  # waits out the connection to a scheduler that is not there
def test_without_distributed_or_a_scheduler_the_build_says_so(tmp_path):
    done = run(
        [
            str(BIN / "lecture"),
            "build",
            "-q",
            "l",
            "--no-layout",
            "--only",
            "optimizer/optimal_step_parabola",
            "--scheduler",
            "tcp://127.0.0.1:9",
        ],
        env=build_env(tmp_path),
    )
    assert done.returncode == 2
    assert "no Dask scheduler at tcp://127.0.0.1:9" in done.stderr


@pytest.mark.slow
def test_a_figure_split_across_a_two_worker_local_cluster_matches_a_local_whole_render(tmp_path, monkeypatch):
    import dask
    from distributed import LocalCluster

    # The workers inherit this environment: their own cache, and no voice at all, so a worker that
    # tried to synthesize instead of using the shipped audio would fail.
    monkeypatch.setenv("LECTURE_CACHE", str(tmp_path / "worker-cache"))
    monkeypatch.setenv("LECTURE_VOICE", "no-such-voice")
    with (
        dask.config.set(cluster.WORKER_CONFIG),  # workers that fork their renders from a render server of their own
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local,
    ):
        env = build_env(tmp_path / "remote") | {"LECTURE_VOICE": "silent"}
        done = run(
            [
                str(BIN / "lecture"),
                "build",
                "-q",
                "l",
                "-j",
                "2",
                "--no-layout",
                "--only",
                "optimizer/optimal_step_parabola",
                "--scheduler",
                local.scheduler_address,
            ],
            env=env,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "daemonic" not in done.stdout
        # The second worker, idle, took over the rest of the figure: at least two parts, a log each on the
        # workers (a loaded machine may see a worker idle again and cut the rest once more).
        assert "optimal_step_parabola: from " in done.stdout
        assert "s on in another process" in done.stdout
        assert len(os.listdir(tmp_path / "worker-cache" / "logs")) >= 2
    here = build_figure("optimizer/optimal_step_parabola", tmp_path / "local")
    assert here.returncode == 0, here.stdout + here.stderr

    def digest(root) -> str:
        path = root / "renders" / "480p15" / "optimizer" / "optimal_step_parabola.mp4"
        return hashlib.sha256(path.read_bytes()).hexdigest()

    assert digest(tmp_path / "remote") == digest(tmp_path / "local")


def test_a_daemonic_worker_says_it_cannot_fork_its_renders():
    """multiprocessing allows a daemonic process no children, so no render server: warm_worker says so (the
    build names such workers), and starts nothing."""
    context = multiprocessing.get_context("fork")
    answer = context.Queue()
    worker = context.Process(target=lambda: answer.put(cluster.warm_worker("l")), daemon=True)
    worker.start()
    assert answer.get(timeout=60) is False
    worker.join(timeout=60)
    assert worker.exitcode == 0


def test_the_worker_settings_are_the_ones_docs_cluster_md_gives():
    """Each of WORKER_CONFIG, as the environment variable `dask worker` reads it, is in docs/cluster.md with its
    value, and Dask reads those variables back as WORKER_CONFIG."""
    import dask.config

    docs = (ROOT / "docs" / "cluster.md").read_text(encoding="utf-8")
    given = dict(re.findall(r"\b(DASK_[A-Z_]+)=(\S+)", docs))
    read = dask.config.collect_env(given)
    for key, value in cluster.WORKER_CONFIG.items():
        assert dask.config.get(key.replace("-", "_"), config=read) == value, key
    assert len(given) == len(cluster.WORKER_CONFIG)
