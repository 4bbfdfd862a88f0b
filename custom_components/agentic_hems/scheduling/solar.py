"""PV production forecasts on the planners' slot grid (kW per slot, UTC), from the shapes Home Assistant sources give.

Two shapes are read:

- **Energy per period** (``wh_hours``, what the ``energy`` integration's solar forecast platforms return: Forecast.Solar,
  Open-Meteo Solar Forecast, ...): ``{ISO instant: Wh produced in the period that starts there}``. Periods may be
  irregular (Forecast.Solar starts one at sunrise, e.g. 07:23, then on every hour).
- **Mean power per period** (Solcast's ``detailedForecast`` attribute): a list of ``{"period_start", "pv_estimate",
  "pv_estimate10", "pv_estimate90"}`` in kW, usually every 30 minutes; the 10 % and 90 % columns become the p10/p90
  quantiles.

A period runs from its start to the next start, but never longer than the source's own period (the most common gap
between starts, at most an hour: no source publishes longer periods): sources leave out the night's zero periods, so what lies between a period's end and the next start
produced nothing. A period's energy is spread evenly over it and each slot gets the mean power of what falls into it.
Before the first start and after the last period's end the forecast is unknown (NaN), never zero: a plan that needs
PV there must say it has no forecast. A period with a value that is not finite or is negative, or two entries for one
instant with different values, makes its period unknown, with a note naming the instant.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
import math
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]
MAX_PERIOD_MINUTES = 60.0


@dataclass(frozen=True)
class SolarForecast:
    """PV production forecast: mean kW per slot from ``start`` (UTC), NaN where the source says nothing.

    ``p50`` has shape (n,); ``p10``/``p90`` (same shape) exist when the source gives quantiles. ``notes`` name each
    period the reader refused and why.
    """

    start: datetime
    slot_minutes: int
    p50: Array
    p10: Array | None = None
    p90: Array | None = None
    notes: tuple[str, ...] = ()

    @property
    def known(self) -> npt.NDArray[np.bool_]:
        """Return True per slot where ``p50`` is a published forecast, shape (n,)."""
        return np.isfinite(self.p50)

    def energy_kwh(self) -> float:
        """Return the forecast energy over the known slots, kWh."""
        return float(np.nansum(self.p50) * self.slot_minutes / 60)


def _instant(value: Any) -> datetime | None:
    """Return ``value`` (an ISO 8601 string or a datetime, with an offset) in UTC, or None."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime) or value.tzinfo is None:
        return None
    return value.astimezone(UTC)


def _number(value: Any) -> float:
    """Return ``value`` as a finite, non-negative float, or NaN."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else math.nan


def _periods(
    items: Iterable[tuple[Any, Sequence[float]]],
) -> tuple[list[datetime], Array, list[str]]:
    """Return the sorted period starts, their values (shape (k, m), NaN where refused) and the refusal notes."""
    values: dict[datetime, tuple[float, ...]] = {}
    notes: list[str] = []
    for raw, numbers in items:
        if (instant := _instant(raw)) is None:
            notes.append(f"{raw!r}: not an instant with an offset")
            continue
        row = tuple(numbers)
        if math.isnan(row[0]):
            notes.append(f"{instant.isoformat()}: not a finite, non-negative value")
        if instant in values and values[instant] != row:
            notes.append(f"{instant.isoformat()}: two different values")
            row = tuple(math.nan for _ in row)
        values[instant] = row
    starts = sorted(values)
    return starts, np.array([values[instant] for instant in starts] or [(math.nan,)], dtype=np.float64), notes


def _spread(
    starts: Sequence[datetime], values: Array, grid_start: datetime, slots: int, slot_minutes: int, *, energy: bool
) -> Array:
    """Spread each period's value evenly over it; return the mean kW per slot, shape (slots,).

    ``values`` are kWh per period (``energy``) or mean kW over it. A slot is unknown (NaN) when any part of it lies
    outside the periods' span or overlaps a refused (NaN) period.
    """
    origin = starts[0]
    grid = np.array([(grid_start - origin).total_seconds() / 60 + i * slot_minutes for i in range(slots + 1)])
    begins = np.array([(s - origin).total_seconds() / 60 for s in starts])
    gaps = np.diff(begins)
    period = min(Counter(gaps.tolist()).most_common(1)[0][0], MAX_PERIOD_MINUTES) if len(gaps) else MAX_PERIOD_MINUTES
    ends = begins + np.minimum(np.append(gaps, period), period)
    kwh_per_minute = values / (ends - begins) if energy else values / 60
    kw = np.zeros(slots)
    unknown = (grid[:-1] < begins[0]) | (grid[1:] > ends[-1])
    for begin, end, rate in zip(begins, ends, kwh_per_minute, strict=True):
        overlap = np.clip(np.minimum(grid[1:], end) - np.maximum(grid[:-1], begin), 0.0, None)
        if math.isnan(rate):
            unknown |= overlap > 0
        else:
            kw += rate * overlap * 60 / slot_minutes
    kw[unknown] = np.nan
    return kw


def from_energy_periods(
    wh_hours: Mapping[str, Any], start: datetime, slots: int, slot_minutes: int = 15
) -> SolarForecast:
    """Read an energy platform's ``wh_hours`` (Wh per period, keyed by the period's start) onto a slot grid.

    ``start`` is the grid's first slot (aware), ``slots`` its length. Returns the forecast (no quantiles); an empty
    mapping gives an all-unknown forecast.
    """
    utc = start.astimezone(UTC)
    starts, table, notes = _periods((key, (_number(value),)) for key, value in wh_hours.items())
    if not starts:
        return SolarForecast(utc, slot_minutes, np.full(slots, np.nan), notes=tuple(notes))
    kw = _spread(starts, table[:, 0] / 1000, utc, slots, slot_minutes, energy=True)
    return SolarForecast(utc, slot_minutes, kw, notes=tuple(notes))


SOLCAST_COLUMNS = ("pv_estimate", "pv_estimate10", "pv_estimate90")


def from_mean_power(
    items: Sequence[Mapping[str, Any]], start: datetime, slots: int, slot_minutes: int = 15
) -> SolarForecast:
    """Read Solcast's ``detailedForecast`` (mean kW per period) onto a slot grid.

    ``items`` are ``{"period_start", "pv_estimate"[, "pv_estimate10", "pv_estimate90"]}``; the 10 % / 90 % columns
    become ``p10`` / ``p90`` when every period has them.
    """
    utc = start.astimezone(UTC)
    rows = [
        (item.get("period_start"), tuple(_number(item.get(column)) for column in SOLCAST_COLUMNS))
        for item in items
        if isinstance(item, Mapping)
    ]
    starts, table, notes = _periods(rows)
    if not starts:
        return SolarForecast(utc, slot_minutes, np.full(slots, np.nan), notes=tuple(notes))
    p50, p10, p90 = (_spread(starts, table[:, c], utc, slots, slot_minutes, energy=False) for c in range(3))
    quantiles = bool(np.isfinite(table[:, 1:]).all())
    return SolarForecast(
        utc, slot_minutes, p50, p10 if quantiles else None, p90 if quantiles else None, notes=tuple(notes)
    )


def combine(forecasts: Sequence[SolarForecast]) -> SolarForecast:
    """Sum several arrays' forecasts on one grid (same start, slots and slot length); unknown where any is unknown.

    Raises ValueError when the grids differ or ``forecasts`` is empty.
    """
    first = forecasts[0] if forecasts else None
    if first is None or any(
        (f.start, f.slot_minutes, f.p50.shape) != (first.start, first.slot_minutes, first.p50.shape) for f in forecasts
    ):
        raise ValueError("forecasts to combine need one grid")
    p50 = np.sum([f.p50 for f in forecasts], axis=0)
    p10 = [f.p10 for f in forecasts if f.p10 is not None]
    p90 = [f.p90 for f in forecasts if f.p90 is not None]
    quantiles = len(p10) == len(p90) == len(forecasts)
    return SolarForecast(
        first.start,
        first.slot_minutes,
        p50,
        p10=np.sum(p10, axis=0) if quantiles else None,
        p90=np.sum(p90, axis=0) if quantiles else None,
        notes=tuple(note for f in forecasts for note in f.notes),
    )
