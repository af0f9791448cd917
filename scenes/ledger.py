"""Chapter 3b–5, ledger: staging only; every number comes from tools.chapters.ledger."""

from __future__ import annotations

from scenes import style
from scenes.base import LectureScene

# -- §3.1–§3.4 and the checkpoint -----------------------------------------------


# -- LoRA, ZeRO, the whole step, the 125M worked example ---------------------------
