"""The whole home in one MILP: appliances, EV, batteries, PV, base load and the grid, solved by HiGHS.

Per slot t of the horizon (h hours), with import price p_t and export price q_t:

    min  sum_t h (p_t imp_t - q_t exp_t) + sum_b w_b h sum_t (c_bt + d_bt) - sum_b v_b s_b,end
    s.t. imp_t - exp_t = base_t - (pv_t - cur_t) + sum_b (c_bt - d_bt) + sum_a P_a run_at(a, t) + sum_e x_et
         s_bt = s_b,t-1 + eta_c h c_bt - h d_bt / eta_d,   floor_b <= s_bt <= ceiling_b
         sum_j y_aj = 1 (a start binary per admissible start j),   sum_t h x_et = E_e,  0 <= x_et <= P_e
         0 <= imp_t <= fuse,  0 <= exp_t <= export limit,  0 <= cur_t <= pv_t (0 when curtailment is off)
         0 <= c_bt <= Pc_b,  0 <= d_bt <= Pd_b

An energy load with a least power m_e > 0 (an EV charger's minimum current) is semi-continuous: an on/off binary
o_et per usable slot with m_e o_et <= x_et <= P_e o_et, and E_e <= sum_t h x_et <= E_e + h m_e (one slot at m_e
more, so any E_e fits; at prices >= 0 the least cost delivers exactly E_e wherever that is possible).

Heat pumps (:mod:`.home_heat`) add their power to the balance's right-hand side, their store temperatures, comfort
bands, on/off binaries and minimum run / off times, and the value of their heat at the end to the objective. Grid
fees (:mod:`.home_grid`) are part of p_t; the capacity charge adds each billing month's peak above its floor, and
phase limits bound each phase's net power. base_t holds the house's base load and the fixed loads (running, pinned
appliances); on the phases each fixed load counts on its own phase, the base load on that of "base" (both spread
over the three when not named).

Horizon: the plan covers the curve's slots from its first up to (not including) the first slot whose import or
export price is unknown (NaN); a NaN is never read as zero and no slot after it is used, even when later prices
are known, because the batteries' state of charge cannot be carried across an unpriced slot.

Simultaneous charge and discharge (or import and export) only pays where it dissipates energy at a profit. A binary
forbids it in the slots where it could: charge/discharge where an import or export price is negative or where PV
cannot be curtailed, import/export where q_t > p_t. Elsewhere no binary is needed: a solution that does both can be
changed into one that does not and costs no more (see :func:`_unmix`), and the plan is changed so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..prices.curve import FloatArray, PriceCurve
from ..prices.trust import SlotTrust
from .contiguous import run_options
from .energy import charge_options, fill_in_order
from .home_grid import Entries, add_capacity, add_phases, cut_fees, cut_phases, quarter_index
from .home_heat import HeatColumns, add_heat_pump, check_heat_pump, heat_tie, thermostat
from .home_model import (
    PHASES,
    TOL_KW,
    Evaluation,
    GridFees,
    HomeBattery,
    HomeHeatPump,
    HomePlan,
    HomePlanError,
    Infeasibility,
    Limit,
    PhaseLimits,
    PhaseOver,
    Tariff,
    evaluate,
    slot_limits,
)
from .milp import MilpModel
from .plan import LoadSpec
from .ties import TIE_REL
from .windows import REL_EPS, IntArray, check_positive, notes_text, resolve_window, slot_hours, slots_for_duration

COST_SCALE = 1e4  # the objective is scaled to this size so HiGHS's absolute gap (1e-6) stays negligible
# Reduced-cost pruning keeps a start whose bound exceeds the threshold by less than this (scaled cost units, 1e-7 of
# the cost scale): far above HiGHS's dual tolerance (1e-7) summed over the columns.
PRUNE_MARGIN = 1e-3
LEX_LIMIT = 1e6  # largest tie-break weight: whole slots stay apart under milp.MIP_REL_GAP


@dataclass(frozen=True)
class _Load:
    """A load restricted to the horizon: a run's admissible starts, or an energy load's usable slots."""

    spec: LoadSpec
    keys: IntArray  # starts (runs) or slots (energy loads), ascending
    slots: int  # run length in slots (runs), 0 for energy loads
    energy_kwh: float  # energy loads: kWh to deliver


@dataclass(kw_only=True)
class _Inputs:
    """Everything the model needs over the horizon of n slots from ``start``.

    ``base`` is the house's base load plus the fixed loads (``fixed``, by name).
    """

    tariff: Tariff
    base: FloatArray
    pv: FloatArray
    batteries: tuple[HomeBattery, ...]
    loads: list[_Load]
    curtailment: bool
    heat_pumps: tuple[HomeHeatPump, ...]
    fixed: dict[str, FloatArray]
    start: datetime
    resolution: timedelta

    @property
    def n(self) -> int:
        """Slots in the horizon."""
        return int(self.base.size)

    def constant(self) -> dict[str, FloatArray]:
        """Return the kW per slot the plan cannot change, by device: the base load ("base"), each fixed load, PV."""
        house = self.base - sum(self.fixed.values(), np.zeros(self.n))
        return {"base": house, **self.fixed, "pv": -self.pv}


def plan_home(
    curve: PriceCurve,
    loads: Sequence[LoadSpec] = (),
    *,
    batteries: Sequence[HomeBattery] = (),
    pv_kw: float | npt.ArrayLike = 0.0,
    base_load_kw: float | npt.ArrayLike = 0.0,
    export_price: float | npt.ArrayLike = 0.0,
    fuse_kw: float | npt.ArrayLike = math.inf,
    export_limit_kw: float = math.inf,
    curtailment: bool = True,
    terminal_price: float | None = None,
    heat_pumps: Sequence[HomeHeatPump] = (),
    fees: GridFees | None = None,
    phases: PhaseLimits | None = None,
    fixed_kw: Mapping[str, float | npt.ArrayLike] | None = None,
) -> HomePlan:
    """Plan every flexible load, battery and grid flow of the home at least cost (model in the module docstring).

    Args:
        curve: import prices per kWh (NaN = unknown); the horizon: its leading slots with known import and export prices.
        loads: appliances (``contiguous=True``: one run of ``duration_min`` at ``power_kw``) and energy loads
            (``contiguous=False``: ``energy_kwh`` at 0 to ``power_kw`` kW per slot, e.g. the EV), with windows as in
            :func:`~.joint.plan_joint`.
        batteries: the stationary batteries.
        pv_kw: PV forecast in kW, a number or an array (len(curve),), finite and >= 0 over the horizon.
        base_load_kw: house base load forecast in kW, the same way.
        export_price: per kWh exported, a number or an array (len(curve),) (a spot formula or a fixed feed-in).
        fuse_kw: most import per slot, kW, > 0 (math.inf for none): a number, or an array (len(curve),) per slot.
        export_limit_kw: most export per slot, >= 0 (0 for zero-export, math.inf for none).
        curtailment: True when PV may be curtailed (by any amount up to its forecast).
        terminal_price: value per kWh left in a battery at the end; default median import price x discharge efficiency.
        heat_pumps: heat pumps with their stores (a house, a hot-water tank); model and end value in :mod:`.home_heat`.
        fees: the network fee per kWh (part of the import price) and the capacity charge (:mod:`.home_grid`).
        phases: per-phase limits and the devices' phases (loads, fixed loads, batteries, heat pumps, "pv", "base").
        fixed_kw: kW by name of loads it cannot move (running, pinned appliances), as ``pv_kw``, on their own phase.

    Returns:
        A :class:`HomePlan`. A load due past the known prices that does not fit in the horizon is left out
        (``unplanned`` says why). Cost ties (1e-9 of the cost scale) go to the earliest starts (:func:`_earliest`).

    Raises:
        HomePlanError: no plan exists; ``constraints`` names the conflicting :class:`~.home_model.Infeasibility`.
        ValueError, TypeError: malformed inputs (shapes, non-finite forecasts, non-positive limits, bad loads).

    """
    inputs, unplanned, notes = _prepare(
        curve,
        loads,
        batteries=batteries,
        pv_kw=pv_kw,
        base_load_kw=base_load_kw,
        export_price=export_price,
        fuse_kw=fuse_kw,
        export_limit_kw=export_limit_kw,
        curtailment=curtailment,
        extras=_Extras(tuple(heat_pumps), fees, phases, terminal_price, fixed_kw or {}),
    )
    solution, note = _solve(inputs)
    return _result(curve, inputs, solution, unplanned, [*notes, note] if note else notes)


def _array(value: float | npt.ArrayLike, n: int, label: str) -> FloatArray:
    """``value`` as a float array (n,), a number repeated; ValueError on a wrong shape."""
    out = np.asarray(value, dtype=np.float64)
    if out.ndim == 0:
        out = np.full(n, float(out))
    if out.shape != (n,):
        raise ValueError(f"{label} must be a number or an array of {n} values, got shape {out.shape}")
    return out


def horizon_length(curve: PriceCurve, export_price: FloatArray) -> int:
    """Slots from the curve's first up to the first whose import or export price is NaN (the plan's horizon)."""
    unknown = np.flatnonzero(np.isnan(curve.prices) | np.isnan(export_price))
    return int(unknown[0]) if unknown.size else len(curve)


def _prepare(
    curve: PriceCurve,
    loads: Sequence[LoadSpec],
    *,
    batteries: Sequence[HomeBattery],
    pv_kw: float | npt.ArrayLike,
    base_load_kw: float | npt.ArrayLike,
    export_price: float | npt.ArrayLike,
    fuse_kw: float | npt.ArrayLike,
    export_limit_kw: float,
    curtailment: bool,
    extras: _Extras,
) -> tuple[_Inputs, dict[str, str], list[str]]:
    """Validate the inputs, cut them to the horizon and resolve the loads' windows."""
    n = len(curve)
    if not export_limit_kw >= 0:
        raise ValueError(f"export_limit_kw must be >= 0, got {export_limit_kw!r}")
    _check_names(batteries, loads, extras)
    q = _array(export_price, n, "export_price")
    horizon = horizon_length(curve, q)
    if horizon == 0:
        raise HomePlanError((Infeasibility.PRICES,), "the first slot has no known import and export price")
    pv, base = (_array(v, n, label)[:horizon] for v, label in ((pv_kw, "pv_kw"), (base_load_kw, "base_load_kw")))
    if not (np.isfinite(pv).all() and np.isfinite(base).all() and (pv >= 0).all() and (base >= 0).all()):
        raise ValueError("pv_kw and base_load_kw must be finite and >= 0 on every slot of the horizon")
    fixed = {name: _array(kw, n, f"fixed_kw[{name!r}]")[:horizon] for name, kw in extras.fixed.items()}
    if not all(np.isfinite(kw).all() and (kw >= 0).all() for kw in fixed.values()):
        raise ValueError("fixed_kw must be finite and >= 0 on every slot of the horizon")
    fuse = _fuse(fuse_kw, n, horizon)
    tariff = _tariff(curve, q, horizon, batteries, extras, limits=(fuse, float(export_limit_kw)))
    placed, unplanned, notes = _loads(curve, loads, horizon)
    inputs = _Inputs(
        tariff=tariff,
        base=base + sum(fixed.values(), np.zeros(horizon)),
        pv=pv,
        batteries=tuple(batteries),
        loads=placed,
        curtailment=curtailment,
        heat_pumps=extras.heat_pumps,
        fixed=fixed,
        start=curve.start,
        resolution=curve.resolution,
    )
    return inputs, unplanned, notes


def _fuse(fuse_kw: float | npt.ArrayLike, n: int, horizon: int) -> Limit:
    """Return the fuse over the horizon, kW: a number, or (horizon,) one per slot; ValueError unless > 0 there."""
    fuse: Limit = float(np.asarray(fuse_kw)) if np.ndim(fuse_kw) == 0 else _array(fuse_kw, n, "fuse_kw")[:horizon]
    if not np.all(np.asarray(fuse) > 0):  # also NaN
        raise ValueError(f"fuse_kw must be > 0, got {fuse_kw!r}")
    return fuse


@dataclass(frozen=True)
class _Extras:
    """The heat pumps, grid fees, phase limits, battery terminal price and fixed loads given to :func:`plan_home`."""

    heat_pumps: tuple[HomeHeatPump, ...]
    fees: GridFees | None
    phases: PhaseLimits | None
    terminal_price: float | None
    fixed: Mapping[str, float | npt.ArrayLike]


def _check_names(batteries: Sequence[HomeBattery], loads: Sequence[LoadSpec], extras: _Extras) -> None:
    """Raise ValueError for a name used twice, a device named "pv" or "base", or a phase given to no device."""
    names = [*(b.name for b in batteries), *(spec.name for spec in loads), *(p.name for p in extras.heat_pumps)]
    names += list(extras.fixed)
    if len(set(names)) != len(names) or not set(names).isdisjoint({"pv", "base"}):
        raise ValueError("batteries, loads, fixed loads and heat pumps need distinct names, none 'pv' or 'base'")
    if extras.phases is not None and not set(extras.phases.assignment) <= {*names, "pv", "base"}:
        unknown = sorted(set(extras.phases.assignment) - {*names, "pv", "base"})
        raise ValueError(f"phase assignment names unknown devices: {unknown}")


def _tariff(
    curve: PriceCurve,
    export_price: FloatArray,
    horizon: int,
    batteries: Sequence[HomeBattery],
    extras: _Extras,
    *,
    limits: tuple[Limit, float],
) -> Tariff:
    """Return the tariff over the horizon: prices plus fees, limits, terminal values (the median import price).

    The fuse comes cut to the horizon; the phases' per-slot raised limits are cut here.
    """
    n, hours = len(curve), slot_hours(curve)
    for pump in extras.heat_pumps:
        check_heat_pump(pump, length=n, horizon=horizon, hours=hours)
    cut = None if extras.fees is None else cut_fees(extras.fees, length=n, horizon=horizon)
    prices = curve.prices[:horizon] + (0.0 if cut is None else cut.energy_fee)
    median = float(np.median(prices))
    terminal = {b.name: median * b.discharge_efficiency for b in batteries}
    if extras.terminal_price is not None:
        terminal = dict.fromkeys(terminal, float(extras.terminal_price))
    terminal |= {p.name: median / float(p.cop[horizon - 1]) for p in extras.heat_pumps}
    return Tariff(
        import_price=prices,
        export_price=export_price[:horizon],
        hours=hours,
        fuse_kw=limits[0],
        export_limit_kw=limits[1],
        terminal_price=terminal,
        fees=cut,
        quarter=quarter_index(curve.start, curve.resolution, horizon),
        phases=cut_phases(extras.phases, length=n, horizon=horizon),
    )


def _loads(curve: PriceCurve, loads: Sequence[LoadSpec], horizon: int) -> tuple[list[_Load], dict[str, str], list[str]]:
    """Each load's starts or slots inside the horizon; loads that cannot fit are left out or raise DEADLINE."""
    placed: list[_Load] = []
    unplanned: dict[str, str] = {}
    notes: list[str] = []
    end_text = f"{curve.slot_start(horizon):%Y-%m-%dT%H:%MZ}"
    for spec in loads:
        load = _load(curve, spec, horizon)
        window = resolve_window(curve, spec.earliest_start, spec.deadline)
        if load is not None:
            placed.append(load)
            if window.stop > horizon:
                notes.append(f"{spec.name!r}: prices known until {end_text}; planned on the known slots only")
        elif window.stop > horizon:
            unplanned[spec.name] = f"does not fit before {end_text}, when the known prices end"
        else:
            raise HomePlanError(
                (Infeasibility.DEADLINE,), f"{spec.name!r} cannot be done within its window", (spec.name,)
            )
    return placed, unplanned, notes


def _load(curve: PriceCurve, spec: LoadSpec, horizon: int) -> _Load | None:
    """Return the load inside the horizon, None when it cannot fit there even alone."""
    check_positive(**{f"{spec.name}.power_kw": spec.power_kw})
    window = resolve_window(curve, spec.earliest_start, spec.deadline)
    if spec.contiguous:
        if spec.duration_min is None or spec.energy_kwh is not None:
            raise ValueError(f"load {spec.name!r}: a contiguous load needs duration_min and no energy_kwh")
        check_positive(**{f"{spec.name}.duration_min": spec.duration_min})
        slots = slots_for_duration(spec.duration_min, curve.resolution)
        starts = run_options(curve, window, power_kw=spec.power_kw, slots=slots).starts
        starts = starts[starts + slots <= horizon]
        return _Load(spec, starts, slots, 0.0) if starts.size else None
    if spec.energy_kwh is None or spec.duration_min is not None:
        raise ValueError(f"load {spec.name!r}: a non-contiguous load needs energy_kwh and no duration_min")
    check_positive(**{f"{spec.name}.energy_kwh": spec.energy_kwh})
    if not (math.isfinite(spec.min_power_kw) and 0 <= spec.min_power_kw <= spec.power_kw):
        raise ValueError(f"load {spec.name!r}: min_power_kw must lie in 0..power_kw, got {spec.min_power_kw!r}")
    usable = charge_options(curve, window, max_power_kw=spec.power_kw, energy_kwh=spec.energy_kwh).slots
    usable = usable[usable < horizon]
    fits = usable.size * spec.power_kw * slot_hours(curve) >= spec.energy_kwh * (1 - REL_EPS)
    return _Load(spec, usable, 0, spec.energy_kwh) if fits else None


@dataclass
class _Columns:
    """Where each quantity lives in the model's columns."""

    imp: IntArray
    exp: IntArray
    cur: IntArray
    charge: list[IntArray]
    discharge: list[IntArray]
    soc: list[IntArray]
    loads: list[IntArray]
    slack: dict[Infeasibility, list[IntArray]]
    heat: list[HeatColumns] = field(default_factory=list)
    on: dict[str, IntArray] = field(default_factory=dict)  # the semi-continuous energy loads' on/off binaries
    devices: dict[str, Entries] = field(default_factory=dict)  # each device's grid-balance entries


def _build(inputs: _Inputs, *, relax: bool = False) -> tuple[MilpModel, _Columns]:
    """Build the MILP of the module docstring; ``relax`` turns limits into slacks for naming the conflicting ones."""
    model, n, tariff, h = MilpModel(), inputs.n, inputs.tariff, inputs.tariff.hours
    t = np.arange(n)
    imp = model.add(n, math.inf if relax else tariff.fuse_kw, h * tariff.import_price)
    exp = model.add(n, math.inf if relax else tariff.export_limit_kw, -h * tariff.export_price)
    cur = model.add(n, inputs.pv if inputs.curtailment else 0.0)
    cols = _Columns(imp, exp, cur, [], [], [], [], {kind: [] for kind in Infeasibility})
    devices = cols.devices
    devices["pv"] = [(t, cur, -1.0)]
    for bat in inputs.batteries:
        devices[bat.name] = _battery(model, cols, inputs, bat, relax=relax)
    for load in inputs.loads:
        devices[load.spec.name] = _load_columns(model, cols, inputs, load, relax=relax)
    for pump in inputs.heat_pumps:
        value = tariff.terminal_price[pump.name]
        heat, devices[pump.name], slacks = add_heat_pump(model, pump, hours=h, n=n, value=value, relax=relax)
        cols.heat.append(heat)
        cols.slack[Infeasibility.COMFORT] += slacks
    balance: Entries = [(t, imp, 1.0), (t, exp, -1.0), *(e for entries in devices.values() for e in entries)]
    add_capacity(model, tariff, imp)
    if tariff.phases is not None:
        cols.slack[Infeasibility.PHASE] += add_phases(model, tariff.phases, devices, inputs.constant(), relax=relax)
    if relax:
        for kind, limit, column in (
            (Infeasibility.FUSE, tariff.fuse_kw, imp),
            (Infeasibility.EXPORT, tariff.export_limit_kw, exp),
        ):
            slack = model.add(n, math.inf)
            model.row([(t, column, 1.0), (t, slack, -1.0)], -math.inf, limit, n)
            cols.slack[kind].append(slack)
    model.row(balance, inputs.base - inputs.pv, inputs.base - inputs.pv, n)
    if not relax:
        _grid_binaries(model, cols, inputs)
    return model, cols


def _battery(model: MilpModel, cols: _Columns, inputs: _Inputs, bat: HomeBattery, *, relax: bool) -> list[Any]:
    """Add a battery's columns, SoC dynamics and (where it could pay) its charge-xor-discharge binaries."""
    n, h, tariff = inputs.n, inputs.tariff.hours, inputs.tariff
    t = np.arange(n)
    charge = model.add(n, bat.charge_kw, bat.wear_cost * h)
    discharge = model.add(n, bat.discharge_kw, bat.wear_cost * h)
    end_value = np.zeros(n)
    end_value[-1] = -tariff.terminal_price[bat.name]
    soc = model.add(n, bat.ceiling_kwh, end_value, lower=0.0 if relax else bat.floor_kwh)
    first = np.zeros(n)
    first[0] = bat.initial_kwh
    dynamics = [
        (t, soc, 1.0),
        (t[1:], soc[:-1], -1.0),
        (t, charge, -bat.charge_efficiency * h),
        (t, discharge, h / bat.discharge_efficiency),
    ]
    model.row(dynamics, first, first, n)
    if relax:
        slack = model.add(n, math.inf)
        model.row([(t, soc, 1.0), (t, slack, 1.0)], bat.floor_kwh, math.inf, n)
        cols.slack[Infeasibility.RESERVE].append(slack)
    else:
        risky = np.flatnonzero(_dump_pays(inputs))
        u = model.add(risky.size, 1.0, integer=True)
        k = np.arange(risky.size)
        model.row([(k, charge[risky], 1.0), (k, u, -bat.charge_kw)], -math.inf, 0.0, risky.size)
        model.row([(k, discharge[risky], 1.0), (k, u, bat.discharge_kw)], -math.inf, bat.discharge_kw, risky.size)
    cols.charge.append(charge)
    cols.discharge.append(discharge)
    cols.soc.append(soc)
    return [(t, charge, -1.0), (t, discharge, 1.0)]


def _dump_pays(inputs: _Inputs) -> npt.NDArray[np.bool_]:
    """Slots where wasting energy in the battery could pay.

    That is: a negative price, PV that cannot be curtailed, or a phase limit that may bind (there, undoing
    simultaneous charge and discharge would move power between phases).
    """
    tariff = inputs.tariff
    pays = (tariff.import_price < 0) | (tariff.export_price < 0) | _phase_tight(inputs)
    if inputs.curtailment or not math.isfinite(tariff.export_limit_kw):
        return pays
    return pays | (inputs.pv > 0)


def _phase_tight(inputs: _Inputs) -> npt.NDArray[np.bool_]:
    """Slots where some phase could pass its limit with every device at full power one way."""
    phases, n = inputs.tariff.phases, inputs.n
    if phases is None:
        return np.zeros(n, dtype=bool)
    draw: dict[str, Any] = {k: v for k, v in inputs.constant().items() if k != "pv"}
    draw |= {b.name: b.charge_kw for b in inputs.batteries}
    draw |= {load.spec.name: load.spec.power_kw for load in inputs.loads}
    draw |= {p.name: p.max_kw for p in inputs.heat_pumps}
    feed: dict[str, Any] = {"pv": inputs.pv, **{b.name: b.discharge_kw for b in inputs.batteries}}
    tight = np.zeros(n, dtype=bool)
    for p in PHASES:
        limit = phases.limit(p)
        for devices in (draw, feed):
            tight |= sum((phases.shares(k)[p] * np.asarray(v) for k, v in devices.items()), np.zeros(n)) > limit
    return tight


def _load_columns(model: MilpModel, cols: _Columns, inputs: _Inputs, load: _Load, *, relax: bool) -> list[Any]:
    """Add a run's start binaries (exactly one) or an energy load's kW columns (its energy); return balance entries."""
    h = inputs.tariff.hours
    if load.slots:
        y = model.add(load.keys.size, 1.0, integer=True)
        model.row([(0, y, 1.0)], 1.0, 1.0, 1)
        cols.loads.append(y)
        covered = load.keys[:, None] + np.arange(load.slots)
        return [(covered, np.repeat(y[:, None], load.slots, axis=1), -load.spec.power_kw)]
    size, least, most = load.keys.size, load.spec.min_power_kw, load.spec.power_kw
    x = model.add(size, most)
    if least > 0:
        k, on = np.arange(size), model.add(size, 1.0, integer=True)
        model.row([(k, x, 1.0), (k, on, -most)], -math.inf, 0.0, size)
        model.row([(k, x, 1.0), (k, on, -least)], 0.0, math.inf, size)
        cols.on[load.spec.name] = on
    entries: list[tuple[Any, Any, Any]] = [(0, x, h)]
    if relax:
        slack = model.add(1, math.inf)
        entries.append((0, slack, 1.0))
        cols.slack[Infeasibility.ENERGY].append(slack)
    model.row(entries, load.energy_kwh, load.energy_kwh + h * least, 1)
    cols.loads.append(x)
    return [(load.keys, x, -1.0)]


def _grid_binaries(model: MilpModel, cols: _Columns, inputs: _Inputs) -> None:
    """Forbid importing and exporting at once where the export price exceeds the import price."""
    tariff = inputs.tariff
    risky = np.flatnonzero(tariff.export_price > tariff.import_price)
    if not risky.size:
        return
    big_imp = np.minimum(slot_limits(tariff.fuse_kw, inputs.n)[risky], _most_import(inputs)[risky])
    big_exp = np.minimum(tariff.export_limit_kw, _most_export(inputs)[risky])
    z = model.add(risky.size, 1.0, integer=True)
    k = np.arange(risky.size)
    model.row([(k, cols.imp[risky], 1.0), (k, z, -big_imp)], -math.inf, 0.0, risky.size)
    model.row([(k, cols.exp[risky], 1.0), (k, z, big_exp)], -math.inf, big_exp, risky.size)


def _most_import(inputs: _Inputs) -> FloatArray:
    """Upper bound of the import per slot (everything on at full power)."""
    loads = sum(load.spec.power_kw for load in inputs.loads) + sum(b.charge_kw for b in inputs.batteries)
    return inputs.base + loads + sum(p.max_kw for p in inputs.heat_pumps)


def _most_export(inputs: _Inputs) -> FloatArray:
    """Upper bound of the export per slot (all PV and every battery discharging)."""
    return inputs.pv + sum(b.discharge_kw for b in inputs.batteries)


def _scale(inputs: _Inputs) -> float:
    """Cost scale: largest |price| x the most energy the plan moves (the tie tolerance is TIE_REL of it)."""
    tariff = inputs.tariff
    price = max(
        float(np.max(np.abs(tariff.import_price))),
        float(np.max(np.abs(tariff.export_price))),
        *(abs(v) for v in tariff.terminal_price.values()),
        1e-6,
    )
    energy = tariff.hours * float(np.sum(_most_import(inputs) + _most_export(inputs)))
    energy += sum(b.capacity_kwh for b in inputs.batteries)
    for pump in inputs.heat_pumps:
        low, high = pump.band(tariff.hours, inputs.n)
        energy += pump.capacity_kwh_per_k * float(np.max(high) - min(float(np.min(low)), pump.initial_temp_c))
    capacity = 0.0 if tariff.fees is None else tariff.fees.capacity_price * float(np.max(_most_import(inputs)))
    return price * max(energy, 1e-6) + capacity


@dataclass
class _Solution:
    """Cleaned column values and the columns' layout."""

    x: FloatArray
    cols: _Columns
    model: MilpModel


def _solve(inputs: _Inputs) -> tuple[_Solution, str]:
    """Least cost, then the earliest plan among the ties; HomePlanError when there is none.

    The LP relaxation gives a lower bound L and reduced costs r: a plan that starts run a at j costs at least
    L + r_aj. A dive (:func:`_dive`) gives a plan and its cost U. When U <= L (to ``PRUNE_MARGIN``) the dive's plan
    is optimal; otherwise starts with L + r_aj > U are fixed to 0 and HiGHS solves the MILP. The tie stage
    (:func:`_earliest`) prunes again with its budget.
    """
    model, cols = _build(inputs)
    scale = _scale(inputs)
    factor = COST_SCALE / scale
    cost = model.objective()
    runs: IntArray = np.concatenate(
        [np.zeros(0, dtype=np.intp), *(c for c, load in zip(cols.loads, inputs.loads, strict=True) if load.slots)]
    )
    relaxed = model.reduced_costs(cost * factor) if runs.size else None
    upper = model.upper_bounds()
    x: FloatArray | None = None
    note = ""
    if relaxed is not None:
        dived, bound = _dive(inputs, model, cols, relaxed, cost * factor)
        upper = _pruned(upper, runs, relaxed, bound)
        if dived is not None and bound <= relaxed[0] + PRUNE_MARGIN:
            x = _clean(model, dived, model.upper_bounds())
    if x is None:
        first = model.solve(cost * factor, upper=upper)
        if first.x is None:
            if first.status == 2:
                raise _diagnose(inputs)
            raise HomePlanError((), f"HiGHS found no plan: {first.message}")
        note = "" if first.status == 0 else f"solver stopped early ({first.message}); best plan found"
        x = _clean(model, first.x, upper)
    budget = float(cost @ x) + TIE_REL * scale
    if relaxed is not None:
        upper = _pruned(upper, runs, relaxed, budget * factor)
        upper[x > 0] = np.maximum(upper[x > 0], x[x > 0])  # the plan in hand stays feasible whatever the rounding
    lower_bound = -math.inf if relaxed is None else relaxed[0]
    x = _earliest(inputs, model, cols, x, budget=budget, scale=scale, upper=upper, lower_bound=lower_bound)
    return _Solution(x, cols, model), note


def _dive(
    inputs: _Inputs,
    model: MilpModel,
    cols: _Columns,
    relaxed: tuple[float, FloatArray, FloatArray],
    objective: FloatArray,
) -> tuple[FloatArray | None, float]:
    """Return a plan and its scaled cost found by fixing the runs one by one at their largest LP fraction.

    ``relaxed`` is the LP relaxation (optimum, reduced costs, solution). The LP is solved again after fixing a run
    it had split (fixing one it had whole leaves its answer optimal); with every run fixed, :func:`_leaf` turns
    the LP's answer into a plan. (None, inf) when no plan is found.
    """
    lower_bound, _, lp = relaxed
    upper = model.upper_bounds()
    for load, columns in zip(inputs.loads, cols.loads, strict=True):
        if load.slots:
            keep = columns[int(np.argmax(lp[columns]))]
            split = lp[keep] < 1 - 1e-9
            upper[columns] = 0.0
            upper[keep] = 1.0
            if split:
                found = model.solve(objective, upper=upper, relax=True)
                if found.x is None:
                    return None, math.inf
                lp = found.x
    x = _leaf(inputs, model, cols, objective, upper=upper, lp=lp)
    return (None, math.inf) if x is None else (x, float(objective @ x))


def _leaf(
    inputs: _Inputs, model: MilpModel, cols: _Columns, objective: FloatArray, *, upper: FloatArray, lp: FloatArray
) -> FloatArray | None:
    """With every run fixed and ``lp`` that LP's answer, a plan: ``lp`` itself when it needs no binary.

    Otherwise the LP solved again with each slot that has a charge/discharge or import/export binary kept to the
    direction ``lp`` favours (:func:`_directed`): a plan when the heat pumps' and energy loads' on/off binaries come
    out whole. Else
    the MILP with the runs fixed; None when that finds no plan.
    """
    integer = np.concatenate(model.integer) > 0
    if _exclusive(inputs, cols, lp) and _whole(lp, np.flatnonzero(integer)):
        return lp
    found = model.solve(objective, upper=_directed(inputs, cols, lp, upper), relax=True)
    on = np.concatenate([np.zeros(0, dtype=np.intp), *(h.on for h in cols.heat if h.on is not None), *cols.on.values()])
    if found.x is None or not _whole(found.x, on):
        found = model.solve(objective, upper=upper)
    return None if found.x is None else np.asarray(found.x, dtype=np.float64)


def _whole(x: FloatArray, columns: IntArray) -> bool:
    """Return True when ``x`` is within 1e-9 of an integer on every one of ``columns``."""
    return bool(np.all(np.abs(x[columns] - np.round(x[columns])) <= 1e-9))


def _directed(inputs: _Inputs, cols: _Columns, x: FloatArray, upper: FloatArray) -> FloatArray:
    """Return ``upper`` with one side of each pair that has a binary at 0, in every slot: the side smaller in ``x``.

    The pairs are charge and discharge, import and export; any answer is then exclusive there and its binaries can
    be set to match.
    """
    out = upper.copy()
    tariff = inputs.tariff
    pairs = [(c, d, _dump_pays(inputs)) for c, d in zip(cols.charge, cols.discharge, strict=True)]
    pairs.append((cols.imp, cols.exp, tariff.export_price > tariff.import_price))
    for first, second, has_binary in pairs:
        favours_first = x[first] >= x[second]
        out[first[has_binary & ~favours_first]] = 0.0
        out[second[has_binary & favours_first]] = 0.0
    return out


def _exclusive(inputs: _Inputs, cols: _Columns, x: FloatArray) -> bool:
    """Return True when no slot with a binary both charges and discharges a battery, or both imports and exports."""
    dump = _dump_pays(inputs)
    both = [(x[c] > TOL_KW) & (x[d] > TOL_KW) & dump for c, d in zip(cols.charge, cols.discharge, strict=True)]
    grid = (x[cols.imp] > TOL_KW) & (x[cols.exp] > TOL_KW) & (inputs.tariff.export_price > inputs.tariff.import_price)
    return not (grid.any() or any(b.any() for b in both))


def _pruned(
    upper: FloatArray, runs: IntArray, relaxed: tuple[float, FloatArray, FloatArray], bound: float
) -> FloatArray:
    """``upper`` with the run starts whose Lagrangian bound exceeds ``bound`` (scaled) fixed to 0."""
    lower_bound, reduced, _ = relaxed
    out = upper.copy()
    out[runs[lower_bound + reduced[runs] > bound + PRUNE_MARGIN]] = 0.0
    return out


def _earliest(
    inputs: _Inputs,
    model: MilpModel,
    cols: _Columns,
    x: FloatArray,
    *,
    budget: float,
    scale: float,
    upper: FloatArray,
    lower_bound: float,
) -> FloatArray:
    """Among plans costing at most ``budget``, the earliest: runs first, then energy loads, each in caller's order.

    When :func:`_runs_earliest` proves that no such plan starts a run earlier than ``x`` does, the runs stay; ``x``
    is the answer when nothing else (energy loads, heat pumps) counts in the placement objective
    (:func:`_tie_objective`), else the rest is placed with the runs fixed. Otherwise one more HiGHS call minimises the placement objective under
    ``cost <= budget``; placements differ there by whole slots, far above HiGHS's tolerances. Its result is kept
    only when its recomputed cost stays within ``budget`` plus what HiGHS's feasibility tolerance may add (limits
    met to ``TOL_KW``: ``TOL_KW`` x h x sum of |prices|, plus ``TIE_REL`` of the scale); else ``x`` stays.
    ``lower_bound`` is the LP relaxation's scaled optimum (-inf when not known).
    """
    from scipy.optimize import LinearConstraint  # noqa: PLC0415 - lazy, as in MilpModel.solve

    if not inputs.loads and not inputs.heat_pumps:
        return x
    tariff = inputs.tariff
    tie = _tie_objective(inputs, cols, model.size)
    cost = model.objective()
    factor = COST_SCALE / scale
    fixed = _runs_earliest(
        inputs,
        model,
        cols,
        x,
        upper=upper,
        tie=tie,
        factor=factor,
        limit=budget * factor,
        tight=float(cost @ x) * factor <= lower_bound + PRUNE_MARGIN,
    )
    if fixed is not None:
        rest = tie.copy()
        for load, columns in zip(inputs.loads, cols.loads, strict=True):
            if load.slots:
                rest[columns] = 0.0
        if not rest.any():
            return x
        upper = fixed
    noise = TOL_KW * tariff.hours * float(np.sum(np.abs(tariff.import_price) + np.abs(tariff.export_price)))
    row = [LinearConstraint(cost[None, :] * factor, -np.inf, budget * factor)]
    found = model.solve(tie, row, upper=upper)
    if found.x is None:
        return x
    better = _clean(model, found.x, upper)
    return better if float(cost @ better) <= budget + TIE_REL * scale + noise else x


def _runs_earliest(
    inputs: _Inputs,
    model: MilpModel,
    cols: _Columns,
    x: FloatArray,
    *,
    upper: FloatArray,
    tie: FloatArray,
    factor: float,
    limit: float,
    tight: bool,
) -> FloatArray | None:
    """Return ``upper`` with every run fixed at its start in ``x`` when no run can start earlier within ``limit``.

    "Earlier within the limit": a plan of cost x ``factor`` <= ``limit`` whose run starts before ``x``'s, the runs
    before it (in tie order) at their starts in ``x``. None when that is not proven.

    Earlier starts already at 0 in ``upper`` (pruned by the budget) need no proof; otherwise the LP relaxation with
    the run forced earlier must exceed ``limit``, by a bound that holds whatever HiGHS's tolerances
    (:meth:`MilpModel.lower_bound`). That LP is only tried when ``tight`` (``x`` costs the relaxation's optimum):
    under a gap it cannot exceed the limit, so HiGHS's tie solve decides.
    """
    objective = model.objective() * factor
    fixed = upper.copy()
    for load, columns in zip(inputs.loads, cols.loads, strict=True):
        if not load.slots:
            continue
        start = int(np.argmax(x[columns]))
        if tie[columns].any() and fixed[columns[:start]].any():
            if not tight:
                return None
            trial = fixed.copy()
            trial[columns[start:]] = 0.0
            if model.lower_bound(objective, trial) <= limit:
                return None
        fixed[columns] = 0.0
        fixed[columns[start]] = 1.0
    return fixed


def _tie_objective(inputs: _Inputs, cols: _Columns, size: int) -> FloatArray:
    """Lexicographic placement objective: the runs' start offsets, the energy loads' mean slots, then heat pumps.

    Each term lies in [0, span): a run's start offset, an energy load's mean slot, a heat pump's
    :func:`~.home_heat.heat_tie` (span n; smallest when it runs as late as possible). Weighted so that one slot of
    a term outweighs every later term; terms whose weight would pass ``LEX_LIMIT`` are left out (HiGHS's gap must
    still tell one slot apart).
    """
    pairs = list(zip(inputs.loads, cols.loads, strict=True))
    terms = [(float(load.keys[-1] - load.keys[0]) + 1, _load_tie(inputs, load, c, size)) for load, c in pairs]
    terms = [term for term, (load, _) in zip(terms, pairs, strict=True) if load.slots] + [
        term for term, (load, _) in zip(terms, pairs, strict=True) if not load.slots
    ]
    terms += [(float(inputs.n), heat_tie(p, c, size)) for p, c in zip(inputs.heat_pumps, cols.heat, strict=True)]
    spans: list[float] = []
    weight = 1.0
    for span, _ in terms:
        if weight * span > LEX_LIMIT:
            break
        spans.append(span)
        weight *= span
    tie = np.zeros(size)
    for (_, term), span in zip(terms, spans, strict=False):
        weight /= span
        tie += weight * term
    return tie


def _load_tie(inputs: _Inputs, load: _Load, columns: IntArray, size: int) -> FloatArray:
    """Return a load's placement term: its start offset (runs) or its energy's mean slot offset (energy loads)."""
    tie = np.zeros(size)
    offsets = (load.keys - load.keys[0]).astype(np.float64)
    per_slot = 1.0 if load.slots else inputs.tariff.hours / load.energy_kwh  # x is kW: mean slot = sum(t x h) / E
    tie[columns] = offsets * per_slot
    return tie


def _clean(model: MilpModel, x: FloatArray, upper: FloatArray) -> FloatArray:
    """Binaries rounded, values clipped to their bounds, solver noise below TOL_KW / 100 zeroed."""
    lower = np.concatenate(model.lower)
    x = np.clip(x, lower, upper)
    integer = np.concatenate(model.integer) > 0
    x[integer] = np.round(x[integer])
    x[(np.abs(x) < TOL_KW / 100) & (lower <= 0)] = 0.0
    return x


def _diagnose(inputs: _Inputs) -> HomePlanError:
    """Re-solve with slacks on every relaxable limit; name those the slacks use.

    The limits: fuse, export limit, energy targets, reserves, comfort bands and phase limits (a phase's conflict
    names the phase and its devices, :func:`_phase_over`). The LP relaxation is tried first; when it needs no slack (the conflict lies in the runs or the heat pumps'
    on/off and minimum times), the MILP with slacks is solved.
    """
    model, cols = _build(inputs, relax=True)
    objective = np.zeros(model.size)
    for slacks in cols.slack.values():
        for slack in slacks:
            objective[slack] = 1.0
    found = model.solve(objective, relax=True)
    used = _slacks_used(cols, found.x)
    if found.x is not None and not used:
        found = model.solve(objective)
        used = _slacks_used(cols, found.x)
    if found.x is None:
        return HomePlanError((), f"no plan exists and HiGHS could not say why: {found.message}")
    short = tuple(
        load.spec.name
        for load, slack in zip(
            (ld for ld in inputs.loads if not ld.slots), cols.slack[Infeasibility.ENERGY], strict=True
        )
        if float(found.x[slack][0]) > TOL_KW
    )
    names = ", ".join(str(kind) for kind in used) or "unknown"
    over = _phase_over(inputs, cols, found.x) if Infeasibility.PHASE in used else None
    return HomePlanError(used, f"no plan satisfies every constraint; conflicting: {names}", short, over)


def _phase_over(inputs: _Inputs, cols: _Columns, x: FloatArray) -> PhaseOver:
    """Return the phase and slot where ``x`` (the plan with slacks) passes a phase limit most, and what is on it.

    The devices are those whose kW on that phase (their share of their planned or fixed power) pushes it the way it
    passes the limit: drawing above it, or feeding in below minus it.
    """
    phases, n = inputs.tariff.phases, inputs.n
    assert phases is not None
    slacks = cols.slack[Infeasibility.PHASE]  # per phase: up, down
    worst = int(np.argmax([float(np.max(x[s])) for s in slacks]))
    t, phase = int(np.argmax(x[slacks[worst]])), PHASES[worst // 2]
    drawn = {name: kw.copy() for name, kw in inputs.constant().items()}
    for name, entries in cols.devices.items():
        power = drawn.setdefault(name, np.zeros(n))
        for rows, columns, vals in entries:
            r, c, v = np.broadcast_arrays(rows, columns, vals)
            np.add.at(power, r, -v * x[c])
    on = {name: phases.shares(name)[phase] * float(kw[t]) for name, kw in drawn.items()}
    sign = 1.0 if worst % 2 == 0 else -1.0
    pushing = sorted(((name, sign * kw) for name, kw in on.items() if sign * kw > TOL_KW), key=lambda d: -d[1])
    start, limit = inputs.start + t * inputs.resolution, float(slot_limits(phases.limit(phase), n)[t])
    return PhaseOver(phase=phase, start=start, limit_kw=limit, power_kw=sum(on.values()), devices=tuple(pushing))


def _slacks_used(cols: _Columns, x: FloatArray | None) -> tuple[Infeasibility, ...]:
    """Return the kinds whose slacks ``x`` uses (none when ``x`` is None)."""
    if x is None:
        return ()
    return tuple(kind for kind, slacks in cols.slack.items() if any(float(np.max(x[s])) > TOL_KW for s in slacks))


@dataclass
class _Schedule:
    """Per-slot kW of every device (the plan's or the baseline's)."""

    loads: dict[str, FloatArray]
    battery: dict[str, FloatArray]  # positive charging
    curtail: FloatArray
    heat: dict[str, FloatArray] = field(default_factory=dict)


def _extract(inputs: _Inputs, solution: _Solution) -> _Schedule:
    """Return the devices' kW from the solver's columns, with simultaneous charge and discharge undone."""
    x, cols, n = solution.x, solution.cols, inputs.n
    loads: dict[str, FloatArray] = {}
    for load, columns in zip(inputs.loads, cols.loads, strict=True):
        power = np.zeros(n)
        if load.slots:
            start = int(load.keys[int(np.argmax(x[columns]))])
            power[start : start + load.slots] = load.spec.power_kw
        else:  # a semi-continuous load draws nothing where its (rounded) binary is off, not the solver's noise
            on = x[cols.on[load.spec.name]] if load.spec.name in cols.on else 1.0
            power[load.keys] = x[columns] * on
        loads[load.spec.name] = power
    charge = [x[c] for c in cols.charge]
    discharge = [x[d] for d in cols.discharge]
    grid = x[cols.imp] - x[cols.exp]
    curtail = x[cols.cur].copy()
    for b, bat in enumerate(inputs.batteries):
        _unmix(inputs, bat, (charge[b], discharge[b]), grid=grid, curtail=curtail)
    battery = {bat.name: charge[b] - discharge[b] for b, bat in enumerate(inputs.batteries)}
    heat = {pump.name: x[c.power] for pump, c in zip(inputs.heat_pumps, cols.heat, strict=True)}
    schedule = _Schedule(loads, battery, curtail, heat)
    _within_fuse(inputs, schedule)
    return schedule


def _within_fuse(inputs: _Inputs, schedule: _Schedule) -> None:
    """Trim the energy loads, in place, where HiGHS's feasibility tolerance (~1e-7) left the import above the fuse.

    The excess (at most a few 1e-7 kW) comes off the energy loads' power in that slot, in proportion.
    """
    energy = [load.spec.name for load in inputs.loads if not load.slots]
    if not energy or not np.isfinite(inputs.tariff.fuse_kw).any():
        return
    n = inputs.n
    net = inputs.base - (inputs.pv - schedule.curtail) + sum(schedule.loads.values(), np.zeros(n))
    net += sum(schedule.battery.values(), np.zeros(n)) + sum(schedule.heat.values(), np.zeros(n))
    flexible = sum((schedule.loads[name] for name in energy), np.zeros(n))
    over = np.clip(net - inputs.tariff.fuse_kw, 0.0, flexible)
    factor = np.where(flexible > 0, 1 - over / np.where(flexible > 0, flexible, 1.0), 1.0)
    for name in energy:
        schedule.loads[name] = schedule.loads[name] * factor


def _unmix(
    inputs: _Inputs, bat: HomeBattery, power: tuple[FloatArray, FloatArray], *, grid: FloatArray, curtail: FloatArray
) -> None:
    """Undo simultaneous charge and discharge in place where no binary forbade it; it never raises the cost.

    Keeping the SoC step, only the net direction remains: charge ``c - d / (eta_c eta_d)`` or discharge
    ``d - c eta_c eta_d``. The battery then draws ``delta >= 0`` kW less, which lowers the import, else raises the
    export (up to its limit), else raises the curtailment. In these slots both prices are >= 0, so the cost does not
    rise, and the throughput (wear) falls. A slot where ``delta`` finds no room keeps its values.
    """
    charge, discharge = power
    eta = bat.charge_efficiency * bat.discharge_efficiency
    for t in np.flatnonzero((charge > 0) & (discharge > 0) & ~_dump_pays(inputs)):
        c, d = float(charge[t]), float(discharge[t])
        new_c, new_d = (c - d / eta, 0.0) if c * eta >= d else (0.0, d - c * eta)
        delta = (c - d) - (new_c - new_d)
        room_export = inputs.tariff.export_limit_kw + min(grid[t], 0.0)
        room_curtail = (inputs.pv[t] - curtail[t]) if inputs.curtailment else 0.0
        if delta > max(grid[t], 0.0) + room_export + room_curtail:
            continue
        grid_drop = min(delta, max(grid[t], 0.0) + room_export)
        grid[t] -= grid_drop
        curtail[t] += delta - grid_drop
        charge[t], discharge[t] = new_c, new_d


def _baseline(inputs: _Inputs) -> _Schedule:
    """Return the schedule without optimisation.

    Appliances start at their earliest admissible start, energy loads charge as soon as possible at full power (the
    last slot at least at their least power), and
    heat pumps run as thermostats holding the comfort floor (:func:`~.home_heat.thermostat`), and each battery in
    turn only serves self-consumption: it charges from the PV surplus and discharges to cover the house, within its
    power and SoC limits. Surplus left over is exported up to the limit, then curtailed when allowed (else exported
    anyway, which :func:`~.home_model.evaluate` reports as a violation).
    """
    n, hours = inputs.n, inputs.tariff.hours
    loads: dict[str, FloatArray] = {}
    for load in inputs.loads:
        power = np.zeros(n)
        if load.slots:
            power[int(load.keys[0]) : int(load.keys[0]) + load.slots] = load.spec.power_kw
        else:
            placed = fill_in_order(np.full(load.keys.size, load.spec.power_kw * hours), load.energy_kwh)
            kw = (placed if placed is not None else np.zeros(load.keys.size)) / hours
            power[load.keys] = np.where(kw > 0, np.maximum(kw, load.spec.min_power_kw), 0.0)
        loads[load.spec.name] = power
    heat = {pump.name: thermostat(pump, hours, n) for pump in inputs.heat_pumps}
    surplus = inputs.pv - inputs.base - sum(loads.values(), np.zeros(n)) - sum(heat.values(), np.zeros(n))
    battery = {bat.name: np.zeros(n) for bat in inputs.batteries}
    soc = {bat.name: bat.initial_kwh for bat in inputs.batteries}
    for t in range(n):
        for bat in inputs.batteries:
            step = _self_consume(bat, soc[bat.name], float(surplus[t]), hours)
            battery[bat.name][t] = step
            surplus[t] -= step
            soc[bat.name] += hours * (
                bat.charge_efficiency * max(step, 0.0) + min(step, 0.0) / bat.discharge_efficiency
            )
    limit = inputs.tariff.export_limit_kw
    curtail = np.clip(surplus - limit, 0.0, inputs.pv) if inputs.curtailment else np.zeros(n)
    return _Schedule(loads, battery, curtail, heat)


def _self_consume(bat: HomeBattery, soc: float, surplus: float, hours: float) -> float:
    """Battery kW for one slot of self-consumption: charge from a surplus, discharge to cover a deficit."""
    if surplus > 0:
        room = (bat.ceiling_kwh - soc) / (bat.charge_efficiency * hours)
        return max(min(surplus, bat.charge_kw, room), 0.0)
    available = (soc - bat.floor_kwh) * bat.discharge_efficiency / hours
    return -max(min(-surplus, bat.discharge_kw, available), 0.0)


def _result(
    curve: PriceCurve, inputs: _Inputs, solution: _Solution, unplanned: dict[str, str], notes: list[str]
) -> HomePlan:
    """Assemble the plan, its cost and the baseline's through the common evaluator.

    Doubtful prices inside the horizon (a day of zeros, ...) are planned on and named in ``detail``.
    """
    doubtful = np.zeros(len(curve), dtype=bool)
    doubtful[: inputs.n] = curve.trust()[: inputs.n] == SlotTrust.DOUBTFUL
    if doubtful.any():
        notes = [f"planned on doubtful prices: {notes_text(curve, doubtful)}", *notes]
    schedule = _extract(inputs, solution)
    plan_eval = _evaluate(inputs, schedule)
    base_eval = _evaluate(inputs, _baseline(inputs))
    starts: dict[str, datetime | None] = {
        load.spec.name: curve.slot_start(int(np.flatnonzero(schedule.loads[load.spec.name])[0]))
        for load in inputs.loads
        if load.slots
    }
    starts.update(dict.fromkeys(unplanned))
    return HomePlan(
        start=curve.start,
        resolution=curve.resolution,
        horizon_end=curve.slot_start(inputs.n),
        import_kw=plan_eval.import_kw,
        export_kw=plan_eval.export_kw,
        curtail_kw=schedule.curtail,
        pv_kw=inputs.pv,
        base_load_kw=inputs.base,
        battery_kw=schedule.battery,
        soc_kwh=plan_eval.soc_kwh,
        load_kw=schedule.loads,
        starts=starts,
        unplanned=unplanned,
        cost=plan_eval.cost,
        net_cost=plan_eval.net_cost,
        baseline_cost=base_eval.cost,
        baseline_net_cost=base_eval.net_cost,
        currency=curve.currency,
        detail="; ".join(notes),
        heat_kw=schedule.heat,
        temp_c=plan_eval.temp_c,
        fee_cost=plan_eval.fee_cost,
        capacity_cost=plan_eval.capacity_cost,
        peak_kw=plan_eval.peak_kw,
        peak_floor_kw=_first_floor(inputs.tariff.fees),
        phase_kw=plan_eval.phase_kw,
        baseline_capacity_cost=base_eval.capacity_cost,
        fixed_kw=inputs.fixed,
        fuse_kw=inputs.tariff.fuse_kw,
    )


def _first_floor(fees: GridFees | None) -> float:
    """Return the peak floor of the first slot's billing month (0 without fees)."""
    return 0.0 if fees is None else fees.peak_floor_kw[int(fees.months(1)[0])]


def _evaluate(inputs: _Inputs, schedule: _Schedule) -> Evaluation:
    """Run the common evaluator on the plan's tariff and forecasts."""
    house = inputs.base + sum(schedule.loads.values(), np.zeros(inputs.n))
    return evaluate(
        inputs.tariff,
        house_kw=house,
        pv_kw=inputs.pv - schedule.curtail,
        battery_kw=schedule.battery,
        batteries=inputs.batteries,
        heat_kw=schedule.heat,
        heat_pumps=inputs.heat_pumps,
        load_kw={**schedule.loads, **inputs.fixed},
    )
