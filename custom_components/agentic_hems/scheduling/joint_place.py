"""Quick schedules for the joint planner: each load at its cheapest place, and two upper bounds on the least cost.

:func:`heuristic` places the loads one at a time; :func:`rounded` rounds the LP relaxation's optimum. Either cost
lets :func:`~.joint._solve` drop starts no cheaper schedule can use and gives the search (:mod:`.joint_search`) its
first bound.
"""

from __future__ import annotations

import math

import numpy as np

from ..prices.curve import FloatArray, PriceCurve
from .contiguous import run_power
from .energy import cheapest_fill
from .joint_model import ChargeLoad, JointLoad, JointModel, RunLoad, clear_starts, load_energy
from .ties import earliest_cheapest
from .windows import slot_hours


def place(curve: PriceCurve, load: JointLoad, room: FloatArray) -> tuple[FloatArray, float] | None:
    """``load`` at its cheapest place within ``room`` (kW per slot): per-slot kW and cost, None if it does not fit."""
    if isinstance(load, RunLoad):
        ok = clear_starts(load.starts, load.options.slots, load.spec.power_kw > room).nonzero()[0]
        if ok.size == 0:
            return None
        best = int(ok[earliest_cheapest(load.cost[ok], load.tolerance)])
        return run_power(len(curve), int(load.starts[best]), load.options.slots, load.spec.power_kw), float(
            load.cost[best]
        )
    caps = np.minimum(load.caps_kw, np.maximum(room[load.slots], 0.0))
    power = cheapest_fill(curve, load.slots, caps, load.energy_kwh, load.order)
    if power is None:
        return None
    used = power > 0
    return power, float(np.dot(curve.prices[used], power[used])) * slot_hours(curve)


def heuristic(curve: PriceCurve, fitting: list[JointLoad], headroom: FloatArray) -> float:
    """Cost of a quick feasible schedule: an upper bound that lets :func:`~.joint._solve` drop hopeless starts.

    The loads go one at a time, most energy first, each to its cheapest place in the room the others left (rounds
    that lift each load out and put it back cost more time than their lower cost saved in the search). ``math.inf``
    when that cannot place every load.
    """
    hours = slot_hours(curve)
    room = headroom.copy()
    costs = []
    for number in sorted(
        range(len(fitting)), key=lambda i: (isinstance(fitting[i], ChargeLoad), -load_energy(fitting[i], hours))
    ):
        spot = place(curve, fitting[number], room)
        if spot is None:
            return math.inf
        room -= spot[0]
        costs.append(spot[1])
    return sum(costs)


def rounded(
    curve: PriceCurve, fitting: list[JointLoad], model: JointModel, x: FloatArray, headroom: FloatArray
) -> float:
    """Cost of ``x`` (the LP relaxation's optimum) rounded: each run at the start with its largest value in ``x``.

    The runs go in order, then each energy load to its cheapest place in the room they leave (:func:`place`). An
    upper bound like :func:`heuristic`'s, often the least cost; ``math.inf`` when the runs break the limit (the
    search's test) or an energy load does not fit.
    """
    drawn = np.zeros(len(curve))
    total = 0.0
    for number, load in enumerate(fitting):
        if isinstance(load, RunLoad):
            start = int(model.keys[number][int(np.argmax(x[model.columns[number]]))])
            run = slice(start, start + load.options.slots)
            drawn[run] += load.spec.power_kw
            if np.any(drawn[run] > np.maximum(headroom[run], 0.0)):  # the search's test (joint_search)
                return math.inf
            total += float(load.cost[np.searchsorted(load.starts, start)])
    room = headroom - drawn
    for load in fitting:
        if isinstance(load, ChargeLoad):
            spot = place(curve, load, room)
            if spot is None:
                return math.inf
            room -= spot[0]
            total += spot[1]
    return total
