"""Readers shared by the sensor and Nord Pool adapters: times and prices as Home Assistant hands them over."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
import math

from .errors import PriceSourceError


def moment(value: object) -> datetime:
    """Return an aware datetime from a datetime or an ISO 8601 string.

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


def utc_moment(value: object) -> datetime:
    """:func:`moment` converted to UTC (a local time in a repeated DST hour keeps the instant its ``fold`` names).

    Raises:
        PriceSourceError: as :func:`moment`.

    """
    return moment(value).astimezone(UTC)


def price(value: object) -> float:
    """Return a finite float from a number or a numeric string; None (the source gives no price) becomes NaN.

    Raises:
        PriceSourceError: anything else (a bool, a non-numeric string), or a non-finite number (INF, -INF, NaN).

    """
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise PriceSourceError(f"not a price: {value!r}")
    try:
        number = float(value)
    except ValueError as err:
        raise PriceSourceError(f"not a price: {value!r}") from err
    if not math.isfinite(number):
        raise PriceSourceError(f"not a finite price: {value!r}")
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
