"""The cost evaluator of the whole-home plan: what a schedule costs and which limits it breaks.

:func:`evaluate` is the one evaluator for the plan, its baseline and the benchmarks' other planners. Units as in
:mod:`.home_model`. Nothing here imports Home Assistant or scipy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..prices.curve import FloatArray
from .home_model import TOL_C, TOL_KW, GridFees, HomeBattery, HomeHeatPump, Limit, PhaseLimits, phase_power, slot_limits


def quarter_peaks(import_kw: FloatArray, quarter: npt.NDArray[np.intp] | None) -> FloatArray:
    """Return each slot's 15-minute average import: the mean over its quarter-hour (``quarter`` per slot), or itself.

    Slots of 15 minutes or longer carry a constant import, so their 15-minute average is the import (``quarter``
    None); shorter slots are averaged over the slots of their quarter-hour inside the horizon.
    """
    if quarter is None:
        return import_kw
    means: FloatArray = np.bincount(quarter, import_kw) / np.maximum(np.bincount(quarter), 1)
    return means[quarter]


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """Cost of a schedule (:func:`evaluate`), in currency, with the grid flows and SoC it implies.

    Attributes:
        cost: import cost (network fee included) - export revenue + battery wear + capacity charge.
        terminal_value: value of the energy left in the batteries and heat stores at the end (sum over batteries
            of value per kWh x (final - initial SoC), over heat pumps of value per kWh of heat x C x (final -
            initial temperature)); positive when they end fuller (warmer) than they started.
        net_cost: ``cost - terminal_value``, the quantity the plan minimises.
        import_kw, export_kw: (n,) grid flows (never both > 0 in a slot).
        soc_kwh: per battery (n + 1,) state of charge at each slot boundary, from the initial one.
        violations: English sentences for every broken limit (fuse, export limit, SoC range, comfort band, a heat
            pump's power range and minimum run and off times, phase limit); empty when none.
        fee_cost: the network fee on the import (part of ``cost``).
        capacity_cost: the capacity charge, capacity price x the peak above each month's floor (part of ``cost``).
        peak_kw: the highest 15-minute average import.
        temp_c: per heat pump (n + 1,) store temperature at each slot boundary.
        phase_kw: per phase (n,) net kW when phase limits were given, else empty.

    """

    cost: float
    terminal_value: float
    net_cost: float
    import_kw: FloatArray
    export_kw: FloatArray
    soc_kwh: dict[str, FloatArray]
    violations: list[str] = field(default_factory=list)
    fee_cost: float = 0.0
    capacity_cost: float = 0.0
    peak_kw: float = 0.0
    temp_c: dict[str, FloatArray] = field(default_factory=dict)
    phase_kw: dict[str, FloatArray] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Tariff:
    """What the grid costs and allows over a horizon of n slots.

    Attributes:
        import_price, export_price: (n,) currency per kWh, finite; the import price includes the network fee.
        hours: slot length in hours.
        fuse_kw: most import per slot, kW: a number, or (n,) one per slot (math.inf for none).
        export_limit_kw: most export per slot (0 for zero-export, math.inf for none).
        terminal_price: currency per kWh stored at the horizon's end, per battery name, and per kWh of heat stored
            (capacity x temperature gain) per heat pump name.
        fees: the network fees cut to the n slots (``energy_fee`` is the part of ``import_price`` reported as
            ``fee_cost``); None for none.
        quarter: (n,) index of each slot's quarter-hour when slots are shorter than 15 minutes, else None.
        phases: per-phase limits, None for none.

    """

    import_price: FloatArray
    export_price: FloatArray
    hours: float
    fuse_kw: Limit
    export_limit_kw: float
    terminal_price: dict[str, float]
    fees: GridFees | None = None
    quarter: npt.NDArray[np.intp] | None = None
    phases: PhaseLimits | None = None


def evaluate(
    tariff: Tariff,
    *,
    house_kw: FloatArray,
    pv_kw: FloatArray,
    battery_kw: dict[str, FloatArray],
    batteries: tuple[HomeBattery, ...],
    heat_kw: Mapping[str, FloatArray] | None = None,
    heat_pumps: tuple[HomeHeatPump, ...] = (),
    load_kw: Mapping[str, FloatArray] | None = None,
) -> Evaluation:
    """Cost of a schedule: the grid takes whatever the house, the PV, the batteries and the heat pumps leave.

    Args:
        tariff: prices, fees and limits over the n slots.
        house_kw: (n,) everything the house draws (base load plus planned loads) except the heat pumps, kW.
        pv_kw: (n,) PV actually produced (forecast minus curtailment), kW.
        battery_kw: per battery (n,) AC power, positive charging, negative discharging.
        batteries: the batteries named in ``battery_kw``.
        heat_kw: per heat pump (n,) electrical kW; None for none.
        heat_pumps: the heat pumps named in ``heat_kw``.
        load_kw: per load (n,) kW (part of ``house_kw``, the rest being the base load); needed for phase limits, each
            on its own phase (fixed loads too).

    Returns:
        An :class:`Evaluation`; the SoC and store temperatures follow the powers through the models, and limits
        broken by more than ``TOL_KW`` (``TOL_C`` for the comfort band, widened by :meth:`HomeHeatPump.band`) are
        listed in ``violations`` (the cost is still computed). A heat pump runs in a slot where it draws more than
        ``TOL_KW``; its runs and pauses are checked against its minimum run and off times (:func:`short_periods`).

    """
    h, heat, n = tariff.hours, dict(heat_kw or {}), house_kw.size
    net = house_kw + sum(heat.values(), np.zeros(n)) - pv_kw + sum((battery_kw[b.name] for b in batteries), np.zeros(n))
    imp, exp = np.maximum(net, 0.0), np.maximum(-net, 0.0)
    violations: list[str] = []
    over_fuse = over_text("import above the fuse", imp, slot_limits(tariff.fuse_kw, n))
    violations += [over_fuse] if over_fuse else []
    if np.any(exp > tariff.export_limit_kw + TOL_KW):
        violations.append(f"export above the {tariff.export_limit_kw:g} kW limit")
    cost = h * (float(tariff.import_price @ imp) - float(tariff.export_price @ exp))
    soc, terminal = _batteries(tariff, battery_kw, batteries, violations)
    cost += sum(b.wear_cost * h * float(np.sum(np.abs(battery_kw[b.name]))) for b in batteries)
    temps, heat_value = _heat(tariff, heat, heat_pumps, violations)
    fee_cost, capacity_cost, peak = _fees(tariff, imp)
    devices = _devices(load_kw, battery_kw, heat, pv_kw, house_kw)
    phase_kw = {} if tariff.phases is None else _phases(tariff.phases, devices, violations)
    return Evaluation(
        cost=cost + capacity_cost,
        terminal_value=terminal + heat_value,
        net_cost=cost + capacity_cost - terminal - heat_value,
        import_kw=imp,
        export_kw=exp,
        soc_kwh=soc,
        violations=violations,
        fee_cost=fee_cost,
        capacity_cost=capacity_cost,
        peak_kw=peak,
        temp_c=temps,
        phase_kw=phase_kw,
    )


def _batteries(
    tariff: Tariff, battery_kw: dict[str, FloatArray], batteries: tuple[HomeBattery, ...], violations: list[str]
) -> tuple[dict[str, FloatArray], float]:
    """Return the batteries' SoC paths and terminal value; append their broken limits to ``violations``."""
    h = tariff.hours
    soc: dict[str, FloatArray] = {}
    terminal = 0.0
    for bat in batteries:
        power = battery_kw[bat.name]
        charge, discharge = np.maximum(power, 0.0), np.maximum(-power, 0.0)
        steps = h * (bat.charge_efficiency * charge - discharge / bat.discharge_efficiency)
        soc[bat.name] = bat.initial_kwh + np.concatenate(([0.0], np.cumsum(steps)))
        terminal += tariff.terminal_price[bat.name] * float(soc[bat.name][-1] - bat.initial_kwh)
        if np.any(soc[bat.name] < bat.floor_kwh - TOL_KW) or np.any(soc[bat.name] > bat.ceiling_kwh + TOL_KW):
            violations.append(f"battery {bat.name!r} leaves its state-of-charge range")
        if np.any(charge > bat.charge_kw + TOL_KW) or np.any(discharge > bat.discharge_kw + TOL_KW):
            violations.append(f"battery {bat.name!r} exceeds its power limits")
    return soc, terminal


def _heat(
    tariff: Tariff, heat_kw: dict[str, FloatArray], heat_pumps: tuple[HomeHeatPump, ...], violations: list[str]
) -> tuple[dict[str, FloatArray], float]:
    """Return the stores' temperature paths and the value of their heat gain; append broken limits."""
    temps: dict[str, FloatArray] = {}
    value = 0.0
    for pump in heat_pumps:
        power = heat_kw[pump.name]
        temps[pump.name] = temp = pump.temperatures(power, tariff.hours)
        gain = pump.capacity_kwh_per_k * float(temp[-1] - pump.initial_temp_c)
        value += tariff.terminal_price[pump.name] * gain
        low, high = pump.band(tariff.hours, power.size)
        if np.any(temp[1:] < low - TOL_C) or np.any(temp[1:] > high + TOL_C):
            violations.append(f"heat pump {pump.name!r} leaves its comfort band")
        running = power > TOL_KW
        if np.any(power > pump.max_kw + TOL_KW) or np.any(running & (power < pump.min_kw - TOL_KW)):
            violations.append(f"heat pump {pump.name!r} runs outside its power range")
        short_run, short_off = short_periods(pump, running)
        if short_run:
            violations.append(f"heat pump {pump.name!r} runs shorter than its minimum run time")
        if short_off:
            violations.append(f"heat pump {pump.name!r} pauses shorter than its minimum off time")
    return temps, value


def short_periods(pump: HomeHeatPump, running: npt.NDArray[np.bool_]) -> tuple[bool, bool]:
    """Return (short run, short pause): whether a run ends before ``min_run_slots`` or a pause before ``min_off_slots``.

    ``running`` is (n,) whether the heat pump runs in each slot. The state before the horizon comes first: a run of
    ``initial_on_slots`` slots, else a pause of ``initial_off_slots`` slots (0: off long enough, never short). A run
    or pause that ends inside the horizon is checked with the slots it had before it; the last one may go on past
    the horizon's end and is not.
    """
    states = [bool(pump.initial_on_slots)]
    lengths: list[int | None] = [pump.initial_on_slots or pump.initial_off_slots or None]
    for on in running.tolist():
        if on == states[-1]:
            last = lengths[-1]
            lengths[-1] = None if last is None else last + 1
        else:
            states.append(on)
            lengths.append(1)
    ended = [(on, length) for on, length in zip(states[:-1], lengths[:-1], strict=True) if length is not None]
    return (
        any(on and length < pump.min_run_slots for on, length in ended),
        any(not on and length < pump.min_off_slots for on, length in ended),
    )


def _devices(
    load_kw: Mapping[str, FloatArray] | None,
    battery_kw: dict[str, FloatArray],
    heat: dict[str, FloatArray],
    pv_kw: FloatArray,
    house_kw: FloatArray,
) -> dict[str, FloatArray]:
    """Return each device's (n,) kW for the phase check: loads, batteries, heat pumps, the PV (negative), the base."""
    loads = dict(load_kw or {})
    base = house_kw - sum(loads.values(), np.zeros(house_kw.size))
    return {**loads, **battery_kw, **heat, "pv": -pv_kw, "base": base}


def _phases(phases: PhaseLimits, devices: dict[str, FloatArray], violations: list[str]) -> dict[str, FloatArray]:
    """Return each phase's net kW; append a violation when one passes its limit (either way)."""
    phase_kw = phase_power(phases, devices)
    for p, v in phase_kw.items():
        over = over_text(f"phase {p} above its limit", np.abs(v), slot_limits(phases.limit(p), v.size))
        violations += [over] if over else []
    return phase_kw


def over_text(what: str, power_kw: FloatArray, limit_kw: FloatArray) -> str | None:
    """Return "<what> in k of n slots, first slot t: P kW > L kW" when ``power_kw`` passes ``limit_kw`` (both (n,)).

    None when it stays within ``TOL_KW`` of it everywhere.
    """
    over = np.flatnonzero(power_kw > limit_kw + TOL_KW)
    if not over.size:
        return None
    t = int(over[0])
    return f"{what} in {over.size} of {power_kw.size} slots, first slot {t}: {power_kw[t]:.2f} kW > {limit_kw[t]:g} kW"


def _fees(tariff: Tariff, imp: FloatArray) -> tuple[float, float, float]:
    """Return the fee on the import, the capacity charge and the highest 15-minute average import."""
    peaks = quarter_peaks(imp, tariff.quarter)
    peak = float(np.max(peaks, initial=0.0))
    fees = tariff.fees
    if fees is None:
        return 0.0, 0.0, peak
    month = fees.months(imp.size)
    capacity = 0.0
    for m in np.unique(month):
        above = float(np.max(peaks[month == m])) - fees.peak_floor_kw[int(m)]
        capacity += fees.capacity_price * max(above, 0.0)
    return tariff.hours * float(np.asarray(fees.energy_fee, dtype=np.float64) @ imp), capacity, peak
