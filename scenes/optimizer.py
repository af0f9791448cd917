"""Chapter 3a, optimizer: staging only; every number comes from tools.chapters.optimizer."""

from __future__ import annotations

from scenes import style
from scenes.base import LectureScene, LectureScene3D
