"""Energy loads (EV charging): deliver an amount of energy in any slots, at up to a maximum power."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
import math

import numpy as np

from ..prices.curve import FloatArray, PriceCurve
from .plan import Plan, Reason
from .ties import fill_order, tie_tolerance
from .windows import (
    REL_EPS,
    IntArray,
    LoadWindow,
    build_plan,
    check_positive,
    missing_prices_text,
    no_prices_text,
    resolve_window,
    slot_hours,
    unplanned,
    window_text,
)

METHOD = "greedy_sorted"


def fill_in_order(caps_kwh: FloatArray, energy_kwh: float) -> FloatArray | None:
    """Fill slots in array order, each up to its cap, until ``energy_kwh`` is placed.

    Args:
        caps_kwh: float array, the most each slot can take (kWh), in the order the slots are filled.
        energy_kwh: energy to place, > 0.

    Returns:
        kWh per slot (every slot before the last used one at its cap, the last one partial or full, the rest zero),
        or None when the caps cannot hold the energy. Float noise below ``REL_EPS`` relative counts as exact, so no
        sliver slots appear.

    """
    cumulative = caps_kwh.cumsum()  # array methods: no numpy wrapper call (this runs per node of joint_search)
    last = int(cumulative.searchsorted(energy_kwh * (1 - REL_EPS)))
    if last == caps_kwh.size:
        return None
    placed = np.zeros(caps_kwh.size)
    placed[:last] = caps_kwh[:last]
    rest = energy_kwh - (float(cumulative[last - 1]) if last else 0.0)
    placed[last] = caps_kwh[last] if rest >= caps_kwh[last] * (1 - REL_EPS) else rest
    return placed


@dataclass(frozen=True)
class ChargeOptions:
    """The slots an energy load may use in a window, and what that implies for the plan.

    Attributes:
        slots: int array of usable slot indices on the curve (inside the window, known price), ascending.
        reason: OPTIMAL or PARTIAL_PRICES when the known slots can deliver the energy, else why not.
        detail: explanation for the plan.
        baseline_cost: cost of charging at full power from the window's first slot, None when that touches an
            unknown price or does not fit.

    """

    slots: IntArray
    reason: Reason
    detail: str
    baseline_cost: float | None

    @property
    def feasible(self) -> bool:
        """True when the usable slots can deliver the energy."""
        return self.reason in (Reason.OPTIMAL, Reason.PARTIAL_PRICES)


def charge_options(curve: PriceCurve, window: LoadWindow, *, max_power_kw: float, energy_kwh: float) -> ChargeOptions:
    """Usable slots for delivering ``energy_kwh`` at up to ``max_power_kw`` inside ``window``."""
    per_slot = max_power_kw * slot_hours(curve)
    needed = max(math.ceil(energy_kwh / per_slot - REL_EPS), 1)
    # The fill's tolerance is relative, the count's absolute: 0.8750000008750001 kWh at 3.5 kW is one slot by the
    # count, two by the fill. (More slots than the curve holds are too many either way; no such array is built.)
    if needed <= len(curve) and fill_in_order(np.full(needed, per_slot), energy_kwh) is None:
        needed += 1
    slots = np.flatnonzero(window.known)

    baseline = None
    head = (
        np.arange(window.first, window.first + needed)
        if window.first + needed <= min(window.stop, len(curve))
        else None
    )
    if head is not None and not np.isnan(curve.prices[head]).any():
        placed = fill_in_order(np.full(needed, per_slot), energy_kwh)
        assert placed is not None  # ``needed`` full slots hold the energy
        baseline = float(np.dot(curve.prices[head], placed))

    missing = missing_prices_text(curve, window)
    if window.length < needed:
        reason = Reason.WINDOW_TOO_SHORT
        detail = (
            f"{window_text(curve, window)} holds {window.length} slots; "
            f"{energy_kwh:g} kWh at {max_power_kw:g} kW needs {needed}"
        )
    elif slots.size == 0:
        reason, detail = Reason.NO_PRICES, no_prices_text(curve, window)
    elif slots.size < needed:
        reason = Reason.WINDOW_TOO_SHORT
        detail = f"{energy_kwh:g} kWh at {max_power_kw:g} kW needs {needed} slots with known prices; {missing}"
    else:
        partial = (Reason.PARTIAL_PRICES, f"{missing}; planned on the known slots only")
        reason, detail = (Reason.OPTIMAL, "") if window.complete else partial
    return ChargeOptions(slots=slots, reason=reason, detail=detail, baseline_cost=baseline)


def fill_positions(prices: FloatArray, energy_kwh: float) -> IntArray:
    """Positions of ``prices`` (one per slot, ascending slots) in the order :func:`cheapest_fill` fills them."""
    return fill_order(prices, tie_tolerance(prices, energy_kwh) / (energy_kwh * max(prices.size, 1)))


def cheapest_fill(
    curve: PriceCurve, slots: IntArray, caps_kw: FloatArray, energy_kwh: float, order: IntArray | None = None
) -> FloatArray | None:
    """Per-slot kW (n,) placing ``energy_kwh`` in the cheapest of ``slots`` (ascending) at up to ``caps_kw`` each.

    Slots fill in :func:`~.ties.fill_order`: prices closer than the tie tolerance spread over the slots count as
    equal and the earliest slot goes first. ``order``, when given, is that order (:func:`fill_positions` of the
    slots' prices and the energy), computed once by a caller that fills the same slots often. None when the caps
    cannot hold the energy.
    """
    hours = slot_hours(curve)
    if order is None:
        order = fill_positions(curve.prices[slots], energy_kwh)
    placed = fill_in_order(caps_kw[order] * hours, energy_kwh)
    if placed is None:
        return None
    power = np.zeros(len(curve))
    power[slots[order]] = placed / hours
    return power


def plan_energy(
    curve: PriceCurve,
    *,
    max_power_kw: float,
    energy_kwh: float,
    earliest_start: datetime,
    deadline: datetime,
    name: str = "",
) -> Plan:
    """Deliver exactly ``energy_kwh`` in the cheapest slots, not necessarily contiguous.

    Args:
        curve: prices per kWh (NaN = unknown); the plan's ``power_kw`` array is aligned with it (same length).
        max_power_kw: maximum charge power in kW, > 0.
        energy_kwh: energy to deliver in kWh, > 0.
        earliest_start: aware datetime (any tz), rounded up to a slot boundary; clipped to the curve start.
        deadline: aware datetime (any tz) by which charging must end, rounded down to a slot boundary; may cross
            midnight or lie past the curve end.
        name: label carried into the plan.

    Returns:
        A :class:`Plan` with method ``greedy_sorted``: the window's slots with a price sorted by (price, index),
        the first ``floor(E / (P h))`` at ``max_power_kw`` and the next one (the most expensive chosen) at the
        remaining power. Minimising ``sum(p_i x_i)`` subject to ``sum(x_i) = E`` and ``0 <= x_i <= P h`` is a
        fractional knapsack: any solution that leaves a cheaper slot below capacity while using a dearer one
        can move energy to the cheaper slot without raising the cost, so filling the cheapest slots first is
        optimal (also with negative prices, since the energy is fixed). Ties go to the earliest slot: prices
        closer than the tie tolerance (:mod:`.ties`) count as equal, and the plan costs at most that tolerance
        more than the exact optimum. Unknown (NaN) slots are never used. ``reason`` and ``detail`` as for
        :func:`plan_contiguous`; ``baseline_cost`` is charging at full power from the window's first slot.
        O(n log n) time.

    Raises:
        ValueError: ``max_power_kw`` or ``energy_kwh`` not finite and > 0, or a naive datetime.
        TypeError: one of them is not a real number (bool included).

    """
    check_positive(max_power_kw=max_power_kw, energy_kwh=energy_kwh)
    window = resolve_window(curve, earliest_start, deadline)
    options = charge_options(curve, window, max_power_kw=max_power_kw, energy_kwh=energy_kwh)
    if not options.feasible:
        return unplanned(curve, name, method=METHOD, reason=options.reason, detail=options.detail)
    power = cheapest_fill(curve, options.slots, np.full(options.slots.size, max_power_kw), energy_kwh)
    assert power is not None  # charge_options counted enough known slots at full power
    return build_plan(
        curve,
        name,
        power,
        baseline_cost=options.baseline_cost,
        method=METHOD,
        reason=options.reason,
        detail=options.detail,
    )
