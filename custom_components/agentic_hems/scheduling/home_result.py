"""The whole-home plan assembled from the solver's columns: the devices' kW, the baseline, both costed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from ..prices.curve import FloatArray, PriceCurve
from ..prices.trust import SlotTrust
from .energy import fill_in_order
from .home_build import dump_pays
from .home_evaluate import Evaluation, evaluate
from .home_heat import thermostat
from .home_inputs import Inputs
from .home_model import GridFees, HomeBattery, HomePlan
from .home_solve import Solution
from .windows import notes_text


@dataclass
class _Schedule:
    """Per-slot kW of every device (the plan's or the baseline's)."""

    loads: dict[str, FloatArray]
    battery: dict[str, FloatArray]  # positive charging
    curtail: FloatArray
    heat: dict[str, FloatArray] = field(default_factory=dict)


def _extract(inputs: Inputs, solution: Solution) -> _Schedule:
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


def _within_fuse(inputs: Inputs, schedule: _Schedule) -> None:
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
    inputs: Inputs, bat: HomeBattery, power: tuple[FloatArray, FloatArray], *, grid: FloatArray, curtail: FloatArray
) -> None:
    """Undo simultaneous charge and discharge in place where no binary forbade it; it never raises the cost.

    Keeping the SoC step, only the net direction remains: charge ``c - d / (eta_c eta_d)`` or discharge
    ``d - c eta_c eta_d``. The battery then draws ``delta >= 0`` kW less, which lowers the import, else raises the
    export (up to its limit), else raises the curtailment. In these slots both prices are >= 0, so the cost does not
    rise, and the throughput (wear) falls. A slot where ``delta`` finds no room keeps its values.
    """
    charge, discharge = power
    eta = bat.charge_efficiency * bat.discharge_efficiency
    for t in np.flatnonzero((charge > 0) & (discharge > 0) & ~dump_pays(inputs)):
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


def _baseline(inputs: Inputs) -> _Schedule:
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


def assemble(
    curve: PriceCurve, inputs: Inputs, solution: Solution, unplanned: dict[str, str], notes: list[str]
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
        time_limited=solution.model.limited,
    )


def _first_floor(fees: GridFees | None) -> float:
    """Return the peak floor of the first slot's billing month (0 without fees)."""
    return 0.0 if fees is None else fees.peak_floor_kw[int(fees.months(1)[0])]


def _evaluate(inputs: Inputs, schedule: _Schedule) -> Evaluation:
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
