"""The manifest: typed, refused when corrupt, rebuilt from sidecars, pruned; rebuild reasons; lecture clean.

Published files here are small stand-ins written by the test: what is
checked is the bookkeeping, not the video (the slow tests render)."""

import fcntl
import json
import os
import sys
import threading
import time
from dataclasses import replace
from importlib.metadata import version

import pytest
from helpers import BIN, build_env, run

from tools import files
from tools.course import catalogue
from tools.files import file_sha256
from tools.publish.build import clean, plan, stages
from tools.publish.checks import stills
from tools.publish.keys import render_key
from tools.publish.publishing import manifest
from tools.publish.publishing.manifest import ChapterList, Manifest, ManifestError, PublishedFigure, PublishedFile
from tools.publish.rendering import render, scratch, text_shapes
from tools.voice import audio, cues, speech

ONE = {"value": 1, "text": "1", "spoken": "一"}


def _publish_stand_in(out, chapter: str, fig_id: str, text: str = "clip") -> PublishedFigure:
    """Files and a sidecar for one figure, as publish leaves them."""
    files = {}
    for ext in ("mp4", "srt", "vtt", "png", "webp"):
        path = out / chapter / f"{fig_id}.{ext}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{text} {ext}")
        files[ext] = PublishedFile(f"{chapter}/{fig_id}.{ext}", file_sha256(path))
    entry = PublishedFigure(
        chapter, fig_id, f"title of {fig_id}", 42.0, 854, 480, {"n": ONE}, files, "key", {"scene": "s"}
    )
    manifest.write_sidecar(out, entry)
    return entry


def test_a_manifest_round_trips_through_json(tmp_path):
    entry = _publish_stand_in(tmp_path, "backprop", "gates_circuit")
    man = Manifest("480p15", [ChapterList("backprop", "标题", ["gates_circuit"])], {"gates_circuit": entry})
    manifest.save(tmp_path, man)
    assert manifest.load(tmp_path) == man


def test_a_failed_save_leaves_the_old_manifest_and_no_temporary_file(tmp_path, monkeypatch):
    manifest.save(tmp_path, Manifest("480p15"))
    before = (tmp_path / manifest.NAME).read_bytes()

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        manifest.save(tmp_path, Manifest("480p15", [ChapterList("backprop", "标题", ["gates_circuit"])]))
    assert (tmp_path / manifest.NAME).read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [manifest.NAME]


def test_the_manifest_is_readable_as_any_file_written_there(tmp_path):
    """Published for a web server to read: not a temporary file's private 0600."""
    manifest.save(tmp_path, Manifest("480p15"))
    (tmp_path / "plain").write_text("")
    assert (tmp_path / manifest.NAME).stat().st_mode == (tmp_path / "plain").stat().st_mode


@pytest.mark.parametrize("garbage", ["{not json", "[1, 2]", '{"quality": "480p15", "figures": {"x": {"chapter": 1}}}'])
def test_a_corrupt_manifest_is_refused_naming_the_file_and_the_way_out(tmp_path, garbage):
    out = tmp_path / "480p15"
    out.mkdir()
    (out / "manifest.json").write_text(garbage)
    with pytest.raises(ManifestError) as refused:
        manifest.load(out)
    assert str(out / "manifest.json") in str(refused.value)
    assert "lecture build --rescan -q l" in str(refused.value)


@pytest.mark.slow  # `lecture build` checks every figure first, in a new process
def test_lecture_build_refuses_a_corrupt_manifest_before_rendering(tmp_path):
    out = tmp_path / "renders" / "480p15"
    out.mkdir(parents=True)
    (out / "manifest.json").write_text("garbage")
    done = run([str(BIN / "lecture"), "build", "-q", "l", "--only", "backprop/gates_circuit"], env=build_env(tmp_path))
    assert done.returncode == 2
    assert "manifest.json is not a readable manifest" in done.stderr
    assert "--rescan" in done.stderr
    assert "rendering" not in done.stdout
    assert (out / "manifest.json").read_text() == "garbage"


def test_rescan_restores_figures_whose_sidecar_and_files_agree(tmp_path):
    chapters = [ChapterList("backprop", "反向传播", ["exchange_rate", "gates_circuit", "first_gradient"])]
    good = _publish_stand_in(tmp_path, "backprop", "exchange_rate")
    changed = _publish_stand_in(tmp_path, "backprop", "gates_circuit")
    (tmp_path / changed.files["png"].path).write_text("another poster")
    (tmp_path / "backprop" / "first_gradient.mp4").write_text("published before sidecars existed")
    result = manifest.rescan(tmp_path, chapters)
    assert result.manifest.figures == {"exchange_rate": good}
    assert result.to_render == ["gates_circuit", "first_gradient"]


def test_lecture_build_rescan_writes_the_manifest_and_the_site_without_rendering(tmp_path):
    out = tmp_path / "renders" / "480p15"
    _publish_stand_in(out, "backprop", "gates_circuit")
    (out / "manifest.json").write_text("garbage")
    done = run([str(BIN / "lecture"), "build", "-q", "l", "--rescan"], env=build_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "1 restored" in done.stdout
    assert "need a render" in done.stdout
    assert list(manifest.load(out).figures) == ["gates_circuit"]
    assert (out / "site" / "embed" / "gates_circuit.html").exists()


def test_figures_the_catalogue_no_longer_has_are_pruned_with_their_files(tmp_path):
    gone = _publish_stand_in(tmp_path, "backprop", "renamed_figure")
    kept = _publish_stand_in(tmp_path, "backprop", "gates_circuit")
    man = Manifest("480p15", list(plan.course_chapters()), {"renamed_figure": gone, "gates_circuit": kept})
    planned = plan.make([], "l", tmp_path, man, speech.Silent(), "voice: silent")
    assert planned.gone_figures == ("renamed_figure",)
    said = []
    stages.prune(man, tmp_path, planned.gone_figures, planned.gone_chapters, said.append)
    assert list(man.figures) == ["gates_circuit"]
    assert not list((tmp_path / "backprop").glob("renamed_figure.*"))
    assert (tmp_path / "backprop" / "gates_circuit.mp4").exists()
    assert said == ["  renamed_figure: no longer in the catalogue, its files removed"]


def test_two_builds_holding_the_manifest_take_turns_and_both_are_listed(tmp_path):
    """Two builds each record their figure: the second waits for the first's lock, then reads what it saved."""
    entries = [_publish_stand_in(tmp_path, "backprop", fig_id) for fig_id in ("exchange_rate", "gates_circuit")]

    def record(entry):
        with manifest.held(tmp_path) as held, held.changing() as man:
            time.sleep(0.2)  # long enough for the other thread to try
            man.figures[entry.figure] = entry

    threads = [threading.Thread(target=record, args=(e,)) for e in entries]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(manifest.load(tmp_path).figures) == {"exchange_rate", "gates_circuit"}


# -- why a figure re-renders -------------------------------------------------------------


def _key(fig_id: str = "gates_circuit") -> render_key.RenderKey:
    return render_key.figure_key(catalogue.figure(fig_id), "l", speech.Silent())


def test_the_render_key_names_what_changed():
    key = _key()
    assert render_key.reasons(None, key) == ["new"]
    assert render_key.reasons({}, key) == ["published by an older build"]
    old = json.loads(json.dumps(key.parts))
    old["cues"]["gates_add"] = "before"
    old["facts"]["grad_a"] = "before"
    assert render_key.reasons(old, key) == ["facts changed (grad_a)", "narration changed (cue gates_add)"]
    old = json.loads(json.dumps(key.parts)) | {"scene": "before"}
    old["shared"]["style.py"] = "before"
    assert render_key.reasons(old, key) == ["scene changed", "shared scene code changed (style.py)"]


@pytest.mark.parametrize("fig_id", ["gates_circuit", "pipeline_gpipe"])  # without and with attachments
def test_every_part_of_the_render_key_has_the_reason_the_build_gives_when_it_changes(fig_id):
    key = _key(fig_id)
    assert set(key.parts) <= set(key.table)
    for name, part in key.table.items():
        assert part.reason.strip(), f"render key part {name!r} has no reason"
        assert ("{}" in part.reason) == (part.inside is not None), name
        old = json.loads(json.dumps(key.parts))
        if isinstance(part.value, dict):
            old[name] = {"an older part": "x"}
        else:  # a list (the cue order) as it could have been: another order of the same items
            old[name] = part.value[::-1] if isinstance(part.value, list) else "an older value"
        said = render_key.reasons(old, key)
        assert said != ["render key changed"], f"changing {name!r} is named only as 'render key changed'"
        assert len(said) == 1, (name, said)
        assert said[0].startswith(part.reason.split("{}")[0]), (name, said)


def test_a_new_order_of_the_same_cues_is_named_and_a_new_cue_is_named_once():
    key = _key()
    old = json.loads(json.dumps(key.parts))
    old["cue_order"] = old["cue_order"][::-1]
    assert render_key.reasons(old, key) == ["narration changed (cue order)"]
    old = json.loads(json.dumps(key.parts))
    added = key.parts["cue_order"][-1]
    del old["cues"][added]
    old["cue_order"].remove(added)
    assert render_key.reasons(old, key) == [f"narration changed (cue {added})"]


def test_another_numpy_or_other_simd_paths_are_named_as_the_reason(tmp_path):
    """The key made in a process whose numpy runs its baseline kernels only, against this one's."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    dispatched = [group for group in __cpu_dispatch__ if __cpu_features__.get(group)]
    if not dispatched:
        pytest.skip("this CPU runs numpy's baseline only")
    code = (
        "import json, sys; sys.path.insert(0, 'tests'); from test_manifest import _key; print(json.dumps(_key().parts))"
    )
    narrowed = run([sys.executable, "-c", code], env={"NPY_DISABLE_CPU_FEATURES": " ".join(dispatched)})
    assert narrowed.returncode == 0, narrowed.stderr[-2000:]
    here = _key()
    simd = here.parts["stack"]["numpy SIMD"]
    baseline = simd.split(" " + dispatched[0])[0]
    assert render_key.reasons(json.loads(narrowed.stdout), here) == [f"stack changed (numpy SIMD {baseline} → {simd})"]
    old = json.loads(json.dumps(here.parts))
    old["stack"]["numpy"] = "2.1.0"
    assert render_key.reasons(old, here) == [f"stack changed (numpy 2.1.0 → {version('numpy')})"]
    del old["stack"]
    assert render_key.reasons(old, here) == ["stack not recorded before (libraries and numpy SIMD)"]


def _with_scene_file(tmp_path, monkeypatch, edited: str) -> None:
    scene_file = tmp_path / "backprop.py"
    scene_file.write_text(edited, encoding="utf-8")
    monkeypatch.setattr(catalogue.Chapter, "scene_file", property(lambda ch: scene_file))


def test_editing_one_figure_leaves_its_neighbours_keys_alone(tmp_path, monkeypatch):
    before = {fig_id: _key(fig_id) for fig_id in ("gates_circuit", "exchange_rate")}
    source = catalogue.chapter("backprop").scene_file.read_text(encoding="utf-8")
    header = "class GatesCircuit(LectureScene):\n"
    assert header in source
    _with_scene_file(tmp_path, monkeypatch, source.replace(header, header + "    EDITED = 1\n"))
    assert _key("exchange_rate").digest == before["exchange_rate"].digest
    assert render_key.reasons(before["gates_circuit"].parts, _key("gates_circuit")) == ["scene changed"]


def test_comments_docstrings_and_layout_render_nothing_again(tmp_path, monkeypatch):
    """What the code does is keyed, not how it is written down: a comment, a docstring, a reformatting, or the
    separator comment `lecture new` writes above a new figure leaves every figure's key as it was."""
    before = {fig.id: _key(fig.id).digest for fig in catalogue.chapter("backprop").figures}
    edited = catalogue.chapter("backprop").scene_file.read_text(encoding="utf-8")
    for old, new in (
        ("class GatesCircuit(LectureScene):\n", "# -- a note ----\nclass GatesCircuit(LectureScene):\n"),
        ('self.narrate("gates_intro")', 'self.narrate(\n    "gates_intro"  # the first cue\n)'),
        ('    """f = max(a + b, d) · c:', '    """An edited docstring. f = max(a + b, d) · c:'),
    ):
        assert old in edited, old
        edited = edited.replace(old, new, 1)
    _with_scene_file(tmp_path, monkeypatch, edited)
    assert {fig.id: _key(fig.id).digest for fig in catalogue.chapter("backprop").figures} == before


# -- lecture clean -------------------------------------------------------------------------


def test_clean_removes_what_nothing_refers_to_and_says_how_much(isolated):
    cue = cues.figure_cues("gates_circuit")[0]
    current = audio.cue_audio(cue, speech.Silent()).path
    stale = current.with_name("0" * 64 + ".wav")
    stale.write_bytes(b"x" * 4096)
    work = render.work_root()
    idle, busy = work / "gates_circuit.l.idle", work / "gates_circuit.l.busy"
    for folder in (idle, busy):
        folder.mkdir(parents=True)
        (folder / "partial.mp4").write_bytes(b"y" * 1000)
        (folder / scratch.OWNER).touch()
    logs = isolated / "cache" / "logs"
    logs.mkdir(parents=True)
    (logs / "gates_circuit.l.log").write_text("current")
    (logs / "gone_figure.l.log").write_text("stale")
    kept = stills.cache_dir()
    kept.mkdir(parents=True)
    for name, text in (("gates_circuit.json", "{}"), ("gates_circuit.png", "png"), ("gone_figure.png", "old")):
        (kept / name).write_text(text)
    shapes = text_shapes.folder()
    other_manim = shapes.parent / ("0" * 64)
    for folder in (shapes, other_manim):
        folder.mkdir(parents=True)
    (other_manim / "a.pickle").write_bytes(b"s" * 100)
    (shapes / "read.pickle").write_bytes(b"s" * 10)
    (shapes / "unread.pickle").write_bytes(b"s" * 20)
    month_ago = time.time() - (clean.SHAPES_KEPT_DAYS + 1) * 86400
    os.utime(shapes / "unread.pickle", (month_ago, month_ago))
    said = []
    with open(busy / scratch.OWNER) as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        freed = clean.clean(said.append)
    assert current.exists()
    assert not stale.exists()
    assert busy.exists()
    assert not idle.exists()
    assert (logs / "gates_circuit.l.log").exists()
    assert not (logs / "gone_figure.l.log").exists()
    assert {p.name for p in kept.iterdir()} == {"gates_circuit.json", "gates_circuit.png"}
    assert [p.name for p in shapes.iterdir()] == ["read.pickle"]
    assert not other_manim.exists()
    assert freed == 4096 + 1000 + len("stale") + len("old") + 100 + 20
    assert said == [f"removed 6 cache entries from {isolated / 'cache'}, freed 0.0 MiB"]


def test_lecture_clean_runs(tmp_path):
    done = run([str(BIN / "lecture"), "clean"], env=build_env(tmp_path))
    assert done.returncode == 0
    assert "removed 0 cache entries" in done.stdout


def test_a_figure_entry_keeps_fields_a_newer_build_added_out_of_the_way(tmp_path):
    entry = _publish_stand_in(tmp_path, "backprop", "gates_circuit")
    raw = {
        "quality": "480p15",
        "chapters": [],
        "figures": {
            "gates_circuit": manifest.to_json(Manifest("480p15", [], {"gates_circuit": entry}))["figures"][
                "gates_circuit"
            ]
            | {"a_later_field": 3.5}
        },
    }
    (tmp_path / "manifest.json").write_text(json.dumps(raw))
    assert manifest.load(tmp_path).figures["gates_circuit"] == replace(entry)
    assert os.path.exists(tmp_path / entry.sidecar)
