"""Whole days of prices, checked one by one, and the one place they become a :class:`~.curve.PriceCurve`.

Every reader cuts what its source delivered into days (a local day of the home, or the CET/CEST delivery day of the
day-ahead market) and hands each to :func:`whole_day`, which accepts it only when its items cover that day exactly
once at 15, 30 or 60 minutes (23, 24 or 25 hourly, 46, 48 or 50 half-hourly, 92, 96 or 100 quarter-hourly prices,
by the day's length) with readable, finite prices; otherwise the whole day is refused with a
:class:`~.trust.PriceNote`. :func:`assemble` lays the days on one 15-minute grid. Nothing here imports Home
Assistant.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
import math
from typing import Final
from zoneinfo import ZoneInfo

import numpy as np

from ._items import price
from .curve import MAX_SLOTS, NO_NOTE, SLOT, FloatArray, PriceCurve
from .errors import PriceSourceError, PricesRefused
from .trust import PriceIssue, PriceNote

STEPS: Final = (timedelta(minutes=15), timedelta(minutes=30), timedelta(minutes=60))
MARKET_TZ: Final = ZoneInfo("Europe/Brussels")
"""Time zone of the day-ahead delivery day (CET/CEST) for every ENTSO-E zone offered and for Nord Pool."""
# A run of exact zeros at least this long at the end of a document is a doubtful tail (a real day may end in an
# hour at exactly 0; placeholders fill the rest of the day).
ZERO_TAIL_MIN: Final = timedelta(hours=2)

type Item = tuple[datetime, datetime | None, object]
"""One price item: start, end (None when the item lasts the list's resolution) and the raw price value."""


def utc_text(moment: datetime) -> str:
    """``moment`` in UTC as ``2025-01-14T23:00Z``, the form every note uses."""
    return f"{moment.astimezone(UTC):%Y-%m-%dT%H:%MZ}"


@dataclass(frozen=True)
class Day:
    """One day from a reader: its prices per 15-minute slot, or its refusal.

    Attributes:
        label: how notes name the day, e.g. ``tomorrow (2025-01-15)``.
        start: aware UTC start of the day.
        end: aware UTC end of the day.
        step: the source's resolution for this day; where accepted days overlap, the finer one wins.
        prices: float64 array of ``(end - start) / 15 min`` prices per kWh, NaN where the source itself gave no
            price (an item whose value is None); None when the day is refused.
        note: the refusal (``prices`` is None), else None.

    """

    label: str
    start: datetime
    end: datetime
    step: timedelta
    prices: FloatArray | None
    note: PriceNote | None = None


def refused_day(label: str, start: datetime, end: datetime, issue: PriceIssue, reason: str) -> Day:
    """Return a refused day: ``reason`` is completed to the note's detail as ``"<label>: <reason>"``."""
    return Day(label, start, end, SLOT, None, PriceNote(issue, f"{label}: {reason}"))


def day_sizes(start: datetime, end: datetime) -> str:
    """Return the accepted price counts of the day ``[start, end)``: ``24, 48 or 96`` (``23, 46 or 92`` in spring)."""
    counts = [str((end - start) // step) for step in reversed(STEPS)]
    return f"{counts[0]}, {counts[1]} or {counts[2]}"


def whole_day(label: str, start: datetime, end: datetime, items: Sequence[Item], *, scale: float) -> Day:
    """Check that ``items`` cover the day ``[start, end)`` exactly once at one supported resolution.

    Args:
        label: names the day in notes.
        start: aware UTC start of the day.
        end: aware UTC end of the day.
        items: ``(start, end or None, value)``; a value may be a number, a numeric string or None (no price for
            that item's slots). Items without an end last ``(end - start) / len(items)`` after duplicates merge.
        scale: factor from the source's unit to currency per kWh.

    Returns:
        The accepted day, or a day refused with WRONG_DAY (an item outside the day), BAD_VALUE (a price that is not
        a finite number), CONFLICT (one instant twice with different prices; identical repeats merge) or
        NOT_WHOLE_DAY (items missing, extra, of uneven length, off the day's grid, or at another resolution).

    """
    for item_start, item_end, _ in items:
        if not start <= item_start < end or (item_end is not None and item_end > end):
            return refused_day(label, start, end, PriceIssue.WRONG_DAY, f"holds an item at {utc_text(item_start)}")
    values: dict[datetime, tuple[datetime | None, float]] = {}
    for item_start, item_end, raw in sorted(items, key=lambda item: item[0]):
        try:
            value = price(raw) * scale
        except PriceSourceError as err:
            return refused_day(label, start, end, PriceIssue.BAD_VALUE, f"{err} at {utc_text(item_start)}")
        seen = values.setdefault(item_start, (item_end, value))
        if seen[0] != item_end or not _same(seen[1], value):
            detail = f"two prices for {utc_text(item_start)}: {seen[1]:g} and {value:g} per kWh"
            return refused_day(label, start, end, PriceIssue.CONFLICT, detail)
    return _tiled(label, start, end, values)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _tiled(label: str, start: datetime, end: datetime, values: dict[datetime, tuple[datetime | None, float]]) -> Day:
    """Return the day when the distinct ``values`` (by start) tile ``[start, end)`` at one step of :data:`STEPS`."""
    count = len(values)
    lengths = {item_end - item_start for item_start, (item_end, _) in values.items() if item_end is not None}
    if lengths:  # items with their own ends: all must last one step
        step = lengths.pop() if len(lengths) == 1 else None
    else:
        step = (end - start) / count if count else None
    if step not in STEPS or count * step != end - start or any(start + k * step not in values for k in range(count)):
        reason = f"{count} prices do not make the whole day ({day_sizes(start, end)} are accepted)"
        return refused_day(label, start, end, PriceIssue.NOT_WHOLE_DAY, reason)
    prices = np.repeat([values[start + k * step][1] for k in range(count)], step // SLOT)
    return Day(label, start, end, step, prices.astype(np.float64))


def assemble(days: Sequence[Day], *, currency: str, source: str) -> PriceCurve:
    """One 15-minute curve from the readers' days.

    Accepted days of the same step that overlap with different prices are both refused (CONFLICT, naming the first
    instant); otherwise the finer step wins and an unknown price never overwrites a known one. A refused day is
    unknown throughout, whatever another day says. An accepted day whose prices are all exactly zero is doubtful
    (ZERO_DAY), and so is a run of at least two hours of exact zeros ending the last accepted day (ZERO_TAIL).

    Raises:
        PriceSourceError: no day, a curve longer than ``MAX_SLOTS``, or no price at all (nothing was refused).
        PricesRefused: no price at all because days were refused; its ``spans`` say which and why, its ``curve``
            holds them as unknown slots with their notes.

    """
    if not days:
        raise PriceSourceError("no price items")
    origin, stop = min(day.start for day in days), max(day.end for day in days)
    length = (stop - origin) // SLOT
    if length > MAX_SLOTS:
        raise PriceSourceError(f"{length} slots exceed the limit of {MAX_SLOTS}")
    accepted, refusals = _conflicts([day for day in days if day.prices is not None])
    refusals += [day for day in days if day.note is not None]
    prices = np.full(length, np.nan)
    for day in sorted(accepted, key=lambda day: -day.step):  # coarsest first: finer days overwrite
        assert day.prices is not None
        lo = _slots(day, origin)[0]
        known = ~np.isnan(day.prices)
        prices[lo : lo + day.prices.size][known] = day.prices[known]
    notes: list[PriceNote] = []
    marks = np.full(length, NO_NOTE, dtype=np.int16)
    for lo, hi, note in _zero_doubts(accepted, prices, origin):
        marks[lo:hi][~np.isnan(prices[lo:hi])] = len(notes)
        notes.append(note)
    for day in refusals:
        assert day.note is not None
        lo, hi = _slots(day, origin)
        prices[lo:hi], marks[lo:hi] = np.nan, len(notes)
        notes.append(day.note)
    curve = PriceCurve(
        start=origin, resolution=SLOT, prices=prices, currency=currency, source=source, notes=tuple(notes), marks=marks
    )
    if np.isnan(curve.prices).all():
        if refusals:
            raise PricesRefused(curve.issues(), curve)
        raise PriceSourceError("no known price")
    return curve


def _conflicts(days: list[Day]) -> tuple[list[Day], list[Day]]:
    """Split accepted days into those without a conflict and refusals of those that contradict another day."""
    refused: dict[int, Day] = {}
    for i, a in enumerate(days):
        for j in range(i + 1, len(days)):
            b = days[j]
            lo, hi = max(a.start, b.start), min(a.end, b.end)
            if a.step != b.step or lo >= hi:
                continue
            assert a.prices is not None and b.prices is not None
            pa = a.prices[(lo - a.start) // SLOT : (hi - a.start) // SLOT]
            pb = b.prices[(lo - b.start) // SLOT : (hi - b.start) // SLOT]
            differ = np.flatnonzero(~np.isnan(pa) & ~np.isnan(pb) & (pa != pb))
            if differ.size:
                k = int(differ[0])
                reason = f"two prices for {utc_text(lo + k * SLOT)}: {pa[k]:g} and {pb[k]:g} per kWh"
                for index, day in ((i, a), (j, b)):
                    refused.setdefault(index, refused_day(day.label, day.start, day.end, PriceIssue.CONFLICT, reason))
    return [day for i, day in enumerate(days) if i not in refused], list(refused.values())


def _zero_doubts(days: list[Day], prices: FloatArray, origin: datetime) -> list[tuple[int, int, PriceNote]]:
    """Return slot ranges of doubtful zero patterns in the laid-out ``prices`` (grid from ``origin``).

    Each accepted day whose prices are all exactly 0, and a run of zeros of at least ``ZERO_TAIL_MIN`` ending the last
    day.
    """
    spans: dict[tuple[int, int], str] = {}
    for day in days:
        spans.setdefault(_slots(day, origin), day.label)
    doubts: list[tuple[int, int, PriceNote]] = []
    for (lo, hi), label in spans.items():
        known = prices[lo:hi][~np.isnan(prices[lo:hi])]
        if known.size and not known.any():
            reason = "every price is exactly 0 (placeholders before publication?)"
            doubts.append((lo, hi, PriceNote(PriceIssue.ZERO_DAY, f"{label}: {reason}")))
    if not spans:
        return doubts
    (lo, hi), label = max(spans.items(), key=lambda span: span[0][1])
    if any(doubt[:2] == (lo, hi) for doubt in doubts):
        return doubts  # the last day is all zeros already
    nonzero = np.flatnonzero(prices[lo:hi] != 0)  # NaN counts as non-zero: the run holds exact zeros only
    run = hi - lo - (int(nonzero[-1]) + 1 if nonzero.size else 0)
    if run * SLOT >= ZERO_TAIL_MIN:
        start = utc_text(origin + (hi - run) * SLOT)
        reason = f"the prices from {start} to the end are exactly 0 (placeholders?)"
        doubts.append((hi - run, hi, PriceNote(PriceIssue.ZERO_TAIL, f"{label}: {reason}")))
    return doubts


def _slots(day: Day, origin: datetime) -> tuple[int, int]:
    """Return the day's slot range on a grid starting at ``origin``."""
    return (day.start - origin) // SLOT, (day.end - origin) // SLOT
