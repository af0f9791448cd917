"""manim forked from a warm server runs as its own process would: the same command line, its output in
its log, its exit code. The server keeps the glibc variables it was started with, the build's own
environment is left as it was, and a render that needs other values runs as a process of its own."""

import sys

import pytest
from helpers import ROOT, run

from tools.publish.rendering import launch

SCRIPT = """
import os, sys
import multiprocessing.forkserver as forkserver
from pathlib import Path
from tools.publish.rendering import launch

tmp = Path(sys.argv[1])
env = {**os.environ, "MALLOC_PERTURB_": "165"}
print(launch.run_manim(["--version"], env, tmp / "ok.log"))
print(launch.run_manim(["render", str(tmp / "missing.py")], env, tmp / "bad.log"))
server = Path(f"/proc/{forkserver._forkserver._forkserver_pid}/environ").read_bytes().split(b"\\0")
print(b"MALLOC_PERTURB_=165" in server, "MALLOC_PERTURB_" in os.environ)
print(launch._server_for(env), launch._server_for({}))
"""


@pytest.mark.slow  # runs manim
def test_a_forked_manim_logs_and_exits_as_its_own_process_and_the_server_keeps_its_start_environment(tmp_path):
    done = run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=ROOT, env={"MALLOC_PERTURB_": ""}
    )  # the build's own value, to be left alone
    assert done.returncode == 0, done.stderr
    ok, bad, environments, forkable = done.stdout.splitlines()
    assert ok == "0"
    assert "Manim Community v" in (tmp_path / "ok.log").read_text(encoding="utf-8")
    own = run([sys.executable, "-m", "manim", "render", str(tmp_path / "missing.py")], cwd=ROOT)
    assert bad == str(own.returncode) != "0"
    logged = "".join((tmp_path / "bad.log").read_text(encoding="utf-8").split())  # the console wraps at 80
    assert f"FileNotFoundError:{tmp_path / 'missing.py'}notfound" in logged
    assert environments == "True True"  # the server has the render's value; the build still has its own
    assert forkable == "True False"  # a render without the fill is not forked from a server that has it


def test_a_run_that_wrote_no_log_is_told_in_words(tmp_path):
    written = tmp_path / "ran.log"
    written.write_text("".join(f"line {n}\n" for n in range(40)), encoding="utf-8")
    assert launch.log_tail(written).splitlines() == [f"line {n}" for n in range(15, 40)]
    assert launch.log_tail(tmp_path / "never.log") == (
        f"(no log: the manim process ended before writing {tmp_path / 'never.log'})"
    )
