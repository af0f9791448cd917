"""The ``lecture`` command: check (facts, narration, readings, layout, length), build, stills and contact
sheets, list facts, write and serve the embed kit, a figure's stills on every save (``preview``), clean the
cache, hear a reading (``say``), name the voice (``voice``), measure the captions (``captions``), write a
recording script (``script``), scaffold a figure or a chapter (``new``), write the README's generated parts
(``readme``)."""

from __future__ import annotations

import argparse
import errno
import json
import subprocess
import sys
from pathlib import Path

from tools import files, settings
from tools.author import readme, scaffold
from tools.course import catalogue
from tools.course.fact_values import fact_values
from tools.course.facts import FactError
from tools.publish.build import build, clean
from tools.publish.checks import checks, layout
from tools.publish.keys.fonts import FontError
from tools.publish.preview import frames, preview
from tools.publish.publishing.manifest import ManifestError
from tools.publish.rendering.render import FPS, QUALITIES, BuildError
from tools.publish.site import serve, site
from tools.voice import audio, caption_report, cues, script, speech
from tools.voice.cues import NarrationError
from tools.voice.engine import SpeechError

REFUSALS = (
    FactError,
    NarrationError,
    SpeechError,
    BuildError,
    catalogue.UnknownFigure,
    catalogue.CitationCycle,
    site.KitError,
    ManifestError,
    layout.LayoutError,
    settings.SettingsError,
    files.TimeLimitError,
    FontError,
    scaffold.ScaffoldError,
    readme.ReadmeError,
)
# Commands that write into LECTURE_RENDERS or LECTURE_CACHE.
WRITERS = {"build", "frames", "site", "clean", "captions"}


def _facts_table(as_json: bool) -> str:
    if as_json:
        values = {fig.id: fact_values(fig.id) for fig in catalogue.figures()}
        return json.dumps(values, ensure_ascii=False, indent=2)
    rows = [
        f"{fig.id}.{name}\t{fact.text or '(drawn)'}"
        for fig in catalogue.figures()
        for name, fact in catalogue.facts(fig.id).items()
    ]
    return "\n".join(rows)


def _jobs(text: str) -> int:
    """-j: a whole number of renders at once, at least 1."""
    try:
        jobs = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"{jobs}: at least one figure must render at a time")
    return jobs


def _quality(parser: argparse.ArgumentParser, default: str = "h") -> None:
    parser.add_argument(
        "-q",
        "--quality",
        choices=list(QUALITIES),
        default=default,
        help="l=480p15 m=720p30 h=1080p60 (default) k=2160p60",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lecture", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    verify = sub.add_parser("check", help="verify facts, narration and each figure's layout, without rendering")
    verify.add_argument("--only", help="a chapter, or chapter/figure_id")
    which = verify.add_mutually_exclusive_group()
    which.add_argument("--layout", action="store_true", help="only the layout lint (overlap, frame, caption band)")
    which.add_argument("--no-layout", action="store_true", help="skip the layout lint")
    verify.add_argument("-j", "--jobs", type=int, default=2, help="manim processes the layout lint runs at once")
    make = sub.add_parser("build", help="check, lint the layout, synthesize narration, render and publish to renders/")
    _quality(make)
    make.add_argument("--only", help="a chapter, or chapter/figure_id")
    make.add_argument("-j", "--jobs", type=_jobs, default=1, help="figures rendered at once (1 or more)")
    make.add_argument("--no-layout", action="store_true", help="skip the layout lint (a quick draft)")
    make.add_argument(
        "--rescan",
        action="store_true",
        help="only rebuild manifest.json from the records beside the published files, no rendering",
    )
    make.add_argument(
        "--plan",
        action="store_true",
        help="say what the build would do to each figure, chapter video and the site, and why, then stop "
        "(the quick checks run; nothing is linted, narrated, rendered or published)",
    )
    make.add_argument(
        "--allow-long", action="store_true", help="publish a figure that runs over 120 s (refused otherwise)"
    )
    make.add_argument(
        "--voice",
        choices=list(speech.ENGINES),
        help="speak with this engine (default: LECTURE_VOICE's, else auto), and publish it even beside figures "
        "published in another voice (refused otherwise)",
    )
    make.add_argument(
        "--scheduler",
        metavar="tcp://HOST:8786",
        help="render on this Dask cluster's workers (pip install '.[cluster]'); -j figures at once",
    )
    stills = sub.add_parser("frames", help="save PNG stills of rendered figures for review")
    _quality(stills)
    stills.add_argument("--only", help="a chapter, or chapter/figure_id")
    stills.add_argument(
        "--at", type=float, nargs="+", default=[0.5, 1.0], help="fractions of each figure's length (1 = last frame)"
    )
    stills.add_argument(
        "--sheet",
        action="store_true",
        help="one contact sheet per chapter instead: its figures' stills in a titled grid",
    )
    facts = sub.add_parser("facts", help="print every figure's on-screen facts")
    facts.add_argument("--json", action="store_true", help="as {figure_id: {fact: {value, text, spoken}}}")
    kit = sub.add_parser("site", help="(re)write the embed kit renders/<quality>/site/ from what is rendered")
    _quality(kit)
    show = sub.add_parser("serve", help="serve the embed kit on 127.0.0.1 for a local look")
    _quality(show)
    show.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    look = sub.add_parser(
        "preview", help="a figure's stills at every cue on 127.0.0.1, redrawn on every save, then its -q l draft"
    )
    look.add_argument("target", help="chapter/figure_id")
    look.add_argument("--port", type=int, default=8001, help="0 picks a free port")
    look.add_argument("--no-draft", action="store_true", help="only the stills, no draft clip")
    sub.add_parser("clean", help="delete cached narration, manim work files and logs nothing current refers to")
    hear = sub.add_parser("say", help="print the pinyin the engine gets for a sentence or a cue, and synthesize it")
    hear.add_argument("text", nargs="?", help="Chinese text; [重|chong2] fixes a reading inline")
    hear.add_argument("--cue", help="a cue instead, as chapter/cue_id, with its facts filled in")
    hear.add_argument("--out", type=Path, default=Path("say.wav"), help="where the audio goes (default say.wav)")
    hear.add_argument(
        "--phonemes",
        action="store_true",
        help="then the phonemes the engine makes of exactly that pinyin (espeak-ng's -x; the neural voice's phones)",
    )
    hear.add_argument(
        "--engine", choices=list(speech.ENGINES), help="the speech engine (default: LECTURE_VOICE's, else auto)"
    )
    sub.add_parser(
        "voice", help="say which voice LECTURE_VOICE (default auto: neural if set up, else espeak) speaks with here"
    )
    measured = sub.add_parser(
        "captions", help="measure the caption rules over the course without rendering (each cue voiced, or cached)"
    )
    _quality(measured)
    measured.add_argument("--only", help="a chapter or chapter/figure_id")
    rec = sub.add_parser("script", help="write a Markdown recording script for a human narrator")
    rec.add_argument("--only", help="one chapter")
    rec.add_argument(
        "--out", type=Path, default=Path("recording-script.md"), help="where it goes (default recording-script.md)"
    )
    scaffold_one = sub.add_parser("new", help="scaffold a working figure (chapter/figure_id) or an empty chapter")
    scaffold_one.add_argument(
        "target", help="chapter/figure_id for a figure at the end of its chapter; a chapter id alone for a new chapter"
    )
    scaffold_one.add_argument("title", help='its Chinese title, e.g. "示例"')
    scaffold_one.add_argument("--source", help="a figure's source line (出处), shown at its end")
    table = sub.add_parser(
        "readme",
        help="rewrite the generated docs: README.md's chapter table, CONTRIBUTING.md's worked example, docs/figures.md",
    )
    table.add_argument("--check", action="store_true", help="only say whether it is up to date (exit 2 if not)")
    return parser


def _new(target: str, title: str, source: str | None) -> None:
    """Scaffold, then have a fresh process (which imports the new files) rewrite the README's table."""
    chapter_id, slash, figure_id = target.partition("/")
    if slash:
        written = scaffold.new_figure(chapter_id, figure_id, title, source or scaffold.DEFAULT_SOURCE)
    elif source is not None:
        raise scaffold.ScaffoldError("--source is a figure's: write chapter/figure_id to make a figure")
    else:
        written = scaffold.new_chapter(chapter_id, title)
    for path in written:
        print(f"wrote {path.relative_to(settings.ROOT)}")
    if subprocess.run([sys.executable, "-m", "tools.cli", "readme"], cwd=settings.ROOT).returncode != 0:
        raise readme.ReadmeError("the new files are written, the generated docs are not (see above)")
    if not slash:
        print(f'next: lecture new {chapter_id}/<figure_id> "标题" for its first figure')
        return
    if source is None:
        print(f"its source line reads {scaffold.DEFAULT_SOURCE} until you name it (source= in its builder)")
    print(
        f"next: lecture check --only {target}, then lecture build -q l --only {target} and "
        f"lecture frames -q l --only {target} --at 0.5 1 (README: Adding a figure)"
    )


def _readme(check_only: bool) -> None:
    if check_only:
        if stale := readme.stale():
            raise readme.ReadmeError(f"{' and '.join(stale)} out of date; run lecture readme")
        print("the generated docs (the chapter table, the worked example, docs/figures.md) are up to date")
    elif written := readme.rewrite():
        print(f"rewrote the generated parts of {', '.join(written)}")
    else:
        print("the generated docs (the chapter table, the worked example, docs/figures.md) were up to date")


def _say(text: str | None, cue_ref: str | None, out: Path, phonemes: bool, choice: str | None) -> None:
    """First line: the pinyin the engine gets; then, if asked, the engine's phonemes for it (espeak-ng's
    for an engine without phonemes of its own); the audio to `out`."""
    if (text is None) == (cue_ref is None):
        raise NarrationError("lecture say: give either a text or --cue chapter/cue_id")
    if cue_ref:
        cue = cues.find_cue(cue_ref)
        speech_text, pinyin, undecided = cue.speech, cue.pinyin, cue.undecided
    else:
        speech_text, reading = cues.free_text(text)
        pinyin, undecided = reading.pinyin, reading.undecided
    print(pinyin, flush=True)
    engine = speech.from_env(choice)
    if phonemes:
        raw = (engine if hasattr(engine, "phonemes") else speech.Espeak()).phonemes(pinyin)
        sys.stdout.write(raw if raw.endswith("\n") else raw + "\n")
    for each in undecided:
        print(f"undecided: {each}", file=sys.stderr)
    engine.synthesize(pinyin if engine.reads == "pinyin" else speech_text, out)
    print(f"wrote {out} ({audio.wav_seconds(out):.1f} s, {engine.name})", file=sys.stderr)


def _captions(quality: str, only: str | None) -> int:
    """Print the caption rules measured over the figures (tools/voice/caption_report.py); 2 when one is broken."""
    engine = speech.from_env()
    print(speech.describe(), flush=True)
    report = caption_report.measure(catalogue.select(only), engine, FPS[quality], lambda line: print(line, flush=True))
    print("\n".join(report.lines()))
    return 2 if report.findings or report.unjustified_breaks else 0


def _failed_writing(err: OSError) -> str:
    """Where a write failed and why; for a full disk, the room left where the commands write, and the way out
    (a write of an open file names no file: the folder with the least room left stands in for it)."""
    if err.errno not in (errno.ENOSPC, errno.EDQUOT):
        return f"{err.filename or '(no file named)'}: {err.strerror or err}"
    room = {variable: (path, settings.free_bytes(path)) for variable, path in settings.output_folders().items()}
    fullest = min(room, key=lambda variable: room[variable][1])
    left = ", ".join(f"{variable}={path} has {free / 1e6:,.1f} MB free" for variable, (path, free) in room.items())
    return (
        f"{err.filename or room[fullest][0]}: {err.strerror}: the disk is full ({left}); free some space, or point "
        f"{fullest} at a roomier folder"
    )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    files.forward_signals()  # each outside process has its own process group: Ctrl-C must reach it
    try:
        if args.command in WRITERS:
            settings.check_output_folders()
        if args.command == "check":
            only = checks.LAYOUT if args.layout else None
            checks.run(catalogue.select(args.only), print, args.jobs, layout=not args.no_layout, only=only)
        elif args.command == "build" and args.rescan:
            build.rescan(args.quality)
        elif args.command == "build":
            build.build(
                args.quality,
                args.only,
                args.jobs,
                lint=not args.no_layout,
                allow_long=args.allow_long,
                scheduler=args.scheduler,
                plan_only=args.plan,
                voice=args.voice,
            )
        elif args.command == "frames":
            stills = frames.sheets if args.sheet else frames.frames
            for path in stills(args.quality, args.only, args.at):
                print(path)
        elif args.command == "facts":
            print(_facts_table(args.json))
        elif args.command == "site":
            print(site.summary(build.write_site(args.quality)))
        elif args.command == "serve":
            serve.serve(site.kit_dir(build.renders_dir(args.quality)), args.port, lambda line: print(line, flush=True))
        elif args.command == "preview":
            settings.check_output_folders()
            preview.preview(args.target, args.port, lambda line: print(line, flush=True), not args.no_draft)
        elif args.command == "clean":
            clean.clean()
        elif args.command == "new":
            _new(args.target, args.title, args.source)
        elif args.command == "readme":
            _readme(args.check)
        elif args.command == "say":
            _say(args.text, args.cue, args.out, args.phonemes, args.engine)
        elif args.command == "voice":
            print(speech.describe())
        elif args.command == "captions":
            return _captions(args.quality, args.only)
        elif args.command == "script":
            chapters = [args.only] if args.only else [ch.id for ch in catalogue.chapters()]
            if undecided := cues.undecided_readings([f.id for ch in chapters for f in catalogue.chapter(ch).figures]):
                print(f"note: {len(undecided)} readings are still undecided (see lecture check)", file=sys.stderr)
            args.out.write_text(script.recording_script(chapters, speech.from_env(), print), encoding="utf-8")
            print(f"wrote {args.out}")
    except REFUSALS as err:
        print(f"lecture {args.command}: refused: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a full disk, a folder taken away: say where, not a traceback
        print(f"lecture {args.command}: failed writing {_failed_writing(err)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
