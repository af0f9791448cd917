"""espeak-ng against the neural voice: CPU and wall seconds per second of audio, and the cold course projected.

    .venv/bin/python bench/voice_bench.py [--sample 30]

Takes every n-th cue of the course (``--sample`` of them, spread over every chapter in order), and has
each engine speak each one's pinyin into a scratch folder (no cache is read or written), one cue after
another as ``lecture build`` does. Counted per engine:

- the first cue's wall time, from a new engine (the neural voice starts its worker and loads its models);
- the CPU seconds of this process and of every process the engine ran (espeak-ng's, the neural worker's,
  read from /proc before it is stopped), and the wall seconds, over the seconds of raw audio made;
- the seconds the cues last once cleaned as a build cleans them (silence trimmed, padded): what a
  figure's length is made of.

The course's cold synthesis is projected from the sample's wall seconds per spoken character and the
course's characters (every cue's speech text). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pydub import AudioSegment  # noqa: E402

from tools.course import catalogue  # noqa: E402
from tools.voice import audio, cues, speech  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def course_cues() -> list[cues.Cue]:
    """Every cue of every chapter that loads (a chapter mid-edit is named and left out)."""
    out = []
    for chapter in catalogue.chapters():
        try:
            out += [c for figure in cues.chapter_cues(chapter.id).values() for c in figure]
        except Exception as err:  # a bench reports what it could not measure
            print(f"left out chapter {chapter.id}: {err}", file=sys.stderr)
    return out


def _worker_cpu(engine) -> float:
    """CPU seconds of the neural voice's worker so far (0 for an engine without one)."""
    worker = getattr(engine, "_worker", None)
    if worker is None:
        return 0.0
    fields = Path(f"/proc/{worker.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(choice: str, sample: list[cues.Cue], scratch: Path) -> dict:
    engine = speech.from_env(choice)
    raw = cleaned = 0.0
    cpu0, wall0 = _cpu(), time.perf_counter()
    first = 0.0
    for n, cue in enumerate(sample):
        wav = scratch / f"{choice}-{n}.wav"
        engine.synthesize(audio.engine_input(cue, engine), wav)
        if n == 0:
            first = time.perf_counter() - wall0
        raw += audio.wav_seconds(wav)
        cleaned += len(audio.clean(AudioSegment.from_wav(wav))) / 1000
    wall = time.perf_counter() - wall0
    cpu = _cpu() - cpu0 + _worker_cpu(engine)
    if hasattr(engine, "close"):
        engine.close()
    return {"first": first, "wall": wall, "cpu": cpu, "raw": raw, "cleaned": cleaned}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=30, help="cues to speak, spread over the course")
    parser.add_argument("--engines", nargs="+", default=["espeak", "neural"])
    args = parser.parse_args()
    every = course_cues()
    step = max(1, len(every) // args.sample)
    sample = every[::step][: args.sample]
    chars = sum(len(c.speech) for c in sample)
    course_chars = sum(len(c.speech) for c in every)
    print(
        f"{len(sample)} cues of {len(every)} ({chars} of the course's {course_chars} characters), "
        f"{len({c.chapter for c in sample})} chapters, {os.cpu_count()} cores\n"
    )
    print(
        "| engine | first cue, s | CPU s / audio s | wall s / audio s | audio s / character (cleaned) "
        "| course audio, min | cold course, min |"
    )
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for choice in args.engines:
            m = measure(choice, sample, Path(scratch))
            per_char = m["cleaned"] / chars
            print(
                f"| {choice} | {m['first']:.2f} | {m['cpu'] / m['raw']:.3f} | {m['wall'] / m['raw']:.3f} "
                f"| {per_char:.3f} | {per_char * course_chars / 60:.0f} "
                f"| {m['wall'] / chars * course_chars / 60:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
