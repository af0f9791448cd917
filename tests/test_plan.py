"""The build plan (tools/publish/build/plan.py): decided once per build, printed by `lecture build --plan`, and the only
way the build's stages learn what the catalogue and the manifest hold."""

from __future__ import annotations

import ast
import json
from dataclasses import replace

import pytest
from helpers import BUILD, ROOT, build_env, run

from tools.course import catalogue
from tools.files import file_sha256
from tools.publish.build import build, plan
from tools.publish.keys import render_key
from tools.publish.publishing import manifest
from tools.publish.publishing.manifest import Manifest, PublishedFigure, PublishedFile
from tools.publish.rendering.render import BuildError
from tools.voice import cues
from tools.voice.engines import Espeak
from tools.voice.speech import Silent

# The stages of a build, after its plan: every module that renders, publishes or writes the site, and the stages
# themselves. The plan (build/plan.py, keys/), the checks before it and the commands that start it (build/build.py,
# preview/) read the catalogue; a stage reads the plan instead. The render server's preload is no stage: it
# imports the chapter builders once, so that its forks find them imported.
PUBLISH = ROOT / "tools" / "publish"
STAGES = sorted(
    [
        *(p for role in ("rendering", "publishing", "site") for p in (PUBLISH / role).glob("*.py")),
        PUBLISH / "build" / "stages.py",
    ]
)
STAGES.remove(PUBLISH / "rendering" / "warm_manim.py")
# What a stage may not use: the catalogue itself, the facts computed from it, the cues read from it.
CATALOGUE_MODULES = {"tools.course.catalogue", "tools.course.fact_values"}
CATALOGUE_CALLS = {"figure_cues", "chapter_cues", "fact_values"}


def _catalogue_uses(path) -> list[str]:
    """Where a module imports the catalogue (or what is read from it), or calls what reads it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            named = {f"{node.module}.{alias.name}" for alias in node.names} | {node.module}
            found += [f"line {node.lineno}: imports {name}" for name in sorted(named & CATALOGUE_MODULES)]
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names if a.name in CATALOGUE_MODULES]
        elif isinstance(node, ast.Attribute) and node.attr in CATALOGUE_CALLS:
            found.append(f"line {node.lineno}: reads {node.attr}")
    return found


@pytest.mark.parametrize("path", STAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_stage_reads_the_catalogue_only_through_the_plan(path):
    assert not _catalogue_uses(path), f"{path.relative_to(ROOT)} goes back to the catalogue: {_catalogue_uses(path)}"


def test_the_check_finds_a_stage_that_goes_back_to_the_catalogue(tmp_path):
    stray = tmp_path / "stray.py"
    stray.write_text("from tools.course import catalogue\nfrom tools.voice import cues\nx = cues.figure_cues('a')\n")
    assert _catalogue_uses(stray) == ["line 1: imports tools.course.catalogue", "line 3: reads figure_cues"]


# -- the plan ----------------------------------------------------------------------------------------------------


def _stand_in(out, fig_id: str, key) -> PublishedFigure:
    """A figure published with render key `key`: its files (stand-ins) and its sidecar."""
    fig = catalogue.figure(fig_id)
    folder = out / fig.chapter
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for kind in ("mp4", "srt", "vtt", "png", "webp"):
        path = folder / f"{fig_id}.{kind}"
        path.write_text(f"{kind} of {fig_id}", encoding="utf-8")
        files[kind] = PublishedFile(f"{fig.chapter}/{fig_id}.{kind}", file_sha256(path))
    planned = plan.make([fig], "l", out, Manifest("480p15"), Silent(), "")
    (one,) = planned.figures
    entry = PublishedFigure(
        fig.chapter,
        fig_id,
        fig.title,
        40.0,
        854,
        480,
        plan.thawed(one.facts),
        files,
        key.digest,
        key.parts,
        one.attachment_notes,
        12.0,
        fig.source,
        [],
        plan.thawed(one.checks),
        ["silent"],
    )
    manifest.write_sidecar(out, entry)
    return entry


def test_lecture_build_plan_says_what_happens_to_an_unchanged_an_edited_and_a_new_figure(tmp_path):
    """An unchanged figure is left alone, an edited one renders naming its edit, a new one renders; nothing
    is narrated, rendered or published."""
    out = tmp_path / "renders" / "480p15"
    unchanged, edited, _new = (
        catalogue.figure(fig_id) for fig_id in ("exchange_rate", "gates_circuit", "first_gradient")
    )
    key = {fig.id: render_key.figure_key(fig, "l", Silent()) for fig in (unchanged, edited)}
    first_cue = cues.figure_cues(edited.id)[0].id
    older = json.loads(json.dumps(key[edited.id].parts))
    older["cues"][first_cue] = "the cue as it read before"
    entries = {
        unchanged.id: _stand_in(out, unchanged.id, key[unchanged.id]),
        edited.id: replace(_stand_in(out, edited.id, key[edited.id]), key="an older key", key_parts=older),
    }
    manifest.save(out, Manifest("480p15", list(plan.course_chapters()), entries))
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    done = run([*BUILD, "--only", "backprop", "--plan"], env=build_env(tmp_path))
    assert done.returncode == 0, done.stderr
    said = done.stdout.splitlines()
    assert "  backprop/exchange_rate: unchanged" in said
    assert f"  backprop/gates_circuit: to render at 480p15 (narration changed (cue {first_cue}))" in said
    assert "  backprop/first_gradient: to render at 480p15 (new)" in said
    (chapter,) = [line for line in said if line.startswith("  chapter backprop: ")]
    assert chapter.startswith("  chapter backprop: joined again (finite_differences, first_gradient, "), chapter
    assert "exchange_rate" not in chapter
    assert said.index("  backprop/exchange_rate: unchanged") < said.index(
        "  backprop/first_gradient: to render at 480p15 (new)"
    )
    after = {path: path.read_bytes() for path in out.rglob("*") if path.is_file() and path.name != manifest.LOCK}
    assert after == before, "--plan changed what is published"
    assert not (tmp_path / "cache" / "narration").exists(), "--plan made narration"


def test_the_plan_is_an_immutable_value():
    planned = plan.make([catalogue.figure("gates_circuit")], "l", ROOT / "nowhere", Manifest("480p15"), Silent(), "")
    (fig,) = planned.figures
    with pytest.raises(AttributeError):
        fig.action = "keep"
    with pytest.raises(TypeError):
        fig.facts["grad_a"] = {}
    with pytest.raises(TypeError):
        fig.facts["grad_a"]["text"] = "1"
    assert isinstance(fig.checks, tuple)


@pytest.mark.slow  # a real render
def test_a_whole_build_of_one_chapter_loads_the_manifest_once_and_its_stages_never_read_the_catalogue(
    isolated, narration_dir, monkeypatch
):
    """A build of a one-figure chapter (rendered, published, joined, the site written): the manifest is loaded
    once, to plan; once the plan is made, the catalogue and the cues it holds refuse to be read."""
    monkeypatch.setenv("LECTURE_VOICE", "silent")
    blocks = (ROOT / "narration" / "backprop.toml").read_text(encoding="utf-8").split("\n[[")
    own = [block for block in blocks[1:] if block.startswith("gates_circuit]]")]
    (narration_dir / "backprop.toml").write_text("".join(f"\n[[{block}" for block in own), encoding="utf-8")
    (narration_dir / "lexicon.toml").write_bytes((ROOT / "narration" / "lexicon.toml").read_bytes())
    loads = []
    real_load = manifest.load
    monkeypatch.setattr(manifest, "load", lambda out_dir: loads.append(out_dir) or real_load(out_dir))
    real_make = plan.make

    def refuse(name):
        def refused(*args, **kwargs):
            raise AssertionError(f"a stage read {name} after the plan was made")

        return refused

    closed = pytest.MonkeyPatch()

    def make_then_close_the_catalogue(*args, **kwargs):
        made = real_make(*args, **kwargs)
        for name in ("chapters", "chapter", "figures", "figure", "facts", "checks", "select", "cite"):
            closed.setattr(catalogue, name, refuse(f"catalogue.{name}"))
        for name in ("figure_cues", "chapter_cues"):
            closed.setattr(cues, name, refuse(f"cues.{name}"))
        return made

    monkeypatch.setattr(plan, "make", make_then_close_the_catalogue)
    said: list[str] = []
    try:
        man = build.build("l", "backprop", jobs=2, say=said.append, lint=False)
    finally:
        closed.undo()
    report = "\n".join(said)
    assert "backprop/gates_circuit: done" in report, report
    assert "chapter backprop: 1 clip joined" in report, report
    assert list(man.figures) == ["gates_circuit"]
    assert set(man.chapter_videos) == {"backprop"}
    assert len(loads) == 1, f"the manifest was loaded {len(loads)} times"


# -- one voice per course ----------------------------------------------------------------------------------------


def _published(voices_by_figure: dict[str, list[str]]) -> Manifest:
    """A manifest listing these figures as published with these voices (no files: only the voices are read)."""
    figures = {}
    for fig_id, voices in voices_by_figure.items():
        chapter = catalogue.figure(fig_id).chapter if fig_id in {f.id for f in catalogue.figures()} else "gone"
        figures[fig_id] = PublishedFigure(chapter, fig_id, fig_id, 40.0, 854, 480, {}, {}, voices=voices)
    return Manifest("480p15", list(plan.course_chapters()), figures)


def _mix(voices_by_figure, figures, engine):
    return plan.make(
        [catalogue.figure(f) for f in figures], "l", ROOT / "nowhere", _published(voices_by_figure), engine, ""
    )


def test_a_figure_spoken_in_another_voice_than_the_published_ones_is_a_mix_the_plan_names():
    published = {"exchange_rate": ["neural"], "saddle_point": ["neural", "recording"], "gone_figure": ["espeak-ng"]}
    planned = _mix(published, ["gates_circuit", "first_gradient"], Espeak())
    mix = planned.voice_mix
    assert (mix.voice, mix.speaking) == ("espeak-ng", ("backprop/gates_circuit", "backprop/first_gradient"))
    assert dict(mix.others) == {"neural": ("backprop/exchange_rate", "optimizer/saddle_point")}  # not the gone one
    assert planned.lines()[-1] == (
        "  voices: this build speaks backprop/gates_circuit, backprop/first_gradient with espeak-ng, beside figures "
        "published with neural (backprop/exchange_rate, optimizer/saddle_point)"
    )
    assert mix.refusal().endswith(
        "Speak as they do (LECTURE_VOICE=neural), or publish the mix on purpose with --voice espeak"
    )


def test_no_mix_in_one_voice_for_recordings_or_when_every_figure_of_another_voice_is_spoken_again():
    assert _mix({"exchange_rate": ["espeak-ng"]}, ["gates_circuit"], Espeak()).voice_mix is None
    assert _mix({"exchange_rate": ["recording"]}, ["gates_circuit"], Espeak()).voice_mix is None
    # the whole published course spoken again in the new voice: one voice after the build
    assert _mix({"exchange_rate": ["neural"]}, ["exchange_rate", "gates_circuit"], Espeak()).voice_mix is None
    assert _mix({"exchange_rate": ["neural"]}, ["gates_circuit"], Silent()).voice_mix.voice == "silent"


def test_a_mixed_build_stops_after_its_plan_and_an_explicit_voice_goes_on(isolated, monkeypatch):
    """build.build refuses a mix before narrating; with --voice (here: the same engine, named on purpose) it goes on
    to the stages, and with LECTURE_VOICE's engine matching the published voice there is nothing to refuse."""
    monkeypatch.setenv("LECTURE_VOICE", "silent")
    out = build.renders_dir("l")
    manifest.save(out, _published({"exchange_rate": ["neural"]}))
    ran = []
    monkeypatch.setattr(build, "_run", lambda the_plan, *args: ran.append(the_plan.voice_mix))
    said: list[str] = []
    with pytest.raises(BuildError, match=r"^this build would speak backprop/gates_circuit with silent, beside figures"):
        build.build("l", "backprop/gates_circuit", say=said.append, lint=False)
    assert ran == []
    assert said[-1].startswith("  voices: this build speaks backprop/gates_circuit with silent")
    build.build("l", "backprop/gates_circuit", say=said.append, lint=False, voice="silent")
    assert len(ran) == 1
    assert ran[0].voice == "silent"
