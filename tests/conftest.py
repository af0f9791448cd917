"""Shared fixtures: the repository root and isolated build folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """Point renders and caches at a temporary folder for this test."""
    monkeypatch.setenv("LECTURE_RENDERS", str(tmp_path / "renders"))
    monkeypatch.setenv("LECTURE_CACHE", str(tmp_path / "cache"))
    return tmp_path


def run(args: list[str], cwd: Path = ROOT, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run a command of the project's environment with stdin closed."""
    return subprocess.run(args, cwd=cwd, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def dry_run(chapter: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """Construct and play every figure of a chapter with manim's dry run (no files)."""
    return run([str(BIN / "manim"), "-ql", "--dry_run", "--media_dir", str(tmp_path / "media"),
                f"scenes/{chapter}.py"],
               env={"LECTURE_VOICE": "silent", "LECTURE_CACHE": str(tmp_path / "cache"), "COLUMNS": "200"})


def build_figure(only: str, tmp_path: Path, voice: str = "silent") -> subprocess.CompletedProcess:
    """`lecture build -q l --only <only>` into tmp_path/renders/480p15."""
    env = {"LECTURE_RENDERS": str(tmp_path / "renders"), "LECTURE_CACHE": str(tmp_path / "cache"),
           "LECTURE_VOICE": voice}
    return run([str(BIN / "lecture"), "build", "-q", "l", "--only", only], env=env)
