"""Prices from the response of Home Assistant's core Nord Pool action ``nordpool.get_prices_for_date``.

Shape (homeassistant/components/nordpool/services.py, HA 2025.4): ``{"<AREA>": [{"start": iso, "end": iso,
"price": float}]}``, one list per requested area, prices per MWh in the currency the action was called with (the
response does not name it). The items are cut into delivery days (CET/CEST, :data:`~.days.MARKET_TZ`); each day
must be covered exactly once at 15, 30 or 60 minutes (see :func:`~.days.whole_day`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import date
from typing import Any

from ._items import item_list, utc_moment
from .curve import PriceCurve, local_day_bounds
from .days import MARKET_TZ, Day, Item, assemble, whole_day
from .errors import PricesNotPublished, PriceSourceError


def curve_from_nordpool(
    response: Mapping[str, Any], *, area: str, currency: str, day: date | None = None
) -> PriceCurve:
    """Return a 15-minute ``PriceCurve`` (source "nordpool") for ``area`` in ``currency`` per kWh.

    Args:
        response: the action's response data.
        area: Nord Pool delivery area such as "SE3" (case-insensitive; the action upper-cases areas).
        currency: ISO 4217 code the action was called with (EUR, SEK, NOK, DKK, ...).
        day: the delivery date the action was called for; when given, every item must lie in that day, or the day
            is refused (WRONG_DAY).

    Returns:
        One accepted or refused day per delivery date the items fall on; a day of zeros is doubtful.

    Raises:
        PricesNotPublished: the area's list is empty.
        PriceSourceError: the area is missing, the list is malformed, an item has no readable start or end, or no
            price at all.
        PricesRefused: (a PriceSourceError) every day was refused; its ``spans`` say why.

    """
    key = area.upper()
    if key not in response:
        raise PriceSourceError(f"no Nord Pool prices for area {key}")
    entries = item_list(response[key], key)
    if not entries:
        raise PricesNotPublished(f"Nord Pool returned no prices for area {key}")
    try:
        items: list[Item] = [(utc_moment(item["start"]), utc_moment(item["end"]), item["price"]) for item in entries]
    except KeyError as err:
        raise PriceSourceError(f"price item without {err}") from err
    by_day: defaultdict[date, list[Item]] = defaultdict(list)
    for item in items:
        by_day[day or item[0].astimezone(MARKET_TZ).date()].append(item)
    days: list[Day] = []
    for delivery, group in sorted(by_day.items()):
        start, end = local_day_bounds(delivery, MARKET_TZ)
        days.append(whole_day(f"{key} {delivery.isoformat()}", start, end, group, scale=0.001))  # per MWh
    return assemble(days, currency=currency.upper(), source="nordpool")
