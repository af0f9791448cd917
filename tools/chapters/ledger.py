"""Chapter 3b–5, ledger: the 16 bytes per parameter and what grows out of them."""

from __future__ import annotations

from tools.catalogue import Chapter

CHAPTER = Chapter("ledger", "每参数 16 字节：训练一步的显存账")

# -- §3.1–§3.4 and the checkpoint: the ledger row and its variants ----------------


# -- LoRA, ZeRO, the whole step, the 125M worked example ---------------------------
