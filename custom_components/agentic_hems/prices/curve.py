"""The price curve every other module plans on.

Conventions (../shared/DESIGN.md, "Core types" and "Conventions"): slot starts are aware UTC datetimes on a
slot boundary, a slot is ``[start, start + resolution)``, prices are per kWh in ``currency`` and NaN marks an
unknown price. Nothing here imports Home Assistant.
"""

from __future__ import annotations

from collections.abc import Iterable
import dataclasses
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
import math
from typing import Any

import numpy as np
import numpy.typing as npt

SLOT = timedelta(minutes=15)

type FloatArray = npt.NDArray[np.float64]
# Longest curve ``curve_from_intervals`` builds (a leap year of 15-minute slots): a bound on malformed input.
MAX_SLOTS = 366 * 96
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def ensure_utc(moment: datetime) -> datetime:
    """Return ``moment`` in UTC.

    Raises:
        ValueError: ``moment`` is naive.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment.isoformat()} (expected an aware datetime)")
    return moment.astimezone(UTC)


def floor_slot(moment: datetime, resolution: timedelta = SLOT) -> datetime:
    """Round an aware datetime down to a slot boundary (UTC epoch aligned)."""
    moment = ensure_utc(moment)
    step = int(resolution.total_seconds())
    seconds = int(moment.timestamp())
    return datetime.fromtimestamp(seconds - seconds % step, UTC)


def ceil_slot(moment: datetime, resolution: timedelta = SLOT) -> datetime:
    """Round an aware datetime up to a slot boundary (UTC epoch aligned)."""
    floored = floor_slot(moment, resolution)
    return floored if floored == ensure_utc(moment) else floored + resolution


def local_day_bounds(day: date, tz: tzinfo) -> tuple[datetime, datetime]:
    """UTC start and end of the local calendar ``day`` in ``tz`` (23, 24 or 25 hours long)."""
    start = datetime(day.year, day.month, day.day, tzinfo=tz)
    nxt = day + timedelta(days=1)
    end = datetime(nxt.year, nxt.month, nxt.day, tzinfo=tz)
    return start.astimezone(UTC), end.astimezone(UTC)


@dataclass(frozen=True, eq=False)
class PriceCurve:
    """Prices per kWh on a regular UTC grid.

    Attributes:
        start: aware UTC datetime of the first slot, on a ``resolution`` boundary.
        resolution: slot length (15 minutes throughout the integration).
        prices: float64 array of shape (n,), ``currency`` per kWh; NaN where unknown.
        currency: ISO 4217 code (ENTSO-E is always EUR; a Nord Pool sensor may be SEK, NOK, DKK, ...).
        source: where the prices came from (``entsoe``, ``nordpool``, ``sensor``, ``sample``).
        sample: True when the prices are bundled sample data re-dated to today.
        fetched_at: aware UTC datetime of the fetch, if known.

    Raises:
        ValueError: naive or misaligned ``start``, non-positive ``resolution`` or a non-1-D ``prices``.
    """

    start: datetime
    resolution: timedelta
    prices: FloatArray
    currency: str = "EUR"
    source: str = ""
    sample: bool = False
    fetched_at: datetime | None = field(default=None)

    def __post_init__(self) -> None:
        start = ensure_utc(self.start)
        if self.resolution <= timedelta(0):
            raise ValueError("resolution must be positive")
        if floor_slot(start, self.resolution) != start:
            raise ValueError(f"start {start.isoformat()} is not on a {self.resolution} boundary")
        prices = np.array(self.prices, dtype=np.float64, copy=True)
        if prices.ndim != 1:
            raise ValueError("prices must be one-dimensional")
        prices.setflags(write=False)
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "prices", prices)

    def __len__(self) -> int:
        return int(self.prices.shape[0])

    @property
    def end(self) -> datetime:
        """UTC end of the last slot (exclusive)."""
        return self.start + self.resolution * len(self)

    def slot_start(self, index: int) -> datetime:
        """UTC start of slot ``index`` (may lie outside the curve)."""
        return self.start + self.resolution * index

    def slot_starts(self) -> list[datetime]:
        """UTC start of every slot, length ``len(self)``."""
        return [self.slot_start(i) for i in range(len(self))]

    def index_of(self, moment: datetime) -> int:
        """Index of the slot containing ``moment`` (may be negative or >= len for moments outside)."""
        delta = ensure_utc(moment) - self.start
        return math.floor(delta / self.resolution)

    def price_at(self, moment: datetime) -> float | None:
        """Price of the slot containing ``moment``, or None when outside the curve or unknown."""
        i = self.index_of(moment)
        if 0 <= i < len(self):
            value = float(self.prices[i])
            return None if math.isnan(value) else value
        return None

    def known_until(self) -> datetime | None:
        """UTC end of the last slot with a known price, or None if no price is known."""
        known = np.flatnonzero(~np.isnan(self.prices))
        return None if known.size == 0 else self.slot_start(int(known[-1]) + 1)

    def window(self, start: datetime, end: datetime) -> PriceCurve:
        """The slots in ``[start, end)`` (both rounded outward to slot boundaries), NaN where outside the curve."""
        first = self.index_of(floor_slot(start, self.resolution))
        last = self.index_of(ceil_slot(end, self.resolution))
        out = np.full(max(last - first, 0), np.nan)
        lo, hi = max(first, 0), min(last, len(self))
        if hi > lo:
            out[lo - first : hi - first] = self.prices[lo:hi]
        return self.replace(start=self.slot_start(first), prices=out)

    def local_day(self, day: date, tz: tzinfo) -> PriceCurve:
        """The local calendar day in ``tz``: 92, 96 or 100 slots at 15 minutes (DST days)."""
        start, end = local_day_bounds(day, tz)
        return self.window(start, end)

    def merge(self, newer: PriceCurve) -> PriceCurve:
        """Union of both curves on one grid; known prices of ``newer`` win over this curve's.

        Raises:
            ValueError: resolutions or currencies differ.
        """
        if newer.resolution != self.resolution or newer.currency != self.currency:
            raise ValueError("cannot merge curves of different resolution or currency")
        if len(self) == 0:
            return newer
        if len(newer) == 0:
            return self
        start = min(self.start, newer.start)
        end = max(self.end, newer.end)
        merged = self.window(start, end).prices.copy()
        offset = newer.index_of(start) * -1
        mask = ~np.isnan(newer.prices)
        merged[offset : offset + len(newer)][mask] = newer.prices[mask]
        return self.replace(
            start=start,
            prices=merged,
            source=newer.source or self.source,
            sample=newer.sample,
            fetched_at=newer.fetched_at or self.fetched_at,
        )

    def replace(self, **changes: Any) -> PriceCurve:
        """A copy with ``changes`` applied (validated like a new curve)."""
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form for storage and service responses (NaN becomes None)."""
        return {
            "start": self.start.isoformat(),
            "resolution_minutes": self.resolution.total_seconds() / 60,
            "prices": [None if math.isnan(p) else float(p) for p in self.prices],
            "currency": self.currency,
            "source": self.source,
            "sample": self.sample,
            "fetched_at": self.fetched_at.isoformat() if self.fetched_at else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PriceCurve:
        """Inverse of :meth:`as_dict`.

        Raises:
            KeyError, ValueError, TypeError: malformed data.
        """
        return cls(
            start=datetime.fromisoformat(data["start"]),
            resolution=timedelta(minutes=float(data["resolution_minutes"])),
            prices=np.array([np.nan if p is None else float(p) for p in data["prices"]], dtype=np.float64),
            currency=str(data.get("currency", "EUR")),
            source=str(data.get("source", "")),
            sample=bool(data.get("sample", False)),
            fetched_at=datetime.fromisoformat(data["fetched_at"]) if data.get("fetched_at") else None,
        )


def curve_from_intervals(
    intervals: Iterable[tuple[datetime, datetime, float]],
    *,
    currency: str,
    source: str,
    resolution: timedelta = SLOT,
) -> PriceCurve:
    """One contiguous curve from ``(start, end, price)`` intervals; each price holds for every slot it covers.

    An hourly price becomes four 15-minute prices. Where intervals overlap the shorter (finer) one wins, NaN never
    overwrites a known price, and slots no interval covers are NaN. Prices are taken as they are (no unit conversion).

    Raises:
        ValueError: no intervals, a naive datetime, ``end <= start``, a bound off the ``resolution`` grid, or a
            curve longer than ``MAX_SLOTS``.
    """
    spans: list[tuple[int, int, float]] = []
    for start, end, price in intervals:
        first, off_start = divmod(ensure_utc(start) - _EPOCH, resolution)
        last, off_end = divmod(ensure_utc(end) - _EPOCH, resolution)
        if last <= first or off_start or off_end:
            raise ValueError(f"interval {start.isoformat()} to {end.isoformat()} is empty or off the {resolution} grid")
        spans.append((first, last, float(price)))
    if not spans:
        raise ValueError("no intervals")
    origin = min(span[0] for span in spans)
    length = max(span[1] for span in spans) - origin
    if length > MAX_SLOTS:
        raise ValueError(f"{length} slots exceed the limit of {MAX_SLOTS}")
    prices = np.full(length, np.nan)
    # Longest first, so finer intervals overwrite coarser ones.
    for first, last, price in sorted(spans, key=lambda span: span[0] - span[1]):
        if not math.isnan(price):
            prices[first - origin : last - origin] = price
    return PriceCurve(
        start=_EPOCH + resolution * origin, resolution=resolution, prices=prices, currency=currency, source=source
    )
