"""Long spans of seconds: in years two ways, and in the unit a person would say.

``years`` divides by the Julian year (365.25 days, the astronomers' year);
``calendar_years`` counts on the Gregorian calendar from 1 January of year 1
with ``datetime``, an independent route that must land within a day or so
per century of the first.
"""

from __future__ import annotations

from datetime import datetime, timedelta

MINUTE = 60
HOUR = 60 * MINUTE
DAY = 24 * HOUR
JULIAN_YEAR = 365.25 * DAY

# (seconds in the unit, screen unit, spoken unit), largest first
UNITS = (
    (JULIAN_YEAR, "年", "年"),
    (DAY, "天", "天"),
    (HOUR, "小时", "小时"),
    (MINUTE, "分钟", "分钟"),
    (1, "秒", "秒"),
)


def years(seconds: float) -> float:
    return seconds / JULIAN_YEAR


def calendar_years(seconds: float) -> float:
    """Years elapsed on the Gregorian calendar, counted from 0001-01-01."""
    start = datetime(1, 1, 1)
    end = start + timedelta(seconds=seconds)
    year_start = datetime(end.year, 1, 1)
    year_length = (datetime(end.year + 1, 1, 1) - year_start).total_seconds()
    return end.year - 1 + (end - year_start).total_seconds() / year_length


def unit_for(seconds: float) -> tuple[float, str, str]:
    """The largest unit in which the span is at least one."""
    for size, shown, spoken in UNITS:
        if seconds >= size:
            return size, shown, spoken
    return UNITS[-1]
