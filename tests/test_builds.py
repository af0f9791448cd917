"""Whole builds: reproducible to the byte, two at once into one folder both kept, encoded as manim.cfg says."""

import configparser
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

import av
import numpy as np
import pytest
from helpers import BUILD, ROOT, build_env, run

from tools.course import catalogue
from tools.files import file_sha256
from tools.publish.publishing import manifest

pytestmark = pytest.mark.slow  # real renders

# Cold builds into fresh folders under other PYTHONHASHSEED values, whole (one process) or in two parts (two
# processes: the second takes over the rest of the figure, tools/publish/rendering/segments.py): exchange_rate, which
# came out differently in 2 of 4 builds before render.MALLOC_FILL. (test_cluster compares a figure split
# across a cluster with a local whole render, test_segments a 3-D figure's parts with its whole.)
BUILDS = {"backprop/exchange_rate": (("1", 1), ("2", 2))}


def test_cold_builds_under_other_hash_seeds_whole_or_in_parts_are_byte_identical(tmp_path):
    """The same mp4, png, captions and numbers' places and descriptions from every build of a figure (a part that
    takes over the rest of the figure stepped through the plays before it, looking at them as a whole render does)."""
    jobs = [(only, seed, processes) for only, builds in BUILDS.items() for seed, processes in builds]

    def cold_build(job):
        only, seed, processes = job
        folder = tmp_path / f"{only.replace('/', '-')}-{seed}"
        done = run([*BUILD, "-j", str(processes), "--only", only], env=build_env(folder) | {"PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stdout + done.stderr
        assert ("s on in another process" in done.stdout) == (processes == 2), done.stdout
        return folder / "renders" / "480p15" / only

    with ThreadPoolExecutor(max_workers=2) as pool:
        built = dict(zip(jobs, pool.map(cold_build, jobs)))
    for only, builds in BUILDS.items():
        stems = [built[only, seed, processes] for seed, processes in builds]
        for ext in ("mp4", "png", "vtt", "facts.vtt", "descriptions.vtt"):
            digests = {file_sha256(stem.with_name(f"{stem.name}.{ext}")) for stem in stems}
            assert len(digests) == 1, f"{only}.{ext}: {len(digests)} different results in {len(stems)} builds"


def test_two_builds_at_once_into_one_folder_both_end_up_listed(tmp_path):
    env = build_env(tmp_path)
    figures = ["backprop/gates_circuit", "optimizer/optimal_step_parabola"]
    started = [
        subprocess.Popen(
            [*BUILD, "--only", only],
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for only in figures
    ]
    outputs = [process.communicate(timeout=600)[0] for process in started]
    assert [process.returncode for process in started] == [0, 0], "\n".join(outputs)
    out = tmp_path / "renders" / "480p15"
    man = manifest.load(out)
    assert set(man.figures) == {"gates_circuit", "optimal_step_parabola"}
    embedded = (out / "site" / "embed.json").read_text(encoding="utf-8")
    assert '"gates_circuit"' in embedded
    assert '"optimal_step_parabola"' in embedded
    for fig_id in man.figures:
        assert (out / catalogue.figure(fig_id).chapter / f"{fig_id}.json").exists()  # the sidecar


def _x264_options(path) -> str:
    """The settings libx264 writes into the stream it encodes (an SEI message)."""
    found = re.search(rb"x264 - core [^\x00]*options: ([^\x00]*)", path.read_bytes())
    assert found, f"{path}: no x264 settings in the stream"
    return found.group(1).decode("latin-1")


def test_clips_are_encoded_with_the_encoder_options_of_manim_cfg(backprop_build, tmp_path):
    """manim.cfg's [video_encoder.options] (one thread, the measured preset) reach a built clip: its
    x264 settings are those of a tiny clip encoded here with the same options at the same frame rate."""
    parser = configparser.ConfigParser()
    parser.read(ROOT / "manim.cfg", encoding="utf-8")
    options = dict(parser["video_encoder.options"])
    assert options["threads"] == "1"
    assert options["preset"] != "medium"
    tiny = tmp_path / "tiny.mp4"
    with av.open(str(tiny), "w") as target:
        stream = target.add_stream("libx264", rate=15, options=options)
        stream.width, stream.height, stream.pix_fmt = 64, 36, "yuv420p"
        for i in range(3):
            frame = av.VideoFrame.from_ndarray(np.zeros((36, 64, 3), np.uint8), format="rgb24")
            frame.pts = i
            for packet in stream.encode(frame):
                target.mux(packet)
        for packet in stream.encode(None):
            target.mux(packet)
    built = backprop_build.out / "backprop" / "gates_circuit.mp4"
    assert _x264_options(built) == _x264_options(tiny)
    assert " threads=1 " in _x264_options(built)
