"""Handlers of the state and physics tools.

The tools: inspect_grid_state, retrieve_asset, run_power_flow, run_contingency and run_forecast. Each is
``(host, data, caller) -> ToolOutput`` run by :func:`~.contracts.invoke`; none writes a setpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
import math
from typing import Any

import numpy as np

from .catalog import HISTORY_DAYS, RUN_CONTINGENCY, SOLVER_AC, SOLVER_DC
from .contingency import loading, run_contingency
from .contracts import Caller, ToolError, ToolOutput
from .forecast import MAX_HORIZON_H, ForecastError, forecast
from .host import Measurement, TenantHost
from .network import BUS_I, BUS_TYPE, F_BUS, PD, RATE_A, T_BUS, VMAX, VMIN, Network, table
from .powerflow import MethodNotAvailable, PowerFlowResult, run_power_flow
from .twin import PANEL_BUS, Twin, with_injections

# --- inspect_grid_state, retrieve_asset ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """A snapshot's internals: the twin, asset powers (kW, load convention), batteries' SoC (%), and when."""

    twin: Twin
    power_kw: dict[str, float]
    soc_pct: dict[str, float]
    taken_at: datetime
    network: Network
    flow: PowerFlowResult | None


def asset_powers(twin: Twin, measured: Mapping[str, Measurement]) -> tuple[dict[str, float], dict[str, float]]:
    """Asset powers (kW, load convention) and SoC (%) from the measurements.

    PV sensors report generation (positive), so PV is negated; a battery's power sensor is positive when charging.
    Without a house sensor, the house is the grid power minus every other measured asset at the panel.
    """
    if not twin.is_home:
        return {}, {}
    power: dict[str, float] = {}
    soc: dict[str, float] = {}
    for key, item in measured.items():
        asset_id, quantity = key.split(".", 1)
        if quantity == "soc":
            soc[asset_id] = item.value
        elif quantity == "power":
            power[asset_id] = -abs(item.value) if twin.assets[asset_id].kind == "pv" else item.value
    if "house" not in power and "grid" in power:
        power["house"] = power["grid"] - sum(v for k, v in power.items() if k != "grid")
    return power, soc


def panel_powers(power: Mapping[str, float], twin: Twin) -> dict[str, float]:
    """Return the powers (kW) of the assets at the home twin's panel (every asset of a MATPOWER case)."""
    return {k: v for k, v in power.items() if twin.assets[k].bus == PANEL_BUS} if twin.is_home else dict(power)


def _alarms(
    twin: Twin, network: Network, flow: PowerFlowResult | None, soc: Mapping[str, float]
) -> list[dict[str, Any]]:
    if flow is None or not flow.converged:
        return [{"alarm": "power_flow_not_converged", "severity": "critical"}]
    pct, rated = loading(network, flow)
    alarms: list[dict[str, Any]] = [
        {
            "alarm": "branch_overload",
            "severity": "critical",
            "branch": int(index) + 1,
            "loading_pct": round(float(pct[index]), 3),
        }
        for index in np.flatnonzero(rated & (pct > 100))
    ]
    for index, bus in enumerate(table(network.bus)):
        if not bus[VMIN] <= flow.vm_pu[index] <= bus[VMAX] and bus[VMAX] > 0:
            alarms.append(
                {
                    "alarm": "voltage_limit",
                    "severity": "warning",
                    "bus": int(bus[BUS_I]),
                    "vm_pu": round(float(flow.vm_pu[index]), 6),
                }
            )
    for asset_id, value in soc.items():
        limits = twin.assets[asset_id].limits
        if "soc_min_pct" in limits and value < limits["soc_min_pct"]:
            alarms.append({"alarm": "soc_below_minimum", "severity": "warning", "asset_id": asset_id, "soc_pct": value})
        if "soc_max_pct" in limits and value > limits["soc_max_pct"]:
            alarms.append({"alarm": "soc_above_maximum", "severity": "warning", "asset_id": asset_id, "soc_pct": value})
    return alarms


def _voltages(network: Network, flow: PowerFlowResult) -> list[dict[str, Any]]:
    return [
        {
            "bus": int(bus[BUS_I]),
            "type": int(bus[BUS_TYPE]),
            "vm_pu": round(float(flow.vm_pu[i]), 8),
            "va_deg": round(float(flow.va_deg[i]), 8),
            "pd_mw": float(bus[PD]),
        }
        for i, bus in enumerate(table(network.bus))
    ]


def _flows(network: Network, flow: PowerFlowResult) -> list[dict[str, Any]]:
    pct, _ = loading(network, flow)
    return [
        {
            "branch": i + 1,
            "from_bus": int(br[F_BUS]),
            "to_bus": int(br[T_BUS]),
            "p_from_mw": round(float(flow.pf_mw[i]), 8),
            "q_from_mvar": round(float(flow.qf_mvar[i]), 8),
            "p_to_mw": round(float(flow.pt_mw[i]), 8),
            "q_to_mvar": round(float(flow.qt_mvar[i]), 8),
            "rate_a_mva": float(br[RATE_A]),
            "loading_pct": None if math.isnan(pct[i]) else round(float(pct[i]), 4),
        }
        for i, br in enumerate(table(network.branch))
    ]


def _stale_snapshot(host: TenantHost, twin: Twin, err: ToolError) -> ToolOutput:
    """Return the last snapshot of ``twin``'s network marked stale because of ``err``.

    Raises:
        ToolError: ``no_consistent_snapshot`` when there is none.

    """
    last = host.artifacts.latest("snapshot", lambda a: a.data["state"]["network_id"] == twin.network_id)
    if last is None:
        raise ToolError("no_consistent_snapshot", "failed", network_id=twin.network_id, reason=err.key) from err
    return ToolOutput(
        {
            "snapshot_id": last.artifact_id,
            "state": last.data["state"],
            "stale": True,
            "stale_reason": err.placeholders.get("detail", err.key),
        },
        [last.artifact_id, twin.source],
    )


async def inspect_grid_state(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Snapshot of a twin (``inspect_grid_state``).

    Depth 1: totals, asset powers and active alarms; 2: plus the measurements; 3: plus the solved buses and branches. On
    a measurement failure: the last consistent snapshot of the network with ``stale=true`` (never a partial state).
    """
    twin = await host.async_twin(data["network_id"])
    now = host.now()
    at: datetime | None = data.get("at")
    if at is not None:
        if at > now:
            raise ToolError("at_in_future", at=at.isoformat())
        if host.retention is None or at < now - host.retention:
            raise ToolError("at_outside_retention", at=at.isoformat())
    try:
        measured = await host.async_measure(twin, at) if twin.is_home else {}
    except ToolError as err:
        return _stale_snapshot(host, twin, err)
    power, soc = asset_powers(twin, measured)
    network = with_injections(twin, panel_powers(power, twin)) if twin.is_home else twin.network
    flow = await host.async_run(run_power_flow, network, "ac")
    state: dict[str, Any] = {
        "network_id": twin.network_id,
        "at": (at or now).isoformat(),
        "taken_at": now.isoformat(),
        "depth": data["depth"],
        "buses": twin.network.n_bus,
        "branches": twin.network.n_branch,
        "assets": [
            {
                "asset_id": a.asset_id,
                "kind": a.kind,
                "bus": a.bus,
                "p_kw": power.get(a.asset_id),
                **({"soc_pct": soc[a.asset_id]} if a.asset_id in soc else {}),
            }
            for a in twin.assets.values()
        ],
        "alarms": _alarms(twin, network, flow, soc),
    }
    if data["depth"] >= 2:
        state["measurements"] = {
            k: {"value": m.value, "entity_id": m.entity_id, "last_updated": m.last_updated.isoformat()}
            for k, m in measured.items()
        }
    if data["depth"] >= 3:
        state["bus_state"] = _voltages(network, flow) if flow.converged else []
        state["branch_state"] = _flows(network, flow) if flow.converged else []
    snapshot = Snapshot(twin, power, soc, at or now, network, flow)
    artifact = host.artifacts.add("snapshot", now, {"state": state}, snapshot)
    sources = [twin.source, *(m.entity_id for m in measured.values())]
    return ToolOutput({"snapshot_id": artifact.artifact_id, "state": state, "stale": False}, sources)


async def retrieve_asset(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Return an asset's record, limits, connection point and health (the ``retrieve_asset`` tool).

    Unknown ids are a typed 404, never a fuzzy match.
    """
    twin = await host.async_twin(data["network_id"])
    asset = twin.assets.get(data["asset_id"])
    if asset is None:
        raise ToolError("asset_not_found", "not_found", asset_id=data["asset_id"], network_id=twin.network_id)
    described = host.describe(list(asset.measurements.values()))
    health = {
        "measurements": {
            q: described.get(e, {"entity_id": e, "available": False}) for q, e in asset.measurements.items()
        },
        "in_service": bool(asset.parameters.get("in_service", True)),
        "limits_known": bool(asset.limits),
    }
    return ToolOutput(
        {
            "asset": asset.as_dict(),
            "limits": dict(asset.limits),
            "connection_point": {"network_id": twin.network_id, "bus": asset.bus},
            "health": health,
        },
        [twin.source, *asset.measurements.values()],
    )


# --- run_power_flow, run_contingency --------------------------------------------------------------------------


def check_limits(twin: Twin, asset_id: str, p_kw: float) -> None:
    """Check ``p_kw`` (kW, load convention) against the asset's power limits.

    Raises:
        ToolError: ``asset_not_found`` (404), ``limits_unknown``, ``outside_limits``.

    """
    asset = twin.assets.get(asset_id)
    if asset is None:
        raise ToolError("asset_not_found", "not_found", asset_id=asset_id, network_id=twin.network_id)
    if "p_min_kw" not in asset.limits or "p_max_kw" not in asset.limits:
        raise ToolError("limits_unknown", asset_id=asset_id)
    low, high = asset.limits["p_min_kw"], asset.limits["p_max_kw"]
    if not low - 1e-9 <= p_kw <= high + 1e-9:
        raise ToolError("outside_limits", asset_id=asset_id, p_kw=p_kw, low=low, high=high)


async def run_power_flow_tool(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Run an AC (Newton-Raphson) or DC power flow on a snapshot with typed modifications (``run_power_flow``).

    ``converged=false`` is a result; ``pinn`` is a typed error; a solver exception is a typed error, never retried
    with another method.
    """
    snapshot_artifact = host.artifacts.get(data["snapshot_id"], "snapshot")
    snapshot: Snapshot = snapshot_artifact.payload
    twin = snapshot.twin
    power = panel_powers(snapshot.power_kw, twin)
    outages: list[int] = []
    for mod in data["modifications"]:
        if mod["type"] == "set_power":
            check_limits(twin, mod["asset_id"], mod["p_kw"])
            if twin.assets[mod["asset_id"]].kind in ("grid_connection", "branch"):
                raise ToolError("not_an_injection", asset_id=mod["asset_id"])
            power[mod["asset_id"]] = mod["p_kw"]
        elif not 1 <= mod["branch"] <= twin.network.n_branch:
            raise ToolError("branch_not_found", "not_found", branch=mod["branch"])
        else:
            outages.append(mod["branch"])
    network = with_injections(twin, power, tuple(outages))
    started = host.now()
    try:
        flow = await host.async_run(run_power_flow, network, data["method"])
    except MethodNotAvailable as err:
        raise ToolError("method_not_available", method=data["method"]) from err
    except (np.linalg.LinAlgError, ValueError, FloatingPointError) as err:
        raise ToolError("solver_failed", "failed", error=str(err)) from err
    latency = (host.now() - started).total_seconds() * 1000
    result = {
        "converged": flow.converged,
        "iterations": flow.iterations,
        "solver": SOLVER_AC if data["method"] == "ac" else SOLVER_DC,
        "latency_ms": round(latency, 3),
        "voltages": _voltages(network, flow) if flow.converged else [],
        "flows": _flows(network, flow) if flow.converged else [],
        "losses_mw": round(flow.losses_mw, 9) if flow.converged else None,
    }
    artifact = host.artifacts.add("result", host.now(), result, refs={"snapshot_id": snapshot_artifact.artifact_id})
    return ToolOutput(
        {"result_id": artifact.artifact_id, **result},
        [snapshot_artifact.artifact_id, twin.source],
        SOLVER_AC if data["method"] == "ac" else SOLVER_DC,
    )


async def run_contingency_tool(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """N-1 screening over a snapshot (the ``run_contingency`` tool).

    The list must name the network's branches; on timeout the result is partial with ``completed=false`` and the
    unevaluated outages.
    """
    snapshot_artifact = host.artifacts.get(data["snapshot_id"], "snapshot")
    snapshot: Snapshot = snapshot_artifact.payload
    n_branch = snapshot.network.n_branch
    if data["set"] == "list":
        if not data["branches"]:
            raise ToolError("contingency_list_empty")
        unknown = [b for b in data["branches"] if b > n_branch]
        if unknown:
            raise ToolError("branch_not_found", "not_found", branch=unknown[0])
    branches = sorted({b - 1 for b in data["branches"]}) if data["set"] == "list" else None
    deadline = RUN_CONTINGENCY.timeout_ms / 1000 * 0.8  # leave room to answer before the contract's timeout
    started = host.now()
    result = await host.async_run(
        lambda: run_contingency(
            snapshot.network,
            branches=branches,
            method=data["method"],
            limit_margin_pct=data["limit_margin_pct"],
            deadline_s=deadline,
        )
    )
    outages = [o.as_dict() | {"branch": o.branch + 1} for o in result.outages]
    violations = [o for o in outages if o["islanded"] or o["converged"] is False or o["overloaded"]]
    for item in violations:
        item["overloaded"] = [v | {"branch": v["branch"] + 1} for v in item["overloaded"]]
    loaded = [o for o in outages if o["max_loading_pct"] is not None]
    worst = max(loaded, key=lambda o: o["max_loading_pct"]) if loaded else None
    return ToolOutput(
        {
            "violations": violations,
            "worst_case": worst,
            "completed": result.completed,
            "unevaluated": [b + 1 for b in result.unevaluated],
            "evaluated": len(outages),
            "islanded": [o["branch"] for o in outages if o["islanded"]],
            "method": data["method"],
            "limit_margin_pct": data["limit_margin_pct"],
            "latency_ms": round((host.now() - started).total_seconds() * 1000, 3),
        },
        [snapshot_artifact.artifact_id, snapshot.twin.source],
        SOLVER_AC if data["method"] == "ac" else SOLVER_DC,
    )


# --- run_forecast -----------------------------------------------------------------------------------------------


async def forecast_target(
    host: TenantHost, target: str, horizon_h: float, quantiles: list[float], step_min: int
) -> tuple[Any, str]:
    """Return the :class:`~.forecast.Forecast` of ``target`` (load, pv, price) and the entity id.

    The forecast comes from the entity's 14-day history.

    Raises:
        ToolError: ``forecast_target_unmapped``, ``forecast_no_history``, ``forecast_horizon_too_long``,
            ``forecast_bad_quantiles``.

    """
    entity = host.forecast_entity(target)
    if entity is None:
        raise ToolError("forecast_target_unmapped", target=target)
    now = host.now()
    times, values = await host.async_history(entity, now - timedelta(days=HISTORY_DAYS), now)
    try:
        result = await host.async_run(
            lambda: forecast(
                times,
                values,
                now=now,
                horizon_h=horizon_h,
                quantiles=quantiles,
                step_min=step_min,
                history_days=HISTORY_DAYS,
            )
        )
    except ForecastError as err:
        if err.key == "no_history":
            raise ToolError("forecast_no_history", target=target) from err
        if err.key == "horizon_too_long":
            raise ToolError("forecast_horizon_too_long", target=target, max_h=MAX_HORIZON_H) from err
        raise ToolError("forecast_bad_quantiles", target=target) from err
    return result, entity


async def run_forecast(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Quantile forecast of load, PV or price from the recorder's history (the ``run_forecast`` tool).

    The model is used only where its backtest beats the persistence baseline's, else ``baseline=true``.
    """
    if data["horizon_h"] > MAX_HORIZON_H:
        raise ToolError("forecast_horizon_too_long", target=data["target"], max_h=MAX_HORIZON_H)
    result, entity = await forecast_target(host, data["target"], data["horizon_h"], data["quantiles"], data["step_min"])
    unit = "EUR/kWh" if data["target"] == "price" else "kW"
    output = {
        "target": data["target"],
        "entity_id": entity,
        "unit": unit,
        "step_min": result.step_min,
        "starts": [s.isoformat() for s in result.starts],
        "series": {f"{q:g}": [round(float(v), 6) for v in values] for q, values in result.series.items()},
        "model_version": result.model_version,
        "baseline": result.baseline,
        "backtest_error": result.backtest_error,
        "model_backtest_error": result.model_backtest_error,
        "baseline_backtest_error": result.baseline_backtest_error,
        "history_steps": result.history_steps,
    }
    artifact = host.artifacts.add("forecast", host.now(), output)
    return ToolOutput({"forecast_id": artifact.artifact_id, **output}, [entity])
