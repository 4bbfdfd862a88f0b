"""How far a price slot can be trusted: known, doubtful or unknown, and why.

Every slot of a :class:`~.curve.PriceCurve` is

- **known**: the source published a finite price for exactly that instant and nothing speaks against it;
- **doubtful**: the source published a finite price, but its pattern suggests a placeholder (a whole day of exact
  zeros, or a run of zeros at the end of a document fetched before the auction's results). Planners may use it and
  say so in the plan's ``reason`` and ``detail``;
- **unknown**: NaN. Either nothing was published for the instant, or a reader refused the day it belongs to; a
  refusal carries a :class:`PriceNote` with the :class:`PriceIssue` and an English sentence naming the day or instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import IntEnum, StrEnum


class SlotTrust(IntEnum):
    """Trust of one slot; a larger value is less trusted."""

    KNOWN = 0
    DOUBTFUL = 1
    UNKNOWN = 2


class PriceIssue(StrEnum):
    """Why a reader refused (unknown) or doubts (doubtful) the prices of a day or of part of it."""

    NOT_WHOLE_DAY = "not_whole_day"  # not one whole day at 15, 30 or 60 minutes (missing, extra or stretched items)
    SOURCE_INVALID = "source_invalid"  # the source's own validity flag says no (``tomorrow_valid: false``)
    BAD_VALUE = "bad_value"  # a price, time or position that is unreadable or not finite (INF, -INF, NaN)
    CONFLICT = "conflict"  # two different prices for one instant
    OUTSIDE_PERIOD = "outside_period"  # an ENTSO-E point lies beyond its Period's timeInterval
    WRONG_DAY = "wrong_day"  # a list named for one day holds items of another
    ZERO_DAY = "zero_day"  # every price of the day is exactly zero
    ZERO_TAIL = "zero_tail"  # the document ends in at least two hours of exact zeros

    @property
    def trust(self) -> SlotTrust:
        """DOUBTFUL for the two zero patterns, UNKNOWN (the day is refused) for every other issue."""
        return SlotTrust.DOUBTFUL if self in (PriceIssue.ZERO_DAY, PriceIssue.ZERO_TAIL) else SlotTrust.UNKNOWN


@dataclass(frozen=True)
class PriceNote:
    """A refusal or a doubt: the issue and an English sentence naming the day or instant (times in UTC)."""

    issue: PriceIssue
    detail: str

    @property
    def trust(self) -> SlotTrust:
        """The trust of the slots this note covers (see :attr:`PriceIssue.trust`)."""
        return self.issue.trust


@dataclass(frozen=True)
class NoteSpan:
    """The slots ``[start, end)`` (aware UTC datetimes) of a curve that one :class:`PriceNote` covers."""

    start: datetime
    end: datetime
    note: PriceNote

    def as_dict(self) -> dict[str, str]:
        """JSON-safe form: ``{"start", "end", "issue", "trust", "detail"}`` (ISO 8601 UTC times)."""
        return {
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "issue": str(self.note.issue),
            "trust": self.note.trust.name.lower(),
            "detail": self.note.detail,
        }
