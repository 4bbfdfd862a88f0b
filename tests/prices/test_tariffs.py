"""Band schedules, billing months and the month's peak, against values worked out by hand from the local clock."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta
import json
import math
from pathlib import Path
import re
from zoneinfo import ZoneInfo

import pytest
import yaml

from custom_components.agentic_hems.prices.tariffs import (
    band_fees,
    billing_months,
    parse_days,
    parse_schedule,
    peak_floors,
    quarter_hour_peak,
)

BERLIN = ZoneInfo("Europe/Berlin")
BRUSSELS = ZoneInfo("Europe/Brussels")
# A §14a Module 3 table: low 01:00-04:00 and high 17:00-19:00 every day of quarters 1 and 4, standard otherwise.
MODULE3 = {
    "bands": {"low": 0.0345, "standard": 0.0862, "high": 0.1084},
    "default": "standard",
    "windows": [
        {"band": "low", "days": "mon-sun", "from": "01:00", "to": "04:00", "quarters": [1, 4]},
        {"band": "high", "days": "mon-sun", "from": "17:00", "to": "19:00", "quarters": [1, 4]},
    ],
}
# Weekdays 17:00-20:00 high, every night 00:00-06:00 low, else standard; a holiday counts as a Sunday.
WEEKLY = {
    "bands": {"low": 0.02, "standard": 0.05, "high": 0.09},
    "default": "standard",
    "holidays_as_sunday": True,
    "windows": [
        {"band": "high", "days": "mon-fri", "from": "17:00", "to": "20:00"},
        {"band": "low", "days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "from": "00:00", "to": "06:00"},
    ],
}


def slots(start: datetime, end: datetime) -> list[datetime]:
    """Quarter-hour starts from ``start`` to ``end`` (UTC)."""
    return [start + timedelta(minutes=15 * i) for i in range(int((end - start) / timedelta(minutes=15)))]


def local_day(day: date) -> list[datetime]:
    """The quarter-hour slots of a local Berlin day."""
    start = datetime(day.year, day.month, day.day, tzinfo=BERLIN).astimezone(UTC)
    nxt = day + timedelta(days=1)
    return slots(start, datetime(nxt.year, nxt.month, nxt.day, tzinfo=BERLIN).astimezone(UTC))


def test_spring_forward_day_keeps_the_local_windows() -> None:
    """29 March 2026 has 23 hours: 01:00-04:00 local is only two hours (00:00-02:00 UTC), 17:00-19:00 CEST is
    15:00-17:00 UTC; 92 slots in all."""
    starts = local_day(date(2026, 3, 29))
    fees = band_fees(starts, parse_schedule(MODULE3), tz=BERLIN)
    assert len(starts) == 92
    assert Counter(fees.tolist()) == {0.0345: 8, 0.1084: 8, 0.0862: 76}
    by_utc = dict(zip(starts, fees.tolist(), strict=True))
    assert by_utc[datetime(2026, 3, 28, 23, 45, tzinfo=UTC)] == 0.0862  # 00:45 CET
    assert by_utc[datetime(2026, 3, 29, 0, 0, tzinfo=UTC)] == 0.0345  # 01:00 CET
    assert by_utc[datetime(2026, 3, 29, 1, 45, tzinfo=UTC)] == 0.0345  # 03:45 CEST
    assert by_utc[datetime(2026, 3, 29, 2, 0, tzinfo=UTC)] == 0.0862  # 04:00 CEST
    assert by_utc[datetime(2026, 3, 29, 15, 0, tzinfo=UTC)] == 0.1084  # 17:00 CEST


def test_fall_back_day_counts_the_repeated_hour_twice() -> None:
    """25 October 2026 has 25 hours: 02:00-03:00 comes twice, so 01:00-04:00 local is four hours (23:00-03:00 UTC);
    17:00-19:00 CET is 16:00-18:00 UTC; 100 slots in all."""
    starts = local_day(date(2026, 10, 25))
    fees = band_fees(starts, parse_schedule(MODULE3), tz=BERLIN)
    assert len(starts) == 100
    assert Counter(fees.tolist()) == {0.0345: 16, 0.1084: 8, 0.0862: 76}
    low = [s for s, f in zip(starts, fees.tolist(), strict=True) if f == 0.0345]
    assert (low[0], low[-1]) == (datetime(2026, 10, 24, 23, 0, tzinfo=UTC), datetime(2026, 10, 25, 2, 45, tzinfo=UTC))


def test_quarters_without_windows_are_standard_all_day() -> None:
    """In May (quarter 2) the Module 3 windows do not apply: every slot of the day is the standard band."""
    fees = band_fees(local_day(date(2026, 5, 4)), parse_schedule(MODULE3), tz=BERLIN)
    assert set(fees.tolist()) == {0.0862}


def test_a_holiday_takes_sundays_windows() -> None:
    """Christmas Day 2026 is a Friday: 18:00 is high on a plain Friday, standard as a holiday (Sunday); the night
    band applies on both."""
    schedule = parse_schedule(WEEKLY)
    at = [datetime(2026, 12, 25, 18, tzinfo=BERLIN), datetime(2026, 12, 25, 3, tzinfo=BERLIN)]
    assert band_fees(at, schedule, tz=BERLIN).tolist() == [0.09, 0.02]
    assert band_fees(at, schedule, tz=BERLIN, holidays={date(2026, 12, 25)}).tolist() == [0.05, 0.02]
    saturday = [datetime(2026, 12, 26, 18, tzinfo=BERLIN)]
    assert band_fees(saturday, schedule, tz=BERLIN).tolist() == [0.05]
    not_sunday = parse_schedule({**WEEKLY, "holidays_as_sunday": False})
    assert band_fees(at, not_sunday, tz=BERLIN, holidays={date(2026, 12, 25)}).tolist() == [0.09, 0.02]


def test_windows_may_end_at_midnight_and_cover_the_year_without_default() -> None:
    """Two windows covering the whole day need no default; 24:00 ends the second one."""
    schedule = parse_schedule({"bands": {"night": 0.01, "day": 0.04}, "windows": [
        {"band": "night", "from": "00:00", "to": "07:30"}, {"band": "day", "from": "07:30", "to": "24:00"}]})
    at = [datetime(2026, 6, 1, 7, 15, tzinfo=BERLIN), datetime(2026, 6, 1, 7, 30, tzinfo=BERLIN),
          datetime(2026, 6, 1, 23, 45, tzinfo=BERLIN)]
    assert band_fees(at, schedule, tz=BERLIN).tolist() == [0.01, 0.04, 0.04]


def nested(depth: int) -> object:
    """``True`` inside ``depth`` nested lists."""
    value: object = True
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"windows": [{"band": "high", "days": "mon-fri", "from": "17:00", "to": "20:00"},
                      {"band": "low", "days": "fri-sun", "from": "19:00", "to": "21:00"}]},
         "window 2 (low) overlaps a window of band 'high' on fri at 19:00 in month 1"),
        ({"default": None}, "no window covers mon 06:00 in month 1: add a window or a default band"),
        ({"windows": [{"band": "low", "from": "25:00", "to": "26:00"}]},
         "window 1 from '25:00' is not a time of day between 00:00 and 24:00"),
        ({"windows": [{"band": "low", "from": "17:60", "to": "18:00"}]},
         "window 1 from '17:60' is not a time of day between 00:00 and 24:00"),
        ({"windows": [{"band": "low", "from": "5pm", "to": "18:00"}]}, "window 1 from '5pm' is not a time of day (HH:MM)"),
        ({"windows": [{"band": "low", "from": "22:00", "to": "06:00"}]},
         "window 1: from 22:00 must be before to 06:00 (split a window over midnight in two"),
        ({"windows": [{"band": "peak", "from": "17:00", "to": "18:00"}]},
         "window 1: band 'peak' is not one of the bands (low, standard, high)"),
        ({"windows": [{"band": "low", "from": "01:00", "to": "02:00", "months": [1], "quarters": [1]}]},
         "window 1: give months or quarters, not both"),
        ({"windows": [{"band": "low", "from": "01:00", "to": "02:00", "quarters": [5]}]},
         "window 1 quarters must be a list of whole numbers from 1 to 4, got [5]"),
        ({"windows": [{"band": "low", "days": "fri-mon", "from": "01:00", "to": "02:00"}]},
         "window 1 days: 'fri-mon' runs backwards"),
        ({"windows": [{"band": "low", "days": "mo", "from": "01:00", "to": "02:00"}]},
         "window 1 days: 'mo' is not a weekday"),
        ({"bands": {"low": "cheap"}}, "band 'low': the fee must be a number (currency per kWh), got 'cheap'"),
        ({"default": "normal"}, "default band 'normal' is not one of the bands (low, standard, high)"),
        ({"season": "winter"}, "unknown key(s) season"),
        ({"holidays_as_sunday": "false"}, "holidays_as_sunday must be true or false (without quotes), got 'false'"),
        ({"holidays_as_sunday": 1}, "holidays_as_sunday must be true or false (without quotes), got 1"),
        ({"holidays_as_sunday": None}, "holidays_as_sunday must be true or false (without quotes), got None"),
        ({"holidays_as_sunday": nested(300)}, "the band schedule is too large: more than 8 nesting levels"),
        ({"windows": [{"band": "low", "from": "01:00", "to": "02:00"}] * 300},
         "the band schedule is too large: more than 4000 characters in all"),
        ({"windows": [{}] * 1001}, "the band schedule is too large: more than 1000 entries in all"),
        ({"bands": {"x" * 2001: 0.1}}, "the band schedule is too large: more than 2000 characters in one text"),
        ({"bands": {f"b{i}": 0.01 for i in range(33)}}, "at most 32 bands, got 33"),
        ({"bands": {1: 0.1}, "default": 1, "windows": [{"band": 1, "from": "1:00", "to": "2:00"}] * 201},
         "at most 200 windows, got 201"),
    ],
)
def test_invalid_schedules_name_the_problem(change: dict[str, object], message: str) -> None:
    """Each refused schedule says what is wrong in English."""
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        parse_schedule({**WEEKLY, **change})


def test_parse_days_ranges_and_lists() -> None:
    """Ranges and comma lists name the weekdays, Monday 0."""
    assert parse_days("mon-fri") == frozenset(range(5))
    assert parse_days("sat, sun") == frozenset({5, 6})
    assert parse_days("mon,wed-thu") == frozenset({0, 2, 3})


def test_billing_months_split_at_local_midnight() -> None:
    """In Brussels (UTC+1 in winter) February starts at 23:00 UTC on 31 January."""
    starts = slots(datetime(2026, 1, 31, 22, 30, tzinfo=UTC), datetime(2026, 1, 31, 23, 30, tzinfo=UTC))
    index, keys = billing_months(starts, BRUSSELS)
    assert index.tolist() == [0, 0, 1, 1] and keys == ("2026-01", "2026-02")


def test_peak_floors_take_the_minimum_and_the_peak_so_far() -> None:
    """The current month costs its peak so far or the 2.5 kW minimum, whichever is higher; later months the minimum."""
    months = ("2026-01", "2026-02")
    assert peak_floors(months, current="2026-01", peak_so_far_kw=3.1, minimum_kw=2.5) == (3.1, 2.5)
    assert peak_floors(months, current="2026-01", peak_so_far_kw=1.2, minimum_kw=2.5) == (2.5, 2.5)
    with pytest.raises(ValueError, match="must be finite and >= 0"):
        peak_floors(months, current="2026-01", peak_so_far_kw=math.nan, minimum_kw=2.5)


def test_quarter_hour_peak_averages_five_minute_means() -> None:
    """10:00-10:15 averages 3, 6 and 9 kW to 6; 10:15-10:30 has 8.1 kW and an export (0) and a missing sample: 4.05;
    10:30-10:45 averages 7.5, 7.5 and 6 to 7: the peak is 7 kW."""
    base = datetime(2026, 1, 10, 10, tzinfo=UTC)
    starts = [base + timedelta(minutes=5 * i) for i in range(9)]
    means = [3.0, 6.0, 9.0, 8.1, -2.0, math.nan, 7.5, 7.5, 6.0]
    assert quarter_hour_peak(starts, means) == pytest.approx(7.0)
    assert quarter_hour_peak(starts[:3], means[:3]) == pytest.approx(6.0)
    assert quarter_hour_peak([], []) == 0.0


def test_the_shipped_examples_are_the_module3_table() -> None:
    """The docs' band YAML and the form's example (en, de) parse to the table above: the fees and the bands of a
    January and a May evening."""
    root = Path(__file__).resolve().parents[2]
    section = (root / "docs/user/tariffs.md").read_text(encoding="utf-8")
    texts = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
    for lang in ("en", "de"):
        strings = json.loads((root / "custom_components/agentic_hems/translations" / f"{lang}.json").read_text("utf-8"))
        texts += re.findall(r"```yaml\n(.*?)```", strings["options"]["step"]["tariff"]["data_description"]["tariff_bands"],
                            re.DOTALL)
    assert len(texts) == 3
    at = [datetime(2026, 1, 14, 18, tzinfo=BERLIN), datetime(2026, 5, 14, 18, tzinfo=BERLIN)]
    for text in texts:
        schedule = parse_schedule(yaml.safe_load(text))
        assert dict(schedule.fees) == MODULE3["bands"]
        assert band_fees(at, schedule, tz=BERLIN).tolist() == [0.1084, 0.0862]
