"""The joint MILP's exact shortcut when few start combinations remain: every combination is tried, no solver call.

After the pruning of :func:`~.joint._solve` the runs often keep a handful of starts each. With at most one energy
load, placed after every run in the caller's order, the least-cost schedule with the canonical ties (each run in
order as early as it can be among schedules within the tie tolerance of the least cost; the energy load filled by
:func:`~.energy.cheapest_fill` in the room the runs leave, which is its least cost there) is found by trying each
combination: a HiGHS call costs 5-15 ms of CPU even for two binaries, a combination about 0.05 ms.
"""

from __future__ import annotations

from itertools import product

import numpy as np

from ..prices.curve import FloatArray, PriceCurve
from .contiguous import run_power
from .energy import cheapest_fill
from .joint_model import ChargeLoad, JointLoad, RunLoad
from .windows import BoolArray, slot_hours

# Most start combinations tried; beyond this HiGHS is the faster way.
MAX_COMBINATIONS = 64


def few_combinations(fitting: list[JointLoad], keep: list[BoolArray]) -> bool:
    """Return True when :func:`best_combination` applies to the kept starts (masks over each load's starts or slots).

    It does with at most MAX_COMBINATIONS combinations of the runs' kept starts and at most one energy load, after
    every run.
    """
    charges = [number for number, load in enumerate(fitting) if isinstance(load, ChargeLoad)]
    if len(charges) > 1 or (charges and charges[0] != len(fitting) - 1):
        return False
    count = 1
    for load, mask in zip(fitting, keep, strict=True):
        if isinstance(load, RunLoad):
            count *= int(np.count_nonzero(mask))
    return count <= MAX_COMBINATIONS


def best_combination(
    curve: PriceCurve, fitting: list[JointLoad], keep: list[BoolArray], headroom: FloatArray, slack: float
) -> list[FloatArray] | None:
    """Per-load kW arrays (n,) of the canonical least-cost schedule among the kept starts; None when none fits.

    Among the combinations whose cost is within ``slack`` (currency) of the least one, the first in lexicographic
    order of the runs' starts wins (``itertools.product`` over ascending starts yields them in that order).
    """
    runs = [load for load in fitting if isinstance(load, RunLoad)]
    charge = fitting[-1] if isinstance(fitting[-1], ChargeLoad) else None
    hours = slot_hours(curve)
    indices = [np.flatnonzero(mask) for load, mask in zip(fitting, keep, strict=True) if isinstance(load, RunLoad)]
    room_kw = np.maximum(headroom, 0.0)  # a slot the base load fills carries no run (each run fits alone)
    found: list[tuple[float, tuple[int, ...], FloatArray | None]] = []
    for combo in product(*indices):
        drawn = np.zeros(len(curve))
        cost = 0.0
        for load, index in zip(runs, combo, strict=True):
            start = int(load.starts[index])
            drawn[start : start + load.options.slots] += load.spec.power_kw
            cost += float(load.cost[index])
        if np.any(drawn > room_kw):
            continue
        room = headroom - drawn
        power = None
        if charge is not None:
            caps = np.minimum(charge.caps_kw, np.maximum(room[charge.slots], 0.0))
            power = cheapest_fill(curve, charge.slots, caps, charge.energy_kwh)
            if power is None:
                continue
            used = power > 0
            cost += float(np.dot(curve.prices[used], power[used])) * hours
        found.append((cost, combo, power))
    if not found:
        return None
    least = min(cost for cost, _, _ in found)
    _, combo, power = next(entry for entry in found if entry[0] <= least + slack)
    n = len(curve)
    powers = [
        run_power(n, int(load.starts[index]), load.options.slots, load.spec.power_kw)
        for load, index in zip(runs, combo, strict=True)
    ]
    return powers if power is None else [*powers, power]
