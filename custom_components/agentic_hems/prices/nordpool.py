"""Prices from the response of Home Assistant's core Nord Pool action ``nordpool.get_prices_for_date``.

Shape (homeassistant/components/nordpool/services.py, HA 2025.4): ``{"<AREA>": [{"start": iso, "end": iso,
"price": float}]}``, one list per requested area, prices per MWh in the currency the action was called with (the
response does not name it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._items import build_curve, item_list, timed_intervals
from .curve import PriceCurve
from .errors import PricesNotPublished, PriceSourceError


def curve_from_nordpool(response: Mapping[str, Any], *, area: str, currency: str) -> PriceCurve:
    """A 15-minute ``PriceCurve`` (source "nordpool") for ``area`` in ``currency`` per kWh.

    Args:
        response: the action's response data.
        area: Nord Pool delivery area such as "SE3" (case-insensitive; the action upper-cases areas).
        currency: ISO 4217 code the action was called with (EUR, SEK, NOK, DKK, ...).

    Raises:
        PricesNotPublished: the area's list is empty.
        PriceSourceError: the area is missing, or an item is malformed or off the 15-minute grid.
    """
    key = area.upper()
    if key not in response:
        raise PriceSourceError(f"no Nord Pool prices for area {key}")
    items = item_list(response[key], key)
    if not items:
        raise PricesNotPublished(f"Nord Pool returned no prices for area {key}")
    intervals = timed_intervals(items, start_key="start", end_key="end", value_key="price", scale=0.001)  # per MWh
    return build_curve(intervals, currency=currency.upper(), source="nordpool")
