"""Scratch folders: made beside their target, owned while in use, swept once their owner is gone.

A build stages files in a folder next to where they will be published (a
rename within one file system is atomic) and holds a lock in it while it
works. A build that was killed leaves its folder behind, unlocked: the next
build sweeps it. A folder whose lock is held belongs to a build that is
still running, and is left alone.
"""

from __future__ import annotations

import fcntl
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

OWNER = ".owner"  # the lock file inside an owned folder
STAGING = ".staging-"
# What write_kit and atomic writes leave only when killed (they run under the manifest's lock).
HALF_DONE = (".site-", ".site-old-")


@contextmanager
def owned_folder(parent: Path, prefix: str) -> Iterator[Path]:
    """A new folder in `parent`, locked for as long as the block runs, then removed."""
    parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=parent, prefix=prefix))
    try:
        with open(folder / OWNER, "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def staging(target_dir: Path):
    """A staging folder beside the files it will replace."""
    return owned_folder(target_dir, STAGING)


def in_use(folder: Path) -> bool:
    """Whether a running process holds the folder's lock."""
    lock = folder / OWNER
    if not lock.exists():
        return False
    with open(lock) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def leftovers(out_dir: Path) -> list[Path]:
    """What killed builds left in renders/<quality>/ and its chapter folders.

    Call it under the manifest's lock: site folders and ``.tmp`` files are
    only ever made under that lock, so no running build can own one then.
    """
    folders = [out_dir, *(p for p in out_dir.iterdir() if p.is_dir() and not p.name.startswith("."))]
    return [
        path
        for folder in folders
        for path in folder.iterdir()
        if (path.name.startswith(STAGING) and path.is_dir() and not in_use(path))
        or (folder == out_dir and path.name.startswith(HALF_DONE) and path.is_dir())
        or (path.name.startswith(".") and path.name.endswith(".tmp") and path.is_file())
    ]


def sweep(out_dir: Path) -> list[Path]:
    """Remove the leftovers; returns what was removed."""
    if not out_dir.is_dir():
        return []
    removed = leftovers(out_dir)
    for path in removed:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return removed
