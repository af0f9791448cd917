"""A schematic loss curve with irregular spikes (PaLM §5.1 gives no heights, widths or positions).

The positions are drawn once from a fixed seed and kept only if no two
gaps between neighbours are equal: "no pattern" made checkable. Heights
and widths are drawn too; the curve has no scale, so none of them is data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Spike:
    at: int  # the step it starts at
    height: float  # as a fraction of the curve's start
    width: int  # steps to fall back


def positions(count: int, steps: int, seed: int, margin: int) -> list[int]:
    """`count` spike steps in (0, steps): every gap (and the lead-in and the tail) at least `margin`, no two gaps equal.

    The run is cut into count + 1 stretches drawn log-normal (many short, a few long).
    """
    rng = np.random.default_rng(seed)
    free = steps - margin * (count + 1)
    for _ in range(1000):
        spread = rng.lognormal(0.0, 0.6, size=count + 1)
        stretches = np.floor(margin + spread / spread.sum() * free).astype(int)
        at = np.cumsum(stretches[:-1])
        gaps = np.diff(at)
        if len(set(gaps.tolist())) == len(gaps):
            return [int(a) for a in at]
    raise ValueError(f"no draw of {count} spikes in {steps} steps with distinct gaps >= {margin}")


def spikes(count: int, steps: int, seed: int, margin: int) -> list[Spike]:
    rng = np.random.default_rng(seed + 1)
    return [
        Spike(at, float(rng.uniform(0.25, 0.7)), int(rng.integers(margin // 3, margin // 2 + 1)))
        for at in positions(count, steps, seed, margin)
    ]


def baseline(steps: int) -> np.ndarray:
    """A smooth, slowly flattening training loss: 1 at step 0."""
    t = np.arange(steps + 1, dtype=float)
    return 0.35 + 0.65 / np.sqrt(1 + t / (0.02 * steps))


def with_spikes(base: np.ndarray, drawn: list[Spike]) -> np.ndarray:
    """The baseline plus each spike: a jump at its step, falling back over its width."""
    loss = base.copy()
    t = np.arange(len(base))
    for spike in drawn:
        after = t - spike.at
        bump = np.where(after >= 0, np.exp(-np.clip(after, 0, None) / (spike.width / 3)), 0.0)
        loss += spike.height * base[0] * bump
    return loss
