"""Whole builds: reproducible to the byte, and two at once into one folder both kept."""

import hashlib
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
from helpers import BIN, build_env, run

from tools.course import catalogue
from tools.publish import manifest

pytestmark = pytest.mark.slow  # real renders

# exchange_rate, which came out differently from build to build, and the shortest figure of each other chapter.
REPRODUCED = ["backprop/exchange_rate", "optimizer/optimal_step_parabola", "ledger/mixed_precision_same_16"]
SEEDS = ("1", "2", "3")


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_figure_built_three_times_is_byte_identical(tmp_path):
    """Cold builds into fresh folders under different PYTHONHASHSEED values: same mp4, png, vtt."""
    jobs = [(only, seed) for only in REPRODUCED for seed in SEEDS]

    def cold_build(job):
        only, seed = job
        folder = tmp_path / f"{only.replace('/', '-')}-{seed}"
        done = run([str(BIN / "lecture"), "build", "-q", "l", "--only", only],
                   env=build_env(folder) | {"PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stdout + done.stderr
        return folder / "renders" / "480p15" / f"{only}"

    with ThreadPoolExecutor(max_workers=2) as pool:
        stems = list(pool.map(cold_build, jobs))
    for index, only in enumerate(REPRODUCED):
        builds = stems[index * len(SEEDS):(index + 1) * len(SEEDS)]
        for ext in ("mp4", "png", "vtt"):
            digests = {_sha(stem.with_name(f"{stem.name}.{ext}")) for stem in builds}
            assert len(digests) == 1, f"{only}.{ext}: {len(digests)} different results in {len(SEEDS)} builds"


def test_two_builds_at_once_into_one_folder_both_end_up_listed(tmp_path):
    env = build_env(tmp_path)
    figures = ["backprop/gates_circuit", "optimizer/optimal_step_parabola"]
    started = [subprocess.Popen([str(BIN / "lecture"), "build", "-q", "l", "--only", only], env={**os.environ, **env},
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for only in figures]
    outputs = [process.communicate(timeout=600)[0] for process in started]
    assert [process.returncode for process in started] == [0, 0], "\n".join(outputs)
    out = tmp_path / "renders" / "480p15"
    man = manifest.load(out)
    assert set(man.figures) == {"gates_circuit", "optimal_step_parabola"}
    embedded = (out / "site" / "embed.json").read_text(encoding="utf-8")
    assert '"gates_circuit"' in embedded and '"optimal_step_parabola"' in embedded
    for fig_id in man.figures:
        assert (out / catalogue.figure(fig_id).chapter / f"{fig_id}.json").exists()  # the sidecar

