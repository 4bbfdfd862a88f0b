"""What a household pays per kWh: spot price plus supplier markup, VAT and grid fee."""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from .curve import PriceCurve


@dataclass(frozen=True)
class PriceFormula:
    """``total = (spot + markup) x (1 + vat) + grid_fee``, all per kWh in the curve's currency.

    Attributes:
        markup: supplier markup per kWh, added before VAT.
        vat: VAT rate as a fraction in [0, 1] (0.21 for 21 %).
        grid_fee: grid fee and levies per kWh, added after VAT (enter them VAT-inclusive).
        vat_on_negative: False leaves VAT off slots where ``spot + markup`` is negative (no VAT refund).

    Raises:
        ValueError: a non-finite number, or ``vat`` outside [0, 1].

    """

    markup: float = 0.0
    vat: float = 0.0
    grid_fee: float = 0.0
    vat_on_negative: bool = True

    def __post_init__(self) -> None:
        """Check that markup, VAT and grid fee are finite numbers; raises ValueError (TypeError for non-numbers)."""
        for name in ("markup", "vat", "grid_fee"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        if not 0.0 <= self.vat <= 1.0:
            raise ValueError(f"vat must be a fraction in [0, 1], got {self.vat!r}")

    def apply(self, curve: PriceCurve) -> PriceCurve:
        """``curve`` with the formula applied slot by slot; NaN stays NaN."""
        net = curve.prices + self.markup
        taxed = net * (1.0 + self.vat)
        if not self.vat_on_negative:
            taxed = np.where(net < 0.0, net, taxed)
        return curve.replace(prices=taxed + self.grid_fee)
