"""Contiguous loads (dishwasher, washing machine, heat-pump block): one uninterrupted run at constant power."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..prices.curve import FloatArray, PriceCurve
from .plan import Plan, Reason
from .ties import earliest_cheapest, tie_tolerance
from .windows import (
    IntArray,
    LoadWindow,
    build_plan,
    check_positive,
    missing_prices_text,
    no_prices_text,
    resolve_window,
    slot_hours,
    slots_for_duration,
    unplanned,
    window_sums,
    window_text,
)

METHOD = "window_sums"


@dataclass(frozen=True)
class RunOptions:
    """Where a run of ``slots`` slots may start in a window, and what that implies for the plan.

    Attributes:
        slots: run length in slots.
        starts: int array of candidate start indices on the curve, ascending; every slot of each run lies inside
            the window and has a known price.
        sums: price sums of the runs at ``starts`` (currency per kWh, see :func:`window_sums`).
        reason: OPTIMAL or PARTIAL_PRICES when ``starts`` is non-empty, else why the run cannot be placed.
        detail: explanation for the plan.
        baseline_cost: cost of the run starting at the window's first slot, None when that run touches an
            unknown price or does not fit.

    """

    slots: int
    starts: IntArray
    sums: FloatArray
    reason: Reason
    detail: str
    baseline_cost: float | None

    @property
    def feasible(self) -> bool:
        """True when at least one start is possible."""
        return self.starts.size > 0


def run_options(curve: PriceCurve, window: LoadWindow, *, power_kw: float, slots: int) -> RunOptions:
    """Candidate starts of a ``slots``-long run at ``power_kw`` inside ``window`` (see :class:`RunOptions`)."""
    n = len(curve)
    lo, hi = min(window.first, n), min(window.stop, n)
    sums = window_sums(curve.prices[lo:hi], slots)
    known = ~np.isnan(sums)  # a run touching an unknown price is no candidate
    starts, sums = lo + np.flatnonzero(known), sums[known]
    baseline = float(power_kw * slot_hours(curve) * sums[0]) if starts.size and starts[0] == window.first else None
    missing = missing_prices_text(curve, window)
    if window.length < slots:
        reason, detail = (
            Reason.WINDOW_TOO_SHORT,
            f"{window_text(curve, window)} holds {window.length} slots; the run needs {slots}",
        )
    elif window.known_count == 0:
        reason, detail = Reason.NO_PRICES, no_prices_text(curve, window)
    elif starts.size == 0:
        reason = Reason.WINDOW_TOO_SHORT
        detail = f"no {slots} consecutive slots with known prices; {missing}"
    else:
        partial = (Reason.PARTIAL_PRICES, f"{missing}; planned on the known slots only")
        reason, detail = (Reason.OPTIMAL, "") if window.complete else partial
    return RunOptions(slots=slots, starts=starts, sums=sums, reason=reason, detail=detail, baseline_cost=baseline)


def run_power(n: int, start: int, slots: int, power_kw: float) -> FloatArray:
    """Per-slot power (n,) of a run of ``slots`` slots at ``power_kw`` from slot ``start``."""
    power = np.zeros(n)
    power[start : start + slots] = power_kw
    return power


def plan_contiguous(
    curve: PriceCurve,
    *,
    power_kw: float,
    duration_min: float,
    earliest_start: datetime,
    deadline: datetime,
    name: str = "",
) -> Plan:
    """Place one uninterrupted run at constant power where it costs least.

    Args:
        curve: prices per kWh (NaN = unknown); the plan's ``power_kw`` array is aligned with it (same length).
        power_kw: kW drawn while running, > 0.
        duration_min: run time in minutes, > 0; a partial slot rounds up to a whole slot.
        earliest_start: aware datetime (any tz), rounded up to a slot boundary; clipped to the curve start.
        deadline: aware datetime (any tz) by which the run must end, rounded down to a slot boundary; may cross
            midnight or lie past the curve end.
        name: label carried into the plan.

    Returns:
        A :class:`Plan` with method ``window_sums``. The run starts at the least :func:`window_sums` over the
        runs that lie inside the window on slots with a price (a run never spans an unknown, NaN, slot). Ties go
        to the earliest start: a run costing at most the least cost plus the tie tolerance (:mod:`.ties`,
        1e-9 of largest |price| x energy) counts as equal. ``reason`` is OPTIMAL, PARTIAL_PRICES (the window has
        unknown slots; planned on the others, ``detail`` says until when prices are known and why days were
        refused), DOUBTFUL_PRICES (the run uses doubtful prices; ``detail`` says which), WINDOW_TOO_SHORT (power
        all zero, start, end and cost None) or NO_PRICES. ``baseline_cost`` is the cost of starting at the
        window's first slot. O(n * slots) time.

    Raises:
        ValueError: ``power_kw`` or ``duration_min`` not finite and > 0, or a naive datetime.
        TypeError: one of them is not a real number (bool included).

    """
    check_positive(power_kw=power_kw, duration_min=duration_min)
    window = resolve_window(curve, earliest_start, deadline)
    options = run_options(curve, window, power_kw=power_kw, slots=slots_for_duration(duration_min, curve.resolution))
    if not options.feasible:
        return unplanned(curve, name, method=METHOD, reason=options.reason, detail=options.detail)
    energy = power_kw * slot_hours(curve) * options.slots
    tolerance = tie_tolerance(curve.prices[options.starts[0] : options.starts[-1] + options.slots], energy)
    start = int(options.starts[earliest_cheapest(options.sums * (power_kw * slot_hours(curve)), tolerance)])
    return build_plan(
        curve,
        name,
        run_power(len(curve), start, options.slots, power_kw),
        baseline_cost=options.baseline_cost,
        method=METHOD,
        reason=options.reason,
        detail=options.detail,
    )
