"""Typed price errors; the shell maps each to a translated message by its ``translation_key``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .trust import NoteSpan

if TYPE_CHECKING:
    from .curve import PriceCurve


class PriceError(Exception):
    """Base class for every price failure. ``translation_key`` names the message in translations/*.json."""

    translation_key = "price_error"


class PricesNotPublished(PriceError):
    """ENTSO-E answered with an Acknowledgement_MarketDocument (reason code 999): no data for the period yet."""

    translation_key = "prices_not_published"


class PriceSourceError(PriceError):
    """The source answered with something that is not a day-ahead price document (HTML page, empty body, bad XML)."""

    translation_key = "price_source_error"


class PricesRefused(PriceSourceError):
    """The source delivered days, but every one was refused (not a whole day, a bad value, a conflict, ...).

    Attributes:
        spans: the refused days (aware UTC bounds) with the note that says why, in time order.
        curve: the refused days as a curve (every slot unknown, marked with its note), so that a cache can keep why
            they are unknown.

    """

    translation_key = "prices_refused"

    def __init__(self, spans: Sequence[NoteSpan], curve: PriceCurve) -> None:
        """Keep the refused ``spans`` and ``curve``; the message joins their notes' details, each once."""
        self.spans = tuple(spans)
        self.curve = curve
        details = dict.fromkeys(span.note.detail for span in self.spans)
        super().__init__("no usable price: " + "; ".join(details))


class InvalidAuth(PriceError):
    """The price source rejected the credentials (ENTSO-E answers HTTP 401 to an unknown security token)."""

    translation_key = "invalid_auth"


class CannotConnect(PriceSourceError):
    """The price source could not be reached: timeout, DNS or connection failure, or a 5xx answer."""

    translation_key = "cannot_connect"
