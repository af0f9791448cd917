"""The project's files and keys: written so no reader sees half of one, and hashed one way each.

Every cache key is :func:`content_key` of a JSON value (one serialisation, so two caches never key the
same material two ways), every file's digest is :func:`file_sha256`, and the checkout's source is
:func:`source_digest`.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from importlib.metadata import version
from pathlib import Path

from tools import settings

# What a render depends on in the checkout: the code, the narration and its recordings, manim's settings.
SOURCE_GLOBS = ("tools/**/*.py", "scenes/**/*.py", "narration/**/*", "manim.cfg", "pyproject.toml")


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write `data` to a temporary file beside `path`, then move it over `path` in one step; on any
    failure the temporary file is removed and `path` is as it was.

    The temporary file is made as ``open`` makes one (the umask's permissions, not mkstemp's 0600):
    the manifest and the sidecars are published, for a web server to read.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}-{secrets.token_hex(6)}.tmp")
    try:
        with open(tmp, "xb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _plain(value: object) -> object:
    """The rule for what JSON has no form for: a path is its POSIX text, an array (numpy) its nested list;
    anything else is refused, not keyed by a ``str()`` that may drop digits or differ between runs."""
    if isinstance(value, Path):
        return value.as_posix()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"content_key: no stable form for {type(value).__name__} {value!r}")


def content_key(value: object) -> str:
    """sha256 of a JSON value, serialised one way: keys sorted, non-ASCII kept, see _plain for the rest."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=_plain)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read a block at a time (a clip or a voice model may be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def source_digest(root: Path = settings.ROOT) -> str:
    """sha256 over the project files a render depends on (paths and contents), and manim's version."""
    digest = hashlib.sha256(version("manim").encode())
    files = sorted({p for pattern in SOURCE_GLOBS for p in root.glob(pattern) if p.is_file()})
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
