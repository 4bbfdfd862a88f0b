"""Heat pumps in the whole-home MILP: the block of columns and rows, the thermostat baseline, the reasons per slot.

Per heat pump and slot t of h hours, with electrical power P_t (kW), store temperature T_t+1 at the slot's end and,
when the heat pump has a minimum power or minimum run / off times, an on/off binary u_t:

    T_t+1 = a T_t + b_t + k_t P_t          (a = 1 - h UA / C, b_t = h (UA ambient_t + gains_t) / C, k_t = h cop_t / C)
    low_t <= T_t+1 <= high_t              (the comfort band widened to what the store can reach, HomeHeatPump.band)
    min_kw u_t <= P_t <= max_kw u_t
    u_t - u_t-1 = v_t - w_t,  sum_{s = t-R+1..t} v_s <= u_t,  sum_{s = t-D+1..t} w_s <= 1 - u_t

with v, w in [0, 1] (start and stop; integral wherever u is), R and D the minimum run and off slots, u_-1 the state
before the horizon, and the leading slots a run or an off period begun before the horizon still needs fixed on or
off (``HomeHeatPump.forced_slots``). P enters the grid balance as a load.

Heat left in the store at the horizon's end is valued like a battery's energy: the objective subtracts
``value x C x (T_n - T_0)`` with ``value`` per kWh of heat = the median known import price (fee included) / the
last slot's COP, the electricity that heat would otherwise cost. Cooling the store down for nothing at the end thus
costs what the heat was worth, and heating it up at the end pays only where a slot is cheaper than that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..prices.curve import FloatArray
from .heat_explain import HeatReason, HeatRun, heat_slot_reasons
from .home_model import HomeHeatPump, HomePlan
from .milp import MilpModel
from .windows import IntArray


@dataclass(frozen=True)
class HeatColumns:
    """Where a heat pump lives in the model: power (n,), end-of-slot temperature (n,), on/off binaries or None."""

    power: IntArray
    temp: IntArray
    on: IntArray | None


def check_heat_pump(pump: HomeHeatPump, *, length: int, horizon: int, hours: float) -> None:
    """Raise ValueError when the pump's arrays do not fit a curve of ``length`` slots or the model is unstable.

    Over the first ``horizon`` slots every array must be finite, the COP > 0 and the band's low <= high; the slot
    must be short against the store's time constant (h x UA <= C), else the explicit Euler step overshoots.
    """
    if len(pump.cop) != length:
        raise ValueError(f"heat pump {pump.name!r}: per-slot arrays need {length} values, got {len(pump.cop)}")
    arrays = [pump.ambient_c, pump.cop, pump.comfort_low_c, pump.comfort_high_c]
    arrays += [] if pump.gains_kw is None else [pump.gains_kw]
    cut = [np.asarray(a[:horizon], dtype=np.float64) for a in arrays]
    if not all(np.isfinite(a).all() for a in cut) or np.any(cut[1] <= 0) or np.any(cut[2] > cut[3]):
        raise ValueError(f"heat pump {pump.name!r}: arrays must be finite, cop > 0 and comfort low <= high")
    if hours * pump.ua_kw_per_k > pump.capacity_kwh_per_k:
        raise ValueError(f"heat pump {pump.name!r}: the slot is too long for its time constant C / UA")


def needs_binary(pump: HomeHeatPump) -> bool:
    """Return True when the heat pump needs on/off binaries (a minimum power, run or off time)."""
    return pump.min_kw > 0 or pump.min_run_slots > 1 or pump.min_off_slots > 1


def add_heat_pump(
    model: MilpModel, pump: HomeHeatPump, *, hours: float, n: int, value: float, relax: bool
) -> tuple[HeatColumns, list[tuple[Any, Any, Any]], list[IntArray]]:
    """Add a heat pump's columns and rows; return them, its grid-balance entries and its comfort slacks (relax).

    ``value`` is the currency per kWh of heat at the horizon's end; ``relax`` replaces the band's bounds by slack
    columns (the returned slacks, empty otherwise).
    """
    t = np.arange(n)
    a, b, k = pump.coefficients(hours, n)
    low, high = pump.band(hours, n)
    power = model.add(n, pump.max_kw)
    end_value = np.zeros(n)
    end_value[-1] = -value * pump.capacity_kwh_per_k
    bounds = (-math.inf, math.inf) if relax else (low, high)
    temp = model.add(n, bounds[1], end_value, lower=bounds[0])
    first = b.copy()
    first[0] += a * pump.initial_temp_c
    model.row([(t, temp, 1.0), (t[1:], temp[:-1], -a), (t, power, -k)], first, first, n)
    slacks: list[IntArray] = []
    if relax:
        below, above = model.add(n, math.inf), model.add(n, math.inf)
        model.row([(t, temp, 1.0), (t, below, 1.0)], low, math.inf, n)
        model.row([(t, temp, 1.0), (t, above, -1.0)], -math.inf, high, n)
        slacks = [below, above]
    on = _on_off(model, pump, power, n) if needs_binary(pump) else None
    return HeatColumns(power, temp, on), [(t, power, -1.0)], slacks


def _on_off(model: MilpModel, pump: HomeHeatPump, power: IntArray, n: int) -> IntArray:
    """Add the on/off binaries, the power range and the minimum run and off times; return the binaries."""
    t = np.arange(n)
    forced_on, forced_off = pump.forced_slots()
    u = model.add(n, np.where(t < forced_off, 0.0, 1.0), lower=np.where(t < forced_on, 1.0, 0.0), integer=True)
    model.row([(t, power, 1.0), (t, u, -pump.max_kw)], -math.inf, 0.0, n)
    model.row([(t, power, 1.0), (t, u, -pump.on_floor_kw)], 0.0, math.inf, n)
    if pump.min_run_slots == 1 and pump.min_off_slots == 1:
        return u
    start, stop = model.add(n, 1.0), model.add(n, 1.0)
    before = np.zeros(n)
    before[0] = 1.0 if pump.initial_on_slots else 0.0
    model.row([(t, u, 1.0), (t[1:], u[:-1], -1.0), (t, start, -1.0), (t, stop, 1.0)], before, before, n)
    for length, changes, sign, bound in ((pump.min_run_slots, start, -1.0, 0.0), (pump.min_off_slots, stop, 1.0, 1.0)):
        if length > 1:
            rows, lags = np.meshgrid(t, np.arange(length), indexing="ij")
            keep = rows >= lags
            model.row([(rows[keep], changes[(rows - lags)[keep]], 1.0), (t, u, sign)], -math.inf, bound, n)
    return u


def lengthened(on: npt.NDArray[np.bool_], run: int, rest: int) -> npt.NDArray[np.bool_]:
    """Return ``on`` (per slot) with runs of at least ``run`` slots and pauses between runs of at least ``rest``.

    A shorter run goes on into the slots after it; a shorter pause is filled.
    """
    out, n, t = on.copy(), on.size, 0
    while t < n:
        if not out[t]:
            t += 1
            continue
        start = t
        while True:
            while t < n and out[t]:
                t += 1
            if t < min(start + run, n):
                out[t : start + run] = True
                continue
            after = t
            while after < n and not out[after]:
                after += 1
            if after == n or after - t >= rest:
                break
            out[t:after] = True
    return out


def heat_tie(pump: HomeHeatPump, columns: HeatColumns, size: int) -> FloatArray:
    """Return the tie-break objective of a heat pump: (n - 1 - t) / n per kW of max_kw, so later running wins.

    It lies in [0, n) over any plan, like a load's start offset, and is smallest when the heat pump runs as late
    as the equal-cost plans allow (heat made just in time leaks least).
    """
    n = columns.power.size
    tie = np.zeros(size)
    tie[columns.power] = (n - 1 - np.arange(n)) / (n * pump.max_kw)
    return tie


def thermostat(pump: HomeHeatPump, hours: float, n: int) -> FloatArray:
    """Return (n,) electrical kW of a thermostat that holds the (widened) comfort floor with the least power.

    Each slot it runs just enough for the slot to end on the floor (within 0..max_kw, at least min_kw when on),
    obeying the leading slots a run or off period begun before the horizon forces.
    """
    a, b, k = pump.coefficients(hours, n)
    low, _ = pump.band(hours, n)
    forced_on, forced_off = pump.forced_slots()
    out = np.zeros(n)
    temp = pump.initial_temp_c
    for t in range(n):
        need = min(max((low[t] - a * temp - b[t]) / k[t], 0.0), pump.max_kw)
        if need > 0 or t < forced_on:
            need = max(need, pump.min_kw)
        out[t] = 0.0 if t < forced_off else need
        temp = a * temp + b[t] + k[t] * out[t]
    return out


def heat_reasons(
    plan: HomePlan, name: str, *, heat_pumps: Sequence[HomeHeatPump], import_price: npt.ArrayLike
) -> list[str]:
    """Return per slot of ``plan`` the code of why the heat pump ``name`` runs as planned (:func:`heat_details`)."""
    return [r.reason for r in heat_details(plan, name, heat_pumps=heat_pumps, import_price=import_price)]


def heat_details(
    plan: HomePlan, name: str, *, heat_pumps: Sequence[HomeHeatPump], import_price: npt.ArrayLike
) -> list[HeatReason]:
    """Return per slot of ``plan`` why the heat pump ``name`` runs as planned, from the plan's own numbers.

    The reasons are :func:`.heat_explain.heat_slot_reasons` (off, comfort_floor, min_run, preheat_before_peak,
    cheap_slot), given the plan's power and temperatures, the floor and off temperatures of :func:`floor_and_off`
    and the import price.

    Args:
        plan: the plan holding ``name`` in ``heat_kw`` and ``temp_c``.
        name: the heat pump's name.
        heat_pumps: the heat pumps the plan was given (``name`` among them).
        import_price: (>= n,) import price per kWh (fee included) the plan used, from its first slot.

    Raises:
        KeyError: ``name`` is not a heat pump of the plan.

    """
    pump = next((p for p in heat_pumps if p.name == name), None)
    if pump is None or name not in plan.heat_kw:
        raise KeyError(name)
    power, temp = plan.heat_kw[name], plan.temp_c[name]
    low, off = floor_and_off(plan, pump)
    run = HeatRun(pump.min_run_slots, pump.on_floor_kw, pump.initial_on_slots)
    price = np.asarray(import_price, dtype=np.float64)[: power.size]
    return heat_slot_reasons(power, temp, low=low, off=off, price=price, run=run)


def floor_and_off(plan: HomePlan, pump: HomeHeatPump) -> tuple[FloatArray, FloatArray]:
    """Return the heat pump's comfort floor and its temperature when off, per slot of ``plan`` (n,), °C.

    The floor is at the slot's end, widened as in :meth:`~.home_model.HomeHeatPump.band`; the second is the
    temperature the store would end the slot at had the heat pump been off in it, from the planned temperature at the
    slot's start. Raises KeyError when the plan does not hold the heat pump.
    """
    temp = plan.temp_c[pump.name]
    n = temp.size - 1
    hours = plan.resolution.total_seconds() / 3600
    a, b, _ = pump.coefficients(hours, n)
    low, _ = pump.band(hours, n)
    return low, a * temp[:-1] + b
