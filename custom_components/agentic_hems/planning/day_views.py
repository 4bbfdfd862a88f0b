"""Local-day views of curves and plans for entity attributes (JSON-safe: floats and None, NaN → None)."""

from __future__ import annotations

from datetime import date, tzinfo
import math

import numpy as np

from ..prices import SLOT, PriceCurve, local_day_bounds
from ..prices.curve import FloatArray
from ..scheduling import Plan


def _clean(values: FloatArray) -> list[float | None]:
    return [None if math.isnan(v) else round(float(v), 6) for v in values]


def day_prices(curve: PriceCurve, day: date, tz: tzinfo) -> list[dict[str, str | float | None]]:
    """``[{start, price}]`` for the local ``day`` (92, 96 or 100 items; price None where unknown)."""
    view = curve.local_day(day, tz)
    return [{"start": s.isoformat(), "price": p} for s, p in zip(view.slot_starts(), _clean(view.prices), strict=True)]


def day_plan(plan: Plan | None, day: date, tz: tzinfo) -> tuple[list[str], list[float]]:
    """Slot starts (ISO UTC) and planned kW per 15-minute slot of the local ``day``; 0.0 where nothing is planned."""
    start, end = local_day_bounds(day, tz)
    n = int((end - start) / SLOT)
    kw = plan.power_on(start, n) if plan is not None else np.zeros(n)
    return [(start + SLOT * i).isoformat() for i in range(n)], [round(float(v), 6) for v in kw]
