"""Seed 002's thirteen tools: contracts and handlers over a :class:`~.host.TenantHost` (issue 5).

Each entry of :data:`TOOLS` pairs a :class:`~.contracts.ToolContract` with a handler ``(host, data, caller) ->
ToolOutput``; :func:`~.contracts.invoke` runs them. No handler writes a setpoint: ``request_authorization`` produces
a request for a person, and an approved plan reaches devices only through the gate pipeline (the HA shell).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
import hashlib
import hmac
import math
from typing import Any

import numpy as np
import voluptuous as vol

from ..gates.dry_run import canonical_json
from .contingency import loading, run_contingency
from .contracts import Caller, Scope, SideEffect, ToolContract, ToolError, ToolOutput, json_safe
from .dispatch import Battery, DispatchProblem, Objective, optimize_dispatch
from .explain import AUDIENCES, LANGUAGES, explain
from .forecast import MAX_HORIZON_H, ForecastError, forecast
from .host import Artifact, Measurement, TenantHost
from .network import BUS_I, BUS_TYPE, F_BUS, PD, RATE_A, T_BUS, VMAX, VMIN, Network, table
from .powerflow import MethodNotAvailable, PowerFlowResult, run_power_flow
from .simulate import EFFICIENCY, STEP, Window, flexibility, parse_actions, simulate
from .twin import HOME, PANEL_BUS, Twin, with_injections

SOLVER_AC = "newton-raphson (polar, sparse Jacobian; agentic_hems)"
SOLVER_DC = "dc power flow (agentic_hems)"
SOLVER_MILP = "scipy.optimize.milp (HiGHS)"
HISTORY_DAYS = 14
STALE_AFTER = timedelta(minutes=30)


def _aware(value: Any) -> datetime:
    """An ISO 8601 text or datetime with a time zone."""
    try:
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    except ValueError as err:
        raise vol.Invalid(f"not an ISO 8601 time: {value!r}") from err
    if moment.tzinfo is None:
        raise vol.Invalid(f"{value!r} needs a time zone")
    return moment


_ID = vol.All(str, vol.Length(min=1, max=100))
_TENANT = {vol.Optional("tenant"): _ID}
_NETWORK = vol.All(str, vol.Match(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$", msg="a network id is a case file's name"))
_KW = vol.All(vol.Coerce(float), vol.Range(min=-1e6, max=1e6))
_WINDOW = vol.Schema({vol.Required("start"): _aware, vol.Required("end"): _aware})
_MODIFICATION = vol.Any(
    vol.Schema({vol.Required("type"): "set_power", vol.Required("asset_id"): _ID, vol.Required("p_kw"): _KW}),
    vol.Schema({vol.Required("type"): "branch_outage", vol.Required("branch"): vol.All(int, vol.Range(min=1))}),
)
_ACTION = vol.Any(
    vol.Schema({vol.Required("type"): vol.In(["battery_power", "set_power"]), vol.Required("asset_id"): _ID,
                vol.Required("start"): _aware, vol.Required("end"): _aware, vol.Required("p_kw"): _KW}),
    vol.Schema({vol.Required("type"): "load_shift", vol.Required("asset_id"): _ID, vol.Required("from_start"): _aware,
                vol.Required("to_start"): _aware,
                vol.Required("duration_min"): vol.All(vol.Coerce(float), vol.Range(min=1, max=1440)),
                vol.Required("p_kw"): vol.All(vol.Coerce(float), vol.Range(min=0, max=1e6))}),
)


def _whole_steps(minutes: int) -> int:
    if minutes % 15:
        raise vol.Invalid("horizon_min must be a multiple of 15 (the simulation's step)")
    return minutes


def _quantiles(values: list[float]) -> list[float]:
    if not values or len(set(values)) != len(values) or any(not 0 < q < 1 for q in values):
        raise vol.Invalid("quantiles must be distinct and strictly between 0 and 1")
    return sorted(values)


def _contract(name: str, side: SideEffect, scope: Scope, timeout_ms: int, schema: dict[Any, Any],
              outputs: tuple[str, ...]) -> ToolContract:
    return ToolContract(name, side, scope, timeout_ms, vol.Schema(schema), outputs)


INSPECT_GRID_STATE = _contract(
    "inspect_grid_state", SideEffect.READ, Scope.READ, 2000,
    {**_TENANT, vol.Optional("network_id", default=HOME): _NETWORK, vol.Optional("at"): _aware,
     vol.Optional("depth", default=1): vol.All(vol.Coerce(int), vol.In([1, 2, 3]))},
    ("snapshot_id", "state", "stale"),
)
RETRIEVE_ASSET = _contract(
    "retrieve_asset", SideEffect.READ, Scope.READ, 1000,
    {**_TENANT, vol.Required("asset_id"): _ID, vol.Optional("network_id", default=HOME): _NETWORK},
    ("asset", "limits", "connection_point", "health"),
)
RUN_POWER_FLOW = _contract(
    "run_power_flow", SideEffect.COMPUTE, Scope.SIMULATE, 10000,
    {**_TENANT, vol.Required("snapshot_id"): _ID, vol.Optional("method", default="ac"): vol.In(["ac", "dc", "pinn"]),
     vol.Optional("modifications", default=list): [_MODIFICATION]},
    ("result_id", "voltages", "flows", "converged", "iterations", "solver", "latency_ms"),
)
RUN_CONTINGENCY = _contract(
    "run_contingency", SideEffect.COMPUTE, Scope.SIMULATE, 30000,
    {**_TENANT, vol.Required("snapshot_id"): _ID, vol.Optional("set", default="n-1"): vol.In(["n-1", "list"]),
     vol.Optional("branches", default=list): [vol.All(int, vol.Range(min=1))],
     vol.Optional("limit_margin_pct", default=0.0): vol.All(vol.Coerce(float), vol.Range(min=0, max=100)),
     vol.Optional("method", default="ac"): vol.In(["ac", "dc"])},
    ("violations", "worst_case", "latency_ms", "completed", "unevaluated"),
)
RUN_FORECAST = _contract(
    "run_forecast", SideEffect.COMPUTE, Scope.READ, 5000,
    {**_TENANT, vol.Required("target"): vol.In(["load", "pv", "price"]),
     vol.Required("horizon_h"): vol.All(vol.Coerce(float), vol.Range(min=0, min_included=False)),
     vol.Optional("quantiles", default=lambda: [0.1, 0.5, 0.9]): vol.All([vol.Coerce(float)], _quantiles),
     vol.Optional("step_min", default=60): vol.All(vol.Coerce(int), vol.In([15, 30, 60]))},
    ("forecast_id", "series", "model_version", "backtest_error", "baseline"),
)
SIMULATE_ACTION = _contract(
    "simulate_action", SideEffect.SIMULATE, Scope.SIMULATE, 20000,
    {**_TENANT, vol.Required("snapshot_id"): _ID, vol.Required("actions"): vol.All([_ACTION], vol.Length(min=1)),
     vol.Required("horizon_min"): vol.All(vol.Coerce(int), vol.Range(min=15, max=48 * 60), _whole_steps),
     vol.Required("signature"): vol.All(str, vol.Length(min=64, max=64)), vol.Optional("plan_id"): _ID},
    ("sim_id", "trajectory", "constraint_report", "valid"),
)
CALCULATE_FLEXIBILITY = _contract(
    "calculate_flexibility", SideEffect.COMPUTE, Scope.READ, 5000,
    {**_TENANT, vol.Optional("asset_ids", default=list): [_ID], vol.Required("window"): _WINDOW},
    ("per_asset", "aggregate", "assumptions", "excluded"),
)
OPTIMIZE_DISPATCH = _contract(
    "optimize_dispatch", SideEffect.COMPUTE, Scope.SIMULATE, 60000,
    {**_TENANT, vol.Optional("portfolio", default=list): [_ID],
     vol.Optional("objective", default="cost"): vol.In([o.value for o in Objective]),
     vol.Optional("horizon_h", default=24.0): vol.All(vol.Coerce(float), vol.Range(min=0.25, max=MAX_HORIZON_H)),
     vol.Optional("constraints", default=dict): vol.Schema({
         vol.Optional("import_limit_kw"): vol.All(vol.Coerce(float), vol.Range(min=0)),
         vol.Optional("export_limit_kw"): vol.All(vol.Coerce(float), vol.Range(min=0)),
         vol.Optional("terminal_soc_pct"): {_ID: vol.All(vol.Coerce(float), vol.Range(min=0, max=100))},
     })},
    ("plan_id", "schedule", "objective_value", "baseline_value", "gap", "solver_status"),
)
VALIDATE_CONSTRAINTS = _contract(
    "validate_constraints", SideEffect.COMPUTE, Scope.SIMULATE, 10000,
    {**_TENANT, vol.Exclusive("plan_id", "subject"): _ID, vol.Exclusive("sim_id", "subject"): _ID},
    ("validation_id", "pass", "violations", "margins"),
)
REQUEST_AUTHORIZATION = _contract(
    "request_authorization", SideEffect.REQUEST, Scope.REQUEST, 3000,
    {**_TENANT, vol.Required("plan_id"): _ID, vol.Required("sim_id"): _ID, vol.Required("validation_id"): _ID,
     vol.Required("explanation_id"): _ID, vol.Required("requested_window"): _WINDOW},
    ("request_id", "status", "expires_at"),
)
GENERATE_EXPLANATION = _contract(
    "generate_explanation", SideEffect.COMPUTE, Scope.READ, 15000,
    {**_TENANT, vol.Required("plan_id"): _ID, vol.Optional("audience", default="operator"): vol.In(AUDIENCES),
     vol.Optional("lang", default="en"): vol.In(LANGUAGES)},
    ("explanation_id", "text", "structured"),
)
CREATE_INCIDENT = _contract(
    "create_incident", SideEffect.RECORD, Scope.INCIDENT, 3000,
    {**_TENANT, vol.Required("severity"): vol.In(["info", "warning", "critical"]),
     vol.Required("title"): vol.All(str, vol.Length(min=1, max=200)),
     vol.Required("evidence_ids"): vol.All([_ID], vol.Length(min=1, max=50))},
    ("incident_id",),
)
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


def _panel_powers(power: Mapping[str, float], twin: Twin) -> dict[str, float]:
    return {k: v for k, v in power.items() if twin.assets[k].bus == PANEL_BUS} if twin.is_home else dict(power)


def _alarms(twin: Twin, network: Network, flow: PowerFlowResult | None, soc: Mapping[str, float]
            ) -> list[dict[str, Any]]:
    alarms: list[dict[str, Any]] = []
    if flow is None or not flow.converged:
        return [{"alarm": "power_flow_not_converged", "severity": "critical"}]
    pct, rated = loading(network, flow)
    for index in np.flatnonzero(rated & (pct > 100)):
        alarms.append({"alarm": "branch_overload", "severity": "critical", "branch": int(index) + 1,
                       "loading_pct": round(float(pct[index]), 3)})
    for index, bus in enumerate(table(network.bus)):
        if not bus[VMIN] <= flow.vm_pu[index] <= bus[VMAX] and bus[VMAX] > 0:
            alarms.append({"alarm": "voltage_limit", "severity": "warning", "bus": int(bus[BUS_I]),
                           "vm_pu": round(float(flow.vm_pu[index]), 6)})
    for asset_id, value in soc.items():
        limits = twin.assets[asset_id].limits
        if "soc_min_pct" in limits and value < limits["soc_min_pct"]:
            alarms.append({"alarm": "soc_below_minimum", "severity": "warning", "asset_id": asset_id, "soc_pct": value})
        if "soc_max_pct" in limits and value > limits["soc_max_pct"]:
            alarms.append({"alarm": "soc_above_maximum", "severity": "warning", "asset_id": asset_id, "soc_pct": value})
    return alarms


def _voltages(network: Network, flow: PowerFlowResult) -> list[dict[str, Any]]:
    return [{"bus": int(bus[BUS_I]), "type": int(bus[BUS_TYPE]), "vm_pu": round(float(flow.vm_pu[i]), 8),
             "va_deg": round(float(flow.va_deg[i]), 8), "pd_mw": float(bus[PD])}
            for i, bus in enumerate(table(network.bus))]


def _flows(network: Network, flow: PowerFlowResult) -> list[dict[str, Any]]:
    pct, _ = loading(network, flow)
    return [
        {"branch": i + 1, "from_bus": int(br[F_BUS]), "to_bus": int(br[T_BUS]),
         "p_from_mw": round(float(flow.pf_mw[i]), 8), "q_from_mvar": round(float(flow.qf_mvar[i]), 8),
         "p_to_mw": round(float(flow.pt_mw[i]), 8), "q_to_mvar": round(float(flow.qt_mvar[i]), 8),
         "rate_a_mva": float(br[RATE_A]), "loading_pct": None if math.isnan(pct[i]) else round(float(pct[i]), 4)}
        for i, br in enumerate(table(network.branch))
    ]


async def inspect_grid_state(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Snapshot of a twin (seed 002 ``inspect_grid_state``). Depth 1: totals, asset powers and active alarms;
    2: plus the measurements; 3: plus the solved buses and branches. On a measurement failure: the last consistent
    snapshot of the network with ``stale=true`` (never a partial state)."""
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
        last = host.artifacts.latest("snapshot", lambda a: a.data["state"]["network_id"] == twin.network_id)
        if last is None:
            raise ToolError("no_consistent_snapshot", "failed", network_id=twin.network_id, reason=err.key) from err
        return ToolOutput({"snapshot_id": last.artifact_id, "state": last.data["state"], "stale": True,
                           "stale_reason": err.placeholders.get("detail", err.key)}, [last.artifact_id, twin.source])
    power, soc = asset_powers(twin, measured)
    network = with_injections(twin, _panel_powers(power, twin)) if twin.is_home else twin.network
    flow = await host.async_run(run_power_flow, network, "ac")
    state: dict[str, Any] = {
        "network_id": twin.network_id, "at": (at or now).isoformat(), "taken_at": now.isoformat(),
        "depth": data["depth"],
        "buses": twin.network.n_bus, "branches": twin.network.n_branch,
        "assets": [{"asset_id": a.asset_id, "kind": a.kind, "bus": a.bus, "p_kw": power.get(a.asset_id),
                    **({"soc_pct": soc[a.asset_id]} if a.asset_id in soc else {})} for a in twin.assets.values()],
        "alarms": _alarms(twin, network, flow, soc),
    }
    if data["depth"] >= 2:
        state["measurements"] = {k: {"value": m.value, "entity_id": m.entity_id,
                                     "last_updated": m.last_updated.isoformat()} for k, m in measured.items()}
    if data["depth"] >= 3:
        state["bus_state"] = _voltages(network, flow) if flow.converged else []
        state["branch_state"] = _flows(network, flow) if flow.converged else []
    snapshot = Snapshot(twin, power, soc, at or now, network, flow)
    artifact = host.artifacts.add("snapshot", now, {"state": state}, snapshot)
    sources = [twin.source, *(m.entity_id for m in measured.values())]
    return ToolOutput({"snapshot_id": artifact.artifact_id, "state": state, "stale": False}, sources)


async def retrieve_asset(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """An asset's record, limits, connection point and health (seed 002 ``retrieve_asset``); unknown ids are a
    typed 404, never a fuzzy match."""
    twin = await host.async_twin(data["network_id"])
    asset = twin.assets.get(data["asset_id"])
    if asset is None:
        raise ToolError("asset_not_found", "not_found", asset_id=data["asset_id"], network_id=twin.network_id)
    described = host.describe(list(asset.measurements.values()))
    health = {"measurements": {q: described.get(e, {"entity_id": e, "available": False})
                               for q, e in asset.measurements.items()},
              "in_service": bool(asset.parameters.get("in_service", True)),
              "limits_known": bool(asset.limits)}
    return ToolOutput(
        {"asset": asset.as_dict(), "limits": dict(asset.limits),
         "connection_point": {"network_id": twin.network_id, "bus": asset.bus}, "health": health},
        [twin.source, *asset.measurements.values()],
    )


# --- run_power_flow, run_contingency --------------------------------------------------------------------------


def _check_limits(twin: Twin, asset_id: str, p_kw: float) -> None:
    asset = twin.assets.get(asset_id)
    if asset is None:
        raise ToolError("asset_not_found", "not_found", asset_id=asset_id, network_id=twin.network_id)
    if "p_min_kw" not in asset.limits or "p_max_kw" not in asset.limits:
        raise ToolError("limits_unknown", asset_id=asset_id)
    low, high = asset.limits["p_min_kw"], asset.limits["p_max_kw"]
    if not low - 1e-9 <= p_kw <= high + 1e-9:
        raise ToolError("outside_limits", asset_id=asset_id, p_kw=p_kw, low=low, high=high)


async def run_power_flow_tool(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """AC (Newton-Raphson) or DC power flow on a snapshot with typed modifications (seed 002 ``run_power_flow``).
    ``converged=false`` is a result; ``pinn`` is a typed error; a solver exception is a typed error, never retried
    with another method."""
    snapshot_artifact = host.artifacts.get(data["snapshot_id"], "snapshot")
    snapshot: Snapshot = snapshot_artifact.payload
    twin = snapshot.twin
    power = _panel_powers(snapshot.power_kw, twin)
    outages: list[int] = []
    for mod in data["modifications"]:
        if mod["type"] == "set_power":
            _check_limits(twin, mod["asset_id"], mod["p_kw"])
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
        "converged": flow.converged, "iterations": flow.iterations,
        "solver": SOLVER_AC if data["method"] == "ac" else SOLVER_DC, "latency_ms": round(latency, 3),
        "voltages": _voltages(network, flow) if flow.converged else [],
        "flows": _flows(network, flow) if flow.converged else [],
        "losses_mw": round(flow.losses_mw, 9) if flow.converged else None,
    }
    artifact = host.artifacts.add("result", host.now(), result, refs={"snapshot_id": snapshot_artifact.artifact_id})
    return ToolOutput({"result_id": artifact.artifact_id, **result}, [snapshot_artifact.artifact_id, twin.source],
                      SOLVER_AC if data["method"] == "ac" else SOLVER_DC)


async def run_contingency_tool(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """N-1 screening over a snapshot (seed 002 ``run_contingency``); the list must name the network's branches;
    on timeout the result is partial with ``completed=false`` and the unevaluated outages."""
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
        lambda: run_contingency(snapshot.network, branches=branches, method=data["method"],
                                limit_margin_pct=data["limit_margin_pct"], deadline_s=deadline)
    )
    outages = [o.as_dict() | {"branch": o.branch + 1} for o in result.outages]
    violations = [o for o in outages if o["islanded"] or o["converged"] is False or o["overloaded"]]
    for item in violations:
        item["overloaded"] = [v | {"branch": v["branch"] + 1} for v in item["overloaded"]]
    loaded = [o for o in outages if o["max_loading_pct"] is not None]
    worst = max(loaded, key=lambda o: o["max_loading_pct"]) if loaded else None
    return ToolOutput(
        {"violations": violations, "worst_case": worst, "completed": result.completed,
         "unevaluated": [b + 1 for b in result.unevaluated], "evaluated": len(outages),
         "islanded": [o["branch"] for o in outages if o["islanded"]], "method": data["method"],
         "limit_margin_pct": data["limit_margin_pct"],
         "latency_ms": round((host.now() - started).total_seconds() * 1000, 3)},
        [snapshot_artifact.artifact_id, snapshot.twin.source], SOLVER_AC if data["method"] == "ac" else SOLVER_DC,
    )


# --- run_forecast -----------------------------------------------------------------------------------------------


async def _forecast(host: TenantHost, target: str, horizon_h: float, quantiles: list[float], step_min: int
                    ) -> tuple[Any, str]:
    entity = host.forecast_entity(target)
    if entity is None:
        raise ToolError("forecast_target_unmapped", target=target)
    now = host.now()
    times, values = await host.async_history(entity, now - timedelta(days=HISTORY_DAYS), now)
    try:
        result = await host.async_run(
            lambda: forecast(times, values, now=now, horizon_h=horizon_h, quantiles=quantiles, step_min=step_min,
                             history_days=HISTORY_DAYS)
        )
    except ForecastError as err:
        if err.key == "no_history":
            raise ToolError("forecast_no_history", target=target) from err
        if err.key == "horizon_too_long":
            raise ToolError("forecast_horizon_too_long", target=target, max_h=MAX_HORIZON_H) from err
        raise ToolError("forecast_bad_quantiles", target=target) from err
    return result, entity


async def run_forecast(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Quantile forecast of load, PV or price from the recorder's history (seed 002 ``run_forecast``); the model
    is used only where its backtest beats the persistence baseline's, else ``baseline=true``."""
    if data["horizon_h"] > MAX_HORIZON_H:
        raise ToolError("forecast_horizon_too_long", target=data["target"], max_h=MAX_HORIZON_H)
    result, entity = await _forecast(host, data["target"], data["horizon_h"], data["quantiles"], data["step_min"])
    unit = "EUR/kWh" if data["target"] == "price" else "kW"
    output = {
        "target": data["target"], "entity_id": entity, "unit": unit, "step_min": result.step_min,
        "starts": [s.isoformat() for s in result.starts],
        "series": {f"{q:g}": [round(float(v), 6) for v in values] for q, values in result.series.items()},
        "model_version": result.model_version, "baseline": result.baseline,
        "backtest_error": result.backtest_error, "model_backtest_error": result.model_backtest_error,
        "baseline_backtest_error": result.baseline_backtest_error, "history_steps": result.history_steps,
    }
    artifact = host.artifacts.add("forecast", host.now(), output)
    return ToolOutput({"forecast_id": artifact.artifact_id, **output}, [entity])


# --- simulate_action, calculate_flexibility -------------------------------------------------------------------------


def sign(secret: bytes, actions: Any, plan_id: str | None) -> str:
    """The proposer's HMAC-SHA256 (hex) over the canonical JSON of ``{"actions", "plan_id"}``."""
    payload = canonical_json({"actions": actions, "plan_id": plan_id}).encode()
    return hmac.new(secret, payload, hashlib.sha256).hexdigest()


async def simulate_action(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Roll the twin forward under signed, typed actions (seed 002 ``simulate_action``). The HMAC is checked before
    anything is simulated; actions must stay within the assets' limits and the horizon; a constraint that cannot be
    evaluated makes the sim invalid, and an invalid sim cannot be cited by ``request_authorization``."""
    actions = json_safe(data["actions"])
    if not hmac.compare_digest(sign(host.secret, actions, data.get("plan_id")), data["signature"]):
        raise ToolError("signature_invalid", "forbidden")
    snapshot_artifact = host.artifacts.get(data["snapshot_id"], "snapshot")
    _fresh(host, snapshot_artifact)  # a sim starts from now, not from an old state
    snapshot: Snapshot = snapshot_artifact.payload
    twin = snapshot.twin
    plan = host.artifacts.get(data["plan_id"], "plan") if "plan_id" in data else None
    try:
        changes = parse_actions(data["actions"])
    except ValueError as err:
        raise ToolError("action_invalid", error=str(err)) from err
    start = snapshot.taken_at.replace(second=0, microsecond=0)
    start -= timedelta(minutes=start.minute % 15)
    end = start + timedelta(minutes=data["horizon_min"])
    for change in changes:
        if change.asset_id not in twin.assets or twin.assets[change.asset_id].bus != PANEL_BUS and twin.is_home:
            raise ToolError("asset_not_found", "not_found", asset_id=change.asset_id, network_id=twin.network_id)
        if not change.delta:
            _check_limits(twin, change.asset_id, change.p_kw)
        if change.window.start < start or change.window.end > end:
            raise ToolError("action_outside_horizon", asset_id=change.asset_id)
    batteries = {k: v for k, v in snapshot.soc_pct.items() if "capacity_kwh" in twin.assets[k].limits}
    base = _panel_powers(snapshot.power_kw, twin)
    sim = await host.async_run(simulate, twin, base, batteries, changes, start, timedelta(minutes=data["horizon_min"]))
    report = sim.report()
    refs = {"snapshot_id": snapshot_artifact.artifact_id, **({"plan_id": plan.artifact_id} if plan else {})}
    output = {"start": start.isoformat(), "end": end.isoformat(), "trajectory": sim.trajectory,
              "constraint_report": report, "valid": sim.valid,
              "plan_id": plan.artifact_id if plan else None, "snapshot_id": snapshot_artifact.artifact_id}
    artifact = host.artifacts.add("sim", host.now(), output, sim, refs)
    return ToolOutput({"sim_id": artifact.artifact_id, **output}, list(refs.values()), SOLVER_AC)


async def calculate_flexibility(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Up and down flexibility per asset and in aggregate over a window (seed 002 ``calculate_flexibility``); the
    window must lie within the forecast horizon; assets with unknown limits are excluded and listed."""
    now = host.now()
    window = Window(data["window"]["start"], data["window"]["end"])
    if window.end <= window.start or window.end > now + timedelta(hours=MAX_HORIZON_H) or window.end <= now:
        raise ToolError("window_outside_horizon", max_h=MAX_HORIZON_H)
    twin = await host.async_twin(HOME)
    asset_ids = data["asset_ids"] or [a.asset_id for a in twin.assets.values()
                                      if a.kind not in ("grid_connection", "main_panel_fuse", "load")]
    unknown = [a for a in asset_ids if a not in twin.assets]
    if unknown:
        raise ToolError("asset_not_found", "not_found", asset_id=unknown[0], network_id=HOME)
    assumptions = ["asset powers are held at their current values for the whole window (persistence)",
                   f"battery efficiency {EFFICIENCY:.0%} one way where none is declared",
                   "up = less net consumption (more injection), down = more net consumption"]
    try:
        measured = await host.async_measure(twin, None)
    except ToolError as err:
        measured = {}
        assumptions.append(f"measurements unavailable ({err.placeholders.get('detail', err.key)})")
    power, soc = asset_powers(twin, measured)
    hours = (window.end - window.start).total_seconds() / 3600
    result = flexibility(twin, power, soc, asset_ids, hours)
    return ToolOutput({**result, "assumptions": assumptions, "window": {"start": window.start.isoformat(),
                                                                        "end": window.end.isoformat()}},
                      [twin.source, *(m.entity_id for m in measured.values())])


# --- optimize_dispatch --------------------------------------------------------------------------------------------


async def _site_series(host: TenantHost, target: str, measured_kw: float | None, steps: int, twin: Twin
                       ) -> tuple[np.ndarray[Any, np.dtype[np.float64]], str]:
    """Per-15-minute kW of ``target`` (load or pv): the forecast's median from the house or PV sensor's history, else
    the measured power held (a grid meter's history is net of PV and battery, so it never stands in for the load)."""
    asset = twin.assets.get("house" if target == "load" else "pv")
    try:
        if asset is None or "power" not in asset.measurements:
            raise ToolError("forecast_target_unmapped", target=target)
        result, entity = await _forecast(host, target, steps / 4, [0.5], 15)
    except ToolError:
        if measured_kw is None:
            return np.zeros(steps), f"{target}: no measurement or history mapped, taken as 0 kW"
        return np.full(steps, measured_kw), f"{target}: measured {measured_kw:g} kW held (no usable history)"
    values = np.array(result.series[0.5][:steps], dtype=float)
    if len(values) < steps:
        values = np.pad(values, (0, steps - len(values)), mode="edge")
    method = "persistence baseline" if result.baseline else result.model_version
    return np.maximum(values, 0.0), f"{target}: median forecast from {entity} ({method})"


async def optimize_dispatch_tool(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """The battery/DER dispatch MILP against day-ahead prices (seed 002 ``optimize_dispatch``). Infeasible returns
    the certificate; a time limit returns the best solution with its gap. The plan's actions are signed (HMAC) so
    ``simulate_action`` can check they were proposed here."""
    twin = await host.async_twin(HOME)
    portfolio = data["portfolio"] or [a.asset_id for a in twin.assets.values() if a.kind == "battery"]
    constraints = data["constraints"]
    referenced = set(portfolio) | set(constraints.get("terminal_soc_pct", {}))
    unknown = sorted(a for a in referenced if a not in twin.assets or twin.assets[a].kind != "battery")
    if unknown:
        raise ToolError("portfolio_unknown_asset", "not_found", asset_id=unknown[0])
    if not portfolio:
        raise ToolError("portfolio_empty")
    prices = host.prices()
    now = host.now()
    start = now.replace(second=0, microsecond=0) - timedelta(minutes=now.minute % 15)
    steps = int(round(data["horizon_h"] * 4))
    if prices is None:
        raise ToolError("prices_missing", start=start.isoformat())
    offset = int((start - prices.start) / prices.step)
    imp = prices.import_price[max(offset, 0): offset + steps]
    exp = prices.export_price[max(offset, 0): offset + steps]
    if offset < 0 or len(imp) < steps or np.isnan(imp).any() or np.isnan(exp).any():
        raise ToolError("prices_missing", start=start.isoformat())
    measured = await host.async_measure(twin, None)
    power, soc = asset_powers(twin, measured)
    batteries: list[Battery] = []
    for asset_id in portfolio:
        limits = twin.assets[asset_id].limits
        if not {"capacity_kwh", "p_min_kw", "p_max_kw"} <= set(limits) or asset_id not in soc:
            raise ToolError("asset_state_unknown", asset_id=asset_id)
        capacity = limits["capacity_kwh"]
        initial = soc[asset_id] / 100 * capacity
        terminal = constraints.get("terminal_soc_pct", {}).get(asset_id)
        lo, hi = limits["soc_min_pct"] / 100 * capacity, limits["soc_max_pct"] / 100 * capacity
        batteries.append(Battery(asset_id, capacity, lo, hi, limits["p_max_kw"], -limits["p_min_kw"],
                                 min(max(initial, lo), hi),
                                 min(max(initial if terminal is None else terminal / 100 * capacity, lo), hi)))
    others = sum(v for k, v in power.items() if k not in portfolio and k not in ("grid", "pv", "house"))
    load, load_note = await _site_series(host, "load", power["house"] + others if "house" in power else None, steps,
                                         twin)
    pv, pv_note = await _site_series(host, "pv", -power["pv"] if "pv" in power else None, steps, twin)
    fuse = twin.assets["main_fuse"].limits["rate_kva"]
    for key in ("import_limit_kw", "export_limit_kw"):  # the fuse is physical: a plan may only stay below it
        if constraints.get(key, 0.0) > fuse:
            raise ToolError("outside_limits", asset_id="main_fuse", p_kw=constraints[key], low=0.0, high=fuse)
    problem = DispatchProblem(imp, exp, load, pv, tuple(batteries), float(constraints.get("import_limit_kw", fuse)),
                              float(constraints.get("export_limit_kw", fuse)), 0.25, Objective(data["objective"]))
    result = await host.async_run(lambda: optimize_dispatch(problem, time_limit_s=OPTIMIZE_DISPATCH.timeout_ms / 1000
                                                            * 0.8))
    net = load - pv
    baseline = float(np.sum(np.where(net > 0, imp * net, exp * net)) * 0.25)
    slots = [start + i * STEP for i in range(steps)]
    schedule: list[dict[str, Any]] = []
    actions: list[dict[str, Any]] = []
    if result.import_kw is not None and result.charge_kw is not None and result.discharge_kw is not None \
            and result.soc_kwh is not None and result.export_kw is not None:
        for t, slot in enumerate(slots):
            schedule.append({
                "start": slot.isoformat(), "end": (slot + STEP).isoformat(), "import_price": float(imp[t]),
                "export_price": float(exp[t]), "load_kw": round(float(load[t]), 6), "pv_kw": round(float(pv[t]), 6),
                "import_kw": round(float(result.import_kw[t]), 6), "export_kw": round(float(result.export_kw[t]), 6),
                "batteries": {b.name: {"charge_kw": round(float(result.charge_kw[i, t]), 6),
                                       "discharge_kw": round(float(result.discharge_kw[i, t]), 6),
                                       "soc_kwh": round(float(result.soc_kwh[i, t]), 6)}
                              for i, b in enumerate(batteries)},
            })
        for i, battery in enumerate(batteries):
            actions.extend(_battery_actions(battery.name, slots, result.charge_kw[i] - result.discharge_kw[i]))
    plan = {
        "tenant": host.tenant, "created_at": now.isoformat(), "objective": data["objective"],
        "horizon_h": data["horizon_h"], "step_min": 15, "currency": prices.currency, "solver": SOLVER_MILP,
        "solver_status": result.status, "objective_value": result.objective_value, "cost": result.cost,
        "baseline_value": round(baseline, 6), "gap": result.gap, "bound": result.bound,
        "constraints": {"import_limit_kw": problem.import_limit_kw, "export_limit_kw": problem.export_limit_kw},
        "assets": [{"asset_id": b.name, "capacity_kwh": b.capacity_kwh, "soc_min_kwh": b.soc_min_kwh,
                    "soc_max_kwh": b.soc_max_kwh, "charge_kw": b.charge_kw, "discharge_kw": b.discharge_kw,
                    "soc_initial_kwh": b.soc_initial_kwh, "soc_terminal_kwh": b.soc_terminal_kwh} for b in batteries],
        "schedule": schedule, "conflicts": result.conflicts, "actions": actions,
        "assumptions": {"load": load_note, "pv": pv_note, "prices": f"day-ahead ({prices.source})"},
    }
    artifact = host.artifacts.add("plan", now, plan)
    plan["plan_id"] = artifact.artifact_id
    plan["signature"] = sign(host.secret, actions, artifact.artifact_id)
    sources = [prices.source, *(m.entity_id for m in measured.values())]
    return ToolOutput(plan, sources, SOLVER_MILP)


def _battery_actions(asset_id: str, slots: list[datetime], power: Any) -> list[dict[str, Any]]:
    """Runs of equal power (kW, load convention) as ``battery_power`` actions."""
    actions: list[dict[str, Any]] = []
    for t, slot in enumerate(slots):
        p_kw = float(power[t])  # unrounded: the sim must reproduce the plan's SoC path exactly
        if actions and actions[-1]["p_kw"] == p_kw and actions[-1]["end"] == slot.isoformat():
            actions[-1]["end"] = (slot + STEP).isoformat()
        else:
            actions.append({"type": "battery_power", "asset_id": asset_id, "start": slot.isoformat(),
                            "end": (slot + STEP).isoformat(), "p_kw": p_kw})
    return actions


# --- validate_constraints, request_authorization, generate_explanation, create_incident --------------------------


def _fresh(host: TenantHost, artifact: Artifact) -> None:
    if host.now() - artifact.created_at > STALE_AFTER:
        raise ToolError("input_stale", id=artifact.artifact_id, minutes=int(STALE_AFTER.total_seconds() // 60))


def _check_plan(plan: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """A plan's schedule against its own limits: grid import/export, battery power and SoC, per slot."""
    if plan["solver_status"] not in ("optimal", "time_limit") or not plan["schedule"]:
        return [{"constraint": "solver_status", "detail": plan["solver_status"]}], {}
    violations: list[dict[str, Any]] = []
    margins: dict[str, float] = {}
    assets = {a["asset_id"]: a for a in plan["assets"]}

    def check(name: str, step: int, margin: float) -> None:
        if not math.isfinite(margin):
            raise ValueError(f"{name} at step {step} is not a number")
        margins[name] = round(min(margins.get(name, math.inf), margin), 6)
        if margin < -1e-6:
            violations.append({"constraint": name, "step": step, "margin": round(margin, 6)})

    limits = plan["constraints"]
    for t, slot in enumerate(plan["schedule"]):
        check("import_kw", t, limits["import_limit_kw"] - slot["import_kw"])
        check("export_kw", t, limits["export_limit_kw"] - slot["export_kw"])
        charge = 0.0
        for asset_id, values in slot["batteries"].items():
            asset = assets[asset_id]
            check(f"{asset_id}.charge_kw", t, asset["charge_kw"] - values["charge_kw"])
            check(f"{asset_id}.discharge_kw", t, asset["discharge_kw"] - values["discharge_kw"])
            check(f"{asset_id}.soc_max_kwh", t, asset["soc_max_kwh"] - values["soc_kwh"])
            check(f"{asset_id}.soc_min_kwh", t, values["soc_kwh"] - asset["soc_min_kwh"])
            charge += values["charge_kw"] - values["discharge_kw"]
        balance = slot["import_kw"] - slot["export_kw"] - (slot["load_kw"] - slot["pv_kw"] + charge)
        check("site_balance", t, 1e-4 - abs(balance))
    return violations, margins


async def validate_constraints(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Deterministic pass/fail of a plan or a sim with margins (seed 002 ``validate_constraints``). The input must
    exist and be fresh (30 min); it fails closed: any evaluation error is a fail."""
    if "plan_id" not in data and "sim_id" not in data:
        raise ToolError("subject_required")
    kind, key = ("plan", "plan_id") if "plan_id" in data else ("sim", "sim_id")
    subject = host.artifacts.get(data[key], kind)
    _fresh(host, subject)
    violations: list[dict[str, Any]]
    margins: dict[str, float]
    try:
        if kind == "sim":
            report = subject.data["constraint_report"]
            violations, margins = list(report["violations"]), dict(report["margins"])
            if not subject.data["valid"]:
                violations.append({"constraint": "evaluation", "detail": "; ".join(report["evaluation_errors"])})
        else:
            violations, margins = _check_plan(subject.data)
    except (KeyError, TypeError, ValueError) as err:  # fail closed
        violations, margins = [{"constraint": "evaluation", "detail": f"evaluation error: {err}"}], {}
    refs = {key: subject.artifact_id}
    if kind == "sim" and subject.refs.get("plan_id"):
        refs["plan_id"] = subject.refs["plan_id"]
    output = {"pass": not violations, "violations": violations, "margins": margins, **refs}
    artifact = host.artifacts.add("validation", host.now(), output, refs=refs)
    return ToolOutput({"validation_id": artifact.artifact_id, **output}, [subject.artifact_id])


async def request_authorization(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Submit a validated plan for a person's authorization (seed 002 ``request_authorization``). Denied by default
    on any inconsistency (recorded, never retried); halted while the audit chain is broken."""
    if host.audit_broken:
        raise ToolError("audit_chain_broken", "halted")
    reasons: list[str] = []
    found: dict[str, Artifact] = {}
    for key, kind in (("plan_id", "plan"), ("sim_id", "sim"), ("validation_id", "validation"),
                      ("explanation_id", "explanation")):
        try:
            found[kind] = host.artifacts.get(data[key], kind)
        except ToolError:
            reasons.append(f"{key} {data[key]} does not exist in this tenant")
    plan, sim, validation, explanation = (found.get(k) for k in ("plan", "sim", "validation", "explanation"))
    window = Window(data["requested_window"]["start"], data["requested_window"]["end"])
    if sim is not None:
        if sim.refs.get("plan_id") != data["plan_id"]:
            reasons.append("the sim did not simulate this plan's signed actions")
        if not sim.data["valid"]:
            reasons.append("the sim is invalid (a constraint could not be evaluated)")
        if window.start < datetime.fromisoformat(sim.data["start"]) or window.end > datetime.fromisoformat(
                sim.data["end"]):
            reasons.append("the requested window is not within the simulated horizon")
    if validation is not None:
        if validation.refs.get("sim_id") != data["sim_id"]:
            reasons.append("the validation does not validate this sim")
        if validation.data["pass"] is not True:
            reasons.append("the validation did not pass")
    if explanation is not None and explanation.refs.get("plan_id") != data["plan_id"]:
        reasons.append("the explanation does not explain this plan")
    if plan is not None:
        for artifact in (a for a in (plan, sim, validation) if a is not None):
            if host.now() - artifact.created_at > STALE_AFTER:
                reasons.append(f"{artifact.artifact_id} is stale")
        schedule = plan.data["schedule"]
        if window.end <= window.start or not schedule or window.start < datetime.fromisoformat(schedule[0]["start"]) \
                or window.end > datetime.fromisoformat(schedule[-1]["end"]):
            reasons.append("the requested window is not within the plan")
    request = {
        "plan_id": data["plan_id"], "sim_id": data["sim_id"], "validation_id": data["validation_id"],
        "explanation_id": data["explanation_id"], "requested_window": {"start": window.start.isoformat(),
                                                                        "end": window.end.isoformat()},
        "requested_by": caller.actor, "reasons": reasons,
        "status": "denied" if reasons else "pending",
        "summary": explanation.data["text"] if explanation is not None else None,
        "actions": [a for a in plan.data["actions"] if window.start < datetime.fromisoformat(a["end"])
                    and datetime.fromisoformat(a["start"]) < window.end] if plan is not None else [],
    }
    stored = await host.async_submit_request(request)
    return ToolOutput({"request_id": stored["request_id"], "status": stored["status"],
                       "expires_at": stored["expires_at"], "reasons": reasons},
                      [data["plan_id"], data["sim_id"], data["validation_id"], data["explanation_id"]])


async def generate_explanation(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Deterministic explanation of a plan in en or de for an audience (seed 002 ``generate_explanation``)."""
    plan = host.artifacts.get(data["plan_id"], "plan")
    result = explain({**plan.data, "plan_id": plan.artifact_id}, data["audience"], data["lang"])
    output = {**result, "plan_id": plan.artifact_id, "audience": data["audience"], "lang": data["lang"]}
    artifact = host.artifacts.add("explanation", host.now(), output, refs={"plan_id": plan.artifact_id})
    return ToolOutput({"explanation_id": artifact.artifact_id, **output}, [plan.artifact_id])


async def create_incident(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Open an incident with evidence (seed 002 ``create_incident``): every evidence id must exist in the tenant;
    the incident is persisted and stays queued until a person acknowledges it."""
    known = host.record_ids()
    missing = [e for e in data["evidence_ids"] if e not in host.artifacts and e not in known]
    if missing:
        raise ToolError("evidence_not_found", "not_found", id=missing[0])
    stored = await host.async_open_incident({"severity": data["severity"], "title": data["title"],
                                             "evidence_ids": data["evidence_ids"], "opened_by": caller.actor})
    return ToolOutput({"incident_id": stored["incident_id"]}, data["evidence_ids"])


type ToolHandler = Callable[[TenantHost, dict[str, Any], Caller], Awaitable[ToolOutput]]

TOOLS: dict[str, tuple[ToolContract, ToolHandler]] = {
    contract.name: (contract, handler)
    for contract, handler in (
        (INSPECT_GRID_STATE, inspect_grid_state),
        (RETRIEVE_ASSET, retrieve_asset),
        (RUN_POWER_FLOW, run_power_flow_tool),
        (RUN_CONTINGENCY, run_contingency_tool),
        (RUN_FORECAST, run_forecast),
        (SIMULATE_ACTION, simulate_action),
        (CALCULATE_FLEXIBILITY, calculate_flexibility),
        (OPTIMIZE_DISPATCH, optimize_dispatch_tool),
        (VALIDATE_CONSTRAINTS, validate_constraints),
        (REQUEST_AUTHORIZATION, request_authorization),
        (GENERATE_EXPLANATION, generate_explanation),
        (CREATE_INCIDENT, create_incident),
    )
}
