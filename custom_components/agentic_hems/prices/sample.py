"""Bundled sample prices: real ENTSO-E day-ahead documents re-dated to today and tomorrow.

The documents in ``data/`` are Belgian day-ahead prices (A44, EUR/MWh) from the ENTSO-E Transparency Platform; see
``data/NOTICE.md`` for their origin and licence. They let the integration run without an API key, and every curve
built from them says so (``sample=True``).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, tzinfo
from functools import cache
from pathlib import Path

import numpy as np

from .curve import SLOT, FloatArray, PriceCurve, local_day_bounds
from .entsoe import parse_day_ahead

_DATA = Path(__file__).parent / "data"
_DAY_SLOTS = 96
_HOUR_SLOTS = timedelta(hours=1) // SLOT
# (document, UTC start of the source day), for today and tomorrow: the hourly BE_60M day (2024-10-08 local) and
# the first 15-minute day of BE_60M_15M_mix (2024-10-06 local, with a negative price at midday). Both are complete.
_SOURCES: tuple[tuple[str, datetime], ...] = (
    ("BE_60M.xml", datetime(2024, 10, 7, 22, tzinfo=UTC)),
    ("BE_60M_15M_mix.xml", datetime(2024, 10, 5, 22, tzinfo=UTC)),
)


def sample_curve(today: date, tz: tzinfo) -> PriceCurve:
    """Sample prices in EUR/kWh for the local days ``today`` and tomorrow in ``tz`` (source "sample").

    Slot k of a source day becomes local midnight of its target day + k x 15 minutes, so a 23-hour day drops the
    source's last hour and a 25-hour day repeats it (92, 96 or 100 slots per day). The first call parses the bundled
    documents (blocking: run it in an executor); later calls only re-date them.
    """
    start, _ = local_day_bounds(today, tz)
    days = [
        _redate(_source_day(name, source_start), today + timedelta(days=offset), tz)
        for offset, (name, source_start) in enumerate(_SOURCES)
    ]
    return PriceCurve(
        start=start, resolution=SLOT, prices=np.concatenate(days), currency="EUR", source="sample", sample=True
    )


@cache
def _source_day(name: str, start: datetime) -> FloatArray:
    """Return the 96 quarter-hour prices (EUR/kWh, read-only) of the source day from ``start`` in document ``name``."""
    return parse_day_ahead((_DATA / name).read_bytes()).window(start, start + _DAY_SLOTS * SLOT).prices


def _redate(prices: FloatArray, day: date, tz: tzinfo) -> FloatArray:
    """``prices`` laid on the local ``day``: truncated to a short day, the last hour repeated on a long one."""
    start, end = local_day_bounds(day, tz)
    day_prices: FloatArray = np.concatenate([prices, prices[-_HOUR_SLOTS:]])[: (end - start) // SLOT]
    return day_prices
