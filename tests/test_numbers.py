"""Screen and spoken forms of numbers."""

import pytest

from tools.course import numbers


@pytest.mark.parametrize(
    ("n", "spoken"),
    [
        (0, "零"),
        (4, "四"),
        (10, "十"),
        (12, "十二"),
        (101, "一百零一"),
        (110, "一百一十"),
        (2000, "两千"),
        (9506, "九千五百零六"),
        (10005, "一万零五"),
        (22000, "两万两千"),
        (46956, "四万六千九百五十六"),
        (100500, "十万零五百"),
        (120_000_000, "一亿两千万"),
        (300_000_000_000, "三千亿"),
        (-1, "负一"),
    ],
)
def test_integers_read_in_mandarin(n, spoken):
    assert numbers.zh_int(n) == spoken


def test_decimals_read_digit_by_digit_after_the_point():
    assert numbers.zh_decimal("0.25") == "零点二五"
    assert numbers.zh_decimal("−1") == "负一"
    assert numbers.zh_decimal("46,956") == "四万六千九百五十六"


def test_scientific_notation_is_shown_and_said_correctly():
    assert numbers.scientific(0.8**59, 1) == ("1.9×10⁻⁶", "一点九乘以十的负六次方")
    assert numbers.scientific(9.96e-7, 1) == ("1.0×10⁻⁶", "一点零乘以十的负六次方")


def test_screen_minus_is_typographic_and_negative_zero_is_not_shown():
    assert numbers.signed(-1) == "\u22121"
    assert numbers.signed(46956.26) == "46,956"
    assert numbers.signed(-0.0001, 2) == "0.00"


def test_a_plain_numeral_is_required_for_reading():
    with pytest.raises(ValueError, match="not a plain decimal"):
        numbers.zh_decimal("1.9e-06")


def test_powers_for_log_axis_ticks():
    assert numbers.power(10, -3) == ("10⁻³", "十的负三次方")
    assert numbers.power(2, -7) == ("2⁻⁷", "二的负七次方")
