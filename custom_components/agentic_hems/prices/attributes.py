"""Prices from another Home Assistant price sensor's state attributes.

Three attribute shapes are read, the first one present with items wins:

1. ``raw_today`` / ``raw_tomorrow``: ``[{"start", "end", "value"}]`` (HACS Nord Pool, custom-components/nordpool);
2. ``prices_today`` / ``prices_tomorrow``, else ``prices``: ``[{"time", "price"}]`` (HACS ENTSO-e,
   JaccoR/hass-entso-e);
3. ``today`` / ``tomorrow``: plain price lists for the local day of ``day_start`` and the day after (HACS Nord Pool
   without its raw attributes; when ``raw_*`` are present they carry the same prices with their times, and win).

Prices are converted once, here, to major currency units per kWh ("c/kWh" 12.3 -> 0.123 EUR/kWh).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from functools import reduce
from itertools import pairwise
import math
import re
from typing import Any, Final

from ._items import Interval, build_curve, item_list, moment, price, timed_intervals
from .curve import SLOT, PriceCurve, local_day_bounds
from .errors import PriceSourceError

# Energy part of a unit -> factor from "per that energy" to "per kWh".
_PER_KWH: Final = {"wh": 1000.0, "kwh": 1.0, "mwh": 0.001}
# Money parts that are not an ISO 4217 code -> (currency assumed when the sensor names none, major units per unit).
_MONEY: Final[dict[str, tuple[str | None, float]]] = {
    "€": ("EUR", 1.0),
    "£": ("GBP", 1.0),
    "kr": (None, 1.0),  # SEK, NOK or DKK
    "c": ("EUR", 0.01),
    "ct": ("EUR", 0.01),
    "cent": ("EUR", 0.01),
    "cents": ("EUR", 0.01),
    "snt": ("EUR", 0.01),
    "öre": ("SEK", 0.01),
    "øre": (None, 0.01),  # NOK or DKK
    "p": ("GBP", 0.01),
}
_ISO_4217 = re.compile(r"[A-Z]{3}")


def curve_from_attributes(
    attributes: Mapping[str, Any],
    *,
    unit: str | None,
    currency: str | None = None,
    day_start: datetime | None = None,
) -> PriceCurve:
    """A 15-minute ``PriceCurve`` (source "sensor") from a price sensor's attributes.

    Args:
        attributes: the sensor's state attributes; times may be datetimes or ISO 8601 strings.
        unit: the sensor's unit of measurement, such as "EUR/kWh", "SEK/kWh", "c/kWh", "ct/kWh", "öre/kWh",
            "€/kWh" or "EUR/MWh"; None falls back to ``attributes["unit_of_measurement"]``.
        currency: ISO 4217 code overriding the ``currency`` attribute; needed when the unit names none ("øre/kWh").
        day_start: for plain ``today`` / ``tomorrow`` lists only: an aware datetime in the sensor's time zone (a
            ZoneInfo, such as HA's start of the local day) whose date is the day ``today`` covers.

    A price holds from its item's start to its end. Items with a time only hold for the list's resolution: the
    greatest common divisor of the spacing of all its items, which must also be the most common spacing. Plain lists
    divide their local day (92 to 100 slots, or 23 to 25 hours) evenly. Coarser prices are spread over 15-minute
    slots; unknown prices are NaN.

    Raises:
        PriceSourceError: unknown or ambiguous unit or currency, no price items, unreadable items, a resolution
            that cannot be derived or is not a multiple of 15 minutes, or plain lists without ``day_start``.
    """
    if unit is None:
        unit = attributes.get("unit_of_measurement")
    stated = currency if currency is not None else attributes.get("currency")
    code, scale = _currency_and_scale(unit, stated)
    return build_curve(_intervals(attributes, day_start, scale), currency=code, source="sensor")


def _intervals(attributes: Mapping[str, Any], day_start: datetime | None, scale: float) -> list[Interval]:
    """The price intervals of the first attribute shape present with items."""
    raw = [item for key in ("raw_today", "raw_tomorrow") for item in item_list(attributes.get(key), key)]
    if raw:
        return timed_intervals(raw, start_key="start", end_key="end", value_key="value", scale=scale)
    timed = [items for key in ("prices_today", "prices_tomorrow") if (items := item_list(attributes.get(key), key))]
    if not timed and (items := item_list(attributes.get("prices"), "prices")):
        timed = [items]
    if timed:
        return [interval for items in timed for interval in _spaced_intervals(items, scale)]
    if attributes.get("today") or attributes.get("tomorrow"):
        return _day_list_intervals(attributes, day_start, scale)
    raise PriceSourceError("no price attributes (raw_today, prices_today, prices or today)")


def _currency_and_scale(unit: object, stated: object) -> tuple[str, float]:
    """ISO 4217 currency and the factor to its major units per kWh, from a price unit and a stated currency."""
    if not isinstance(unit, str) or unit.count("/") != 1:
        raise PriceSourceError(f"unknown price unit {unit!r}")
    money, energy = (part.strip() for part in unit.split("/"))
    if energy.lower() not in _PER_KWH:
        raise PriceSourceError(f"unknown price unit {unit!r}")
    if stated is not None and (not isinstance(stated, str) or not _ISO_4217.fullmatch(stated.strip().upper())):
        raise PriceSourceError(f"unknown currency {stated!r}")
    stated_code = stated.strip().upper() if isinstance(stated, str) else None
    if _ISO_4217.fullmatch(money.upper()):
        if stated_code not in (None, money.upper()):
            raise PriceSourceError(f"unit {unit!r} contradicts currency {stated_code}")
        return money.upper(), _PER_KWH[energy.lower()]
    if money.lower() not in _MONEY:
        raise PriceSourceError(f"unknown price unit {unit!r}")
    assumed, major = _MONEY[money.lower()]
    code = stated_code or assumed
    if code is None:
        raise PriceSourceError(f"unit {unit!r} needs a currency")
    return code, major * _PER_KWH[energy.lower()]


def _spaced_intervals(items: Sequence[Mapping[str, object]], scale: float) -> list[Interval]:
    """Intervals of ``{"time", "price"}`` items, each lasting the resolution derived from all their times."""
    try:
        points = sorted((moment(item["time"]), price(item["price"]) * scale) for item in items)
    except KeyError as err:
        raise PriceSourceError(f"price item without {err}") from err
    resolution = derive_resolution([time for time, _ in points])
    return [(time, time + resolution, value) for time, value in points]


def derive_resolution(times: Sequence[datetime]) -> timedelta:
    """The resolution of sorted, aware item times: the gcd of all spacings, which must be the most common too.

    A gap (a missing item) is a multiple of the resolution and does not change it; the first two items alone
    decide nothing.

    Raises:
        PriceSourceError: fewer than two times, repeated times, inconsistent spacing, or a resolution that is not a
            positive multiple of 15 minutes.
    """
    seconds = [int((later - earlier).total_seconds()) for earlier, later in pairwise(times)]
    if not seconds:
        raise PriceSourceError("cannot derive a resolution from fewer than two items")
    if min(seconds) <= 0:
        raise PriceSourceError("repeated or unsorted item times")
    step = reduce(math.gcd, seconds)
    if Counter(seconds).most_common(1)[0][0] != step:
        raise PriceSourceError(f"inconsistent item spacing (gcd {step} s is not the most common spacing)")
    resolution = timedelta(seconds=step)
    if resolution % SLOT:
        raise PriceSourceError(f"resolution {resolution} is not a multiple of {SLOT}")
    return resolution


def _day_list_intervals(attributes: Mapping[str, Any], day_start: datetime | None, scale: float) -> list[Interval]:
    """Intervals of the plain ``today`` and ``tomorrow`` lists, which split their local day evenly."""
    if day_start is None or (tz := day_start.tzinfo) is None:
        raise PriceSourceError("plain today/tomorrow lists need an aware day_start")
    intervals: list[Interval] = []
    for offset, key in enumerate(("today", "tomorrow")):
        values = attributes.get(key) or []
        if not isinstance(values, list | tuple):
            raise PriceSourceError(f"{key} is not a list")
        if not values:
            continue
        start, end = local_day_bounds(day_start.date() + timedelta(days=offset), tz)
        seconds, rest = divmod(int((end - start).total_seconds()), len(values))
        resolution = timedelta(seconds=seconds)
        if rest or resolution % SLOT:
            raise PriceSourceError(f"{len(values)} {key} prices do not split the local day into 15-minute multiples")
        intervals += [
            (start + i * resolution, start + (i + 1) * resolution, price(value) * scale)
            for i, value in enumerate(values)
        ]
    return intervals
