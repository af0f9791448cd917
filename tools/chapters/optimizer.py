"""Chapter 3a, optimizer: descent, saddle points, the heavy ball, the step size."""

from __future__ import annotations

from tools.catalogue import Chapter

CHAPTER = Chapter("optimizer", "优化器：下山、鞍点与小重球")
