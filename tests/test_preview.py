"""`lecture preview` on a scratch copy of the project: the page redraws on save, shows a failed check in
`lecture check`'s words, recovers, plays the draft, and Ctrl-C leaves no process and no half-written file."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from helpers import build_env, copy_project

from tools.publish.preview import preview
from tools.publish.publishing import media
from tools.publish.rendering import segments

pytestmark = pytest.mark.slow  # manim runs, a draft render and a browser

CHROMIUM = Path("/usr/bin/chromium")
FIGURE = "optimizer/optimal_step_parabola"
TITLE = "最优步长 = |一阶导| ÷ 二阶导"


def _session_processes(sid: int) -> list[str]:
    listing = subprocess.run(["ps", "-eo", "pid=,sid=,args="], capture_output=True, text=True).stdout
    return [line for line in listing.splitlines() if line.split()[1] == str(sid)]


def _half_written(*folders: Path) -> list[Path]:
    """Temporary and staging files that only a write cut short leaves."""
    return [
        path
        for folder in folders
        if folder.exists()
        for path in folder.rglob("*")
        if path.name.endswith((".tmp", ".part")) or path.name.startswith(".staging-")
    ]


def test_refused_names_the_command():
    assert preview.refused(ValueError("x")) == "lecture check: refused: x"


def test_the_watched_files_are_the_figures_own_and_the_shared_style():
    from tools.course import catalogue

    names = [p.name for p in preview.watched(catalogue.figure("optimal_step_parabola"))]
    assert names == ["optimizer.py", "optimizer.py", "optimizer.toml", "style.py", "widgets.py"]


def test_the_page_redraws_on_save_shows_a_failed_check_and_stops_cleanly(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    assert CHROMIUM.exists(), "the browser tests need Debian's chromium: `make test` installs it"
    root = copy_project(tmp_path / "project")
    env = {**os.environ, **build_env(tmp_path)}
    server = subprocess.Popen(
        [sys.executable, "-m", "tools.cli", "preview", FIGURE, "--port", "0"],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own session: what is left of it afterwards can be listed
    )
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/", server.stdout.readline()).group(0)
        builder = root / "tools" / "chapters" / "optimizer.py"
        source = builder.read_text(encoding="utf-8")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
            page = browser.new_page()
            page.goto(url)
            expect(page.locator("body")).to_have_attribute("data-status", "ok", timeout=120_000)
            cards = page.locator(".cue")
            expect(cards.first).to_contain_text("opt_question")
            assert cards.count() == 7  # six cues, then the end
            first_still = cards.first.locator("img").get_attribute("src")
            page.evaluate("window.unreloaded = true")  # gone if the page were reloaded

            builder.write_text(source.replace(TITLE, "最优步长：一阶导除以二阶导"), encoding="utf-8")
            expect(cards.first.locator("img")).not_to_have_attribute("src", first_still, timeout=60_000)
            expect(page.locator("body")).to_have_attribute("data-status", "ok", timeout=60_000)
            assert page.evaluate("window.unreloaded") is True
            assert "opt_question" in page.locator("#status").inner_text()  # every cue shows the new title

            broken = source.replace('"steep": (2.0, -1.5)', '"steep": (2.0, -1.4)')
            builder.write_text(broken, encoding="utf-8")
            expect(page.locator("body")).to_have_attribute("data-status", "failed", timeout=60_000)
            expect(page.locator("#error")).to_contain_text("lecture check: refused:")
            expect(page.locator("#error")).to_contain_text("both points at the same height")
            assert page.locator(".cue").count() == 0  # the error in place of the stills

            builder.write_text(source, encoding="utf-8")
            expect(page.locator("body")).to_have_attribute("data-status", "ok", timeout=60_000)
            expect(cards).to_have_count(7)
            expect(cards.first.locator("img")).to_have_attribute("src", first_still)
            expect(page.locator("#draft")).to_have_attribute("data-status", "ready", timeout=240_000)
            assert page.evaluate("window.unreloaded") is True
            browser.close()

        state = json.load(urllib.request.urlopen(url + "state.json"))
        assert [look["id"] for look in state["looks"]][-1] == "(end)"
        assert all(look["text"] for look in state["looks"][:-1])
        with urllib.request.urlopen(url + "draft.mp4") as clip:
            assert clip.headers["Content-Type"] == "video/mp4"
            assert len(clip.read()) > 10_000
        # the draft plays picture and narration together, and is kept in the cache, not published
        draft = tmp_path / "cache" / "preview" / "drafts" / f"{FIGURE.split('/')[1]}.mp4"
        drafted = media.probe(draft)
        assert (drafted.video_codec, drafted.audio_codec) == ("h264", "aac")
        assert abs(drafted.video_seconds - drafted.audio_seconds) < 0.1
        assert drafted.video_seconds > 10
        assert not list((tmp_path / "renders").glob("**/*.mp4"))
        # beside it, what the draft cost where, for the next draft's cut: the whole figure drawn
        costs = segments.Costs.from_json(draft.with_suffix(".costs.json").read_text(encoding="utf-8"))
        assert costs.drawn_at[-1] == pytest.approx(drafted.video_seconds, abs=1.0)
        assert costs.drawing(0.0, costs.drawn_at[-1]) > 1.0
    finally:
        os.killpg(server.pid, signal.SIGINT)  # Ctrl-C in a terminal reaches the whole foreground group
        said = server.communicate(timeout=60)[0]
    assert server.returncode == 0, said
    assert "preview: stopped" in said
    deadline = time.monotonic() + 10
    while _session_processes(server.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _session_processes(server.pid) == []
    assert _half_written(tmp_path / "renders", tmp_path / "cache") == []
    assert not list((tmp_path / "cache" / "preview" / "work").iterdir())


def test_a_narration_edit_redraws_no_still(tmp_path):
    """One cue's words change: its still and every other are kept (the screen at each cue is the same)."""
    root = copy_project(tmp_path / "project")
    env = {**os.environ, **build_env(tmp_path)}
    server = subprocess.Popen(
        [sys.executable, "-m", "tools.cli", "preview", FIGURE, "--port", "0", "--no-draft"],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/", server.stdout.readline()).group(0)

        def settled(after: int) -> dict:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                state = json.load(urllib.request.urlopen(url + "state.json"))
                if state["saves"] > after and state["status"] in ("ok", "failed"):
                    return state
                time.sleep(0.05)
            raise AssertionError(f"no redraw: {state}")

        first = settled(0)
        assert len(first["redrawn"]) == 7
        narration = root / "narration" / "optimizer.toml"
        text = narration.read_text(encoding="utf-8")
        narration.write_text(text.replace("先看最简单的地形", "先看一个最简单的地形"), encoding="utf-8")
        second = settled(1)
        assert second["status"] == "ok", second["error"]
        assert second["redrawn"] == []
        assert [look["still"] for look in second["looks"]] == [look["still"] for look in first["looks"]]
        assert "先看一个最简单的地形" in second["looks"][0]["text"]
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.communicate(timeout=60)
    assert server.returncode == 0


def _attributes(mobject, seen: dict) -> list:
    """Everything a mobject's copy holds, as plain values (arrays as lists), with which objects are shared:
    a later reference to an object met before is written as its first index."""
    import enum

    import numpy as np

    def plain(value):
        if id(value) in seen:
            return ("same as", seen[id(value)])
        if isinstance(value, (list, np.ndarray)) or hasattr(value, "__dict__"):
            seen[id(value)] = len(seen)
        if isinstance(value, np.ndarray):
            return ("array", value.dtype.str, value.shape, value.tolist())
        if isinstance(value, list):
            return [plain(item) for item in value]
        if isinstance(value, (int, float, str, bool, type(None), enum.Enum)):
            return value
        if type(value).__module__.startswith("svgelements"):
            return ("path", str(value))
        if hasattr(value, "__dict__"):
            return (type(value).__name__, {k: plain(v) for k, v in sorted(vars(value).items()) if k != "original_id"})
        return repr(value)

    return plain(mobject)


def test_the_fast_mobject_copy_holds_what_manims_copy_holds():
    """tools/publish/rendering/mobject_copy.py: a copy made the fast way equals manim's own, shared parts shared alike
    (a text's glyphs, a coloured shape, a group that holds one array twice), and is as independent of the
    original (only a glyph's parsed SVG path, read when the glyph is made, is shared)."""
    import copy

    import manim
    import numpy as np

    from tools.publish.rendering import mobject_copy

    text = manim.Text("步长 x²", font="DejaVu Sans").set_color(manim.YELLOW)
    square = manim.Square(color=manim.BLUE, fill_opacity=0.4).shift(manim.LEFT)
    group = manim.VGroup(text, square, manim.Dot().set_stroke(manim.RED, 2))
    group.shared = [square.points, square.points]
    plain_copy = copy.deepcopy(group)
    plain_deepcopy = manim.Mobject.__deepcopy__
    try:
        mobject_copy.install()
        fast_copy = group.copy()
    finally:
        manim.Mobject.__deepcopy__ = plain_deepcopy
    assert _attributes(fast_copy, {}) == _attributes(plain_copy, {})
    assert fast_copy.shared[0] is fast_copy.shared[1]
    original = _mutable_parts(group)
    assert _mutable_parts(fast_copy) & original == _mutable_parts(plain_copy) & original  # e.g. enum members
    fast_copy[1].points[0, 0] = 99.0
    assert square.points[0, 0] != 99.0
    assert np.isfinite(square.points).all()
    assert fast_copy[0][0].path_obj is text[0].path_obj


def _mutable_parts(mobject) -> set[int]:
    """The ids of every list, array and object a mobject's family holds (a glyph's SVG path left out)."""
    import numpy as np

    found: set[int] = set()

    def visit(value) -> None:
        if id(value) in found or (not isinstance(value, (list, np.ndarray)) and not hasattr(value, "__dict__")):
            return
        found.add(id(value))
        if isinstance(value, list):
            for item in value:
                visit(item)
        elif hasattr(value, "__dict__"):
            for name, item in vars(value).items():
                if name != "path_obj":
                    visit(item)

    visit(mobject)
    return found
