"""The whole-home MILP (the model of :mod:`.home`): its columns, rows and binaries, and its cost scale."""

from __future__ import annotations

from dataclasses import dataclass, field
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..prices.curve import FloatArray
from .home_grid import Entries, add_capacity, add_phases
from .home_heat import HeatColumns, add_heat_pump
from .home_inputs import Inputs, Load
from .home_model import PHASES, HomeBattery, Infeasibility, slot_limits
from .milp import MilpModel
from .windows import IntArray


@dataclass
class Columns:
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
    # direction binaries and the flow each lets run when 1 (charge, import); the other flow needs them at 0
    switches: list[tuple[IntArray, IntArray]] = field(default_factory=list)
    devices: dict[str, Entries] = field(default_factory=dict)  # each device's grid-balance entries


def build(inputs: Inputs, *, relax: bool = False) -> tuple[MilpModel, Columns]:
    """Build the MILP of the module docstring; ``relax`` turns limits into slacks for naming the conflicting ones."""
    model, n, tariff, h = MilpModel(), inputs.n, inputs.tariff, inputs.tariff.hours
    t = np.arange(n)
    imp = model.add(n, math.inf if relax else tariff.fuse_kw, h * tariff.import_price)
    exp = model.add(n, math.inf if relax else tariff.export_limit_kw, -h * tariff.export_price)
    cur = model.add(n, inputs.pv if inputs.curtailment else 0.0)
    cols = Columns(imp, exp, cur, [], [], [], [], {kind: [] for kind in Infeasibility})
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


def _battery(model: MilpModel, cols: Columns, inputs: Inputs, bat: HomeBattery, *, relax: bool) -> list[Any]:
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
        risky = np.flatnonzero(dump_pays(inputs))
        u = model.add(risky.size, 1.0, integer=True)
        k = np.arange(risky.size)
        model.row([(k, charge[risky], 1.0), (k, u, -bat.charge_kw)], -math.inf, 0.0, risky.size)
        model.row([(k, discharge[risky], 1.0), (k, u, bat.discharge_kw)], -math.inf, bat.discharge_kw, risky.size)
        cols.switches.append((u, charge[risky]))
    cols.charge.append(charge)
    cols.discharge.append(discharge)
    cols.soc.append(soc)
    return [(t, charge, -1.0), (t, discharge, 1.0)]


def dump_pays(inputs: Inputs) -> npt.NDArray[np.bool_]:
    """Slots where wasting energy in the battery could pay.

    That is: a negative price, PV that cannot be curtailed, or a phase limit that may bind (there, undoing
    simultaneous charge and discharge would move power between phases).
    """
    tariff = inputs.tariff
    pays = (tariff.import_price < 0) | (tariff.export_price < 0) | _phase_tight(inputs)
    if inputs.curtailment or not math.isfinite(tariff.export_limit_kw):
        return pays
    return pays | (inputs.pv > 0)


def _phase_tight(inputs: Inputs) -> npt.NDArray[np.bool_]:
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


def _load_columns(model: MilpModel, cols: Columns, inputs: Inputs, load: Load, *, relax: bool) -> list[Any]:
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


def _grid_binaries(model: MilpModel, cols: Columns, inputs: Inputs) -> None:
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
    cols.switches.append((z, cols.imp[risky]))


def _most_import(inputs: Inputs) -> FloatArray:
    """Upper bound of the import per slot (everything on at full power)."""
    loads = sum(load.spec.power_kw for load in inputs.loads) + sum(b.charge_kw for b in inputs.batteries)
    return inputs.base + loads + sum(p.max_kw for p in inputs.heat_pumps)


def _most_export(inputs: Inputs) -> FloatArray:
    """Upper bound of the export per slot (all PV and every battery discharging)."""
    return inputs.pv + sum(b.discharge_kw for b in inputs.batteries)


def cost_scale(inputs: Inputs) -> float:
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
