"""Handlers of the planning and people tools.

The tools: simulate_action, calculate_flexibility, optimize_dispatch, validate_constraints, request_authorization,
generate_explanation and create_incident. None writes a setpoint: a request is for a person, and an approved plan
reaches devices only through the gate pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from functools import partial
import hashlib
import hmac
import math
from typing import Any

import numpy as np

from ..canonical_json import canonical_json, json_safe
from .catalog import OPTIMIZE_DISPATCH, SOLVER_AC, SOLVER_MILP, STALE_AFTER
from .contracts import Caller, ToolError, ToolOutput
from .dispatch import Battery, DispatchProblem, DispatchResult, Objective, Vector, optimize_dispatch
from .explain import explain
from .explain_home import explain_home
from .forecast import MAX_HORIZON_H
from .host import Artifact, Prices, TenantHost
from .simulate import EFFICIENCY, STEP, Window, flexibility, parse_actions, simulate
from .tools_state import Snapshot, asset_powers, check_limits, forecast_target, panel_powers
from .twin import HOME, PANEL_BUS, Twin

# --- simulate_action, calculate_flexibility -------------------------------------------------------------------------


def sign(secret: bytes, actions: Any, plan_id: str | None) -> str:
    """Return the proposer's HMAC-SHA256 (hex) over the canonical JSON of ``{"actions", "plan_id"}``."""
    payload = canonical_json({"actions": actions, "plan_id": plan_id}).encode()
    return hmac.new(secret, payload, hashlib.sha256).hexdigest()


async def simulate_action(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Roll the twin forward under signed, typed actions.

    The HMAC is checked before anything is simulated; actions must stay within the assets' limits and the horizon; a
    constraint that cannot be evaluated makes the sim invalid, and an invalid sim cannot be cited by
    ``request_authorization``.
    """
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
            check_limits(twin, change.asset_id, change.p_kw)
        if change.window.start < start or change.window.end > end:
            raise ToolError("action_outside_horizon", asset_id=change.asset_id)
    batteries = {k: v for k, v in snapshot.soc_pct.items() if "capacity_kwh" in twin.assets[k].limits}
    base = panel_powers(snapshot.power_kw, twin)
    horizon = timedelta(minutes=data["horizon_min"])
    sim = await host.async_run(partial(simulate, twin, base, batteries, changes, start=start, horizon=horizon))
    report = sim.report()
    refs = {"snapshot_id": snapshot_artifact.artifact_id, **({"plan_id": plan.artifact_id} if plan else {})}
    output = {
        "start": start.isoformat(),
        "end": end.isoformat(),
        "trajectory": sim.trajectory,
        "constraint_report": report,
        "valid": sim.valid,
        "plan_id": plan.artifact_id if plan else None,
        "snapshot_id": snapshot_artifact.artifact_id,
    }
    artifact = host.artifacts.add("sim", host.now(), output, sim, refs)
    return ToolOutput({"sim_id": artifact.artifact_id, **output}, list(refs.values()), SOLVER_AC)


async def calculate_flexibility(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Up and down flexibility per asset and in aggregate over a window.

    The window must lie within the forecast horizon; assets with unknown limits are excluded and listed.
    """
    now = host.now()
    window = Window(data["window"]["start"], data["window"]["end"])
    if window.end <= window.start or window.end > now + timedelta(hours=MAX_HORIZON_H) or window.end <= now:
        raise ToolError("window_outside_horizon", max_h=MAX_HORIZON_H)
    twin = await host.async_twin(HOME)
    asset_ids = data["asset_ids"] or [
        a.asset_id for a in twin.assets.values() if a.kind not in ("grid_connection", "main_panel_fuse", "load")
    ]
    unknown = [a for a in asset_ids if a not in twin.assets]
    if unknown:
        raise ToolError("asset_not_found", "not_found", asset_id=unknown[0], network_id=HOME)
    assumptions = [
        "asset powers are held at their current values for the whole window (persistence)",
        f"battery efficiency {EFFICIENCY:.0%} one way where none is declared",
        "up = less net consumption (more injection), down = more net consumption",
    ]
    try:
        measured = await host.async_measure(twin, None)
    except ToolError as err:
        measured = {}
        assumptions.append(f"measurements unavailable ({err.placeholders.get('detail', err.key)})")
    power, soc = asset_powers(twin, measured)
    hours = (window.end - window.start).total_seconds() / 3600
    result = flexibility(twin, power, soc, asset_ids, hours)
    return ToolOutput(
        {
            **result,
            "assumptions": assumptions,
            "window": {"start": window.start.isoformat(), "end": window.end.isoformat()},
        },
        [twin.source, *(m.entity_id for m in measured.values())],
    )


# --- optimize_dispatch --------------------------------------------------------------------------------------------


def _held_series(
    target: str, measured_kw: float | None, steps: int
) -> tuple[np.ndarray[Any, np.dtype[np.float64]], str]:
    """Return ``measured_kw`` held for ``steps`` slots (0 kW when unmeasured) and how it was taken."""
    if measured_kw is None:
        return np.zeros(steps), f"{target}: no measurement or history mapped, taken as 0 kW"
    return np.full(steps, measured_kw), f"{target}: measured {measured_kw:g} kW held (no usable history)"


async def _site_series(
    host: TenantHost, target: str, measured_kw: float | None, steps: int, twin: Twin
) -> tuple[np.ndarray[Any, np.dtype[np.float64]], str]:
    """Return the per-15-minute kW of ``target`` (load or pv).

    The forecast's median from the house or PV sensor's history, else the measured power held (a grid meter's
    history is net of PV and battery, so it never stands in for the load).
    """
    asset = twin.assets.get("house" if target == "load" else "pv")
    if asset is None or "power" not in asset.measurements:
        return _held_series(target, measured_kw, steps)
    try:
        result, entity = await forecast_target(host, target, steps / 4, [0.5], 15)
    except ToolError:
        return _held_series(target, measured_kw, steps)
    values = np.array(result.series[0.5][:steps], dtype=float)
    if len(values) < steps:
        values = np.pad(values, (0, steps - len(values)), mode="edge")
    method = "persistence baseline" if result.baseline else result.model_version
    return np.maximum(values, 0.0), f"{target}: median forecast from {entity} ({method})"


async def optimize_dispatch_tool(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Solve the battery/DER dispatch MILP against day-ahead prices.

    Infeasible returns the certificate; a time limit returns the best solution with its gap. The plan's actions are
    signed (HMAC) so ``simulate_action`` can check they were proposed here.
    """
    twin = await host.async_twin(HOME)
    portfolio = _portfolio(twin, data)
    constraints = data["constraints"]
    prices = host.prices()
    now = host.now()
    start = now.replace(second=0, microsecond=0) - timedelta(minutes=now.minute % 15)
    steps = int(round(data["horizon_h"] * 4))
    if prices is None:
        raise ToolError("prices_missing", start=start.isoformat())
    imp, exp = _price_window(prices, start, steps)
    measured = await host.async_measure(twin, None)
    power, soc = asset_powers(twin, measured)
    batteries = [_battery(twin, asset_id, soc, constraints) for asset_id in portfolio]
    others = sum(v for k, v in power.items() if k not in portfolio and k not in ("grid", "pv", "house"))
    load, load_note = await _site_series(
        host, "load", power["house"] + others if "house" in power else None, steps, twin
    )
    pv, pv_note = await _site_series(host, "pv", -power["pv"] if "pv" in power else None, steps, twin)
    import_limit, export_limit = _grid_limits(twin, constraints)
    problem = DispatchProblem(
        imp, exp, load, pv, tuple(batteries), import_limit, export_limit, 0.25, Objective(data["objective"])
    )
    result = await host.async_run(
        lambda: optimize_dispatch(problem, time_limit_s=OPTIMIZE_DISPATCH.timeout_ms / 1000 * 0.8)
    )
    net = load - pv
    baseline = float(np.sum(np.where(net > 0, imp * net, exp * net)) * 0.25)
    schedule, actions = _schedule(problem, result, [start + i * STEP for i in range(steps)])
    plan = {
        "tenant": host.tenant,
        "created_at": now.isoformat(),
        "objective": data["objective"],
        "horizon_h": data["horizon_h"],
        "step_min": 15,
        "currency": prices.currency,
        "solver": SOLVER_MILP,
        "solver_status": result.status,
        "objective_value": result.objective_value,
        "cost": result.cost,
        "baseline_value": round(baseline, 6),
        "gap": result.gap,
        "bound": result.bound,
        "constraints": {"import_limit_kw": problem.import_limit_kw, "export_limit_kw": problem.export_limit_kw},
        "assets": [_battery_row(b) for b in batteries],
        "schedule": schedule,
        "conflicts": result.conflicts,
        "actions": actions,
        "assumptions": {"load": load_note, "pv": pv_note, "prices": f"day-ahead ({prices.source})"},
    }
    artifact = host.artifacts.add("plan", now, plan)
    plan["plan_id"] = artifact.artifact_id
    plan["signature"] = sign(host.secret, actions, artifact.artifact_id)
    sources = [prices.source, *(m.entity_id for m in measured.values())]
    return ToolOutput(plan, sources, SOLVER_MILP)


def _battery_row(battery: Battery) -> dict[str, Any]:
    """Return a plan's record of ``battery``: its limits (kW, kWh) and its initial and terminal SoC (kWh)."""
    return {
        "asset_id": battery.name,
        "capacity_kwh": battery.capacity_kwh,
        "soc_min_kwh": battery.soc_min_kwh,
        "soc_max_kwh": battery.soc_max_kwh,
        "charge_kw": battery.charge_kw,
        "discharge_kw": battery.discharge_kw,
        "soc_initial_kwh": battery.soc_initial_kwh,
        "soc_terminal_kwh": battery.soc_terminal_kwh,
    }


def _portfolio(twin: Twin, data: dict[str, Any]) -> list[str]:
    """Return the batteries to dispatch (all the twin's when none are named); ToolError for an unknown or none."""
    portfolio: list[str] = data["portfolio"] or [a.asset_id for a in twin.assets.values() if a.kind == "battery"]
    referenced = set(portfolio) | set(data["constraints"].get("terminal_soc_pct", {}))
    unknown = sorted(a for a in referenced if a not in twin.assets or twin.assets[a].kind != "battery")
    if unknown:
        raise ToolError("portfolio_unknown_asset", "not_found", asset_id=unknown[0])
    if not portfolio:
        raise ToolError("portfolio_empty")
    return portfolio


def _price_window(prices: Prices, start: datetime, steps: int) -> tuple[Vector, Vector]:
    """Return the import and export prices of ``steps`` quarter hours from ``start``; ToolError when any is unknown."""
    offset = int((start - prices.start) / prices.step)
    imp = prices.import_price[max(offset, 0) : offset + steps]
    exp = prices.export_price[max(offset, 0) : offset + steps]
    if offset < 0 or len(imp) < steps or np.isnan(imp).any() or np.isnan(exp).any():
        raise ToolError("prices_missing", start=start.isoformat())
    return imp, exp


def _battery(twin: Twin, asset_id: str, soc: Mapping[str, float], constraints: Mapping[str, Any]) -> Battery:
    """Return a battery's limits in kW and kWh, its SoC clamped into its window; ToolError when its state is unknown."""
    limits = twin.assets[asset_id].limits
    if not {"capacity_kwh", "p_min_kw", "p_max_kw"} <= set(limits) or asset_id not in soc:
        raise ToolError("asset_state_unknown", asset_id=asset_id)
    capacity = limits["capacity_kwh"]
    initial = soc[asset_id] / 100 * capacity
    terminal = constraints.get("terminal_soc_pct", {}).get(asset_id)
    lo, hi = limits["soc_min_pct"] / 100 * capacity, limits["soc_max_pct"] / 100 * capacity
    return Battery(
        asset_id,
        capacity,
        lo,
        hi,
        limits["p_max_kw"],
        -limits["p_min_kw"],
        min(max(initial, lo), hi),
        min(max(initial if terminal is None else terminal / 100 * capacity, lo), hi),
    )


def _grid_limits(twin: Twin, constraints: Mapping[str, Any]) -> tuple[float, float]:
    """Return the import and export limits in kW (the fuse's rating by default); ToolError for one above the fuse."""
    fuse = twin.assets["main_fuse"].limits["rate_kva"]
    for key in ("import_limit_kw", "export_limit_kw"):  # the fuse is physical: a plan may only stay below it
        if constraints.get(key, 0.0) > fuse:
            raise ToolError("outside_limits", asset_id="main_fuse", p_kw=constraints[key], low=0.0, high=fuse)
    return float(constraints.get("import_limit_kw", fuse)), float(constraints.get("export_limit_kw", fuse))


def _schedule(
    problem: DispatchProblem, result: DispatchResult, slots: list[datetime]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return the plan's schedule (per slot: prices, site and battery flows) and its signed battery actions."""
    schedule: list[dict[str, Any]] = []
    actions: list[dict[str, Any]] = []
    if (
        result.import_kw is None
        or result.charge_kw is None
        or result.discharge_kw is None
        or result.soc_kwh is None
        or result.export_kw is None
    ):
        return schedule, actions
    imp, exp, load, pv, batteries = (
        problem.import_price,
        problem.export_price,
        problem.load_kw,
        problem.pv_kw,
        problem.batteries,
    )
    for t, slot in enumerate(slots):
        schedule.append(
            {
                "start": slot.isoformat(),
                "end": (slot + STEP).isoformat(),
                "import_price": float(imp[t]),
                "export_price": float(exp[t]),
                "load_kw": round(float(load[t]), 6),
                "pv_kw": round(float(pv[t]), 6),
                "import_kw": round(float(result.import_kw[t]), 6),
                "export_kw": round(float(result.export_kw[t]), 6),
                "batteries": {
                    b.name: {
                        "charge_kw": round(float(result.charge_kw[i, t]), 6),
                        "discharge_kw": round(float(result.discharge_kw[i, t]), 6),
                        "soc_kwh": round(float(result.soc_kwh[i, t]), 6),
                    }
                    for i, b in enumerate(batteries)
                },
            }
        )
    for i, battery in enumerate(batteries):
        actions.extend(battery_actions(battery.name, slots, result.charge_kw[i] - result.discharge_kw[i]))
    return schedule, actions


def battery_actions(asset_id: str, slots: list[datetime], power: Any) -> list[dict[str, Any]]:
    """Return the runs of equal power (kW, load convention) as ``battery_power`` actions."""
    actions: list[dict[str, Any]] = []
    for t, slot in enumerate(slots):
        p_kw = float(power[t])  # unrounded: the sim must reproduce the plan's SoC path exactly
        if actions and actions[-1]["p_kw"] == p_kw and actions[-1]["end"] == slot.isoformat():
            actions[-1]["end"] = (slot + STEP).isoformat()
        else:
            actions.append(
                {
                    "type": "battery_power",
                    "asset_id": asset_id,
                    "start": slot.isoformat(),
                    "end": (slot + STEP).isoformat(),
                    "p_kw": p_kw,
                }
            )
    return actions


# --- validate_constraints, request_authorization, generate_explanation, create_incident --------------------------


def _fresh(host: TenantHost, artifact: Artifact) -> None:
    if host.now() - artifact.created_at > STALE_AFTER:
        raise ToolError("input_stale", id=artifact.artifact_id, minutes=int(STALE_AFTER.total_seconds() // 60))


def _check_plan(plan: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Return a plan's schedule against its own limits: grid import/export, battery power and SoC, per slot."""
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
    """Deterministic pass/fail of a plan or a sim with margins.

    The input must exist and be fresh (30 min); it fails closed: any evaluation error is a fail.
    """
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


def _linked_artifacts(host: TenantHost, data: dict[str, Any]) -> tuple[dict[str, Artifact], list[str]]:
    """Return the request's plan, sim, validation and explanation by kind, and a reason for each missing one."""
    reasons: list[str] = []
    found: dict[str, Artifact] = {}
    for key, kind in (
        ("plan_id", "plan"),
        ("sim_id", "sim"),
        ("validation_id", "validation"),
        ("explanation_id", "explanation"),
    ):
        try:
            found[kind] = host.artifacts.get(data[key], kind)
        except ToolError:
            reasons.append(f"{key} {data[key]} does not exist in this tenant")
    return found, reasons


def _inconsistencies(
    host: TenantHost, data: dict[str, Any], window: Window, found: Mapping[str, Artifact]
) -> list[str]:
    """Return why the linked artifacts do not support authorizing ``window`` (empty when they do)."""
    reasons: list[str] = []
    plan, sim, validation, explanation = (found.get(k) for k in ("plan", "sim", "validation", "explanation"))
    if sim is not None:
        if sim.refs.get("plan_id") != data["plan_id"]:
            reasons.append("the sim did not simulate this plan's signed actions")
        if not sim.data["valid"]:
            reasons.append("the sim is invalid (a constraint could not be evaluated)")
        if window.start < datetime.fromisoformat(sim.data["start"]) or window.end > datetime.fromisoformat(
            sim.data["end"]
        ):
            reasons.append("the requested window is not within the simulated horizon")
    if validation is not None:
        if validation.refs.get("sim_id") != data["sim_id"]:
            reasons.append("the validation does not validate this sim")
        if validation.data["pass"] is not True:
            reasons.append("the validation did not pass")
    if explanation is not None and explanation.refs.get("plan_id") != data["plan_id"]:
        reasons.append("the explanation does not explain this plan")
    if plan is not None:
        reasons.extend(
            f"{artifact.artifact_id} is stale"
            for artifact in (plan, sim, validation)
            if artifact is not None and host.now() - artifact.created_at > STALE_AFTER
        )
        schedule = plan.data["schedule"]
        if (
            window.end <= window.start
            or not schedule
            or window.start < datetime.fromisoformat(schedule[0]["start"])
            or window.end > datetime.fromisoformat(schedule[-1]["end"])
        ):
            reasons.append("the requested window is not within the plan")
    return reasons


async def request_authorization(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Submit a validated plan for a person's authorization.

    Denied by default on any inconsistency (recorded, never retried); halted while the audit chain is broken.
    """
    if host.audit_broken:
        raise ToolError("audit_chain_broken", "halted")
    found, reasons = _linked_artifacts(host, data)
    window = Window(data["requested_window"]["start"], data["requested_window"]["end"])
    reasons += _inconsistencies(host, data, window, found)
    plan, explanation = found.get("plan"), found.get("explanation")
    request = {
        "plan_id": data["plan_id"],
        "sim_id": data["sim_id"],
        "validation_id": data["validation_id"],
        "explanation_id": data["explanation_id"],
        "requested_window": {"start": window.start.isoformat(), "end": window.end.isoformat()},
        "requested_by": caller.actor,
        "reasons": reasons,
        "status": "denied" if reasons else "pending",
        "summary": explanation.data["text"] if explanation is not None else None,
        "actions": [
            a
            for a in plan.data["actions"]
            if window.start < datetime.fromisoformat(a["end"]) and datetime.fromisoformat(a["start"]) < window.end
        ]
        if plan is not None
        else [],
    }
    stored = await host.async_submit_request(request)
    return ToolOutput(
        {
            "request_id": stored["request_id"],
            "status": stored["status"],
            "expires_at": stored["expires_at"],
            "reasons": reasons,
        },
        [data["plan_id"], data["sim_id"], data["validation_id"], data["explanation_id"]],
    )


async def generate_explanation(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Deterministic explanation of a plan in en or de for an audience.

    The plan is a dispatch plan (``plan_id``) or a whole-home plan given as ``home_plan``
    (:mod:`.explain_home`: why each battery charges, discharges or idles and why each heat pump runs, per slot). ``current_home_plan: true`` asks
    for the site's live whole-home plan: the host replaces it with that plan's ``home_plan`` before the call, so it
    reaches this tool only when the site has none. Raises ToolError ``explanation_subject_required`` (no subject
    given), ``home_plan_not_available`` (``current_home_plan`` without a live plan) or ``home_plan_invalid`` (its
    per-slot lists disagree).
    """
    if "current_home_plan" in data:
        raise ToolError("home_plan_not_available")
    if "home_plan" in data:
        return _explain_home(host, data)
    if "plan_id" not in data:
        raise ToolError("explanation_subject_required")
    plan = host.artifacts.get(data["plan_id"], "plan")
    result = explain({**plan.data, "plan_id": plan.artifact_id}, data["audience"], data["lang"])
    output = {**result, "plan_id": plan.artifact_id, "audience": data["audience"], "lang": data["lang"]}
    artifact = host.artifacts.add("explanation", host.now(), output, refs={"plan_id": plan.artifact_id})
    return ToolOutput({"explanation_id": artifact.artifact_id, **output}, [plan.artifact_id])


def _explain_home(host: TenantHost, data: dict[str, Any]) -> ToolOutput:
    """Explain the given whole-home plan; the explanation refers to no stored plan (``plan_id`` None)."""
    try:
        result = explain_home(data["home_plan"], data["audience"], data["lang"])
    except ValueError as err:
        raise ToolError("home_plan_invalid", error=str(err)) from err
    output = {**result, "plan_id": None, "audience": data["audience"], "lang": data["lang"]}
    artifact = host.artifacts.add("explanation", host.now(), output, refs={})
    return ToolOutput({"explanation_id": artifact.artifact_id, **output}, [])


async def create_incident(host: TenantHost, data: dict[str, Any], caller: Caller) -> ToolOutput:
    """Open an incident with evidence.

    Every evidence id must exist in the tenant; the incident is persisted and stays queued until a person
    acknowledges it.
    """
    known = host.record_ids()
    missing = [e for e in data["evidence_ids"] if e not in host.artifacts and e not in known]
    if missing:
        raise ToolError("evidence_not_found", "not_found", id=missing[0])
    stored = await host.async_open_incident(
        {
            "severity": data["severity"],
            "title": data["title"],
            "evidence_ids": data["evidence_ids"],
            "opened_by": caller.actor,
        }
    )
    return ToolOutput({"incident_id": stored["incident_id"]}, data["evidence_ids"])
