"""A figure rendered in segments and joined is the whole render, frame for frame.

The figures here carry state from play to play in ways manim's own skipping
gets wrong: the ambient camera rotation of saddle_3d_rotating (a ``dt``
updater on the camera), recompute_sqrt_l's updater that remembers what it
painted last, why_fp32_bf16's ``always_redraw`` riders on a tracker. Each
is rendered whole and in three segments (``manim -n``) at a tiny size and
frame rate, the segments joined as the build joins them, and every decoded
frame compared by hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

import av
import pytest
from helpers import build_env, run

from tools.course import catalogue
from tools.publish import render, segments
from tools.settings import PLAN_OUT_ENV

# 128 px: a multiple of 64, where libx264 encodes the same frames to the same bytes (see render.MALLOC_FILL).
TINY = ["-r", "128,72", "--fps", "5"]


def _render(figure: str, media, flags: list[str], env: dict) -> tuple:
    """manim on one figure as `lecture build` runs it, at the tiny size; its video (if any) and its plan."""
    fig = catalogue.figure(figure)
    plan = media / "plan.json"
    done = run([sys.executable, "-m", "manim", "render", "-q", "l", *TINY, "--config_file",
                str(render.one_figure_cfg()), "--media_dir", str(media), "-o", fig.id, "--progress_bar", "none",
                *flags, str(catalogue.chapter(fig.chapter).scene_file), fig.scene_class],
               env={**env, PLAN_OUT_ENV: str(plan)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    videos = list(media.glob(f"videos/**/{fig.id}.mp4"))
    return (videos[0] if videos else None), json.loads(plan.read_text())


def _frame_hashes(path) -> list[str]:
    with av.open(str(path)) as container:
        return [hashlib.sha256(frame.to_ndarray(format="rgb24").tobytes()).hexdigest()
                for frame in container.decode(video=0)]


@pytest.mark.slow
@pytest.mark.parametrize("figure", ["saddle_3d_rotating", "recompute_sqrt_l", "why_fp32_bf16"])
def test_three_segments_joined_are_the_whole_render_frame_for_frame(figure, tmp_path):
    env = build_env(tmp_path)
    os.environ.setdefault("LECTURE_CACHE", env["LECTURE_CACHE"])  # one_figure_cfg() writes into the cache
    whole, plan = _render(figure, tmp_path / "whole", [], env)
    cuts = segments.cut(plan, 3)
    assert len(cuts) == 3
    parts = []
    for n, segment in enumerate(cuts):
        video, seen = _render(figure, tmp_path / f"part{n}", ["-n", segment.flag], env)
        # A segment ends after its last play, having stepped through the ones before it exactly.
        assert seen == plan[:len(seen)] and len(seen) == (len(plan) if segment.last is None else segment.last + 1)
        parts.append(video)
    segments.join(parts, tmp_path / "joined.mp4")
    expected, joined = _frame_hashes(whole), _frame_hashes(tmp_path / "joined.mp4")
    assert len(joined) == len(expected) == sum(plan)
    differing = [n for n, (a, b) in enumerate(zip(expected, joined)) if a != b]
    assert not differing, f"{figure}: {len(differing)} frames differ, the first at frame {differing[0]}"

