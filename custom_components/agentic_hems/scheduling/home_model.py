"""Inputs, results, errors and the cost evaluator of the whole-home plan (:func:`~.home.plan_home`).

Units throughout: kW per slot for powers, kWh for energy and state of charge, currency per kWh for prices; every
array is aligned with the plan's horizon (index i covers ``start + i * resolution``). Nothing here imports Home
Assistant or scipy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
import math

import numpy as np
import numpy.typing as npt

from ..prices.curve import FloatArray
from .windows import check_positive


class Infeasibility(StrEnum):
    """The constraint that leaves no plan (``HomePlanError.constraints``)."""

    PRICES = "prices"  # no slot with a known import and export price at the horizon's start
    DEADLINE = "deadline"  # a load's window inside the known horizon cannot hold it
    FUSE = "fuse"  # the house needs more than the main fuse can import in some slot
    EXPORT = "export"  # surplus PV can be neither exported (export limit) nor curtailed nor stored
    ENERGY = "energy"  # an energy load (EV) cannot get its energy by its deadline
    RESERVE = "reserve"  # a battery would have to go below its backup reserve / usable minimum
    COMFORT = "comfort"  # a heat pump cannot keep its temperature inside the comfort band
    PHASE = "phase"  # a phase of the connection would carry more than its current limit


class HomePlanError(ValueError):
    """No plan satisfies every constraint: ``constraints`` names them, ``loads`` the loads concerned (may be empty)."""

    def __init__(self, constraints: tuple[Infeasibility, ...], message: str, loads: tuple[str, ...] = ()) -> None:
        """Store the constraints and loads; ``message`` is an English sentence."""
        super().__init__(message)
        self.constraints = constraints
        self.loads = loads


@dataclass(frozen=True, kw_only=True)
class HomeBattery:
    """A stationary battery.

    Attributes:
        name: label of the battery in the plan's arrays.
        capacity_kwh: nominal capacity, > 0.
        soc_min_pct, soc_max_pct: usable state-of-charge range in percent of the capacity.
        reserve_pct: backup reserve in percent; the plan never goes below max(soc_min_pct, reserve_pct).
        charge_kw, discharge_kw: power limits on the AC side, > 0.
        charge_efficiency, discharge_efficiency: in (0, 1]; charging ``c`` kW for ``h`` hours stores
            ``charge_efficiency * c * h`` kWh, discharging ``d`` kW removes ``d * h / discharge_efficiency`` kWh.
        wear_cost: currency per kWh of AC throughput (charged plus discharged energy), >= 0.
        initial_soc_pct: state of charge at the start of the horizon, percent.

    """

    name: str
    capacity_kwh: float
    charge_kw: float
    discharge_kw: float
    initial_soc_pct: float
    soc_min_pct: float = 0.0
    soc_max_pct: float = 100.0
    reserve_pct: float = 0.0
    charge_efficiency: float = 0.95
    discharge_efficiency: float = 0.95
    wear_cost: float = 0.0

    def __post_init__(self) -> None:
        """Raise ValueError or TypeError for a malformed battery."""
        check_positive(capacity_kwh=self.capacity_kwh, charge_kw=self.charge_kw, discharge_kw=self.discharge_kw)
        check_positive(charge_efficiency=self.charge_efficiency, discharge_efficiency=self.discharge_efficiency)
        if max(self.charge_efficiency, self.discharge_efficiency) > 1:
            raise ValueError(f"battery {self.name!r}: efficiencies must be in (0, 1]")
        pcts = (self.soc_min_pct, self.soc_max_pct, self.reserve_pct, self.initial_soc_pct)
        if not all(math.isfinite(p) and 0 <= p <= 100 for p in pcts) or self.soc_min_pct > self.soc_max_pct:
            raise ValueError(f"battery {self.name!r}: percentages must lie in 0-100 with soc_min_pct <= soc_max_pct")
        if not (math.isfinite(self.wear_cost) and self.wear_cost >= 0):
            raise ValueError(f"battery {self.name!r}: wear_cost must be finite and >= 0")

    @property
    def initial_kwh(self) -> float:
        """State of charge at the horizon's start, kWh."""
        return self.capacity_kwh * self.initial_soc_pct / 100

    @property
    def floor_kwh(self) -> float:
        """Lowest allowed state of charge, kWh: max(usable minimum, reserve); the initial SoC when that is lower."""
        return min(self.capacity_kwh * max(self.soc_min_pct, self.reserve_pct) / 100, self.initial_kwh)

    @property
    def ceiling_kwh(self) -> float:
        """Highest allowed state of charge, kWh; the initial SoC when that is higher."""
        return max(self.capacity_kwh * self.soc_max_pct / 100, self.initial_kwh)


@dataclass(frozen=True, kw_only=True, eq=False)
class HomeHeatPump:
    """A heat pump heating one thermal store (the house, or a hot-water tank), first-order model.

    Per slot t of h hours, with electrical power P_t (kW) and the store's temperature T_t (°C) at the slot's start:

        T_t+1 = T_t + h / C * (cop_t * P_t - UA * (T_t - ambient_t) + gains_t)

    Per-slot arrays have the price curve's length (the plan cuts them to its horizon) and are finite there.

    Attributes:
        name: label of the heat pump in the plan's arrays.
        ua_kw_per_k: heat loss coefficient UA, kW/K, > 0.
        capacity_kwh_per_k: heat capacity C, kWh/K, > 0.
        min_kw, max_kw: electrical power range while running, kW, 0 <= min_kw <= max_kw, max_kw > 0; with
            min_kw > 0 the heat pump is either off or between the two.
        min_run_slots, min_off_slots: shortest on and off periods, slots, >= 1.
        initial_temp_c: measured temperature of the store at the horizon's start, °C.
        initial_on_slots: slots the heat pump has been running (> 0) just before the horizon, else 0.
        initial_off_slots: slots it has been off just before the horizon (> 0 when initial_on_slots is 0).
        ambient_c: (len(curve),) temperature around the store: outdoor for the house, the room for a tank, °C.
        cop: (len(curve),) coefficient of performance per slot, > 0.
        comfort_low_c, comfort_high_c: (len(curve),) comfort band per slot, °C, low <= high.
        gains_kw: (len(curve),) heat gained (sun, people) minus heat drawn (hot water), kW; None for none.

    """

    name: str
    ua_kw_per_k: float
    capacity_kwh_per_k: float
    min_kw: float
    max_kw: float
    initial_temp_c: float
    ambient_c: FloatArray
    cop: FloatArray
    comfort_low_c: FloatArray
    comfort_high_c: FloatArray
    gains_kw: FloatArray | None = None
    min_run_slots: int = 1
    min_off_slots: int = 1
    initial_on_slots: int = 0
    initial_off_slots: int = 0


@dataclass(frozen=True, kw_only=True, eq=False)
class GridFees:
    """Network charges on top of the energy price.

    Attributes:
        energy_fee: (len(curve),) time-variable network fee per kWh imported (band tariffs), currency/kWh, finite.
        capacity_price: currency per kW of a month's highest 15-minute average import (a capacity tariff), >= 0.
        month: (len(curve),) index into ``peak_floor_kw`` of the billing month each slot belongs to.
        peak_floor_kw: per billing month, the peak that costs nothing more: the month's highest 15-minute
            average import so far, or the scheme's minimum billed peak when that is higher, kW, >= 0.

    """

    energy_fee: FloatArray
    capacity_price: float = 0.0
    month: npt.NDArray[np.intp] | None = None
    peak_floor_kw: tuple[float, ...] = (0.0,)


@dataclass(frozen=True, kw_only=True, eq=False)
class PhaseLimits:
    """Per-phase current limits of the grid connection.

    Attributes:
        limit_kw: most power per phase, kW (current limit A x nominal voltage V / 1000), > 0; import and export.
        assignment: device name (a load, battery or heat pump name, ``"pv"`` or ``"base"``) -> ``"L1"``, ``"L2"``,
            ``"L3"`` or ``"3"`` (three-phase, split equally). A device not named is three-phase.

    """

    limit_kw: float
    assignment: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """Cost of a schedule (:func:`evaluate`), in currency, with the grid flows and SoC it implies.

    Attributes:
        cost: import cost - export revenue + battery wear.
        terminal_value: value of the energy left in the batteries at the end (sum over batteries of
            value per kWh x (final - initial SoC)); positive when the batteries end fuller than they started.
        net_cost: ``cost - terminal_value``, the quantity the plan minimises.
        import_kw, export_kw: (n,) grid flows (never both > 0 in a slot).
        soc_kwh: per battery (n + 1,) state of charge at each slot boundary, from the initial one.
        violations: English sentences for every broken limit (fuse, export limit, SoC range); empty when none.

    """

    cost: float
    terminal_value: float
    net_cost: float
    import_kw: FloatArray
    export_kw: FloatArray
    soc_kwh: dict[str, FloatArray]
    violations: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class Tariff:
    """What the grid costs and allows over a horizon of n slots.

    Attributes:
        import_price, export_price: (n,) currency per kWh, finite.
        hours: slot length in hours.
        fuse_kw: most import per slot (math.inf for none).
        export_limit_kw: most export per slot (0 for zero-export, math.inf for none).
        terminal_price: currency per kWh stored at the horizon's end, per battery name.

    """

    import_price: FloatArray
    export_price: FloatArray
    hours: float
    fuse_kw: float
    export_limit_kw: float
    terminal_price: dict[str, float]


TOL_KW = 1e-6  # limits are checked to this many kW (kWh for SoC): solver tolerances stay below it


def evaluate(
    tariff: Tariff,
    *,
    house_kw: FloatArray,
    pv_kw: FloatArray,
    battery_kw: dict[str, FloatArray],
    batteries: tuple[HomeBattery, ...],
) -> Evaluation:
    """Cost of a schedule: the grid takes whatever the house, the PV and the batteries leave.

    Args:
        tariff: prices and limits over the n slots.
        house_kw: (n,) everything the house draws (base load plus planned loads), kW.
        pv_kw: (n,) PV actually produced (forecast minus curtailment), kW.
        battery_kw: per battery (n,) AC power, positive charging, negative discharging.
        batteries: the batteries named in ``battery_kw``.

    Returns:
        An :class:`Evaluation`; the SoC follows the battery powers through the efficiencies, and limits broken by
        more than ``TOL_KW`` are listed in ``violations`` (the cost is still computed).

    """
    h = tariff.hours
    net = house_kw - pv_kw + sum((battery_kw[b.name] for b in batteries), np.zeros(house_kw.size))
    imp, exp = np.maximum(net, 0.0), np.maximum(-net, 0.0)
    violations: list[str] = []
    if np.any(imp > tariff.fuse_kw + TOL_KW):
        violations.append(f"import above the {tariff.fuse_kw:g} kW fuse in {int(np.sum(imp > tariff.fuse_kw))} slots")
    if np.any(exp > tariff.export_limit_kw + TOL_KW):
        violations.append(f"export above the {tariff.export_limit_kw:g} kW limit")
    cost = h * (float(tariff.import_price @ imp) - float(tariff.export_price @ exp))
    soc: dict[str, FloatArray] = {}
    terminal = 0.0
    for bat in batteries:
        power = battery_kw[bat.name]
        charge, discharge = np.maximum(power, 0.0), np.maximum(-power, 0.0)
        steps = h * (bat.charge_efficiency * charge - discharge / bat.discharge_efficiency)
        soc[bat.name] = bat.initial_kwh + np.concatenate(([0.0], np.cumsum(steps)))
        cost += bat.wear_cost * h * float(np.sum(charge + discharge))
        terminal += tariff.terminal_price[bat.name] * float(soc[bat.name][-1] - bat.initial_kwh)
        if np.any(soc[bat.name] < bat.floor_kwh - TOL_KW) or np.any(soc[bat.name] > bat.ceiling_kwh + TOL_KW):
            violations.append(f"battery {bat.name!r} leaves its state-of-charge range")
        if np.any(charge > bat.charge_kw + TOL_KW) or np.any(discharge > bat.discharge_kw + TOL_KW):
            violations.append(f"battery {bat.name!r} exceeds its power limits")
    return Evaluation(
        cost=cost,
        terminal_value=terminal,
        net_cost=cost - terminal,
        import_kw=imp,
        export_kw=exp,
        soc_kwh=soc,
        violations=violations,
    )


@dataclass(frozen=True, kw_only=True)
class HomePlan:
    """The whole-home plan over its horizon (n slots from ``start``).

    Attributes:
        start, resolution: aware UTC datetime of the first slot and the slot length; every array is aligned with it.
        horizon_end: UTC end of the last planned slot (the first slot without a known price, or the curve's end).
        import_kw, export_kw, curtail_kw: (n,) grid import, export and PV curtailment, kW.
        pv_kw, base_load_kw: (n,) the forecasts the plan used.
        battery_kw: per battery (n,) AC power, positive charging, negative discharging.
        soc_kwh: per battery (n + 1,) state of charge at each slot boundary, the first being the initial SoC.
        load_kw: per load (n,) planned power of each appliance / EV.
        starts: per contiguous load its planned start (aware UTC), None when it was not planned.
        unplanned: per load left out (its window lies past the known prices) an English reason.
        cost: import cost - export revenue + battery wear, currency (the common :func:`evaluate`).
        net_cost: ``cost`` minus the value of the energy the batteries gain (the objective).
        baseline_cost, baseline_net_cost: the same for the schedule without optimisation (appliances at
            their earliest start, energy loads as soon as possible, batteries for self-consumption only).
        currency: ISO 4217 code.
        detail: English notes (partial windows, the solver stopping early); empty when none.

    """

    start: datetime
    resolution: timedelta
    horizon_end: datetime
    import_kw: FloatArray
    export_kw: FloatArray
    curtail_kw: FloatArray
    pv_kw: FloatArray
    base_load_kw: FloatArray
    battery_kw: dict[str, FloatArray]
    soc_kwh: dict[str, FloatArray]
    load_kw: dict[str, FloatArray]
    starts: dict[str, datetime | None]
    unplanned: dict[str, str]
    cost: float
    net_cost: float
    baseline_cost: float
    baseline_net_cost: float
    currency: str
    detail: str = ""

    @property
    def saving(self) -> float:
        """``baseline_net_cost - net_cost``: what the plan saves, the batteries' final energy valued alike."""
        return self.baseline_net_cost - self.net_cost
