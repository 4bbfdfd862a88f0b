"""Local-day views of price curves for entity attributes (JSON-safe: floats and None, NaN → None)."""

from __future__ import annotations

from datetime import date, tzinfo
import math

from ..prices import PriceCurve
from ..prices.curve import FloatArray


def _clean(values: FloatArray) -> list[float | None]:
    return [None if math.isnan(v) else round(float(v), 6) for v in values]


def day_prices(curve: PriceCurve, day: date, tz: tzinfo) -> list[dict[str, str | float | None]]:
    """``[{start, price}]`` for the local ``day`` (92, 96 or 100 items; price None where unknown)."""
    view = curve.local_day(day, tz)
    return [{"start": s.isoformat(), "price": p} for s, p in zip(view.slot_starts(), _clean(view.prices), strict=True)]
