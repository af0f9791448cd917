"""The project's files: written so no reader sees half of one, and its source hashed as one digest."""

from __future__ import annotations

import hashlib
import os
import tempfile
from importlib.metadata import version
from pathlib import Path

from tools import settings

# What a render depends on in the checkout: the code, the narration and its recordings, manim's settings.
SOURCE_GLOBS = ("tools/**/*.py", "scenes/**/*.py", "narration/**/*", "manim.cfg", "pyproject.toml")


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write `data` to a temporary file beside `path`, then move it over `path` in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def source_digest(root: Path = settings.ROOT) -> str:
    """sha256 over the project files a render depends on (paths and contents), and manim's version."""
    digest = hashlib.sha256(version("manim").encode())
    files = sorted({p for pattern in SOURCE_GLOBS for p in root.glob(pattern) if p.is_file()})
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
