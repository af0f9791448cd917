"""bf16 rounding done for real: the float32 bit pattern, high 16 bits, round-to-nearest-even.

:func:`round_bf16` is the course page's procedure (standard library
``struct`` only). Two independent routes check it: :func:`round_bf16_numpy`
does the same bit trick vectorised on a ``uint32`` view, and
:func:`nearest_bf16` searches the two bf16 neighbours of a float32 and
keeps the nearer one (a tie goes to the even one). Python floats are
doubles; ``struct.pack('>f', x)`` first rounds x to float32, so inputs
that are not float32 values could in principle be rounded twice.
"""

from __future__ import annotations

import random
import struct

import numpy as np


def float32_bits(x: float) -> int:
    return struct.unpack(">I", struct.pack(">f", x))[0]


def from_bits(bits: int) -> float:
    return struct.unpack(">f", struct.pack(">I", bits))[0]


def round_bf16(x: float) -> float:
    """x rounded to bf16: keep the high 16 bits of its float32 pattern, nearest-even."""
    b = float32_bits(x)
    return from_bits((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000)


def round_bf16_numpy(x: np.ndarray) -> np.ndarray:
    """The same rounding, vectorised on the uint32 view of a float32 array."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def nearest_bf16(x: float) -> float:
    """The nearer of x's two bf16 neighbours, by distance; a tie goes to the even pattern."""
    b = float32_bits(x)
    low = b & 0xFFFF0000
    high = low + 0x10000
    d_low, d_high = abs(from_bits(low) - from_bits(b)), abs(from_bits(high) - from_bits(b))
    if d_low != d_high:
        return from_bits(low if d_low < d_high else high)
    return from_bits(low if (low >> 16) % 2 == 0 else high)


def spacing_at(x: float, rounding=round_bf16) -> float:
    """One bf16 cell at x: from x to the next bf16 value above it."""
    return from_bits(float32_bits(rounding(x)) + 0x10000) - rounding(x)


def mantissa_bits(rounding=round_bf16) -> int:
    """Explicit mantissa bits: the largest k for which 1 + 2^-k survives the rounding."""
    k = 1
    while rounding(1.0 + 2.0 ** -(k + 1)) != 1.0:
        k += 1
    return k


def accumulate(start: float, step: float, times: int, rounding=round_bf16) -> list[float]:
    """w <- rounding(w + step), `times` times: the trajectory, start included."""
    path = [start]
    for _ in range(times):
        path.append(rounding(path[-1] + step))
    return path


def accumulate_fp32(start: float, step: float, times: int) -> list[float]:
    """The same loop with the weight kept in float32."""
    w, s, path = np.float32(start), np.float32(step), [float(start)]
    for _ in range(times):
        w = np.float32(w + s)
        path.append(float(w))
    return path


def random_float32(count: int, seed: int = 0) -> np.ndarray:
    """Random float32 values over many binades and both signs, plus exact ties."""
    rng = random.Random(seed)
    values = [rng.choice((-1, 1)) * rng.uniform(1, 2) * 2.0 ** rng.randint(-30, 30) for _ in range(count)]
    # Exact halfway points between two bf16 values, with an even and an odd lower neighbour.
    values += [from_bits(0x3F800000 + 0x8000), from_bits(0x3F810000 + 0x8000), from_bits(0xC0490000 + 0x8000)]
    return np.array(values, dtype=np.float32)
