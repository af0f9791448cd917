"""A chapter's scene file read as source, without importing manim: its classes and the cues they narrate.

The render key keys a figure on its own class's source; the checks before rendering ask whether a
figure's class exists and whether the cues it narrates are the ones its narration file has.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path


def scene_classes(scene_file: Path) -> dict[str, str]:
    """Top-level class name -> its source, read without importing manim."""
    return dict(_classes(scene_file.read_text(encoding="utf-8")))


@functools.lru_cache(maxsize=8)
def _classes(source: str) -> tuple[tuple[str, str], ...]:
    """The classes of one chapter's source, parsed once however many of its figures ask."""
    lines = source.splitlines(keepends=True)

    def segment(node: ast.ClassDef) -> str:
        # ast.get_source_segment for a top-level class, without splitting the whole file again per
        # class (which made a no-op build's keys take seconds); offsets count UTF-8 bytes.
        last = lines[node.end_lineno - 1].encode()[: node.end_col_offset].decode()
        return "".join(lines[node.lineno - 1 : node.end_lineno - 1]) + last

    return tuple((node.name, segment(node)) for node in parsed(source).body if isinstance(node, ast.ClassDef))


@functools.lru_cache(maxsize=8)
def parsed(source: str) -> ast.Module:
    """A chapter's source parsed once, however many of its figures ask (parsing it is most of a no-op build)."""
    return ast.parse(source)


@dataclass(frozen=True)
class NarratedCues:
    """The cue ids a scene class passes to ``self.narrate`` as string literals."""

    ids: list[str]
    dynamic: bool  # some narrate() call takes a computed id, which only running the scene shows


def narrated_cues(scene_file: Path, class_name: str) -> NarratedCues:
    """Read, without importing manim, which cues a scene class narrates (helper methods included)."""
    tree = parsed(scene_file.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    ids, dynamic = [], False
    for call in ast.walk(node):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "narrate"
            and call.args
        ):
            arg = call.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                ids.append(arg.value)
            else:
                dynamic = True
    return NarratedCues(ids, dynamic)
