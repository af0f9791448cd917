"""Bad settings and leftovers: refused up front, or cleaned up, with a message that names them."""

import subprocess

import pytest
from helpers import BIN, run

from tools.publish import scratch


def _build(env: dict) -> subprocess.CompletedProcess:
    return run([str(BIN / "lecture"), "build", "-q", "l", "--only", "backprop/gates_circuit"],
               env={"LECTURE_VOICE": "silent", **env})


@pytest.mark.parametrize("variable", ["LECTURE_RENDERS", "LECTURE_CACHE"])
def test_an_output_folder_that_is_a_file_is_refused_naming_the_variable(tmp_path, variable):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    env = {"LECTURE_RENDERS": str(tmp_path / "r"), "LECTURE_CACHE": str(tmp_path / "c")}
    env[variable] = str(blocker / "inside")
    done = _build(env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{variable}={blocker / 'inside'}" in done.stderr and "is a file, not a folder" in done.stderr


def test_a_read_only_renders_folder_is_refused(tmp_path):
    target = tmp_path / "ro"
    target.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(target)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs here (needs root): {mounted.stderr.decode().strip()}")
    try:
        done = _build({"LECTURE_RENDERS": str(target), "LECTURE_CACHE": str(tmp_path / "c")})
    finally:
        subprocess.run(["umount", str(target)], check=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"LECTURE_RENDERS={target}" in done.stderr and "cannot write" in done.stderr


def test_leftovers_of_a_killed_build_are_swept_but_not_a_running_builds(tmp_path):
    out = tmp_path / "480p15"
    (out / "backprop").mkdir(parents=True)
    dead = [out / "backprop" / ".staging-dead", out / ".staging-join", out / ".site-abc", out / ".site-old-.site-x"]
    for folder in dead:
        folder.mkdir()
        (folder / "half.mp4").write_bytes(b"half")
    (out / ".manifest.json.123.tmp").write_text("{")
    kept = out / "backprop" / "gates_circuit.mp4"
    kept.write_bytes(b"whole")
    with scratch.staging(out / "backprop") as running:
        removed = scratch.sweep(out)
        assert running.exists()
    assert sorted(removed) == sorted([*dead, out / ".manifest.json.123.tmp"])
    assert kept.read_bytes() == b"whole"
