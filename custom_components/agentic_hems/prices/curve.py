"""The price curve every other module plans on.

Conventions: slot starts are aware UTC datetimes on a
slot boundary, a slot is ``[start, start + resolution)``, prices are per kWh in ``currency`` and NaN marks an
unknown price. Each slot is known, doubtful or unknown (:mod:`.trust`); notes say why a slot is doubtful or refused.
Nothing here imports Home Assistant.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .trust import NoteSpan, PriceIssue, PriceNote, SlotTrust

SLOT = timedelta(minutes=15)

type FloatArray = npt.NDArray[np.float64]
type MarkArray = npt.NDArray[np.int16]
# Longest curve a reader builds (a leap year of 15-minute slots): a bound on malformed input.
MAX_SLOTS = 366 * 96
NO_NOTE = -1


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


def _no_marks() -> MarkArray:
    return np.empty(0, dtype=np.int16)


@dataclass(frozen=True, eq=False)
class PriceCurve:
    """Prices per kWh on a regular UTC grid, with the trust of every slot.

    Attributes:
        start: aware UTC datetime of the first slot, on a ``resolution`` boundary.
        resolution: slot length (15 minutes throughout the integration).
        prices: float64 array of shape (n,), ``currency`` per kWh; NaN where unknown, never infinite.
        currency: ISO 4217 code (ENTSO-E is always EUR; a Nord Pool sensor may be SEK, NOK, DKK, ...).
        source: where the prices came from (``entsoe``, ``nordpool``, ``sensor``, ``sample``).
        sample: True when the prices are bundled sample data re-dated to today.
        fetched_at: aware UTC datetime of the fetch, if known.
        notes: the refusals and doubts the slots refer to.
        marks: int16 array of shape (n,): index into ``notes`` per slot, -1 where no note applies (an empty array,
            the default, means no notes at all). A slot marked with a refusal (``note.trust`` UNKNOWN) is NaN; a
            slot marked with a doubt has a finite price.

    Raises:
        ValueError: naive or misaligned ``start``, non-positive ``resolution``, a non-1-D ``prices``, an infinite
            price, or ``marks`` of the wrong shape, out of range, or contradicting the prices.

    """

    start: datetime
    resolution: timedelta
    prices: FloatArray
    currency: str = "EUR"
    source: str = ""
    sample: bool = False
    fetched_at: datetime | None = field(default=None)
    notes: tuple[PriceNote, ...] = ()
    marks: MarkArray = field(default_factory=_no_marks)

    def __post_init__(self) -> None:
        """Check the fields and store ``start`` in UTC; raises ValueError for an inconsistent curve."""
        start = ensure_utc(self.start)
        if self.resolution <= timedelta(0):
            raise ValueError("resolution must be positive")
        if floor_slot(start, self.resolution) != start:
            raise ValueError(f"start {start.isoformat()} is not on a {self.resolution} boundary")
        prices = np.array(self.prices, dtype=np.float64, copy=True)
        if prices.ndim != 1:
            raise ValueError("prices must be one-dimensional")
        if np.isinf(prices).any():
            raise ValueError("prices must be finite or NaN (unknown), not infinite")
        marks = self._checked_marks(prices)
        prices.setflags(write=False)
        marks.setflags(write=False)
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "prices", prices)
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "marks", marks)

    def _checked_marks(self, prices: FloatArray) -> MarkArray:
        marks = np.array(self.marks, dtype=np.int16, copy=True)
        if marks.size == 0:
            return np.full(prices.shape, NO_NOTE, dtype=np.int16)
        if marks.shape != prices.shape:
            raise ValueError(f"marks has shape {marks.shape}, prices {prices.shape}")
        if marks.min() < NO_NOTE or marks.max() >= len(self.notes):
            raise ValueError("marks must index notes (or be -1)")
        refused = np.array([note.trust is SlotTrust.UNKNOWN for note in self.notes] + [False])[marks]
        if (refused & ~np.isnan(prices)).any():
            raise ValueError("a slot refused by a note must be unknown (NaN)")
        if ((marks != NO_NOTE) & ~refused & np.isnan(prices)).any():
            raise ValueError("a doubted slot must have a price")
        return marks

    def __len__(self) -> int:
        """Return the number of slots."""
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
        """Return the price of the slot containing ``moment``, or None when outside the curve or unknown.

        Doubtful prices are returned; see :meth:`trust`.
        """
        i = self.index_of(moment)
        if 0 <= i < len(self):
            value = float(self.prices[i])
            return None if math.isnan(value) else value
        return None

    def known_until(self) -> datetime | None:
        """UTC end of the last slot with a price (known or doubtful), or None if there is none."""
        known = np.flatnonzero(~np.isnan(self.prices))
        return None if known.size == 0 else self.slot_start(int(known[-1]) + 1)

    def trust(self) -> npt.NDArray[np.int8]:
        """Return the :class:`SlotTrust` value per slot, an int8 array of shape (n,).

        UNKNOWN where NaN, DOUBTFUL where a doubt note applies, else KNOWN.
        """
        per_note = np.array([note.trust for note in self.notes] + [SlotTrust.KNOWN], dtype=np.int8)
        trust: npt.NDArray[np.int8] = per_note[self.marks]  # index -1 picks the trailing KNOWN
        trust[np.isnan(self.prices)] = SlotTrust.UNKNOWN
        return trust

    def note_at(self, index: int) -> PriceNote | None:
        """Return the note of slot ``index`` (a refusal or a doubt), or None."""
        if 0 <= index < len(self) and (mark := int(self.marks[index])) != NO_NOTE:
            return self.notes[mark]
        return None

    def issues(self) -> list[NoteSpan]:
        """Every maximal run of slots under one note, in time order."""
        spans: list[NoteSpan] = []
        edges = np.flatnonzero(np.diff(self.marks, prepend=NO_NOTE - 1, append=NO_NOTE - 1))
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            if (mark := int(self.marks[lo])) != NO_NOTE:
                spans.append(NoteSpan(self.slot_start(int(lo)), self.slot_start(int(hi)), self.notes[mark]))
        return spans

    def window(self, start: datetime, end: datetime) -> PriceCurve:
        """Return the slots in ``[start, end)`` (both rounded outward to slot boundaries), NaN outside the curve."""
        first = self.index_of(floor_slot(start, self.resolution))
        last = self.index_of(ceil_slot(end, self.resolution))
        out = np.full(max(last - first, 0), np.nan)
        marks = np.full(out.shape, NO_NOTE, dtype=np.int16)
        lo, hi = max(first, 0), min(last, len(self))
        if hi > lo:
            out[lo - first : hi - first] = self.prices[lo:hi]
            marks[lo - first : hi - first] = self.marks[lo:hi]
        notes, marks = _pruned(self.notes, marks)
        return self.replace(start=self.slot_start(first), prices=out, notes=notes, marks=marks)

    def local_day(self, day: date, tz: tzinfo) -> PriceCurve:
        """Return the local calendar day in ``tz``: 92, 96 or 100 slots at 15 minutes (DST days)."""
        start, end = local_day_bounds(day, tz)
        return self.window(start, end)

    def merge(self, newer: PriceCurve) -> PriceCurve:
        """Union of both curves on one grid, slot by slot.

        A slot takes ``newer``'s price and note when ``newer`` has a price there that is at least as trusted as
        this curve's (a known price replaces a doubtful one, never the reverse), or when neither has a price and
        ``newer`` says why. Otherwise this curve's slot stays: an unknown or refused slot of ``newer`` never
        erases a price.

        Raises:
            ValueError: resolutions or currencies differ.

        """
        if newer.resolution != self.resolution or newer.currency != self.currency:
            raise ValueError("cannot merge curves of different resolution or currency")
        if len(self) == 0:
            return newer
        if len(newer) == 0:
            return self
        start, end = min(self.start, newer.start), max(self.end, newer.end)
        old, new = self.window(start, end), newer.window(start, end)
        old_trust, new_trust = old.trust(), new.trust()
        neither = (old_trust == SlotTrust.UNKNOWN) & (new_trust == SlotTrust.UNKNOWN) & (new.marks != NO_NOTE)
        take = ((new_trust < SlotTrust.UNKNOWN) & (new_trust <= old_trust)) | neither
        shifted = np.where(new.marks == NO_NOTE, NO_NOTE, new.marks + len(old.notes)).astype(np.int16)
        notes, marks = _pruned(old.notes + new.notes, np.where(take, shifted, old.marks).astype(np.int16))
        return self.replace(
            start=start,
            prices=np.where(take, new.prices, old.prices),
            source=newer.source or self.source,
            sample=newer.sample,
            fetched_at=newer.fetched_at or self.fetched_at,
            notes=notes,
            marks=marks,
        )

    def replace(self, **changes: Any) -> PriceCurve:
        """Return a copy with ``changes`` applied (validated like a new curve).

        New ``prices`` of another length without new ``marks`` drop the notes, which no longer fit the slots.
        """
        prices = changes.get("prices")
        if prices is not None and "marks" not in changes and len(prices) != len(self):
            changes |= {"notes": (), "marks": _no_marks()}
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form for storage and service responses (NaN becomes None; ``notes`` as :meth:`issues`)."""
        return {
            "start": self.start.isoformat(),
            "resolution_minutes": self.resolution.total_seconds() / 60,
            "prices": [None if math.isnan(p) else float(p) for p in self.prices],
            "currency": self.currency,
            "source": self.source,
            "sample": self.sample,
            "fetched_at": self.fetched_at.isoformat() if self.fetched_at else None,
            "notes": [span.as_dict() for span in self.issues()],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PriceCurve:
        """Inverse of :meth:`as_dict` (a missing ``notes`` key means none).

        Raises:
            KeyError, ValueError, TypeError: malformed data.

        """
        start = datetime.fromisoformat(data["start"])
        resolution = timedelta(minutes=float(data["resolution_minutes"]))
        prices = np.array([np.nan if p is None else float(p) for p in data["prices"]], dtype=np.float64)
        notes: list[PriceNote] = []
        marks = np.full(prices.shape, NO_NOTE, dtype=np.int16)
        for span in data.get("notes", []):
            lo = math.floor((datetime.fromisoformat(span["start"]) - start) / resolution)
            hi = math.floor((datetime.fromisoformat(span["end"]) - start) / resolution)
            marks[max(lo, 0) : max(hi, 0)] = len(notes)
            notes.append(PriceNote(PriceIssue(span["issue"]), str(span["detail"])))
        return cls(
            start=start,
            resolution=resolution,
            prices=prices,
            currency=str(data.get("currency", "EUR")),
            source=str(data.get("source", "")),
            sample=bool(data.get("sample", False)),
            fetched_at=datetime.fromisoformat(data["fetched_at"]) if data.get("fetched_at") else None,
            notes=tuple(notes),
            marks=marks,
        )


def _pruned(
    notes: tuple[PriceNote, ...], marks: npt.NDArray[np.integer[Any]]
) -> tuple[tuple[PriceNote, ...], MarkArray]:
    """Return ``notes`` without those no slot refers to (equal notes merged), and ``marks`` re-indexed to match."""
    kept: dict[PriceNote, int] = {}
    remap = np.full(len(notes) + 1, NO_NOTE, dtype=np.int16)  # the extra entry maps -1 to -1
    for mark in np.unique(marks[marks != NO_NOTE]):
        remap[mark] = kept.setdefault(notes[int(mark)], len(kept))
    return tuple(kept), remap[marks]
