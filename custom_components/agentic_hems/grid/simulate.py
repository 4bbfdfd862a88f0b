"""Rolling a twin forward under typed actions, checking plans, and flexibility.

The tools ``simulate_action``, ``validate_constraints`` and ``calculate_flexibility`` run on this.

Powers are kW in the load convention (see :mod:`.twin`). A simulation starts from a snapshot's asset powers held
flat (persistence) and steps 15 minutes at a time: actions change asset powers, a battery's SoC integrates its power
with its efficiencies, and every step runs an AC power flow. Constraints: the main fuse / branch ratings (loading
<= 100 %), bus voltages within the case's VMIN/VMAX, a battery's SoC within its limits, asset powers within limits.
A constraint that cannot be evaluated (a power flow that does not converge, a NaN) makes the simulation invalid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
import math
from typing import Any

import numpy as np

from .contingency import loading
from .network import BUS_I, VMAX, VMIN, table
from .powerflow import run_power_flow
from .twin import Twin, with_injections

STEP = timedelta(minutes=15)
EFFICIENCY = 0.95  # one-way battery efficiency when the asset declares none
TOLERANCE = 1e-4  # in each constraint's unit (kW, %, pu): above the MILP's feasibility tolerance


@dataclass(frozen=True)
class Window:
    """A half-open interval [start, end) in UTC."""

    start: datetime
    end: datetime

    def covers(self, moment: datetime) -> bool:
        """``start <= moment < end``."""
        return self.start <= moment < self.end


@dataclass(frozen=True)
class PowerChange:
    """A power change of ``asset_id`` during ``window``.

    The asset runs at ``p_kw`` (``battery_power`` and ``set_power`` actions), or with ``delta`` ``p_kw`` is added to
    its held power (the two halves of a ``load_shift``).
    """

    asset_id: str
    window: Window
    p_kw: float
    delta: bool = False


def parse_actions(actions: Sequence[Mapping[str, Any]]) -> list[PowerChange]:
    """Typed actions -> power changes.

    ``load_shift`` moves ``p_kw`` of ``asset_id`` from ``from_start`` to ``to_start`` for ``duration_min``. Times are
    ISO 8601 strings or datetimes (aware).

    Raises:
        ValueError: an unknown type, a missing field, a naive time, or an empty window.

    """
    changes: list[PowerChange] = []
    for action in actions:
        kind = action["type"]
        if kind in ("battery_power", "set_power"):
            window = Window(aware_time(action["start"]), aware_time(action["end"]))
            if window.end <= window.start:
                raise ValueError(f"{kind}: end must be after start")
            changes.append(PowerChange(str(action["asset_id"]), window, float(action["p_kw"])))
        elif kind == "load_shift":
            length = timedelta(minutes=float(action["duration_min"]))
            if length <= timedelta(0):
                raise ValueError("load_shift: duration_min must be positive")
            source, target = aware_time(action["from_start"]), aware_time(action["to_start"])
            p_kw = float(action["p_kw"])
            changes.append(PowerChange(str(action["asset_id"]), Window(source, source + length), -p_kw, True))
            changes.append(PowerChange(str(action["asset_id"]), Window(target, target + length), p_kw, True))
        else:
            raise ValueError(f"unknown action type {kind!r}")
    return changes


def aware_time(value: Any) -> datetime:
    """Return an ISO 8601 text or datetime with a time zone. Raises ValueError otherwise."""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        raise ValueError(f"{value!r} needs a time zone")
    return moment


@dataclass
class Simulation:
    """A trajectory (one dict per step), the constraint report, and ``valid`` (every constraint evaluated)."""

    trajectory: list[dict[str, Any]] = field(default_factory=list)
    violations: list[dict[str, Any]] = field(default_factory=list)
    margins: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """Every constraint of every step could be evaluated."""
        return not self.errors

    def report(self) -> dict[str, Any]:
        """Return the constraint report: ``ok`` only when valid and without violations."""
        return {
            "ok": self.valid and not self.violations,
            "valid": self.valid,
            "violations": self.violations,
            "margins": self.margins,
            "evaluation_errors": self.errors,
        }


def _margin(sim: Simulation, name: str, value: float) -> None:
    sim.margins[name] = round(min(sim.margins.get(name, math.inf), value), 6)


def simulate(
    twin: Twin,
    base_kw: Mapping[str, float],
    soc_pct: Mapping[str, float],
    changes: Sequence[PowerChange],
    *,
    start: datetime,
    horizon: timedelta,
) -> Simulation:
    """Roll ``twin`` forward from ``start`` for ``horizon`` in 15-minute steps (see the module docstring).

    ``base_kw``: asset powers at the snapshot (kW); ``soc_pct``: batteries' SoC at the snapshot (%).
    """
    sim = Simulation()
    soc = dict(soc_pct)
    steps = max(1, math.ceil(horizon / STEP))
    for step in range(steps):
        moment = start + step * STEP
        power = _step_power(base_kw, changes, moment)
        row: dict[str, Any] = {"start": moment.isoformat(), "power_kw": {k: round(v, 6) for k, v in power.items()}}
        _check_powers(sim, step, twin, power)
        _integrate_soc(sim, step, twin, soc, power, row=row)
        _run_flow(sim, step, twin, power, row)
        sim.trajectory.append(row)
    return sim


def _step_power(base_kw: Mapping[str, float], changes: Sequence[PowerChange], moment: datetime) -> dict[str, float]:
    """Return the asset powers (kW) at ``moment``: ``base_kw`` with the changes whose window covers it."""
    power = dict(base_kw)
    for change in changes:
        if change.window.covers(moment):
            held = power.get(change.asset_id, 0.0)
            power[change.asset_id] = held + change.p_kw if change.delta else change.p_kw
    return power


def _check_powers(sim: Simulation, step: int, twin: Twin, power: Mapping[str, float]) -> None:
    """Check each asset's power against its ``p_max_kw`` and ``p_min_kw`` limits."""
    for asset_id, p_kw in power.items():
        limits = twin.assets[asset_id].limits
        if "p_max_kw" in limits:
            _check(sim, step, f"{asset_id}.p_max_kw", limits["p_max_kw"] - p_kw)
        if "p_min_kw" in limits:
            _check(sim, step, f"{asset_id}.p_min_kw", p_kw - limits["p_min_kw"])


def _integrate_soc(
    sim: Simulation, step: int, twin: Twin, soc: dict[str, float], power: Mapping[str, float], *, row: dict[str, Any]
) -> None:
    """Advance each battery's SoC (%) in ``soc`` by one step of its power, record it in ``row`` and check it."""
    hours = STEP.total_seconds() / 3600
    for asset_id, level in soc.items():
        limits = twin.assets[asset_id].limits
        efficiency = float(twin.assets[asset_id].parameters.get("efficiency", EFFICIENCY))
        p_kw = power.get(asset_id, 0.0)
        energy = p_kw * hours * (efficiency if p_kw > 0 else 1 / efficiency)
        soc[asset_id] = level + 100 * energy / limits["capacity_kwh"]
        row.setdefault("soc_pct", {})[asset_id] = round(soc[asset_id], 6)
        _check(sim, step, f"{asset_id}.soc_max_pct", limits["soc_max_pct"] - soc[asset_id])
        _check(sim, step, f"{asset_id}.soc_min_pct", soc[asset_id] - limits["soc_min_pct"])


def _run_flow(sim: Simulation, step: int, twin: Twin, power: Mapping[str, float], row: dict[str, Any]) -> None:
    """Run the step's AC power flow, add its figures to ``row`` and check loadings and voltages."""
    try:
        network = with_injections(twin, power)
        result = run_power_flow(network, "ac")
    except (ValueError, KeyError, np.linalg.LinAlgError) as err:
        sim.errors.append(f"step {step}: power flow failed: {err}")
        return
    if not result.converged or not np.isfinite(result.vm_pu).all():
        sim.errors.append(f"step {step}: the power flow did not converge")
        row["converged"] = False
        return
    pct, rated = loading(network, result)
    row |= {
        "converged": True,
        "vm_min_pu": round(float(result.vm_pu.min()), 6),
        "vm_max_pu": round(float(result.vm_pu.max()), 6),
        "losses_kw": round(result.losses_mw * 1000, 6),
    }
    if rated.any():
        row["max_loading_pct"] = round(float(np.nanmax(pct)), 6)
        for index in np.flatnonzero(rated):
            _check(sim, step, f"branch_{index + 1}.loading_pct", 100.0 - float(pct[index]))
    for index, bus in enumerate(table(network.bus)):
        _check(sim, step, f"bus_{int(bus[BUS_I])}.vmax_pu", float(bus[VMAX] - result.vm_pu[index]))
        _check(sim, step, f"bus_{int(bus[BUS_I])}.vmin_pu", float(result.vm_pu[index] - bus[VMIN]))


def _check(sim: Simulation, step: int, name: str, margin: float) -> None:
    """Record ``margin`` (>= 0 holds) of constraint ``name``; NaN is an evaluation error."""
    if not math.isfinite(margin):
        sim.errors.append(f"step {step}: {name} could not be evaluated")
        return
    _margin(sim, name, margin)
    if margin < -TOLERANCE:
        sim.violations.append({"constraint": name, "step": step, "margin": round(margin, 6)})


def flexibility(
    twin: Twin, power_kw: Mapping[str, float], soc_pct: Mapping[str, float], asset_ids: Sequence[str], hours: float
) -> dict[str, Any]:
    """Up and down flexibility per asset over ``hours`` (kW held for the whole window, and kWh).

    Convention (TSO regulation): **up** lowers the site's net consumption (more injection), **down** raises it.
    An asset whose power limits, current power (or a battery's capacity and SoC) are unknown is excluded and listed.
    The aggregate is capped by the main fuse: down by the import headroom, up by the export headroom.
    """
    per_asset: list[dict[str, Any]] = []
    excluded: list[dict[str, str]] = []
    for asset_id in asset_ids:
        asset = twin.assets[asset_id]
        limits = asset.limits
        if "p_min_kw" not in limits or "p_max_kw" not in limits:
            excluded.append({"asset_id": asset_id, "reason": "unknown power limits"})
            continue
        if asset_id not in power_kw:
            excluded.append({"asset_id": asset_id, "reason": "no current power measured"})
            continue
        now_kw = power_kw[asset_id]
        up_kw, down_kw = now_kw - limits["p_min_kw"], limits["p_max_kw"] - now_kw
        if asset.kind == "battery":
            if asset_id not in soc_pct or "capacity_kwh" not in limits:
                excluded.append({"asset_id": asset_id, "reason": "unknown capacity or SoC"})
                continue
            capacity = limits["capacity_kwh"]
            stored = (soc_pct[asset_id] - limits["soc_min_pct"]) / 100 * capacity
            room = (limits["soc_max_pct"] - soc_pct[asset_id]) / 100 * capacity
            # Held for the whole window: the lowest power the stored energy sustains, the highest the room takes.
            lowest = max(limits["p_min_kw"], -stored * EFFICIENCY / hours)
            highest = min(limits["p_max_kw"], room / (EFFICIENCY * hours))
            up_kw, down_kw = now_kw - lowest, highest - now_kw
        per_asset.append(
            {
                "asset_id": asset_id,
                "kind": asset.kind,
                "p_now_kw": round(now_kw, 6),
                "up_kw": round(max(up_kw, 0.0), 6),
                "down_kw": round(max(down_kw, 0.0), 6),
                "up_kwh": round(max(up_kw, 0.0) * hours, 6),
                "down_kwh": round(max(down_kw, 0.0) * hours, 6),
            }
        )
    up = sum(item["up_kw"] for item in per_asset)
    down = sum(item["down_kw"] for item in per_asset)
    aggregate = {"up_kw": round(up, 6), "down_kw": round(down, 6)}
    if twin.is_home and "grid" in power_kw:
        fuse = twin.assets["main_fuse"].limits["rate_kva"]
        aggregate = {
            "up_kw": round(min(up, fuse + power_kw["grid"]), 6),
            "down_kw": round(min(down, fuse - power_kw["grid"]), 6),
        }
    return {"per_asset": per_asset, "aggregate": aggregate, "excluded": excluded}
