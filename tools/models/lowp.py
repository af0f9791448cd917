"""Low-precision formats done for real: every value of E4M3, E5M2, E2M1 and E8M0 from its bit pattern, one
round-to-nearest-even quantizer that saturates, and the scalings, the delayed-scaling loop and the accumulator
model the fp8 chapter draws.

A format's table is built by decoding every code (sign, exponent field, mantissa field) the way the format's
definition says, not by listing values: E4M3 (bias 7) gives up only S.1111.111 to NaN and has no infinity;
E5M2 (bias 15) keeps IEEE's reserved top exponent (±inf, NaN); E2M1 (bias 1) has no specials; E8M0 is an
exponent alone, 2^(e − 127), with 0xFF for NaN (FP8 Formats for Deep Learning, arXiv 2209.05433, Table 1 and
§3.1; OCP MX v1.0 for E2M1 and E8M0).

:func:`quantize` rounds to the nearest table value, a tie to the even code, and clips what lies beyond the
largest finite value to it: Transformer Engine clips values that exceed the range. Two other routes check it:
:func:`quantize_by_formula` rounds on the grid the exponent gives (x / 2^(e − m), rint, back), and
:func:`quantize_ml_dtypes` casts through ``ml_dtypes``, the maintained implementation of these dtypes, which
turns a value beyond the range into NaN (E4M3) or ±inf (E5M2) instead of clipping it, and breaks an E8M0 tie
upwards (0.75 → 1) where ties-to-even on the code would go to 0.5 (no figure rounds to E8M0: an MX scale is
picked by the floor rule of :func:`mx_blocks`).

Everything is float64 numpy; the tables are exact (every value has a few significant bits), so a midpoint
(a + b) / 2 is exact too and a tie is decided by ``==``, never by a tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np


@dataclass(frozen=True)
class Format:
    """A small float format: field widths, bias, and which codes are not finite numbers.

    ``specials`` is "fn" (only the all-ones code is NaN, no infinity: OCP E4M3), "ieee" (the all-ones
    exponent is ±inf and NaN), "none" (every code a number: E2M1) or "e8m0" (exponent only, unsigned,
    0xFF is NaN).
    """

    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    specials: str
    signed: bool = True

    @property
    def bits(self) -> int:
        return int(self.signed) + self.exponent_bits + self.mantissa_bits

    def decode(self, code: int) -> float:
        """The value of one code (NaN and ±inf as floats): the format's definition applied to its fields."""
        m_bits, e_bits = self.mantissa_bits, self.exponent_bits
        sign = -1.0 if self.signed and code >> (e_bits + m_bits) & 1 else 1.0
        exponent = code >> m_bits & ((1 << e_bits) - 1)
        mantissa = code & ((1 << m_bits) - 1)
        top = (1 << e_bits) - 1
        if self.specials == "e8m0":
            return np.nan if exponent == top else 2.0 ** (exponent - self.bias)
        if self.specials == "ieee" and exponent == top:
            return sign * np.inf if mantissa == 0 else np.nan
        if self.specials == "fn" and exponent == top and mantissa == (1 << m_bits) - 1:
            return np.nan
        if exponent == 0:  # subnormal: no hidden 1, the smallest exponent
            return sign * mantissa * 2.0 ** (1 - self.bias - m_bits)
        return sign * (1 + mantissa / 2**m_bits) * 2.0 ** (exponent - self.bias)

    @cached_property
    def codes(self) -> np.ndarray:
        """Every code's value, code by code (2^bits of them)."""
        return np.array([self.decode(c) for c in range(2**self.bits)])

    @cached_property
    def grid(self) -> np.ndarray:
        """The non-negative finite values in increasing order (0 first, for a format that has it)."""
        values = self.codes[np.isfinite(self.codes) & (self.codes >= 0)]
        return np.unique(values)

    @cached_property
    def midpoints(self) -> np.ndarray:
        """Every exact halfway point between two neighbouring grid values: where ties-to-even decides."""
        return (self.grid[:-1] + self.grid[1:]) / 2

    @property
    def positive(self) -> np.ndarray:
        return self.grid[self.grid > 0]

    @property
    def max(self) -> float:
        return float(self.grid[-1])

    @property
    def min_subnormal(self) -> float:
        return float(self.positive[0])

    @property
    def min_normal(self) -> float:
        """The smallest value with the hidden 1: exponent field 1."""
        return 2.0 ** (1 - self.bias)

    @property
    def binades(self) -> int:
        """How many powers of two [2^k, 2^(k+1)) hold at least one positive value."""
        return len(np.unique(np.floor(np.log2(self.positive))))

    def next_after_one(self) -> float:
        return float(self.grid[np.searchsorted(self.grid, 1.0, side="right")])

    def even(self, index: np.ndarray) -> np.ndarray:
        """Whether the grid value at `index` has an even code (its mantissa's last bit 0).

        For every format here the non-negative codes 0, 1, 2, … decode to the grid in order (E8M0's codes
        start at 2⁻¹²⁷), so a value's code is its index plus the code of the grid's first value.
        """
        return (index + self._first_code) % 2 == 0

    @cached_property
    def _first_code(self) -> int:
        return int(np.flatnonzero(self.codes == self.grid[0])[0])


E4M3 = Format("E4M3", 4, 3, 7, "fn")
E5M2 = Format("E5M2", 5, 2, 15, "ieee")
E2M1 = Format("E2M1", 2, 1, 1, "none")
E8M0 = Format("E8M0", 8, 0, 127, "e8m0", signed=False)
E4M3_IEEE = Format("E4M3 (IEEE-style)", 4, 3, 7, "ieee")  # the top exponent reserved, as IEEE does
FORMATS = (E4M3, E5M2, E2M1, E8M0)


@cache
def ml_dtypes_types() -> dict[str, type]:
    """ml_dtypes' type for each format, imported when first asked for: its import takes most of a second,
    which every process that imports the chapter builders would pay (a build of another chapter too)."""
    import ml_dtypes

    return {
        "E4M3": ml_dtypes.float8_e4m3fn,
        "E5M2": ml_dtypes.float8_e5m2,
        "E2M1": ml_dtypes.float4_e2m1fn,
        "E8M0": ml_dtypes.float8_e8m0fnu,
    }


def ml_dtypes_codes(fmt: Format) -> np.ndarray:
    """Every code's value as ml_dtypes decodes it, code by code (E2M1 sits in a byte's low nibble)."""
    return np.arange(2**fmt.bits, dtype=np.uint8).view(ml_dtypes_types()[fmt.name]).astype(np.float64)


# -- rounding ------------------------------------------------------------------------------


def quantize(x, fmt: Format) -> np.ndarray:
    """x rounded to the format: the nearest grid value, a tie to the even code; beyond the range, the max.

    Saturating, as Transformer Engine clips; NaN stays NaN. For E8M0 (no zero, no sign) |x| is rounded.
    The midpoints between neighbours split the line: a value above midpoint j rounds up to grid[j + 1],
    one exactly on it goes to whichever of the two has the even code.
    """
    x = np.asarray(x, dtype=np.float64)
    grid, mids = fmt.grid, fmt.midpoints
    a = np.minimum(np.abs(x), grid[-1])
    i = np.searchsorted(mids, a, side="left")  # mids[i - 1] < a ≤ mids[i]
    tie = mids[np.minimum(i, len(mids) - 1)] == a
    i += tie & fmt.even(i + 1)
    out = grid[i]
    if fmt.signed:
        out = np.copysign(out, x)
    return np.where(np.isnan(x), np.nan, out)


def quantize_by_formula(x, fmt: Format) -> np.ndarray:
    """The same rounding by arithmetic, a second route: on the grid of step 2^(e − m), where e is x's binary
    exponent (never below the least normal's), rint (ties to even), then clip at the max. No table."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    emin = 1 - fmt.bias
    with np.errstate(divide="ignore"):
        e = np.maximum(np.floor(np.log2(np.where(a > 0, a, 1.0))), emin)
    step = np.exp2(e - fmt.mantissa_bits)
    q = np.minimum(np.rint(a / step) * step, fmt.max)
    return np.copysign(q, x)


def quantize_ml_dtypes(x, fmt: Format) -> np.ndarray:
    """The cast ml_dtypes makes (no clipping: beyond the range it gives NaN or ±inf, or its own max for E2M1)."""
    return np.asarray(x, dtype=np.float64).astype(ml_dtypes_types()[fmt.name]).astype(np.float64)


def log_spread(count: int, fmt: Format, seed: int) -> np.ndarray:
    """`count` values spread evenly in log₂ over the format's range (least value to max), both signs for a
    signed format; seeded."""
    rng = np.random.default_rng(seed)
    low, high = np.log2(fmt.positive[0]) - 1, np.log2(fmt.max)
    magnitude = np.exp2(rng.uniform(low, high, count))
    return magnitude * (rng.choice((-1.0, 1.0), count) if fmt.signed else 1.0)


# -- scaling -------------------------------------------------------------------------------


def relative_error(q: np.ndarray, x: np.ndarray) -> float:
    """‖q − x‖ / ‖x‖."""
    return float(np.linalg.norm(q - x) / np.linalg.norm(x))


def scaled(x: np.ndarray, fmt: Format, amax: np.ndarray) -> np.ndarray:
    """x stored in the format under the scale fmt.max / amax (broadcast), and read back: q(x·s) / s."""
    amax = np.where(amax > 0, amax, 1.0)
    scale = fmt.max / amax
    return quantize(x * scale, fmt) / scale


def per_tensor(x: np.ndarray, fmt: Format) -> np.ndarray:
    """One scale for the whole tensor: its max |x| lands on the format's max."""
    return scaled(x, fmt, np.abs(x).max())


def tiles(x: np.ndarray, fmt: Format, width: int) -> np.ndarray:
    """One (FP32) scale per 1 × width tile of each row: DeepSeek-V3's 1×128 activation tiles."""
    rows, cols = x.shape
    blocks = x.reshape(rows, cols // width, width)
    return scaled(blocks, fmt, np.abs(blocks).max(axis=2, keepdims=True)).reshape(rows, cols)


def mx_exponent(amax: np.ndarray, fmt: Format) -> np.ndarray:
    """An MX block's shared E8M0 exponent: ⌊log₂ amax⌋ − emax of the element format, clamped to E8M0's
    range (the OCP MX v1.0 rule as described; the block's max can saturate under it)."""
    emax = int(np.floor(np.log2(fmt.max)))
    with np.errstate(divide="ignore"):
        shared = np.floor(np.log2(np.where(amax > 0, amax, 1.0))) - emax
    return np.clip(shared, -E8M0.bias, E8M0.bias)


def mx_blocks(x: np.ndarray, fmt: Format, width: int = 32) -> np.ndarray:
    """MX: each block of `width` consecutive values shares a power-of-two scale 2^(shared exponent)."""
    rows, cols = x.shape
    blocks = x.reshape(rows, cols // width, width)
    scale = np.exp2(mx_exponent(np.abs(blocks).max(axis=2, keepdims=True), fmt))
    return (quantize(blocks / scale, fmt) * scale).reshape(rows, cols)


def nvfp4_global(x: np.ndarray) -> float:
    """NVFP4's per-tensor (FP32) decode scale: amax / (448 · 6), so a block scale fits E4M3."""
    return float(np.abs(x).max() / (E4M3.max * E2M1.max))


def nvfp4_block_scales(x: np.ndarray, width: int = 16) -> np.ndarray:
    """Each 16-value block's scale, amax_b / 6, coded in E4M3 relative to the global scale: in units of g."""
    rows, cols = x.shape
    amax = np.abs(x.reshape(rows, cols // width, width)).max(axis=2, keepdims=True)
    return quantize(amax / E2M1.max / nvfp4_global(x), E4M3)


def nvfp4(x: np.ndarray, width: int = 16) -> np.ndarray:
    """NVFP4: E2M1 elements, an E4M3 scale per 16, one FP32 scale per tensor."""
    rows, cols = x.shape
    blocks = x.reshape(rows, cols // width, width)
    scale = nvfp4_block_scales(x, width) * nvfp4_global(x)
    safe = np.where(scale > 0, scale, 1.0)
    return (quantize(blocks / safe, E2M1) * safe).reshape(rows, cols)


def bits_per_element(element_bits: int, block: int, scale_bits: int) -> float:
    """What one value costs with its share of the block's scale."""
    return element_bits + scale_bits / block


# -- the test tensor -----------------------------------------------------------------------


def outlier_tensor(r: float, tokens: int = 64, channels: int = 1024, outliers: int = 4, seed: int = 8):
    """(x, outlier channels): a Gaussian body, then `outliers` channels (drawn by the same generator) × r."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(tokens, channels))
    chosen = np.sort(rng.choice(channels, outliers, replace=False))
    x[:, chosen] *= r
    return x, chosen


# -- delayed scaling -----------------------------------------------------------------------


def amax_trace(
    steps: int = 120,
    seed: int = 11,
    size: int = 4096,
    drift: float = 0.02,
    ramp: tuple[int, int, float] = (40, 60, 1.15),
    spike: tuple[int, float] = (90, 8.0),
) -> tuple[np.ndarray, np.ndarray]:
    """(z, amax per step): a fixed N(0, 1) vector normalised to max |z| = 1, and a made-up amax trace: a slow
    drift (× exp(N(0, drift)) per step), a ramp (× rate per step over [start, end)), and a one-step spike."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=size)
    z /= np.abs(z).max()
    level = np.ones(steps)
    for t in range(1, steps):
        level[t] = level[t - 1] * np.exp(rng.normal(0.0, drift))
        if ramp[0] <= t < ramp[1]:
            level[t] *= ramp[2]
    amax = level.copy()
    amax[spike[0]] *= spike[1]
    return z, amax


@dataclass(frozen=True)
class ScalingRun:
    """Per step: the scale used, the fraction of the tensor clipped, and the stored tensor's relative error."""

    scale: np.ndarray
    clipped: np.ndarray
    error: np.ndarray

    @property
    def clipped_steps(self) -> np.ndarray:
        return np.flatnonzero(self.clipped > 0)


def delayed_scaling(
    z: np.ndarray, amax: np.ndarray, history: int = 16, margin: int = 0, algo: str = "max", fmt: Format = E4M3
) -> ScalingRun:
    """Transformer Engine's delayed scaling: step t is cast with scale = (max / guess) / 2^margin, the guess
    taken from the amax of the `history` steps before it ("max" over the window, or "most_recent"); step 0,
    with no history, uses its own amax. ``algo="current"`` is current scaling: the step's own amax."""
    scales, clipped, errors = [], [], []
    # A value is clipped when its scaled magnitude is above the max. The scale's own rounding can put
    # a · (448 / a) one ulp above 448 (9 of 120 steps under current scaling): that is not clipping.
    edge = np.nextafter(fmt.max, np.inf)
    for t, a in enumerate(amax):
        window = amax[max(0, t - history) : t]
        if algo == "current" or t == 0:
            guess = a
        elif algo == "max":
            guess = window.max()
        elif algo == "most_recent":
            guess = window[-1]
        else:
            raise ValueError(f"unknown amax algorithm {algo!r}")
        scale = fmt.max / guess / 2.0**margin
        x = a * z
        scales.append(scale)
        clipped.append(float(np.mean(np.abs(x * scale) > edge)))
        errors.append(relative_error(quantize(x * scale, fmt) / scale, x))
    return ScalingRun(np.array(scales), np.array(clipped), np.array(errors))


# -- accumulation --------------------------------------------------------------------------


def keep_bits(s: np.ndarray, bits: int) -> np.ndarray:
    """s truncated toward zero to `bits` significant bits: the low 53 − bits bits of each float64's significand
    cleared (exact for zero and for normal doubles, which is all an accumulator of these products holds)."""
    mask = np.int64(-1) << np.int64(53 - bits)
    return (np.asarray(s, dtype=np.float64).view(np.int64) & mask).view(np.float64)


def keep_bits_by_frexp(s: np.ndarray, bits: int) -> np.ndarray:
    """The same truncation by arithmetic, a second route: s = f · 2^e with ½ ≤ |f| < 1, f cut to `bits` bits."""
    mantissa, exponent = np.frexp(s)
    return np.ldexp(np.trunc(np.ldexp(mantissa, bits)), exponent - bits)


def accumulate(products: np.ndarray, bits: int = 14) -> np.ndarray:
    """Sum each row of `products` left to right in an accumulator that keeps `bits` significant bits after
    every addition, truncating toward zero (a toy, not the hardware: it keeps no guard bits at all)."""
    partial = np.zeros(products.shape[0])
    for i in range(products.shape[1]):
        partial = keep_bits(partial + products[:, i], bits)
    return partial


def accumulate_promoted(products: np.ndarray, bits: int = 14, every: int = 128) -> np.ndarray:
    """The same accumulator, emptied every `every` products into an FP32 register: each run of `every`
    products is summed in `bits` bits, and the partial sums are added in float32, one after another."""
    rows, k = products.shape
    runs = k // every
    partial = accumulate(products[:, : runs * every].reshape(rows * runs, every), bits).reshape(rows, runs)
    register = np.zeros(rows, dtype=np.float32)
    for j in range(runs):
        register = register + partial[:, j].astype(np.float32)
    if k % every:
        register = register + accumulate(products[:, runs * every :], bits).astype(np.float32)
    return register.astype(np.float64)


def fp8_products(rows: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Products of E4M3-quantized U(0, 1) entries: each exact in float64 (4 + 4 significant bits)."""
    a = quantize(rng.uniform(size=(rows, k)), E4M3)
    b = quantize(rng.uniform(size=(rows, k)), E4M3)
    return a * b


def accumulation_errors(ks, rows: int = 128, seed: int = 12, bits: int = 14, promote_every: int = 128):
    """Max relative error over `rows` dot products at each K: (14-bit throughout, promoted every N_C)."""
    rng = np.random.default_rng(seed)
    plain, promoted = [], []
    for k in ks:
        products = fp8_products(rows, k, rng)
        exact = products.sum(axis=1)  # exact: float64 holds these sums of few-bit products without rounding
        plain.append(float(np.max(np.abs(accumulate(products, bits) - exact) / exact)))
        promoted.append(float(np.max(np.abs(accumulate_promoted(products, bits, promote_every) - exact) / exact)))
    return np.array(plain), np.array(promoted)
