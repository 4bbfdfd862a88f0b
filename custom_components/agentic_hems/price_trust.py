"""How far the prices of the local today and tomorrow can be trusted: entity attributes and repair issues.

- :func:`covers`: every slot of a span is known (a doubtful or unknown slot is not covered).
- :func:`trust_attributes`: the price sensor's small attributes ``prices_trust`` and ``price_issues``.
- :func:`refusal_at` and :func:`refusal_placeholders`: the translated ``prices_refused`` error of a refused slot.
- :class:`PriceDayIssues`: one repair issue per entry, local day and :class:`~.prices.PriceIssue` while a source keeps
  delivering that day unusable.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any, Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.util import dt as dt_util

from .const import DOMAIN
from .prices import NoteSpan, PriceCurve, PriceIssue, PricesRefused, SlotTrust, local_day_bounds

# A day's issue is raised once this many deliveries in a row carried it...
ISSUE_AFTER: Final = 2
# ...and the day starts within this time (or has started): before that, tomorrow may still be published properly.
ISSUE_LEAD: Final = timedelta(hours=6)


def covers(curve: PriceCurve | None, start: datetime, end: datetime) -> bool:
    """Return True when ``curve`` has a known price (not doubtful, not unknown) for every slot of ``[start, end)``."""
    if curve is None or curve.start > start or curve.end < end:
        return False
    trust = curve.window(start, end).trust()
    return bool(trust.size) and not bool(trust.any())  # SlotTrust.KNOWN is 0


def _local_day(day: date) -> tuple[datetime, datetime]:
    return local_day_bounds(day, dt_util.get_default_time_zone())


def trust_attributes(curve: PriceCurve, today: date) -> dict[str, Any]:
    """Return the trust of the home's local today and tomorrow in ``curve``.

    ``{"prices_trust": {"2026-11-30": "doubtful", ...}, "price_issues": {"2026-11-30": ["zero_day"]}}``: per local
    date (ISO) the least trusted slot's :class:`SlotTrust` (``known``, ``doubtful`` or ``unknown``; a day not
    published yet is ``unknown``), and the :class:`PriceIssue` values of the notes over the day, for days with notes.
    """
    trust: dict[str, str] = {}
    issues: dict[str, list[str]] = {}
    for day in (today, today + timedelta(days=1)):
        view = curve.window(*_local_day(day))
        trust[day.isoformat()] = SlotTrust(int(view.trust().max())).name.lower()
        if found := list(dict.fromkeys(str(span.note.issue) for span in view.issues())):
            issues[day.isoformat()] = found
    return {"prices_trust": trust, "price_issues": issues}


def refusal_at(curve: PriceCurve, moment: datetime) -> PricesRefused | None:
    """Return the refusal of the slot of ``moment`` in ``curve`` (its spans: the notes there), or None."""
    spans = [
        span for span in curve.issues() if span.start <= moment < span.end and span.note.trust is SlotTrust.UNKNOWN
    ]
    return PricesRefused(spans, curve) if spans else None


def refusal_placeholders(source: str, spans: Sequence[NoteSpan]) -> dict[str, str]:
    """Return ``{"source", "days", "reason"}`` for the ``prices_refused`` error of the refused ``spans``.

    ``days`` lists the home's local dates the spans touch (ISO, comma-separated), ``reason`` the notes' English
    details, each once.
    """
    days: dict[str, None] = {}
    for span in spans:
        day = dt_util.as_local(span.start).date()
        while dt_util.as_utc(dt_util.start_of_local_day(day)) < span.end:
            days[day.isoformat()] = None
            day += timedelta(days=1)
    reasons = dict.fromkeys(span.note.detail for span in spans)
    return {"source": source, "days": ", ".join(days), "reason": "; ".join(reasons)}


class PriceDayIssues:
    """Repair issues ``prices_<issue>`` for one entry's price source, one per local day and :class:`PriceIssue`.

    After each delivery (:meth:`async_observe`) every note over the local today or tomorrow counts for its day and
    issue, unless the cached prices of that day are all known. The issue is raised once :data:`ISSUE_AFTER`
    deliveries in a row carried it and the day starts within :data:`ISSUE_LEAD` or has started, so tomorrow's
    placeholders before the publication raise nothing. It is deleted when a delivery no longer carries it for that
    day, when the day's cached prices are all known, when the day has passed (:meth:`async_prune`) and when the entry
    unloads (:meth:`async_clear`). Not fixable by a flow: the source must deliver; not persistent: the counts start
    again after a restart.
    """

    def __init__(self, hass: HomeAssistant, entry_id: str, source: str) -> None:
        """Track the issues of entry ``entry_id``; ``source`` names it in the texts (the entry's title)."""
        self.hass = hass
        self.entry_id = entry_id
        self.source = source
        self.counts: dict[tuple[date, PriceIssue], int] = {}
        self.raised: set[tuple[date, PriceIssue]] = set()

    def issue_id(self, day: date, issue: PriceIssue) -> str:
        """Return the repair issue's id: ``prices_<entry_id>_<local date>_<issue>``."""
        return f"prices_{self.entry_id}_{day.isoformat()}_{issue}"

    @callback
    def async_observe(self, delivered: PriceCurve, cached: PriceCurve | None, now: datetime) -> None:
        """Count what the source ``delivered`` for the local today and tomorrow of ``now``; raise or delete issues."""
        today = dt_util.as_local(now).date()
        for day in (today, today + timedelta(days=1)):
            start, end = _local_day(day)
            notes = {} if covers(cached, start, end) else _notes(delivered.window(start, end))
            for key in [key for key in self.counts if key[0] == day and key[1] not in notes]:
                self._forget(key)
            for issue, detail in notes.items():
                count = self.counts[day, issue] = self.counts.get((day, issue), 0) + 1
                if count >= ISSUE_AFTER and start - now <= ISSUE_LEAD:
                    self._raise(day, issue, detail)
        self.async_prune(now)

    @callback
    def async_prune(self, now: datetime) -> None:
        """Forget the days before the local day of ``now`` and delete their issues."""
        today = dt_util.as_local(now).date()
        for key in [key for key in self.counts if key[0] < today]:
            self._forget(key)

    @callback
    def async_clear(self) -> None:
        """Forget every day and delete every issue of the entry."""
        for key in list(self.counts):
            self._forget(key)

    def _raise(self, day: date, issue: PriceIssue, detail: str) -> None:
        self.raised.add((day, issue))
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            self.issue_id(day, issue),
            is_fixable=False,
            is_persistent=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key=f"prices_{issue}",
            translation_placeholders={"source": self.source, "day": day.isoformat(), "detail": detail},
        )

    def _forget(self, key: tuple[date, PriceIssue]) -> None:
        self.counts.pop(key, None)
        if key in self.raised:
            self.raised.discard(key)
            ir.async_delete_issue(self.hass, DOMAIN, self.issue_id(*key))


def _notes(view: PriceCurve) -> dict[PriceIssue, str]:
    """Return each issue of the notes over ``view`` with the first note's detail."""
    notes: dict[PriceIssue, str] = {}
    for span in view.issues():
        notes.setdefault(span.note.issue, span.note.detail)
    return notes
