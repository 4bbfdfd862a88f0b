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
    cost: float
    tie: float  # sum over loads and slots of kWh x slot index (the earliest-first tie key)
    starts: tuple[int, ...]


def brute_joint(
    curve: PriceCurve, loads: Sequence[LoadSpec], *, power_limit_kw: float, base_load_kw: np.ndarray
) -> JointOptimum | None:
    """Optimum over every combination of run starts; energy loads (if any) solved as one LP per combination.

    Loads that cannot run in their window alone are left out (the planner marks them WINDOW_TOO_SHORT).
    Returns None when no combination respects the limit. ``tie`` is only meaningful without energy loads.
    """
    h = hours_per_slot(curve)
    n = len(curve)
    runs = [spec for spec in loads if spec.contiguous]
    charges = [spec for spec in loads if not spec.contiguous]
    options = []
    for spec in runs:
        slots = run_slots(int(spec.duration_min))
        starts = run_starts(curve, slots, spec.earliest_start, spec.deadline)
        if starts:
            options.append((spec, slots, starts))
    charge_slots = []
    for spec in charges:
        slots = [i for i in range(n) if usable(curve, i, spec.earliest_start, spec.deadline)]
        if len(slots) * spec.power_kw * h >= spec.energy_kwh * (1 - 1e-12):
            charge_slots.append((spec, slots))
    best: JointOptimum | None = None
    for combo in itertools.product(*[starts for _, _, starts in options]):
        load = base_load_kw.copy()
        cost, tie = 0.0, 0.0
        for (spec, slots, _), start in zip(options, combo, strict=True):
            load[start : start + slots] += spec.power_kw
            cost += run_cost(curve, start, slots, spec.power_kw)
            tie += sum(spec.power_kw * h * j for j in range(start, start + slots))
        if np.any(load > power_limit_kw + 1e-9):
            continue
        if charge_slots:
            extra = _lp_charges(curve, charge_slots, power_limit_kw - load)
            if extra is None:
                continue
            cost += extra
        if best is None or cost < best.cost - 1e-12 or (abs(cost - best.cost) <= 1e-12 and tie < best.tie):
            best = JointOptimum(cost=cost, tie=tie, starts=combo)
    return best


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
