"""The transcript the site shows beside a figure's clip, recorded in its manifest entry.

One line per cue: its caption text (facts filled in as the captions show them), where it starts in the clip
and how long it speaks, and the facts it names. The start times are the render's own (scenes/base.py writes
them beside the narration track), not read back from the captions. The numbers panel beside it (every fact
with how it is computed, its checks, its source) comes from the build plan (tools/publish/build/plan.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from tools.publish.rendering.render import BuildError
from tools.voice.cues import Cue


def transcript(figure_id: str, figure_cues: list[Cue], cue_times: Path) -> list[dict]:
    """The figure's cues in play order as {cue, start, duration, text, cites}; raises BuildError when the
    render did not record where one starts."""
    try:
        times = {t["cue"]: t for t in json.loads(cue_times.read_text(encoding="utf-8"))}
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise BuildError(
            f"figure '{figure_id}': the render left no readable cue times at {cue_times} ({err})"
        ) from None
    lines = []
    for cue in figure_cues:
        if cue.id not in times:
            raise BuildError(f"figure '{figure_id}': the render recorded no start for cue '{cue.id}' ({cue_times})")
        timed = times[cue.id]
        lines.append(
            {
                "cue": cue.id,
                "start": float(timed["start"]),
                "duration": float(timed["duration"]),
                "text": cue.caption,
                "cites": list(cue.cites),
            }
        )
    return lines
