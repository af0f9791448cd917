"""A chapter's scene file read as source, without importing manim: its code, its classes and the cues they narrate.

The render key keys a figure on its own class's code (and the code of the scene modules every figure shares):
the source without comments, docstrings or layout, so an edit to those, or the separator comment `lecture new`
writes above a new figure, renders nothing again. The checks before rendering ask whether a figure's class exists
and whether the cues it narrates are the ones its narration file has.
"""

from __future__ import annotations

import ast
import copy
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


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _without_docstrings(node: ast.AST) -> ast.AST:
    """`node` (a copy, changed in place) without the docstring of any class or function in it."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and _is_docstring(inner.body[0]):
            inner.body = inner.body[1:] or [ast.Pass()]
    return node


@functools.lru_cache(maxsize=64)
def _code_by_statement(source: str) -> tuple[tuple[str | None, str], ...]:
    """Each top-level statement of a module as code (docstrings dropped, ast.unparse's layout), with the name of the
    class it defines if it defines one; worked out once per source, however many of its figures ask."""
    return tuple(
        (node.name if isinstance(node, ast.ClassDef) else None, ast.unparse(_without_docstrings(copy.deepcopy(node))))
        for node in parsed(source).body
        if not _is_docstring(node)
    )


def code(source: str, leave_out: frozenset[str] = frozenset()) -> str:
    """A module's code as the render key reads it: without comments, docstrings and layout, and without the
    top-level classes named in `leave_out` (the chapter's other figures)."""
    return "\n".join(text for name, text in _code_by_statement(source) if name not in leave_out)


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
