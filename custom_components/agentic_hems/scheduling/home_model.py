"""Inputs, results and errors of the whole-home plan (:func:`~.home.plan_home`).

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


@dataclass(frozen=True, kw_only=True)
class PhaseOver:
    """Where a phase limit leaves no plan: the phase, the slot where it is passed most, and what draws on it there.

    Attributes:
        phase: "L1", "L2" or "L3".
        start: aware UTC start of the slot.
        limit_kw: the phase's limit in that slot, kW.
        power_kw: the phase's net kW there in the plan closest to the limits (import positive, export negative).
        devices: (name, kW on this phase) of the devices pushing it past the limit (drawing when ``power_kw`` > 0,
            feeding in when < 0), largest first; "base" is the house's base load, "pv" the PV.

    """

    phase: str
    start: datetime
    limit_kw: float
    power_kw: float
    devices: tuple[tuple[str, float], ...]

    def text(self, names: Mapping[str, str] | None = None) -> str:
        """Return an English sentence naming the phase and the devices (``names``: device -> shown name)."""
        shown = {"base": "base load", "pv": "PV", **(names or {})}
        parts = ", ".join(f"{shown.get(name, name)} {kw:.2f} kW" for name, kw in self.devices)
        way = "draw" if self.power_kw > 0 else "feed in"
        return (
            f"phase {self.phase} would carry {abs(self.power_kw):.2f} kW at {self.start:%Y-%m-%dT%H:%MZ}, above its "
            f"{self.limit_kw:g} kW limit; on it {way}: {parts or 'nothing'}"
        )


class HomePlanError(ValueError):
    """No plan satisfies every constraint: ``constraints`` names them, ``loads`` the loads concerned (may be empty).

    ``phase_over`` says which phase and which devices when a phase limit is among the constraints (else None).
    """

    def __init__(
        self,
        constraints: tuple[Infeasibility, ...],
        message: str,
        loads: tuple[str, ...] = (),
        phase_over: PhaseOver | None = None,
    ) -> None:
        """Store the constraints, loads and phase; ``message`` is an English sentence, the phase's text appended."""
        super().__init__(message if phase_over is None else f"{message}: {phase_over.text()}")
        self.message = message
        self.constraints = constraints
        self.loads = loads
        self.phase_over = phase_over

    def text(self, names: Mapping[str, str]) -> str:
        """Return the message with the devices of ``phase_over`` under ``names`` (device -> shown name)."""
        return self.message if self.phase_over is None else f"{self.message}: {self.phase_over.text(names)}"


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


ON_FLOOR_KW = 0.01  # a running heat pump without a minimum power draws at least this (10 W)


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
        initial_off_slots: slots it has been off just before the horizon when initial_on_slots is 0; 0 when
            unknown, taken as off long enough.
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

    def __post_init__(self) -> None:
        """Raise ValueError or TypeError for a malformed heat pump (the arrays' values are checked by the plan)."""
        check_positive(ua_kw_per_k=self.ua_kw_per_k, capacity_kwh_per_k=self.capacity_kwh_per_k, max_kw=self.max_kw)
        if isinstance(self.min_kw, bool) or not isinstance(self.min_kw, (int, float, np.integer, np.floating)):
            raise TypeError(f"heat pump {self.name!r}: min_kw must be a number")
        if not (0 <= self.min_kw <= self.max_kw) or not math.isfinite(self.initial_temp_c):
            raise ValueError(f"heat pump {self.name!r}: needs 0 <= min_kw <= max_kw and a finite initial_temp_c")
        counts = (self.min_run_slots, self.min_off_slots, self.initial_on_slots, self.initial_off_slots)
        if not all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in counts):
            raise TypeError(f"heat pump {self.name!r}: slot counts must be integers")
        if min(self.min_run_slots, self.min_off_slots) < 1 or min(self.initial_on_slots, self.initial_off_slots) < 0:
            raise ValueError(f"heat pump {self.name!r}: min_run/off_slots must be >= 1, initial slots >= 0")
        if self.initial_on_slots and self.initial_off_slots:
            raise ValueError(f"heat pump {self.name!r}: it cannot have been both on and off before the horizon")
        arrays = [self.ambient_c, self.cop, self.comfort_low_c, self.comfort_high_c]
        arrays += [] if self.gains_kw is None else [self.gains_kw]
        if any(np.ndim(a) != 1 or np.shape(a) != np.shape(self.cop) for a in arrays):
            raise ValueError(f"heat pump {self.name!r}: per-slot arrays must be 1-D and of one length")

    def coefficients(self, hours: float, n: int) -> tuple[float, FloatArray, FloatArray]:
        """Return (a, b, k) of the first n slots: T_t+1 = a T_t + b_t + k_t P_t (the model above, rearranged)."""
        c = self.capacity_kwh_per_k
        gains = np.zeros(n) if self.gains_kw is None else np.asarray(self.gains_kw[:n], dtype=np.float64)
        a = 1 - hours * self.ua_kw_per_k / c
        b = hours / c * (self.ua_kw_per_k * np.asarray(self.ambient_c[:n], dtype=np.float64) + gains)
        return a, b, hours / c * np.asarray(self.cop[:n], dtype=np.float64)

    def temperatures(self, power_kw: FloatArray, hours: float) -> FloatArray:
        """Return (n + 1,) store temperatures at the slot boundaries for (n,) electrical kW, from the initial one."""
        a, b, k = self.coefficients(hours, power_kw.size)
        temp = np.empty(power_kw.size + 1)
        temp[0] = self.initial_temp_c
        for t in range(power_kw.size):
            temp[t + 1] = a * temp[t] + b[t] + k[t] * power_kw[t]
        return temp

    def forced_slots(self) -> tuple[int, int]:
        """Return (on, off): leading slots it must stay on (minimum run) or off (minimum off time) at the start.

        ``initial_on_slots > 0`` means running; otherwise it is off, and ``initial_off_slots == 0`` means it has been
        off long enough.
        """
        if self.initial_on_slots:
            return max(self.min_run_slots - self.initial_on_slots, 0), 0
        return 0, max(self.min_off_slots - self.initial_off_slots, 0) if self.initial_off_slots else 0

    @property
    def on_floor_kw(self) -> float:
        """The least kW while running: ``min_kw``, or ``ON_FLOOR_KW`` (at most ``max_kw``) when ``min_kw`` is 0.

        With on/off binaries and no floor a heat pump could be "on" at 0 kW, and the minimum run and off times would
        hold for the binary only, not for the power that is switched (a run of [2, 0, 0] kW would pass a 3-slot
        minimum run). The floor is well above the 0.001 kW under which the executors count a heat pump as off.
        """
        return self.min_kw if self.min_kw > 0 else min(ON_FLOOR_KW, self.max_kw)

    def band(self, hours: float, n: int) -> tuple[FloatArray, FloatArray]:
        """Return the comfort band (low, high) (n,) at each slot's end, widened to what the store can reach.

        Slot by slot, from the range of temperatures the store can hold inside the (widened) band so far: the
        highest it can reach (full power, or off where the minimum off time forces it) lowers the floor when the
        floor is out of reach; the lowest it can reach (off, or minimum power where the minimum run forces it)
        raises the ceiling when the store cannot cool below it. A cold store thus heats at full power until it
        reaches the band, a too warm one stays off until it has cooled into it.
        """
        a, b, k = self.coefficients(hours, n)
        on, off = self.forced_slots()
        slots = np.arange(n)
        most = np.where(slots < off, 0.0, self.max_kw)
        least = np.where(slots < on, self.on_floor_kw, 0.0)
        low = np.asarray(self.comfort_low_c[:n], dtype=np.float64).copy()
        high = np.asarray(self.comfort_high_c[:n], dtype=np.float64).copy()
        hot = cold = self.initial_temp_c
        for t in range(n):
            reach_hot, reach_cold = a * hot + b[t] + k[t] * most[t], a * cold + b[t] + k[t] * least[t]
            low[t], high[t] = min(low[t], reach_hot), max(high[t], reach_cold)
            hot, cold = min(reach_hot, high[t]), max(reach_cold, low[t])
        return low, high


PHASES = ("L1", "L2", "L3")


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

    def __post_init__(self) -> None:
        """Raise ValueError for a malformed tariff (the fee's values are checked by the plan, on its horizon)."""
        if np.ndim(self.energy_fee) != 1:
            raise ValueError("energy_fee must be a 1-D array")
        if not (math.isfinite(self.capacity_price) and self.capacity_price >= 0):
            raise ValueError(f"capacity_price must be finite and >= 0, got {self.capacity_price!r}")
        floors = self.peak_floor_kw
        if not floors or not all(math.isfinite(f) and f >= 0 for f in floors):
            raise ValueError("peak_floor_kw needs one finite value >= 0 per billing month")
        if self.month is not None and (
            np.shape(self.month) != np.shape(self.energy_fee) or np.any((self.month < 0) | (self.month >= len(floors)))
        ):
            raise ValueError("month must have energy_fee's length and index into peak_floor_kw")

    def months(self, n: int) -> npt.NDArray[np.intp]:
        """Return (n,) the billing month of each of the first n slots (all 0 without ``month``)."""
        return np.zeros(n, dtype=np.intp) if self.month is None else np.asarray(self.month[:n], dtype=np.intp)


Limit = float | FloatArray
"""A limit in kW: one number for every slot, or (n,) one per slot."""


def slot_limits(limit_kw: Limit, n: int) -> FloatArray:
    """Return (n,) the limit in each of n slots, kW: ``limit_kw`` itself, or the number repeated.

    Raises ValueError when an array does not have n values.
    """
    return np.broadcast_to(np.asarray(limit_kw, dtype=np.float64), (n,))


@dataclass(frozen=True, kw_only=True, eq=False)
class PhaseLimits:
    """Per-phase current limits of the grid connection.

    Attributes:
        limit_kw: most power per phase, kW (current limit A x nominal voltage V / 1000), > 0; import and export.
        assignment: device name (a load, fixed load, battery or heat pump name, ``"pv"`` or ``"base"``) -> ``"L1"``,
            ``"L2"``, ``"L3"`` or ``"3"`` (three-phase, split equally). A device not named is three-phase.
        raised_kw: per phase ("L1".."L3") the limit that applies there instead of ``limit_kw`` (where loads the plan
            cannot move alone draw more), kW: a number, or (len(curve),) one per slot (the plan cuts it to its
            horizon); finite and >= ``limit_kw``; empty for none.

    """

    limit_kw: float
    assignment: Mapping[str, str] = field(default_factory=dict)
    raised_kw: Mapping[str, Limit] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Raise ValueError or TypeError for a malformed limit, assignment or raised limit."""
        check_positive(limit_kw=self.limit_kw)
        wrong = {name: ph for name, ph in self.assignment.items() if ph not in (*PHASES, "3")}
        if wrong:
            raise ValueError(f"phase assignments must be L1, L2, L3 or 3, got {wrong}")
        if not all(p in PHASES and _raise_ok(kw, self.limit_kw) for p, kw in self.raised_kw.items()):
            raise ValueError(f"raised_kw needs phases L1-L3 and finite limits >= limit_kw, got {dict(self.raised_kw)}")

    def limit(self, phase: str) -> Limit:
        """Return the limit of ``phase`` ("L1".."L3"), kW: its raised limit (a number or per slot), else ``limit_kw``."""
        return self.raised_kw.get(phase, self.limit_kw)

    def shares(self, name: str) -> dict[str, float]:
        """Return the fraction of the device ``name``'s power on each phase."""
        phase = self.assignment.get(name, "3")
        return {p: 1.0 / 3 if phase == "3" else float(p == phase) for p in PHASES}


def _raise_ok(limit_kw: Limit, floor_kw: float) -> bool:
    """Return True when ``limit_kw`` is a number or a 1-D array, finite and >= ``floor_kw`` throughout."""
    kw = np.asarray(limit_kw, dtype=np.float64)
    return kw.ndim <= 1 and bool(np.isfinite(kw).all() and (kw >= floor_kw).all())


def phase_power(phases: PhaseLimits, devices: Mapping[str, FloatArray]) -> dict[str, FloatArray]:
    """Return per phase (n,) the net kW of ``devices`` (name -> (n,) kW drawn, negative when feeding in)."""
    n = next(iter(devices.values())).size
    out = {p: np.zeros(n) for p in PHASES}
    for name, power in devices.items():
        for p, share in phases.shares(name).items():
            out[p] += share * power
    return out


TOL_KW = 1e-6  # limits are checked to this many kW (kWh for SoC): solver tolerances stay below it
TOL_C = 1e-5  # comfort bands are checked to this many °C


@dataclass(frozen=True, kw_only=True)
class HomePlan:
    """The whole-home plan over its horizon (n slots from ``start``).

    Attributes:
        start, resolution: aware UTC datetime of the first slot and the slot length; every array is aligned with it.
        horizon_end: UTC end of the last planned slot (the first slot without a known price, or the curve's end).
        import_kw, export_kw, curtail_kw: (n,) grid import, export and PV curtailment, kW.
        pv_kw: (n,) the PV forecast the plan used.
        base_load_kw: (n,) the base load the plan used: the house's forecast plus the fixed loads.
        battery_kw: per battery (n,) AC power, positive charging, negative discharging.
        soc_kwh: per battery (n + 1,) state of charge at each slot boundary, the first being the initial SoC.
        load_kw: per load (n,) planned power of each appliance / EV.
        starts: per contiguous load its planned start (aware UTC), None when it was not planned.
        unplanned: per load left out (its window lies past the known prices) an English reason.
        cost: import cost (fees included) - export revenue + battery wear + capacity charge, currency (the common
            :func:`~.home_evaluate.evaluate`).
        net_cost: ``cost`` minus the value of the energy the batteries and heat stores gain (the objective).
        baseline_cost, baseline_net_cost: the same for the schedule without optimisation (appliances at
            their earliest start, energy loads as soon as possible, batteries for self-consumption only, heat
            pumps as a thermostat holding the comfort floor).
        currency: ISO 4217 code.
        detail: English notes (partial windows, the solver stopping early); empty when none.
        heat_kw: per heat pump (n,) electrical kW.
        temp_c: per heat pump (n + 1,) store temperature at each slot boundary, °C, the first being the initial one.
        fee_cost, capacity_cost: the network fee on the import and the capacity charge (parts of ``cost``).
        peak_kw: the plan's highest 15-minute average import, kW.
        peak_floor_kw: the peak so far of the billing month of the first slot the plan was given, kW.
        phase_kw: per phase ("L1".."L3") (n,) net kW when phase limits were given, else empty.
        baseline_capacity_cost: the capacity charge of the schedule without optimisation (part of
            ``baseline_cost``).
        fixed_kw: per fixed load (running, pinned appliances, part of ``base_load_kw``) (n,) kW.
        fuse_kw: the most import per slot the plan kept, kW: a number, or (n,) one per slot.
        time_limited: True when the plan's time bound stopped the solver: the best plan it found, not a proven
            optimum (``detail`` says so).

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
    heat_kw: dict[str, FloatArray] = field(default_factory=dict)
    temp_c: dict[str, FloatArray] = field(default_factory=dict)
    fee_cost: float = 0.0
    capacity_cost: float = 0.0
    peak_kw: float = 0.0
    peak_floor_kw: float = 0.0
    phase_kw: dict[str, FloatArray] = field(default_factory=dict)
    baseline_capacity_cost: float = 0.0
    fixed_kw: dict[str, FloatArray] = field(default_factory=dict)
    fuse_kw: Limit = math.inf
    time_limited: bool = False

    @property
    def saving(self) -> float:
        """``baseline_net_cost - net_cost``: what the plan saves, the batteries' final energy valued alike."""
        return self.baseline_net_cost - self.net_cost
