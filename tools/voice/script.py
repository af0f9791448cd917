"""``lecture script``: a Markdown recording script for a human narrator.

Per cue: its id, the text as the viewer reads it (facts filled in), the
pinyin the synthesized voice was given, that voice's duration as a target,
and where the take must go (``narration/recordings/<chapter>/<cue_id>.wav``),
from where it replaces the synthesized voice at the next build.
"""

from __future__ import annotations

from collections.abc import Callable

from tools import settings
from tools.course import catalogue
from tools.voice import audio, cues
from tools.voice.engine import Engine


def _recording_path(cue: cues.Cue) -> str:
    path = cues.recordings_dir(cue.chapter) / f"{cue.id}.wav"
    return str(path.relative_to(settings.ROOT)) if path.is_relative_to(settings.ROOT) else str(path)


def _cue_entry(number: int, cue: cues.Cue, engine: Engine) -> str:
    sound = audio.cue_audio(cue, engine)
    if cue.recording is not None:
        timing = f"recorded, {sound.duration:.1f} s"
    else:
        timing = f"target {sound.duration:.1f} s ({engine.name})"
    return f"{number}. **`{cue.id}`** · {timing} · `{_recording_path(cue)}`\n\n   {cue.caption}\n\n   `{cue.pinyin}`\n"


def recording_script(chapter_ids: list[str], engine: Engine, say: Callable[[str], None] = lambda line: None) -> str:
    """The script for these chapters; synthesizes (or finds cached) each cue's audio to time it."""
    parts = [
        "# 录音稿 · recording script\n",
        "Read each cue in one take, at about the target length (the synthesized voice's), "
        "and save it as a WAV file under the name given; the next `lecture build` uses it "
        "in place of the synthesized voice. The pinyin is what the synthesized voice was given: "
        "where it and your reading differ, check which one is right.\n",
    ]
    for chapter_id in chapter_ids:
        chapter = catalogue.chapter(chapter_id)
        parts.append(f"## {chapter.id} · {chapter.title}\n")
        number = 0
        for fig in chapter.figures:
            parts.append(f"### {fig.id} · {fig.title}\n")
            for cue in cues.figure_cues(fig.id):
                number += 1
                parts.append(_cue_entry(number, cue, engine))
            say(f"  {fig.id}: {len(cues.figure_cues(fig.id))} cues")
    return "\n".join(parts)
