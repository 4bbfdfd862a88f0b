"""Independent reference solvers for the scheduling tests: brute force over datetimes and scipy's linprog.

They share no code with the planners: windows are checked slot by slot on datetimes (a slot may be used when
``start >= earliest_start`` and ``end <= deadline``, which is exactly rounding earliest up and deadline down), and
costs are summed with math.fsum.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from scipy.optimize import linprog

from custom_components.agentic_hems.prices.curve import PriceCurve
from custom_components.agentic_hems.scheduling import LoadSpec


def hours_per_slot(curve: PriceCurve) -> float:
    return curve.resolution.total_seconds() / 3600


def usable(curve: PriceCurve, i: int, earliest: datetime, deadline: datetime) -> bool:
    """Slot i lies inside [earliest, deadline) and has a known price."""
    start = curve.slot_start(i)
    return start >= earliest and start + curve.resolution <= deadline and not math.isnan(curve.prices[i])


def run_slots(duration_min: int, resolution_min: int = 15) -> int:
    """Whole slots for an integer number of minutes (integer ceiling)."""
    return -(-duration_min // resolution_min)


def run_starts(curve: PriceCurve, slots: int, earliest: datetime, deadline: datetime) -> list[int]:
    """Every start whose run of ``slots`` slots is usable throughout."""
    return [
        i
        for i in range(len(curve) - slots + 1)
        if all(usable(curve, j, earliest, deadline) for j in range(i, i + slots))
    ]


def run_cost(curve: PriceCurve, start: int, slots: int, power_kw: float) -> float:
    return math.fsum(float(p) * power_kw * hours_per_slot(curve) for p in curve.prices[start : start + slots])


def brute_contiguous(
    curve: PriceCurve, *, power_kw: float, duration_min: int, earliest: datetime, deadline: datetime
) -> tuple[float, int] | None:
    """(cost, start index) of the cheapest run, earliest on exact ties; None when nothing fits."""
    slots = run_slots(duration_min)
    best: tuple[float, int] | None = None
    for start in run_starts(curve, slots, earliest, deadline):
        cost = run_cost(curve, start, slots, power_kw)
        if best is None or cost < best[0]:
            best = (cost, start)
    return best


def lp_energy(
    curve: PriceCurve,
    *,
    max_power_kw: float,
    energy_kwh: float,
    earliest: datetime,
    deadline: datetime,
    caps_kw: np.ndarray | None = None,
) -> float | None:
    """Least cost of delivering exactly ``energy_kwh`` (LP, HiGHS via linprog); None when infeasible."""
    slots = [i for i in range(len(curve)) if usable(curve, i, earliest, deadline)]
    if not slots:
        return None
    h = hours_per_slot(curve)
    upper = [max_power_kw if caps_kw is None else min(max_power_kw, max(caps_kw[i], 0.0)) for i in slots]
    result = linprog(
        c=[float(curve.prices[i]) * h for i in slots],
        A_eq=[[h] * len(slots)],
        b_eq=[energy_kwh],
        bounds=list(zip([0.0] * len(slots), upper, strict=True)),
        method="highs",
    )
    return float(result.fun) if result.status == 0 else None


@dataclass(frozen=True)
class JointOptimum:
    """The canonical schedule: least cost, then each load in order as early as possible.

    ``starts`` are the run starts in the order of the runs; ``charge`` is the single energy load's kW per slot (None
    without one, or with several, when only ``cost`` is meaningful).
    """

    cost: float
    starts: tuple[int, ...]
    charge: np.ndarray | None


def brute_joint(
    curve: PriceCurve,
    loads: Sequence[LoadSpec],
    *,
    power_limit_kw: float,
    base_load_kw: np.ndarray,
    prices: Sequence[float] | None = None,
) -> JointOptimum | None:
    """Optimum over every combination of run starts, with ties broken lexicographically in the order of ``loads``.

    A single energy load is placed exactly in each combination: its usable slots sorted by (price, index), filled
    in turn up to min(power, room left). Several energy loads are solved as one LP per combination (cost only).
    Among the combinations within 1e-9 of the cost scale (max |price| x total energy) of the least cost, the one
    whose loads, in order, start earliest (a run's start, an energy load's energy-weighted mean slot) wins.
    ``prices`` (default the curve's) are the exact prices behind a curve whose prices carry float noise.
    Loads that cannot run in their window alone are left out (the planner marks them WINDOW_TOO_SHORT).
    Returns None when no combination respects the limit.
    """
    exact = [float(p) for p in (curve.prices if prices is None else prices)]
    h = hours_per_slot(curve)
    n = len(curve)
    runs, charges = [], []
    for spec in loads:
        if spec.contiguous:
            slots = run_slots(int(spec.duration_min))
            starts = run_starts(curve, slots, spec.earliest_start, spec.deadline)
            if starts:
                runs.append((spec, slots, starts))
        else:
            slots = [i for i in range(n) if usable(curve, i, spec.earliest_start, spec.deadline)]
            if len(slots) * spec.power_kw * h >= spec.energy_kwh * (1 - 1e-12):
                charges.append((spec, slots))
    energy = sum(spec.power_kw * h * k for spec, k, _ in runs) + sum(spec.energy_kwh for spec, _ in charges)
    scale = max((abs(p) for p in exact if not math.isnan(p)), default=0.0) * energy
    found: list[tuple[float, tuple[float, ...], tuple[int, ...], np.ndarray | None]] = []
    for combo in itertools.product(*[starts for _, _, starts in runs]):
        load = base_load_kw.copy()
        cost = 0.0
        for (spec, slots, _), start in zip(runs, combo, strict=True):
            load[start : start + slots] += spec.power_kw
            cost += math.fsum(exact[j] * spec.power_kw * h for j in range(start, start + slots))
        if np.any(load > power_limit_kw + 1e-9):
            continue
        charge = None
        if len(charges) == 1:
            charge = _fill(exact, *charges[0], np.maximum(power_limit_kw - load, 0.0), h)
            if charge is None:
                continue
            cost += math.fsum(exact[i] * charge[i] * h for i in range(n) if charge[i] > 0)
        elif charges:
            extra = _lp_charges(curve, charges, power_limit_kw - load)
            if extra is None:
                continue
            cost += extra
        found.append((cost, _order_key(loads, runs, charges, combo, charge, h), combo, charge))
    if not found:
        return None
    least = min(cost for cost, *_ in found)
    cost, _, combo, charge = min((f for f in found if f[0] <= least + 1e-9 * scale + 1e-12), key=lambda f: f[1])
    return JointOptimum(cost=cost, starts=combo, charge=charge)


def _fill(prices: list[float], spec: LoadSpec, slots: list[int], room: np.ndarray, h: float) -> np.ndarray | None:
    """One energy load in its slots by (price, index), each up to min(power, room): kW per slot, or None."""
    power = np.zeros(len(prices))
    left = spec.energy_kwh
    for i in sorted(slots, key=lambda i: (prices[i], i)):
        take = min(spec.power_kw, float(room[i])) * h
        if left <= take * (1 + 1e-12):
            power[i] = left / h
            return power
        power[i], left = take / h, left - take
    return None


def _order_key(loads, runs, charges, combo, charge, h) -> tuple[float, ...]:  # type: ignore[no-untyped-def]
    """Each load's earliness in the order of ``loads``: a run's start; the energy load's mean slot."""
    starts = {id(spec): start for (spec, _, _), start in zip(runs, combo, strict=True)}
    key: list[float] = []
    for spec in loads:
        if id(spec) in starts:
            key.append(float(starts[id(spec)]))
        elif charge is not None and any(spec is c for c, _ in charges):
            key.append(round(float(np.dot(charge, np.arange(len(charge)))) * h / spec.energy_kwh, 9))
    return tuple(key)


def _lp_charges(curve: PriceCurve, charge_slots: list[tuple[LoadSpec, list[int]]], room: np.ndarray) -> float | None:
    """Least cost of all energy loads together within ``room`` kW per slot; None when infeasible."""
    h = hours_per_slot(curve)
    columns = [(number, i) for number, (_, slots) in enumerate(charge_slots) for i in slots]
    if np.any(room < -1e-9):
        return None
    c = [float(curve.prices[i]) * h for _, i in columns]
    bounds = [(0.0, charge_slots[number][0].power_kw) for number, _ in columns]
    a_eq = [[h if number == load else 0.0 for number, _ in columns] for load in range(len(charge_slots))]
    b_eq = [spec.energy_kwh for spec, _ in charge_slots]
    touched = sorted({i for _, i in columns})
    a_ub = [[1.0 if i == slot else 0.0 for _, i in columns] for slot in touched]
    b_ub = [max(float(room[slot]), 0.0) for slot in touched]
    result = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
    return float(result.fun) if result.status == 0 else None
