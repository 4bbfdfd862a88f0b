"""Day-ahead prices: one :class:`PriceCurve` from ENTSO-E, Nord Pool, another HA sensor or bundled samples."""

from .attributes import curve_from_attributes
from .curve import SLOT, PriceCurve, ceil_slot, ensure_utc, floor_slot, local_day_bounds
from .entsoe import SEQUENCED_ZONES, ZONES, async_fetch_day_ahead, build_request_params, parse_day_ahead
from .errors import CannotConnect, InvalidAuth, PriceError, PricesNotPublished, PriceSourceError, PricesRefused
from .formula import PriceFormula
from .nordpool import curve_from_nordpool
from .sample import sample_curve
from .trust import NoteSpan, PriceIssue, PriceNote, SlotTrust

__all__ = [
    "SEQUENCED_ZONES",
    "SLOT",
    "ZONES",
    "CannotConnect",
    "InvalidAuth",
    "NoteSpan",
    "PriceCurve",
    "PriceError",
    "PriceFormula",
    "PriceIssue",
    "PriceNote",
    "PriceSourceError",
    "PricesNotPublished",
    "PricesRefused",
    "SlotTrust",
    "async_fetch_day_ahead",
    "build_request_params",
    "ceil_slot",
    "curve_from_attributes",
    "curve_from_nordpool",
    "ensure_utc",
    "floor_slot",
    "local_day_bounds",
    "parse_day_ahead",
    "sample_curve",
]
