"""The whole-home MILP's on/off and direction binaries rounded from an LP answer: plans in hand for its solve.

With every run fixed, a plan needs the heat pumps' and energy loads' on/off binaries and, where a binary keeps them
apart, one direction per slot for each battery and for the grid. :func:`rounded_lp` fixes them from the LP's answer
and solves the LP again: when it is feasible, its answer is a whole plan (a MIP start, or the plan itself when it
costs the LP's optimum). A fixed-speed heat pump cannot run at the LP's part load, and runs made long enough
overheat its store; its pattern is then priced alone (:func:`priced`).
"""

from __future__ import annotations

from collections.abc import Callable
import math

import numpy as np

from ..prices.curve import FloatArray
from .heat_pattern import priced_power
from .highs import Result
from .home_build import Columns, dump_pays
from .home_heat import HeatColumns, lengthened
from .home_inputs import Inputs
from .home_model import TOL_KW
from .milp import MilpModel
from .windows import IntArray

PRICED_ROUNDS = 4  # at most this many rounds of pricing the heat pumps alone and solving the LP with their patterns


def rounded_lp(
    inputs: Inputs, model: MilpModel, cols: Columns, objective: FloatArray, *, upper: FloatArray, x: FloatArray
) -> Result:
    """Return the LP with every on/off binary fixed as :func:`rounded` sets them, in two steps.

    First the energy loads' binaries, rounded from ``x``, under ``upper`` (each battery and the grid may still take
    either direction: kept to ``x``'s, an EV moved to a slot where ``x`` drew little often has no plan as cheap).
    Then the heat pumps' binaries, rounded from that LP's answer, with the directions it favours (:func:`directed`);
    when that LP is infeasible, the heat pumps run as :func:`priced` finds instead. With no heat pump binary and an
    answer already exclusive, the first LP is returned.
    """
    loads = np.concatenate([np.zeros(0, dtype=np.intp), *cols.on.values()])
    bounds = (np.concatenate(model.lower), upper)
    if loads.size:
        lower, fixed = model.pinned(loads, rounded(inputs, cols, x)[loads], upper)
        first = model.solve(objective, upper=fixed, lower=lower, relax=True)
        if first.x is not None:
            x, bounds = np.asarray(first.x, dtype=np.float64), (lower, fixed)
            if all(h.on is None for h in cols.heat) and exclusive(inputs, cols, x):
                return first
    on = on_columns(cols)
    lower, fixed = model.pinned(on, rounded(inputs, cols, x)[on], directed(inputs, cols, x, upper))
    found = model.solve(objective, upper=fixed, lower=lower, relax=True)
    if found.x is None and any(h.on is not None for h in cols.heat):
        return priced(inputs, model, cols, objective, bounds=bounds) or found
    return found


def rounded(inputs: Inputs, cols: Columns, x: FloatArray) -> FloatArray:
    """Return ``x`` with the on/off binaries on wherever it runs, runs and pauses made long enough.

    A heat pump is on where its power exceeds ``TOL_KW``, a run shorter than its minimum run goes on into the
    following slots and a pause shorter than its minimum off time is filled (:func:`~.home_heat.lengthened`),
    counting the slots it ran before the horizon (a run it continues needs only the rest of its minimum run, and a
    pause at the start follows that run); an energy load is on where it draws at least half its least power (the
    nearer of off and its least power). The LP with those binaries fixed is a plan when it is feasible.
    """
    x = x.copy()
    for pump, heat in zip(inputs.heat_pumps, cols.heat, strict=True):
        if heat.on is not None:
            ran = np.ones(min(pump.initial_on_slots, pump.min_run_slots), dtype=bool)
            on = np.concatenate([ran, x[heat.power] > TOL_KW])
            x[heat.on] = lengthened(on, pump.min_run_slots, pump.min_off_slots)[ran.size :]
    for load, columns in zip(inputs.loads, cols.loads, strict=True):
        if load.spec.name in cols.on:
            x[cols.on[load.spec.name]] = x[columns] >= load.spec.min_power_kw / 2
    return x


def priced(
    inputs: Inputs, model: MilpModel, cols: Columns, objective: FloatArray, *, bounds: tuple[FloatArray, FloatArray]
) -> Result | None:
    """Return the LP with the heat pumps' on/off as each one alone would run, or None when none fits.

    From the LP under ``bounds`` (the columns' lower and upper bounds), in rounds (at most ``PRICED_ROUNDS``): each
    heat pump's pattern is :func:`~.heat_pattern.priced_power`'s at the cost of its power in each slot beside the
    rest of the home as that LP runs it (:func:`slot_cost`), and the heat it leaves valued as the objective values
    it; the LP with those patterns fixed gives the next round its home. The rounds stop when that LP no longer
    falls. Two such chains run: with the batteries and energy loads in "the rest" and with them left out (they can
    move; with one heat pump on/off, that chain is one round). The cheapest LP's patterns are then fixed with the
    other on/off binaries (:func:`rounded`) and the directions its answer favours (:func:`directed`).
    """
    heat_on = np.concatenate([np.zeros(0, dtype=np.intp), *(h.on for h in cols.heat if h.on is not None)])
    relaxed = model.solve(objective, upper=bounds[1], lower=bounds[0], relax=True)
    best: tuple[float, FloatArray] | None = None  # the cheapest LP with patterns fixed: optimum, answer
    several = sum(h.on is not None for h in cols.heat) > 1  # else, without the movable devices, x does not count
    for movable in (True, False):
        found, last = relaxed, math.inf
        for _ in range(PRICED_ROUNDS if movable or several else 1):
            x = None if found.x is None else np.asarray(found.x, dtype=np.float64)
            values = None if x is None else _patterns(inputs, cols, objective, bounds[1], x, movable=movable)
            if values is None:
                break
            lower, upper = _pinned(bounds, heat_on, values)
            trial = model.solve(objective, upper=upper, lower=lower, relax=True)
            if trial.x is None or trial.fun is None or trial.fun >= last:
                break
            found, last = trial, trial.fun
            if best is None or trial.fun < best[0]:
                best = (trial.fun, np.asarray(trial.x, dtype=np.float64))
    if best is None:
        return None
    x = best[1]
    values = rounded(inputs, cols, x)
    values[heat_on] = np.round(x[heat_on])
    lower, upper = _pinned(bounds, on_columns(cols), values)
    return model.solve(objective, upper=directed(inputs, cols, x, upper), lower=lower, relax=True)


def _pinned(
    bounds: tuple[FloatArray, FloatArray], columns: IntArray, values: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Return copies of ``bounds`` (lower, upper) with ``columns`` fixed at ``values[columns]``."""
    lower, upper = bounds[0].copy(), bounds[1].copy()
    lower[columns] = upper[columns] = values[columns]
    return lower, upper


def _patterns(
    inputs: Inputs, cols: Columns, objective: FloatArray, upper: FloatArray, x: FloatArray, *, movable: bool
) -> FloatArray | None:
    """Return ``x`` with each heat pump's on/off binaries as :func:`~.heat_pattern.priced_power` runs it alone.

    Its cost per slot is :func:`slot_cost`'s (``movable`` passed on) with the home as in ``x``, the heat it leaves
    valued as ``objective`` values the store's last temperature. None when some heat pump finds no pattern.
    """
    out = x.copy()
    for pump, heat in zip(inputs.heat_pumps, cols.heat, strict=True):
        if heat.on is not None:
            cost = slot_cost(inputs, cols, objective, upper, x=x, heat=heat, movable=movable)
            power = priced_power(pump, inputs.tariff.hours, cost, float(-objective[heat.temp[-1]]))
            if power is None:
                return None
            out[heat.on] = power > 0
    return out


def slot_cost(
    inputs: Inputs,
    cols: Columns,
    objective: FloatArray,
    upper: FloatArray,
    *,
    x: FloatArray,
    heat: HeatColumns,
    movable: bool = True,
) -> Callable[[FloatArray], FloatArray]:
    """Return the cost of the heat pump ``heat`` drawing given kW in each slot, beside the rest of the home.

    The function maps (m,) kW to (n, m) costs (``objective``'s units): the grid and curtailment meet the heat
    pump's power plus the rest of the home's demand as in ``x`` (without ``movable``: only what cannot move, the
    base load less PV, the runs and the other heat pumps; the batteries and energy loads left out) at least cost
    under ``upper`` (import up to the fuse, export up to its limit, PV curtailed up to what may be): inf where
    they cannot.
    """
    rest = x[cols.imp] - x[cols.exp] - x[cols.cur] - x[heat.power]  # kW the home draws without it, before curtailing
    for load, columns in zip(inputs.loads, cols.loads, strict=True):
        if not (movable or load.slots):
            rest[load.keys] -= x[columns]
    for charge, discharge in zip(cols.charge, cols.discharge, strict=True) if not movable else ():
        rest -= x[charge] - x[discharge]
    curtail, fuse, export = (upper[c][:, None] for c in (cols.cur, cols.imp, cols.exp))
    price_in, price_out = objective[cols.imp][:, None], objective[cols.exp][:, None]
    own = objective[heat.power][:, None]

    def cost(kw: FloatArray) -> FloatArray:
        need = rest[:, None] + kw[None, :]
        low, high = np.maximum(need, -export), np.minimum(need + curtail, fuse)
        grid = [np.clip(0.0, low, high), low, high]  # kW from the grid; cost is linear either side of 0
        best = np.min([np.where(g >= 0, price_in * g, -price_out * g) for g in grid], axis=0)
        return np.where(low > high + TOL_KW, math.inf, best) + own * kw[None, :]

    return cost


def directed(inputs: Inputs, cols: Columns, x: FloatArray, upper: FloatArray) -> FloatArray:
    """Return ``upper`` with one side of each pair that has a binary at 0, in every slot: the side smaller in ``x``.

    The pairs are charge and discharge, import and export; any answer is then exclusive there and its binaries can
    be set to match.
    """
    out = upper.copy()
    tariff = inputs.tariff
    pairs = [(c, d, dump_pays(inputs)) for c, d in zip(cols.charge, cols.discharge, strict=True)]
    pairs.append((cols.imp, cols.exp, tariff.export_price > tariff.import_price))
    for first, second, has_binary in pairs:
        favours_first = x[first] >= x[second]
        out[first[has_binary & ~favours_first]] = 0.0
        out[second[has_binary & favours_first]] = 0.0
    return out


def exclusive(inputs: Inputs, cols: Columns, x: FloatArray) -> bool:
    """Return True when no slot with a binary both charges and discharges a battery, or both imports and exports."""
    dump = dump_pays(inputs)
    both = [(x[c] > TOL_KW) & (x[d] > TOL_KW) & dump for c, d in zip(cols.charge, cols.discharge, strict=True)]
    grid = (x[cols.imp] > TOL_KW) & (x[cols.exp] > TOL_KW) & (inputs.tariff.export_price > inputs.tariff.import_price)
    return not (grid.any() or any(b.any() for b in both))


def on_columns(cols: Columns) -> IntArray:
    """Return the on/off binaries of the heat pumps and the energy loads with a least power."""
    return np.concatenate(
        [np.zeros(0, dtype=np.intp), *(h.on for h in cols.heat if h.on is not None), *cols.on.values()]
    )


def matched(cols: Columns, x: FloatArray) -> FloatArray:
    """Return ``x`` with each direction binary set to the flow it allows (1 where it charges or imports)."""
    x = x.copy()
    for switch, flow in cols.switches:
        x[switch] = x[flow] > 0
    return x
