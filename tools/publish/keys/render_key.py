"""A figure's render key: everything that shapes its published files, as named parts, each with the words the
build says when it changed, so a part cannot be added without its reason:
``gates_circuit: narration changed (cue gates_add)``, or ``stack changed (numpy SIMD X86_V2 X86_V3 → X86_V2)``
on another CPU.

The parts: the figure's own scene class, the shared scene modules, its facts, its cues (caption lines and
audio), its title and source, the fonts (tools/publish/keys/fonts.py), the locked libraries and numpy's SIMD
paths (stack.py), the render settings, and what its attachments hold. :func:`figure_key` gathers them from the
catalogue, the narration and the scene files; the build plan keys each figure on it, and the layout lint keys
its stills on it (at 480p, with the silent voice).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools import settings
from tools.course import catalogue
from tools.course.catalogue import Figure
from tools.files import content_key
from tools.publish.keys import fonts, scene_source, stack
from tools.publish.publishing.clip import Attached
from tools.publish.rendering.render import ONE_FIGURE, SceneRef
from tools.voice import audio, captions, cues, timing
from tools.voice.cues import Cue
from tools.voice.engine import Engine

# What publish writes for a figure; part of the render key, so a change
# here republishes figures built before it.
PUBLISHED = (
    "mp4 (aac fast coder) srt vtt png webp; facts with text and reading, size; sidecar; cue times; "
    "facts.vtt and descriptions.vtt (where each number is drawn); v7"
)


def _code_digest(path: Path) -> str:
    """The digest of a module's code: a comment, a docstring or a reformatting changes nothing."""
    return content_key(scene_source.code(path.read_text(encoding="utf-8")))


@functools.cache
def _caption_code() -> str:
    """What decides a caption's events besides its text and its audio: the rules and how a caption is timed."""
    return content_key([_code_digest(Path(module.__file__)) for module in (captions, timing)])


# Scene modules that never change a frame: the layout lint's probe only reads the screen (its code keys
# the stills instead), so editing it re-runs the lint but re-renders nothing.
NOT_DRAWN = ("layout_probe.py",)


def shared_scene_files(chapter_ids: set[str]) -> list[Path]:
    """The scene modules every figure uses (style, base, widgets): not a chapter's file, nor one in NOT_DRAWN."""
    return [
        p for p in sorted(settings.SCENES_DIR.glob("*.py")) if p.stem not in chapter_ids and p.name not in NOT_DRAWN
    ]


def _changed(old: dict | None, new: dict | None) -> list[str]:
    """The names of the entries that differ between two dict parts (added, changed or gone)."""
    old, new = old or {}, new or {}
    return [name for name in new if old.get(name) != new[name]] + [name for name in old if name not in new]


def _cues_changed(old: dict | None, new: dict) -> list[str]:
    changed = _changed(old, new)
    return [f"cue{'s' if len(changed) > 1 else ''} {', '.join(changed)}"] if changed else []


def _reordered(old: list | None, new: list) -> list[str]:
    """A new order of the same cues; a cue added or taken away is named by the cues part instead."""
    return ["cue order"] if sorted(old or []) == sorted(new) else []


@dataclass(frozen=True)
class KeyPart:
    """One part of a render key: its value, and what the build says when it changed since the last render."""

    value: Any  # JSON; None leaves the part out of the key
    reason: str  # e.g. "facts changed ({})": "{}" takes what `inside` names
    inside: Callable[[Any, Any], list[str]] | None = None  # (old, new) -> what changed; [] says nothing
    unrecorded: str = ""  # said instead when the old key has no such part

    def why(self, name: str, old: dict) -> str | None:
        """What the build says of this part, `name` in `old` (the key parts the figure was published with)."""
        if self.unrecorded and name not in old:
            return self.unrecorded
        before = old.get(name)
        if before == self.value:
            return None
        if self.inside is None:
            return self.reason
        named = self.inside(before, self.value)
        return self.reason.format(", ".join(named)) if named else None


@dataclass(frozen=True)
class RenderKey:
    """Everything that shapes one figure's published files, as named parts (values and reasons)."""

    table: dict[str, KeyPart]

    @property
    def parts(self) -> dict:
        """The parts' values, as the manifest records them (to name what changed at the next build)."""
        return {name: part.value for name, part in self.table.items() if part.value is not None}

    @property
    def digest(self) -> str:
        return content_key(self.parts)


@dataclass(frozen=True)
class KeyMaterial:
    """What a figure's render key is made of, gathered by the build plan (tools/publish/build/plan.py)."""

    scene_source: str  # the figure's own class: its chapter file without the other figures' classes
    shared_files: tuple[Path, ...]  # shared_scene_files()
    facts: dict[str, tuple]  # each fact's (value, text, spoken)
    cues: tuple[tuple[str, str, str], ...]  # each cue's (id, caption, audio key), in play order
    title: str
    source: str
    attachments: dict[str, str]  # each attachment's suffix and text


def render_key(material: KeyMaterial, quality: str) -> RenderKey:
    """The figure's key: its own scene class (so editing one figure does not re-render its neighbours), the
    shared scene modules, its facts, its cues (caption lines and audio), its title, the fonts, the stack
    (tools/publish/keys/stack.py), the render settings, and what its attachments hold.
    In the order the build names them when they changed."""
    # Only a figure with attachments has the part: one without keeps the key it had before they existed.
    attached = {suffix: content_key(text) for suffix, text in material.attachments.items()} or None
    return RenderKey(
        {
            "scene": KeyPart(content_key(material.scene_source), "scene changed"),
            "shared": KeyPart(
                {p.name: _code_digest(p) for p in material.shared_files}, "shared scene code changed ({})", _changed
            ),
            "facts": KeyPart(
                {name: content_key(list(shown)) for name, shown in material.facts.items()},
                "facts changed ({})",
                _changed,
            ),
            # A caption's events are its text as captions.py cuts it, at its audio's times: the text, that code and
            # the audio's key (which keys the times too), without cutting it.
            "cues": KeyPart(
                {cue_id: content_key([caption, _caption_code(), key]) for cue_id, caption, key in material.cues},
                "narration changed ({})",
                _cues_changed,
            ),
            "cue_order": KeyPart([cue_id for cue_id, _, _ in material.cues], "narration changed ({})", _reordered),
            "fonts": KeyPart(fonts.key_part(), "fonts changed"),
            "title": KeyPart(content_key([material.title, material.source]), "title or source changed"),
            "attachments": KeyPart(attached, "attached files changed"),
            # Plain values, not a digest, so that a change can be named.
            "stack": KeyPart(
                stack.computing_stack(),
                "stack changed ({})",
                stack.differences,
                unrecorded="stack not recorded before (libraries and numpy SIMD)",
            ),
            "render": KeyPart(
                content_key([quality, settings.MANIM_CFG.read_text(encoding="utf-8"), ONE_FIGURE, PUBLISHED]),
                "render settings changed (quality, manim.cfg or what publish writes)",
            ),
        }
    )


def reasons(old: dict | None, new: RenderKey) -> list[str]:
    """Why a figure published with key parts `old` must render again for `new`: each changed part's reason."""
    if old is None:
        return ["new"]
    if not old:
        return ["published by an older build"]
    said = [why for name, part in new.table.items() if (why := part.why(name, old))]
    return said or ["render key changed"]


# -- gathered from the catalogue, the narration and the scene files -------------------------------------------


def scene_ref(fig: Figure) -> SceneRef:
    return SceneRef(fig.id, fig.chapter, fig.scene_class, catalogue.chapter(fig.chapter).scene_file)


def own_scene_source(fig: Figure) -> str:
    """The code of the figure's chapter file without the other figures' classes: editing one figure leaves its
    neighbours' keys as they were."""
    chapter = catalogue.chapter(fig.chapter)
    others = frozenset(f.scene_class for f in chapter.figures if f.id != fig.id)
    return scene_source.code(chapter.scene_file.read_text(encoding="utf-8"), others)


def attached(fig: Figure) -> tuple[Attached, ...]:
    return tuple(Attached(a.suffix, a.label, a.how_to, a.make()) for a in fig.attachments)


def material(fig: Figure, cue_keys: list[tuple[Cue, str]], attachments: tuple[Attached, ...]) -> KeyMaterial:
    return KeyMaterial(
        own_scene_source(fig),
        tuple(shared_scene_files({ch.id for ch in catalogue.chapters()})),
        {name: (f.value, f.text, f.spoken) for name, f in catalogue.facts(fig.id).items()},
        tuple((cue.id, cue.caption, key) for cue, key in cue_keys),
        fig.title,
        fig.source,
        {a.suffix: a.text for a in attachments},
    )


def figure_key(fig: Figure, quality: str, engine: Engine) -> RenderKey:
    """The render key of `fig` at `quality` with its cues spoken by `engine` (the layout lint keys its stills
    on it too, at 480p with the silent voice)."""
    cue_keys = [(cue, audio.cache_key(cue, engine)) for cue in cues.figure_cues(fig.id)]
    return render_key(material(fig, cue_keys, attached(fig)), quality)
