"""Learning-rate schedules as published (GPT-3 cosine, DeepSeek-V3 warmup-stable-decay), a
training run stepped through them, GPT-3's Table 2.1, and the batch-size ceiling on the best lr.

A schedule is a list of phases over tokens; its value is a fraction of its own peak, so two
schedules can share one normalised axis. numpy + stdlib only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Phase:
    """One piece of a schedule: from `start` to `end` tokens, going from `begin` to `finish` × peak."""

    name: str  # warmup, stable, cosine, constant
    start: float
    end: float
    begin: float
    finish: float

    def at(self, tokens: np.ndarray) -> np.ndarray:
        s = (np.asarray(tokens, dtype=float) - self.start) / (self.end - self.start)
        if self.name == "cosine":
            return self.finish + (self.begin - self.finish) * 0.5 * (1 + np.cos(np.pi * s))
        return self.begin + (self.finish - self.begin) * s  # linear (a constant when begin = finish)


@dataclass(frozen=True)
class Schedule:
    name: str
    peak: float  # the absolute peak lr, kept off the figure
    phases: tuple[Phase, ...]

    @property
    def total(self) -> float:
        return self.phases[-1].end

    def at(self, tokens: np.ndarray) -> np.ndarray:
        """lr / peak after `tokens` tokens (at a boundary, the phase that starts there)."""
        tokens = np.asarray(tokens, dtype=float)
        out = np.full(tokens.shape, self.phases[-1].finish)
        for phase in reversed(self.phases):
            inside = tokens < phase.end
            out = np.where(inside, phase.at(tokens), out)
        return out

    def breakpoints(self) -> list[float]:
        """Where one phase hands over to the next, as fractions of the total tokens (closed form)."""
        return [phase.end / self.total for phase in self.phases[:-1]]

    def curve(self, fractions: np.ndarray) -> np.ndarray:
        return self.at(np.asarray(fractions) * self.total)


def gpt3_cosine(
    warmup: float = 375e6, decay_end: float = 260e9, total: float = 300e9, floor: float = 0.1, peak: float = 0.6e-4
) -> Schedule:
    """GPT-3 (arXiv 2005.14165 Appendix B): linear warmup over 375M tokens, cosine to 10% by 260B, then 10%."""
    return Schedule(
        "GPT-3",
        peak,
        (
            Phase("warmup", 0.0, warmup, 0.0, 1.0),
            Phase("cosine", warmup, decay_end, 1.0, floor),
            Phase("constant", decay_end, total, floor, floor),
        ),
    )


def v3_wsd(
    warmup_tokens: float,
    stable_end: float = 10e12,
    cosine_tokens: float = 4.3e12,
    hold_tokens: float = 333e9,
    last_tokens: float = 167e9,
    peak: float = 2.2e-4,
    floor: float = 2.2e-5,
    last: float = 7.3e-6,
) -> Schedule:
    """DeepSeek-V3 (arXiv 2412.19437 §4.2): warmup to 2.2e-4, constant to 10T, cosine to 2.2e-5 over
    4.3T, then of the last 500B: 333B at 2.2e-5 and 167B at 7.3e-6."""
    cosine_end = stable_end + cosine_tokens
    hold_end = cosine_end + hold_tokens
    return Schedule(
        "DeepSeek-V3",
        peak,
        (
            Phase("warmup", 0.0, warmup_tokens, 0.0, 1.0),
            Phase("stable", warmup_tokens, stable_end, 1.0, 1.0),
            Phase("cosine", stable_end, cosine_end, 1.0, floor / peak),
            Phase("constant", cosine_end, hold_end, floor / peak, floor / peak),
            Phase("constant", hold_end, hold_end + last_tokens, last / peak, last / peak),
        ),
    )


# V3's batch (arXiv 2412.19437 §4.2): 3,072 → 15,360 sequences over the first 469B tokens, 4K tokens a sequence.
# How it ramps is not published; we take it linear in tokens, in whole sequences (RECON).
V3_BATCH = (3072, 15360)
V3_RAMP_TOKENS = 469e9
V3_SEQUENCE = 4096
V3_WARMUP_STEPS = 2000


def v3_batch_tokens(seen: float) -> float:
    """Tokens in the next step after `seen` tokens, on the RECON linear ramp."""
    first, last = V3_BATCH
    sequences = round(first + (last - first) * min(seen / V3_RAMP_TOKENS, 1.0))
    return sequences * V3_SEQUENCE


def v3_warmup_tokens_closed(steps: int = V3_WARMUP_STEPS) -> float:
    """Tokens after `steps` steps on the ramp, from dT/ds = a + c·T: T = (a/c)(e^{cs} − 1)."""
    first, last = V3_BATCH
    a = V3_SEQUENCE * first
    c = V3_SEQUENCE * (last - first) / V3_RAMP_TOKENS
    return a / c * math.expm1(c * steps)


def tokens_seen(batch_tokens: Callable[[float], float], total: float) -> np.ndarray:
    """Step through training: the tokens seen before each step, until `total` is reached."""
    seen, at = [], 0.0
    while at < total:
        seen.append(at)
        at += batch_tokens(at)
    return np.array(seen)


def phase_changes(seen: np.ndarray, lrs: np.ndarray, tol: float = 1e-12) -> list[float]:
    """Tokens at which a run's lr sequence changes course (starts rising, holding, falling or
    stepping down), read off the run alone; a one-step drop counts once."""
    moves = np.diff(lrs)
    course = np.where(moves > tol, 1, np.where(moves < -tol, -1, 0))
    changes: list[float] = []
    for i in np.nonzero(np.diff(course))[0] + 1:  # course[i] differs from course[i − 1]
        if changes and seen[i + 1] - changes[-1] <= 2 * (seen[i + 1] - seen[i]):
            continue  # the second edge of a one-step drop
        changes.append(float(seen[i + 1]))  # the first step that uses the new course's value
    return changes


# -- GPT-3 Table 2.1 (arXiv 2005.14165; lost from the page's text, restored from the paper) --------
@dataclass(frozen=True)
class Gpt3Size:
    name: str
    params: float
    layers: int
    width: int
    batch_tokens: float
    lr: float


GPT3_TABLE_2_1 = (
    Gpt3Size("Small", 125e6, 12, 768, 0.5e6, 6.0e-4),
    Gpt3Size("Medium", 350e6, 24, 1024, 0.5e6, 3.0e-4),
    Gpt3Size("Large", 760e6, 24, 1536, 0.5e6, 2.5e-4),
    Gpt3Size("XL", 1.3e9, 24, 2048, 1e6, 2.0e-4),
    Gpt3Size("2.7B", 2.7e9, 32, 2560, 1e6, 1.6e-4),
    Gpt3Size("6.7B", 6.7e9, 32, 4096, 2e6, 1.2e-4),
    Gpt3Size("13B", 13.0e9, 40, 5140, 2e6, 1.0e-4),
    Gpt3Size("175B", 175.0e9, 96, 12288, 3.2e6, 0.6e-4),
)


def log_interpolate(x: float, x0: float, y0: float, x1: float, y1: float) -> float:
    """y at x on the straight line through (log x0, y0) and (log x1, y1)."""
    s = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
    return y0 + s * (y1 - y0)


def best_lr_fraction(batch_over_noise: np.ndarray) -> np.ndarray:
    """η*/η_max = 1/(1 + B_noise/B): SGD's best learning rate against the batch (the noise-scale view)."""
    return 1 / (1 + 1 / np.asarray(batch_over_noise, dtype=float))
