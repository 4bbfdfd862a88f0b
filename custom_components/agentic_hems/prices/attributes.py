"""Prices from another Home Assistant price sensor's state attributes.

Three attribute shapes are read, the first one present with items wins:

1. ``raw_today`` / ``raw_tomorrow``: ``[{"start", "end", "value"}]`` (HACS Nord Pool, custom-components/nordpool);
2. ``prices_today`` / ``prices_tomorrow``, else ``prices``: ``[{"time", "price"}]`` (HACS ENTSO-e,
   JaccoR/hass-entso-e; ``prices`` may span several days);
3. ``today`` / ``tomorrow``: plain price lists for the local today and tomorrow (HACS Nord Pool without its raw
   attributes; when ``raw_*`` are present they carry the same prices with their times, and win).

Each list is one local day of the home (``day_start``'s time zone; ``prices`` is cut into local days) and must cover
it exactly once at 15, 30 or 60 minutes; a day that does not, or that holds an unreadable or non-finite price, is
refused as a whole while the other day stays (see :func:`~.days.whole_day`). A ``tomorrow_valid`` or
``tomorrow_available`` attribute that is present and not true refuses the local tomorrow in every shape.

Prices are converted once, here, to major currency units per kWh ("c/kWh" 12.3 -> 0.123 EUR/kWh).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
import re
from typing import Any, Final

from ._items import item_list, utc_moment
from .curve import PriceCurve, local_day_bounds
from .days import Day, Item, assemble, refused_day, whole_day
from .errors import PriceSourceError
from .trust import PriceIssue

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
# The sources' own word on tomorrow (HACS Nord Pool and Energi Data Service: tomorrow_valid).
TOMORROW_FLAGS: Final = ("tomorrow_valid", "tomorrow_available")

type _Parse = Callable[[object, datetime, datetime], list[Item]]


def curve_from_attributes(
    attributes: Mapping[str, Any],
    *,
    unit: str | None,
    day_start: datetime,
    currency: str | None = None,
) -> PriceCurve:
    """Return a 15-minute ``PriceCurve`` (source "sensor") from a price sensor's attributes, refusals and doubts.

    Args:
        attributes: the sensor's state attributes; times may be datetimes or ISO 8601 strings.
        unit: the sensor's unit of measurement, such as "EUR/kWh", "SEK/kWh", "c/kWh", "ct/kWh", "öre/kWh",
            "€/kWh" or "EUR/MWh"; None falls back to ``attributes["unit_of_measurement"]``.
        day_start: an aware datetime in the home's time zone (a ZoneInfo, such as HA's start of the local day):
            its date is the local today, its zone cuts days.
        currency: ISO 4217 code overriding the ``currency`` attribute; needed when the unit names none ("øre/kWh").

    Returns:
        Prices per kWh in the currency, NaN where unknown: a day missing, refused (see the module docstring) or an
        item whose value is None. Refused days carry their note (:meth:`PriceCurve.issues`); a day of zeros is
        doubtful.

    Raises:
        PriceSourceError: unknown or ambiguous unit or currency, a naive ``day_start``, no price attributes, a
            ``prices`` item without a readable time, or no price at all.
        PricesRefused: (a PriceSourceError) every day present was refused; its ``spans`` say why.

    """
    if unit is None:
        unit = attributes.get("unit_of_measurement")
    stated = currency if currency is not None else attributes.get("currency")
    code, scale = _currency_and_scale(unit, stated)
    if (tz := day_start.tzinfo) is None or day_start.utcoffset() is None:
        raise PriceSourceError("day_start must be an aware datetime")
    return assemble(_days(attributes, day_start.date(), tz, scale), currency=code, source="sensor")


def _days(attributes: Mapping[str, Any], today: date, tz: tzinfo, scale: float) -> list[Day]:
    """Return the days of the first attribute shape present with items."""
    reader = _Reader(attributes, today, tz, scale)
    if _present(attributes, "raw_today", "raw_tomorrow"):
        return reader.named("raw_today", "raw_tomorrow", parse=lambda value, _start, _end: _raw_items(value))
    if _present(attributes, "prices_today", "prices_tomorrow"):
        return reader.named("prices_today", "prices_tomorrow", parse=lambda value, _start, _end: _timed_items(value))
    if _present(attributes, "prices"):
        return reader.grouped(_timed_items(attributes["prices"]), "prices")
    if _present(attributes, "today", "tomorrow"):
        return reader.named("today", "tomorrow", parse=_plain_items)
    raise PriceSourceError("no price attributes (raw_today, prices_today, prices or today)")


def _present(attributes: Mapping[str, Any], *keys: str) -> bool:
    """Return True when one of ``keys`` holds something other than None or an empty list."""
    return any(attributes.get(key) not in (None, [], ()) for key in keys)


@dataclass(frozen=True)
class _Reader:
    """Cuts one attribute shape into local days of ``tz`` (today is ``today``) and checks each."""

    attributes: Mapping[str, Any]
    today: date
    tz: tzinfo
    scale: float

    def named(self, *keys: str, parse: _Parse) -> list[Day]:
        """One day per list: ``keys[0]`` holds today, ``keys[1]`` tomorrow; an absent or empty list is skipped."""
        days: list[Day] = []
        for offset, key in enumerate(keys):
            if (value := self.attributes.get(key)) in (None, [], ()):
                continue
            day = self.today + timedelta(days=offset)
            start, end = local_day_bounds(day, self.tz)
            label = f"{key} ({day.isoformat()})"
            if (refusal := self._flagged(label, day, start, end)) is not None:
                days.append(refusal)
                continue
            try:
                items = parse(value, start, end)
            except PriceSourceError as err:
                days.append(refused_day(label, start, end, PriceIssue.BAD_VALUE, str(err)))
                continue
            days.append(whole_day(label, start, end, items, scale=self.scale))
        return days

    def grouped(self, items: list[Item], key: str) -> list[Day]:
        """One day per local date the items' starts fall on."""
        by_day: defaultdict[date, list[Item]] = defaultdict(list)
        for item in items:
            by_day[item[0].astimezone(self.tz).date()].append(item)
        days: list[Day] = []
        for day, group in sorted(by_day.items()):
            start, end = local_day_bounds(day, self.tz)
            label = f"{key} ({day.isoformat()})"
            refusal = self._flagged(label, day, start, end)
            days.append(refusal if refusal is not None else whole_day(label, start, end, group, scale=self.scale))
        return days

    def _flagged(self, label: str, day: date, start: datetime, end: datetime) -> Day | None:
        """Return the refusal of the local tomorrow when a validity flag is present and not true."""
        if day != self.today + timedelta(days=1):
            return None
        for flag in TOMORROW_FLAGS:
            if (value := self.attributes.get(flag)) is not None and value is not True:
                reason = f"the source marks tomorrow invalid ({flag}: {value!r})"
                return refused_day(label, start, end, PriceIssue.SOURCE_INVALID, reason)
        return None


def _raw_items(value: object) -> list[Item]:
    """``{"start", "end", "value"}`` items with their own start and end."""
    try:
        items = item_list(value, "raw list")
        return [(utc_moment(item["start"]), utc_moment(item["end"]), item["value"]) for item in items]
    except KeyError as err:
        raise PriceSourceError(f"price item without {err}") from err


def _timed_items(value: object) -> list[Item]:
    """``{"time", "price"}`` items; each lasts the resolution of its day."""
    try:
        return [(utc_moment(item["time"]), None, item["price"]) for item in item_list(value, "price list")]
    except KeyError as err:
        raise PriceSourceError(f"price item without {err}") from err


def _plain_items(value: object, start: datetime, end: datetime) -> list[Item]:
    """Return a plain list of prices that split the day ``[start, end)`` evenly, in order."""
    if not isinstance(value, list | tuple):
        raise PriceSourceError("not a list of prices")
    step = (end - start) / len(value)
    return [(start + i * step, None, raw) for i, raw in enumerate(value)]


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
