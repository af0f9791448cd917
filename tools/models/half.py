"""fp16 against bf16 at the small end, from bit patterns and real rounding.

Every boundary is read off a bit pattern with numpy (``uint16`` viewed as
``float16``; a bf16 pattern is the high half of a ``float32``), and every
"rounds to zero" is an actual ``np.float16(x)``. :func:`zero_cut` finds
where fp16 stops rounding to zero by bisection over doubles, a second route
to the half-way point the bit patterns predict.
"""

from __future__ import annotations

import numpy as np

from tools.models import bf16


def fp16_from_bits(bits: int) -> float:
    """The fp16 value of a 16-bit pattern, e.g. 0x0400 -> 2⁻¹⁴."""
    return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])


def bf16_from_bits(bits: int) -> float:
    """The bf16 value of a 16-bit pattern: it is the high half of a float32's."""
    return float(np.array([bits << 16], dtype=np.uint32).view(np.float32)[0])


def to_fp16(x: float) -> float:
    """x rounded to fp16 by numpy (round to nearest, ties to even)."""
    return float(np.float16(x))


def to_bf16(x: float) -> float:
    return bf16.round_bf16(x)


def zero_cut(steps: int = 200) -> float:
    """The largest double that fp16 rounds to 0, found by bisection between 0 and fp16's least subnormal."""
    low, high = 0.0, fp16_from_bits(0x0001)  # low rounds to 0, high does not
    for _ in range(steps):
        mid = (low + high) / 2
        if mid in (low, high):
            break
        if to_fp16(mid) == 0.0:
            low = mid
        else:
            high = mid
    return low


def exponent(x: float) -> int:
    """The binary exponent of an exact power of two: 2⁻¹⁴ -> −14 (refuses anything else)."""
    mantissa, power = np.frexp(x)
    if mantissa != 0.5:
        raise ValueError(f"{x!r} is not a power of two")
    return int(power) - 1
