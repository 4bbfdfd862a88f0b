"""Grid tariffs: a weekly schedule of network fee bands, the billing months of a capacity tariff, the month's peak.

A :class:`BandSchedule` names bands with a fee per kWh and time windows on weekdays (``"mon-fri"``, ``"sat,sun"``),
each window optionally valid only in some months or quarters; a slot outside every window gets the default band.
The slot's local start decides its band (so DST days work), and a public holiday counts as a Sunday where the
schedule says so. :func:`parse_schedule` reads the schedule from the mapping a user writes (YAML), for example::

    bands: {low: 0.0345, standard: 0.0862, high: 0.1084}
    default: standard
    holidays_as_sunday: true
    windows:
      - {band: low, days: mon-sun, from: "01:00", to: "04:00", quarters: [1, 4]}
      - {band: high, days: mon-sun, from: "17:00", to: "19:00", quarters: [1, 4]}

A capacity tariff charges each billing month's highest 15-minute average import (kW) at a price per kW and month,
with a minimum billed peak: :func:`billing_months` maps slots to local calendar months and :func:`peak_floors` gives
the peak each month already costs. Nothing here imports Home Assistant; every error is a ValueError in English.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..bounds import MAX_DEPTH, MAX_ITEMS, MAX_TOTAL_CHARS, TooLarge, check_size
from .curve import FloatArray, floor_slot

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
SUNDAY = 6
MINUTES_PER_DAY = 24 * 60
QUARTER = timedelta(minutes=15)
_QUARTER_MONTHS = {1: (1, 2, 3), 2: (4, 5, 6), 3: (7, 8, 9), 4: (10, 11, 12)}
_KEYS = {"band", "days", "from", "to", "months", "quarters"}
# Caps on a schedule's size: real tariffs have two to five bands and a dozen windows (the §14a Module 3 table: three
# bands, two windows). The caps keep the band table's int16 index far from overflowing and bound the table's build
# (one numpy assignment per window) to a few milliseconds, so the options form can check a schedule on the event loop.
MAX_BANDS = 32
MAX_WINDOWS = 200
_LIMITS = {
    "chars": "characters in one text",
    "total_chars": "characters in all",
    "items": "entries in all",
    "depth": "nesting levels",
}


@dataclass(frozen=True, kw_only=True)
class Window:
    """A time of day on some weekdays and months when a band applies.

    Attributes:
        band: the band's name.
        days: weekdays, 0 = Monday ... 6 = Sunday.
        start_min, end_min: minutes after local midnight, 0 <= start_min < end_min <= 1440 (end excluded).
        months: calendar months 1-12 the window is valid in.

    """

    band: str
    days: frozenset[int]
    start_min: int
    end_min: int
    months: frozenset[int]


@dataclass(frozen=True, kw_only=True)
class BandSchedule:
    """A weekly schedule of network fee bands; build it with :func:`parse_schedule` (which validates it).

    Attributes:
        fees: band name -> fee in currency per kWh, finite.
        windows: when each band applies; no two overlap.
        default: the band of every time no window covers, or None when the windows cover the whole year.
        holidays_as_sunday: a public holiday takes Sunday's windows.
        table: (12, 7, 1440) index into ``names`` per month, weekday and minute of the day.
        names: the band names in table order.

    """

    fees: Mapping[str, float]
    windows: tuple[Window, ...]
    default: str | None
    holidays_as_sunday: bool
    table: npt.NDArray[np.int16]
    names: tuple[str, ...]


def _minutes(value: Any, what: str) -> int:
    """Minutes after midnight of ``"HH:MM"`` (``"24:00"`` is the day's end); raises ValueError naming ``what``."""
    text = str(value).strip()
    hours, sep, minutes = text.partition(":")
    if not (sep and hours.isdigit() and minutes.isdigit() and len(minutes) == 2):
        raise ValueError(f"{what} {text!r} is not a time of day (HH:MM)")
    total = int(hours) * 60 + int(minutes)
    if int(minutes) > 59 or total > MINUTES_PER_DAY:
        raise ValueError(f"{what} {text!r} is not a time of day between 00:00 and 24:00")
    return total


def _day(name: str, what: str) -> int:
    """Weekday number of a three-letter day name; raises ValueError naming ``what``."""
    key = name.strip().lower()[:3]
    if key not in DAYS or len(name.strip()) < 3:
        raise ValueError(f"{what}: {name.strip()!r} is not a weekday (mon, tue, wed, thu, fri, sat, sun)")
    return DAYS.index(key)


def parse_days(text: Any, what: str = "days") -> frozenset[int]:
    """Weekdays of ``"mon-fri"``, ``"sat,sun"`` or ``"mon-sun"`` (comma-separated days and ranges).

    Raises:
        ValueError: an unknown day name, a range running backwards or no day at all.

    """
    days: set[int] = set()
    items = text if isinstance(text, list) else str(text).split(",")
    for item in (str(i) for i in items):
        first, sep, last = item.partition("-")
        start = _day(first, what)
        end = _day(last, what) if sep else start
        if end < start:
            raise ValueError(f"{what}: {item.strip()!r} runs backwards (write the days from Monday on)")
        days.update(range(start, end + 1))
    if not days:
        raise ValueError(f"{what}: no weekday given")
    return frozenset(days)


def _months(raw: Mapping[str, Any], what: str) -> frozenset[int]:
    """Months of a window's ``months`` or ``quarters`` list (all twelve when neither is given)."""
    if "months" in raw and "quarters" in raw:
        raise ValueError(f"{what}: give months or quarters, not both")
    if "quarters" in raw:
        quarters = _int_list(raw["quarters"], f"{what} quarters", 1, 4)
        return frozenset(m for q in quarters for m in _QUARTER_MONTHS[q])
    if "months" in raw:
        return frozenset(_int_list(raw["months"], f"{what} months", 1, 12))
    return frozenset(range(1, 13))


def _int_list(value: Any, what: str, low: int, high: int) -> list[int]:
    """Return a non-empty list of whole numbers from ``low`` to ``high``; raises ValueError naming ``what``."""
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(i, int) and not isinstance(i, bool) and low <= i <= high for i in items):
        raise ValueError(f"{what} must be a list of whole numbers from {low} to {high}, got {value!r}")
    return list(items)


def _fees(raw: Any) -> dict[str, float]:
    """Band name -> fee of the ``bands`` mapping; raises ValueError for a missing or non-numeric fee."""
    if not isinstance(raw, Mapping) or not raw:
        raise ValueError(  # noqa: TRY004 - the documented error of a bad schedule
            "bands must map each band name to its fee per kWh, e.g. {low: 0.03, high: 0.11}"
        )
    fees = {}
    for name, fee in raw.items():
        if isinstance(fee, bool) or not isinstance(fee, int | float) or not math.isfinite(fee):
            raise ValueError(f"band {name!r}: the fee must be a number (currency per kWh), got {fee!r}")
        fees[str(name)] = float(fee)
    return fees


def _window(raw: Any, index: int, fees: Mapping[str, float]) -> Window:
    """One window of the ``windows`` list (``index`` counts from 1 in messages)."""
    what = f"window {index}"
    if not isinstance(raw, Mapping):
        raise ValueError(f"{what} must be a mapping with band, days, from and to")  # noqa: TRY004 - as above
    if unknown := set(raw) - _KEYS:
        raise ValueError(f"{what}: unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    if str(raw.get("band")) not in fees:
        raise ValueError(f"{what}: band {raw.get('band')!r} is not one of the bands ({', '.join(fees)})")
    start = _minutes(raw.get("from"), f"{what} from")
    end = _minutes(raw.get("to"), f"{what} to")
    if end <= start:
        raise ValueError(
            f"{what}: from {raw.get('from')} must be before to {raw.get('to')} "
            "(split a window over midnight in two, e.g. 22:00-24:00 and 00:00-06:00)"
        )
    days = parse_days(raw.get("days", "mon-sun"), f"{what} days")
    return Window(band=str(raw["band"]), days=days, start_min=start, end_min=end, months=_months(raw, what))


def parse_schedule(raw: Any) -> BandSchedule:
    """Read and validate a band schedule from its mapping (see the module docstring for the format).

    Keys: ``bands`` (name -> fee per kWh, required), ``windows`` (list of ``band``, ``days`` (default every day),
    ``from``, ``to`` (``HH:MM``, ``24:00`` allowed as the end), optional ``months`` or ``quarters``), ``default``
    (the band outside all windows) and ``holidays_as_sunday`` (default false).

    Raises:
        ValueError: a schedule beyond the input bounds (:mod:`..bounds`: nesting, entries, characters), more than
            :data:`MAX_BANDS` bands or :data:`MAX_WINDOWS` windows, an unknown key or band, a bad time, day, month or
            fee, a ``holidays_as_sunday`` that is not a boolean, two windows that overlap, or a time no window
            covers while there is no default band.

    """
    _check_size(raw)
    if not isinstance(raw, Mapping):
        raise ValueError("the band schedule must be a mapping with bands, windows and default")  # noqa: TRY004
    if unknown := set(raw) - {"bands", "windows", "default", "holidays_as_sunday"}:
        raise ValueError(f"unknown key(s) {', '.join(sorted(map(str, unknown)))}")
    fees = _fees(raw.get("bands"))
    if len(fees) > MAX_BANDS:
        raise ValueError(f"at most {MAX_BANDS} bands, got {len(fees)}")
    default = raw.get("default")
    if default is not None and str(default) not in fees:
        raise ValueError(f"default band {default!r} is not one of the bands ({', '.join(fees)})")
    items = raw.get("windows") or []
    if not isinstance(items, list):
        raise ValueError("windows must be a list")  # noqa: TRY004 - the documented error
    if len(items) > MAX_WINDOWS:
        raise ValueError(f"at most {MAX_WINDOWS} windows, got {len(items)}")
    windows = tuple(_window(item, i, fees) for i, item in enumerate(items, start=1))
    names = tuple(fees)
    table = _table(windows, names, None if default is None else names.index(str(default)))
    return BandSchedule(
        fees=fees,
        windows=windows,
        default=None if default is None else str(default),
        holidays_as_sunday=_flag(raw.get("holidays_as_sunday", False), "holidays_as_sunday"),
        table=table,
        names=names,
    )


def _check_size(raw: Any) -> None:
    """Refuse a schedule beyond the input bounds (:func:`..bounds.check_size`) before reading any of it.

    Raises:
        ValueError: more than the bounds' characters, entries or nesting levels.

    """
    try:
        check_size(raw, max_depth=MAX_DEPTH, max_items=MAX_ITEMS, max_total_chars=MAX_TOTAL_CHARS)
    except TooLarge as err:
        raise ValueError(
            f"the band schedule is too large: more than {err.maximum} {_LIMITS.get(err.limit, err.limit)}"
        ) from None


def _flag(value: Any, what: str) -> bool:
    """Return ``value`` if it is a boolean; raises ValueError naming ``what`` otherwise (``"false"`` is text)."""
    if not isinstance(value, bool):
        raise ValueError(f"{what} must be true or false (without quotes), got {value!r}")  # noqa: TRY004 - as above
    return value


def _table(windows: Sequence[Window], names: Sequence[str], default: int | None) -> npt.NDArray[np.int16]:
    """Return the (12, 7, 1440) band index per month, weekday and minute; raises ValueError on overlap or gap."""
    table = np.full((12, 7, MINUTES_PER_DAY), -1, dtype=np.int16)
    for index, window in enumerate(windows, start=1):
        months = sorted(m - 1 for m in window.months)
        days = sorted(window.days)
        part = table[np.ix_(months, days, range(window.start_min, window.end_min))]
        if np.any(part >= 0):
            month, day, minute = (int(v[0]) for v in np.nonzero(part >= 0))
            other = names[int(part[month, day, minute])]
            raise ValueError(
                f"window {index} ({window.band}) overlaps a window of band {other!r} on "
                f"{DAYS[days[day]]} at {_clock(window.start_min + minute)} in month {months[month] + 1}"
            )
        table[np.ix_(months, days, range(window.start_min, window.end_min))] = names.index(window.band)
    gaps = table < 0
    if default is not None:
        table[gaps] = default
    elif np.any(gaps):
        month, day, minute = (int(v[0]) for v in np.nonzero(gaps))
        raise ValueError(
            f"no window covers {DAYS[day]} {_clock(minute)} in month {month + 1}: add a window or a default band"
        )
    return table


def _clock(minute: int) -> str:
    """``HH:MM`` of a minute of the day."""
    return f"{minute // 60:02d}:{minute % 60:02d}"


def band_fees(
    starts_utc: Sequence[datetime], schedule: BandSchedule, *, tz: tzinfo, holidays: Collection[date] = ()
) -> FloatArray:
    """Fee per kWh of each slot: the band of its local start in ``tz`` (a holiday as a Sunday if the schedule says so).

    Args:
        starts_utc: aware slot starts.
        schedule: the band schedule (:func:`parse_schedule`).
        tz: the local time zone the schedule's times are in.
        holidays: local dates of public holidays.

    Returns:
        (len(starts_utc),) currency per kWh.

    """
    fees = np.array([schedule.fees[name] for name in schedule.names])
    out = np.empty(len(starts_utc))
    for i, start in enumerate(starts_utc):
        local = start.astimezone(tz)
        day = SUNDAY if schedule.holidays_as_sunday and local.date() in holidays else local.weekday()
        out[i] = fees[schedule.table[local.month - 1, day, local.hour * 60 + local.minute]]
    return out


def billing_months(starts_utc: Sequence[datetime], tz: tzinfo) -> tuple[npt.NDArray[np.intp], tuple[str, ...]]:
    """Return the local calendar month of each slot's start.

    Returns:
        (index per slot into the keys, the months in order as ``"YYYY-MM"``).

    """
    keys: dict[str, int] = {}
    index = np.empty(len(starts_utc), dtype=np.intp)
    for i, start in enumerate(starts_utc):
        local = start.astimezone(tz)
        index[i] = keys.setdefault(f"{local.year:04d}-{local.month:02d}", len(keys))
    return index, tuple(keys)


def peak_floors(months: Sequence[str], *, current: str, peak_so_far_kw: float, minimum_kw: float) -> tuple[float, ...]:
    """Return the peak each billing month already costs.

    The current month costs its peak so far or the minimum billed peak, whichever is higher; later months start at
    the minimum.

    Raises:
        ValueError: a negative or non-finite peak or minimum.

    """
    if not (math.isfinite(peak_so_far_kw) and math.isfinite(minimum_kw)) or min(peak_so_far_kw, minimum_kw) < 0:
        raise ValueError(f"peak so far {peak_so_far_kw} kW and minimum {minimum_kw} kW must be finite and >= 0")
    return tuple(max(peak_so_far_kw, minimum_kw) if key == current else minimum_kw for key in months)


def quarter_hour_peak(starts_utc: Iterable[datetime], mean_kw: Iterable[float]) -> float:
    """Highest 15-minute average import of 5-minute mean powers (export, negative, counts as 0 kW).

    Each 5-minute mean falls in the quarter hour of its start (aligned to :, :15, :30, :45); a quarter's average is
    the mean of its samples (a quarter with missing samples averages the ones it has). Non-finite means are skipped.

    Returns:
        kW; 0.0 without any sample.

    """
    quarters: dict[datetime, list[float]] = {}
    for start, value in zip(starts_utc, mean_kw, strict=True):
        if math.isfinite(value):
            quarters.setdefault(floor_slot(start, QUARTER), []).append(max(value, 0.0))
    return max((sum(v) / len(v) for v in quarters.values()), default=0.0)
