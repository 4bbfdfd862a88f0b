"""Readers shared by the sensor and Nord Pool adapters: times and prices as Home Assistant hands them over."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
import math

import numpy as np

from .curve import PriceCurve, curve_from_intervals
from .errors import PriceSourceError

type Interval = tuple[datetime, datetime, float]


def moment(value: object) -> datetime:
    """An aware datetime from a datetime or an ISO 8601 string.

    Raises:
        PriceSourceError: anything else, or a naive time.
    """
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError as err:
            raise PriceSourceError(f"not an ISO 8601 time: {value!r}") from err
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise PriceSourceError(f"not an aware time: {value!r}")
    return value


def price(value: object) -> float:
    """A float from a number or a numeric string; None (unknown) becomes NaN.

    Raises:
        PriceSourceError: anything else, or an infinite number.
    """
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise PriceSourceError(f"not a price: {value!r}")
    try:
        number = float(value)
    except ValueError as err:
        raise PriceSourceError(f"not a price: {value!r}") from err
    if math.isinf(number):
        raise PriceSourceError(f"not a price: {value!r}")
    return number


def item_list(value: object, name: str) -> list[Mapping[str, object]]:
    """``value`` as a list of mappings (None counts as empty).

    Raises:
        PriceSourceError: not a list of mappings.
    """
    if value is None:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(item, Mapping) for item in value):
        raise PriceSourceError(f"{name} is not a list of mappings")
    return list(value)


def timed_intervals(
    items: Iterable[Mapping[str, object]], *, start_key: str, end_key: str, value_key: str, scale: float
) -> list[Interval]:
    """``(start, end, value x scale)`` for items that carry their own start and end.

    Raises:
        PriceSourceError: a missing key or an unreadable time or price.
    """
    try:
        return [(moment(item[start_key]), moment(item[end_key]), price(item[value_key]) * scale) for item in items]
    except KeyError as err:
        raise PriceSourceError(f"price item without {err}") from err


def build_curve(intervals: list[Interval], *, currency: str, source: str) -> PriceCurve:
    """``curve_from_intervals`` for untrusted input.

    Raises:
        PriceSourceError: no interval, no known price, or intervals off the 15-minute grid.
    """
    try:
        curve = curve_from_intervals(intervals, currency=currency, source=source)
    except ValueError as err:
        raise PriceSourceError(str(err)) from err
    if np.isnan(curve.prices).all():
        raise PriceSourceError("no known price")
    return curve
