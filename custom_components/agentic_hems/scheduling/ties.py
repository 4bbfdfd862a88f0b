"""Ties: plans whose costs differ by less than a tolerance are equal, and the earliest of them is taken.

The tolerance is relative to the plan's cost scale, ``TIE_REL x (largest |price| x energy) + TIE_ABS``, so float
noise in the prices (0.1 + 0.2 against 0.3, a price formula applied slot by slot) or in a solver's answer never
decides where a load goes; a real price difference (ENTSO-E publishes 0.01 EUR/MWh steps, 1e-5 EUR/kWh) always does.
"""

from __future__ import annotations

import numpy as np

from ..prices.curve import FloatArray
from .windows import IntArray

TIE_REL = 1e-9
TIE_ABS = 1e-12  # currency: keeps a tolerance when every price is zero


def tie_tolerance(prices: FloatArray, energy_kwh: float) -> float:
    """Cost tolerance (currency) of a plan placing ``energy_kwh`` on ``prices`` (per kWh, NaN ignored)."""
    known = prices[~np.isnan(prices)]
    largest = float(np.max(np.abs(known))) if known.size else 0.0
    return TIE_REL * largest * energy_kwh + TIE_ABS


def earliest_cheapest(costs: FloatArray, tolerance: float) -> int:
    """Index of the first of ``costs`` (ascending candidates, no NaN) within ``tolerance`` of the least one."""
    return int((costs <= costs.min() + tolerance).nonzero()[0][0])


def fill_order(prices: FloatArray, gap: float) -> IntArray:
    """Positions of ``prices`` in the order to fill them: cheapest price class first, earliest first within a class.

    Sorted prices split into classes wherever two neighbours differ by more than ``gap``; within a class the
    position (time) decides. A class of m prices spans at most ``(m - 1) x gap``, so with ``gap = tolerance /
    (energy x len(prices))`` the filled plan costs at most ``tolerance`` more than filling by exact price.
    """
    by_price = np.argsort(prices, kind="stable")
    if by_price.size == 0:  # no slot: nothing to order (the fill then finds no room)
        return by_price
    classes = np.concatenate(([0], np.cumsum(np.diff(prices[by_price]) > gap)))
    order: IntArray = by_price[np.lexsort((by_price, classes))]
    return order
