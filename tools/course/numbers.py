"""How a number looks on screen and how it sounds in Mandarin.

Both forms are made here, once, so a scene never formats a number its own
way and a cue never spells digits the speech engine would misread
(espeak-ng's Mandarin voice drops decimal points and minus signs).
"""

from __future__ import annotations

import math
import re

MINUS = "\u2212"  # typographic minus, as the course page prints it
_DIGITS = "零一二三四五六七八九"
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _below_10k(n: int) -> str:
    """Read 0 < n < 10000: 2506 -> 二千五百零六 (两 is applied later)."""
    out, pending_zero = [], False
    for place, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit = n // place % 10
        if digit == 0:
            pending_zero = pending_zero or bool(out)
            continue
        if pending_zero:
            out.append("零")
            pending_zero = False
        out.append(_DIGITS[digit] + unit)
    return "".join(out)


def zh_int(n: int) -> str:
    """Read an integer in Mandarin: 9506 -> 九千五百零六, 3*10**11 -> 三千亿."""
    if n < 0:
        return "负" + zh_int(-n)
    if n == 0:
        return "零"
    groups = []
    while n:
        groups.append(n % 10000)
        n //= 10000
    big_units = ["", "万", "亿", "万亿"]
    if len(groups) > len(big_units):
        raise ValueError(f"{n} is too large to read aloud")
    out, need_zero = [], False
    for index in range(len(groups) - 1, -1, -1):
        group = groups[index]
        if group == 0:
            need_zero = bool(out)
            continue
        if out and (need_zero or group < 1000):
            out.append("零")
        out.append(_below_10k(group) + big_units[index])
        need_zero = False
    text = "".join(out)
    if text.startswith("一十"):
        text = text[1:]
    # 两 before 千/万/亿 when 二 starts a group, the way it is said aloud.
    return re.sub(r"(^|[零万亿])二(?=[千万亿])", r"\1两", text)


def zh_digits(digits: str) -> str:
    """Read a digit string one by one, as after a decimal point: 15 -> 一五."""
    return "".join(_DIGITS[int(d)] for d in digits)


def zh_decimal(text: str) -> str:
    """Read a plain decimal numeral such as '−1', '46,956' or '0.25'."""
    clean = text.replace(",", "").replace(MINUS, "-").strip()
    if not re.fullmatch(r"-?\d+(\.\d+)?", clean):
        raise ValueError(f"not a plain decimal numeral: {text!r}")
    sign = "负" if clean.startswith("-") else ""
    whole, _, frac = clean.lstrip("-").partition(".")
    spoken = sign + zh_int(int(whole))
    return spoken + ("点" + zh_digits(frac) if frac else "")


def zh_quantity(text: str) -> str:
    """Read a numeral that counts something before a unit: as zh_decimal, but a bare 2 is 两."""
    spoken = zh_decimal(text)
    return "两" if spoken == "二" else spoken


def signed(x: float, digits: int = 0) -> str:
    """Display a number with a typographic minus and thousands separators."""
    body = f"{abs(x):,.{digits}f}"
    return (MINUS + body) if x < 0 and float(body.replace(",", "")) != 0 else body


def scientific(x: float, digits: int = 1) -> tuple[str, str]:
    """Display and spoken forms of x in scientific notation: 1.9×10⁻⁶."""
    exponent = math.floor(math.log10(abs(x)))
    mantissa = f"{x / 10**exponent:.{digits}f}"
    if float(mantissa.replace("-", "")) >= 10:  # rounding carried into the next decade
        exponent += 1
        mantissa = f"{x / 10**exponent:.{digits}f}"
    shown = f"{mantissa.replace('-', MINUS)}×10{str(exponent).translate(_SUPERSCRIPT)}"
    spoken = f"{zh_decimal(mantissa)}乘以十的{zh_int(exponent)}次方"
    return shown, spoken


def superscript(exponent: int) -> str:
    """An exponent as superscript digits, for a formula's text: f"0.8{superscript(59)}" -> 0.8⁵⁹."""
    return str(exponent).translate(_SUPERSCRIPT)


def power(base: int, exponent: int) -> tuple[str, str]:
    """Display and spoken forms of a power: power(2, -7) -> 2⁻⁷ / 二的负七次方."""
    shown = f"{signed(base)}{superscript(exponent)}"
    return shown, f"{zh_int(base)}的{zh_int(exponent)}次方"


def zh_year(year: int) -> str:
    """Read a year digit by digit: 1964 -> 一九六四."""
    return zh_digits(str(year))


def zh_large(n: int) -> str:
    """Write a round large count the Chinese way for the screen: 3e11 -> 三千亿."""
    if n <= 0 or n != int(n):
        raise ValueError(f"expected a positive whole number, got {n}")
    return zh_int(int(n))
