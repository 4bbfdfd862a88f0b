"""Day-ahead prices: one :class:`PriceCurve` from ENTSO-E, Nord Pool, another HA sensor or bundled samples."""

from .curve import SLOT, PriceCurve, ceil_slot, ensure_utc, floor_slot, local_day_bounds
from .errors import PriceError, PricesNotPublished, PriceSourceError

__all__ = [
    "SLOT",
    "PriceCurve",
    "PriceError",
    "PriceSourceError",
    "PricesNotPublished",
    "ceil_slot",
    "ensure_utc",
    "floor_slot",
    "local_day_bounds",
]
