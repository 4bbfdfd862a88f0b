"""Load windows on a price curve and the pieces every planner shares.

A load may run in ``[earliest_start, deadline)``: ``earliest_start`` rounds up and ``deadline`` rounds down to
slot boundaries of the curve. :func:`resolve_window` turns that into slot indices, :func:`window_sums` is the cost
kernel of contiguous planning, and :func:`build_plan` / :func:`unplanned` turn a per-slot power array into a
:class:`~.plan.Plan`. Nothing here imports Home Assistant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
import math
import operator

import numpy as np
import numpy.typing as npt

from ..prices.curve import NO_NOTE, FloatArray, PriceCurve, ceil_slot, floor_slot
from ..prices.trust import SlotTrust
from .plan import Plan, Reason

type IntArray = npt.NDArray[np.intp]
type BoolArray = npt.NDArray[np.bool_]

_HOUR = timedelta(hours=1)
# Relative slack that absorbs float noise: whole slots (0.3 / (1.2 * 0.25) = 1.0000000000000002), an energy that
# exactly fills its slots, a load that exactly fills the limit (2.8 - 0.8 = 1.9999999999999998).
REL_EPS = 1e-9


def window_sums(prices: npt.ArrayLike, width: int) -> FloatArray:
    """Sum of every run of ``width`` consecutive slots.

    Args:
        prices: 1-D float array (price per kWh, NaN where unknown).
        width: slots per window, at least 1.

    Returns:
        float64 array of shape ``(max(n - width + 1, 0),)``; element ``j`` is
        ``prices[j] + ... + prices[j + width - 1]``, NaN when the window touches a NaN.

    Raises:
        ValueError: ``prices`` is not 1-D or ``width < 1``.
        TypeError: ``width`` is not an integer.

    Every window is summed left to right with the same sequence of float additions (``width`` shifted vector adds,
    O(n * width)), not as a difference of prefix sums. Windows holding the same prices in the same order therefore
    have bit-identical sums. Prefix-sum differences would carry the rounding of the whole prefix and turn the exact
    ties of a flat tariff into noise. Windows with equal prices in a different order may still differ in the last
    ulp, which is why the planners compare costs with a tolerance (:mod:`.ties`).

    """
    values = np.asarray(prices, dtype=np.float64)
    width = operator.index(width)
    if values.ndim != 1:
        raise ValueError("prices must be one-dimensional")
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    count = values.shape[0] - width + 1
    if count <= 0:
        return np.empty(0, dtype=np.float64)
    sums = values[:count].copy()
    for offset in range(1, width):
        sums += values[offset : offset + count]
    return sums


def slot_hours(curve: PriceCurve) -> float:
    """Length of one slot of ``curve`` in hours (0.25 at 15 minutes)."""
    return curve.resolution / _HOUR


def check_positive(**values: float) -> None:
    """Check that every value is a finite number > 0 (``name=value`` pairs name the argument).

    Raises:
        TypeError: a value is not a real number (bool included).
        ValueError: a value is NaN, infinite or <= 0.

    """
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a number, got {value!r}")
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be finite and > 0, got {value!r}")


def slots_for_duration(duration_min: float, resolution: timedelta) -> int:
    """Whole slots needed to run ``duration_min`` minutes; a partial slot rounds up (float noise excepted)."""
    ratio = duration_min / (resolution.total_seconds() / 60)
    return max(math.ceil(ratio - REL_EPS), 1)


@dataclass(frozen=True)
class LoadWindow:
    """A load's window resolved to slot indices of one curve.

    Attributes:
        first: index of the first usable slot (``earliest_start`` rounded up, clipped to the curve start).
        stop: one past the last slot (``deadline`` rounded down); NOT clipped to the curve end, ``stop >= first``.
        known: bool array (n,) aligned with the curve, True for slots inside the window with a price (known or
            doubtful); unknown (NaN) slots, refused or never published, are never usable.

    """

    first: int
    stop: int
    known: BoolArray

    @property
    def length(self) -> int:
        """Slots in the window, including those without a price or beyond the curve."""
        return self.stop - self.first

    @property
    def known_count(self) -> int:
        """Slots in the window with a price (known or doubtful)."""
        return int(np.count_nonzero(self.known))

    @property
    def complete(self) -> bool:
        """True when every slot of the window has a price (known or doubtful)."""
        return self.known_count == self.length


def resolve_window(curve: PriceCurve, earliest_start: datetime, deadline: datetime) -> LoadWindow:
    """Resolve ``[earliest_start, deadline)`` to slot indices of ``curve``.

    Args:
        curve: the price curve the plan is aligned with.
        earliest_start: aware datetime (any tz), rounded up to a slot boundary.
        deadline: aware datetime (any tz), rounded down to a slot boundary; may lie tomorrow or past the curve.

    Raises:
        ValueError: a naive datetime.

    A deadline at or before the start gives an empty window (a planner reports it as too short).

    """
    n = len(curve)
    first = max(curve.index_of(ceil_slot(earliest_start, curve.resolution)), 0)
    stop = max(curve.index_of(floor_slot(deadline, curve.resolution)), first)
    known = np.zeros(n, dtype=bool)
    lo, hi = min(first, n), min(stop, n)
    known[lo:hi] = ~np.isnan(curve.prices[lo:hi])
    return LoadWindow(first=first, stop=stop, known=known)


def window_text(curve: PriceCurve, window: LoadWindow) -> str:
    """Return the window in UTC for ``detail`` strings, e.g. ``2026-03-29T22:00Z to 2026-03-30T06:00Z``."""
    start, end = curve.slot_start(window.first), curve.slot_start(window.stop)
    return f"{start:%Y-%m-%dT%H:%MZ} to {end:%Y-%m-%dT%H:%MZ}"


def notes_text(curve: PriceCurve, mask: BoolArray) -> str:
    """Return the notes' details on the slots ``mask`` (bool (n,)) selects, each once, in time order, joined by "; "."""
    marks = dict.fromkeys(int(mark) for mark in curve.marks[mask] if mark != NO_NOTE)
    return "; ".join(curve.notes[mark].detail for mark in marks)


def missing_prices_text(curve: PriceCurve, window: LoadWindow) -> str:
    """Explain which slots of ``window`` lack a price and why, as far as the curve's notes say.

    The text is empty when none lacks one.
    """
    if window.complete:
        return ""
    missing = window.length - window.known_count
    text = f"{missing} of {window.length} slots in {window_text(curve, window)} have no price"
    known = np.flatnonzero(window.known)
    if known.size:
        text += f"; prices known until {curve.slot_start(int(known[-1]) + 1):%Y-%m-%dT%H:%MZ}"
    refused = refused_text(curve, window)
    return f"{text}; {refused}" if refused else text


def no_prices_text(curve: PriceCurve, window: LoadWindow) -> str:
    """``detail`` of a window without any price, with the refusals that explain it."""
    refused = refused_text(curve, window)
    return f"no known price in {window_text(curve, window)}" + (f"; {refused}" if refused else "")


def refused_text(curve: PriceCurve, window: LoadWindow) -> str:
    """Return the notes (refusals) of the window's slots that have no price, as :func:`notes_text`."""
    inside = np.zeros(len(curve), dtype=bool)
    inside[min(window.first, len(curve)) : min(window.stop, len(curve))] = True
    return notes_text(curve, inside & ~window.known)


def build_plan(
    curve: PriceCurve,
    name: str,
    power_kw: FloatArray,
    *,
    baseline_cost: float | None,
    method: str,
    reason: Reason,
    detail: str = "",
) -> Plan:
    """Return a feasible plan from a per-slot power array (kW, aligned with ``curve``, > 0 only on slots with a price).

    When a planned slot is doubtful, ``reason`` becomes DOUBTFUL_PRICES and ``detail`` starts with the doubts.
    """
    active = np.flatnonzero(power_kw > 0)
    hours = slot_hours(curve)
    doubtful = (power_kw > 0) & (curve.trust() == SlotTrust.DOUBTFUL)
    if doubtful.any():
        reason = Reason.DOUBTFUL_PRICES
        doubts = f"planned on doubtful prices: {notes_text(curve, doubtful)}"
        detail = f"{doubts}; {detail}" if detail else doubts
    return Plan(
        name=name,
        feasible=True,
        start=curve.slot_start(int(active[0])) if active.size else None,
        end=curve.slot_start(int(active[-1]) + 1) if active.size else None,
        power_kw=power_kw,
        curve_start=curve.start,
        resolution=curve.resolution,
        energy_kwh=float(np.sum(power_kw[active])) * hours,
        cost=float(np.dot(curve.prices[active], power_kw[active])) * hours,
        baseline_cost=baseline_cost,
        currency=curve.currency,
        method=method,
        reason=reason,
        detail=detail,
    )


def unplanned(
    curve: PriceCurve,
    name: str,
    *,
    method: str,
    reason: Reason,
    detail: str,
    baseline_cost: float | None = None,
) -> Plan:
    """Return an infeasible plan: nothing scheduled (power all zero), start, end and cost None."""
    return Plan(
        name=name,
        feasible=False,
        start=None,
        end=None,
        power_kw=np.zeros(len(curve)),
        curve_start=curve.start,
        resolution=curve.resolution,
        energy_kwh=0.0,
        cost=None,
        baseline_cost=baseline_cost,
        currency=curve.currency,
        method=method,
        reason=reason,
        detail=detail,
    )
