"""The grid tools' contracts: name, side effect, scope, timeout, input schema and output keys.

The contract table as data; :mod:`.tools` pairs each contract with its handler. ``generate_audit_record``'s contract
lives in :mod:`.contracts`, beside the ``invoke`` that uses it for every call.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ..validation import closed, vol
from .contracts import Scope, SideEffect, ToolContract
from .dispatch import Objective
from .explain import AUDIENCES, LANGUAGES
from .explain_home import HOME_PLAN_SCHEMA
from .forecast import MAX_HORIZON_H
from .simulate import aware_time
from .twin import HOME

SOLVER_AC = "newton-raphson (polar, sparse Jacobian; agentic_hems)"
SOLVER_DC = "dc power flow (agentic_hems)"
SOLVER_MILP = "scipy.optimize.milp (HiGHS)"
HISTORY_DAYS = 14
STALE_AFTER = timedelta(minutes=30)


def _aware(value: Any) -> datetime:
    """:func:`~.simulate.aware_time` as a schema validator."""
    try:
        return aware_time(value)
    except ValueError as err:
        raise vol.Invalid(f"not an ISO 8601 time with a time zone: {value!r}") from err


_ID = vol.All(str, vol.Length(min=1, max=100))
_TENANT = {vol.Optional("tenant"): _ID}
_NETWORK = vol.All(str, vol.Match(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$", msg="a network id is a case file's name"))
_KW = vol.All(vol.Coerce(float), vol.Range(min=-1e6, max=1e6))
_WINDOW = closed({vol.Required("start"): _aware, vol.Required("end"): _aware})
_MODIFICATION = vol.Any(
    closed({vol.Required("type"): "set_power", vol.Required("asset_id"): _ID, vol.Required("p_kw"): _KW}),
    closed({vol.Required("type"): "branch_outage", vol.Required("branch"): vol.All(int, vol.Range(min=1))}),
)
_ACTION = vol.Any(
    closed(
        {
            vol.Required("type"): vol.In(["battery_power", "set_power"]),
            vol.Required("asset_id"): _ID,
            vol.Required("start"): _aware,
            vol.Required("end"): _aware,
            vol.Required("p_kw"): _KW,
        }
    ),
    closed(
        {
            vol.Required("type"): "load_shift",
            vol.Required("asset_id"): _ID,
            vol.Required("from_start"): _aware,
            vol.Required("to_start"): _aware,
            vol.Required("duration_min"): vol.All(vol.Coerce(float), vol.Range(min=1, max=1440)),
            vol.Required("p_kw"): vol.All(vol.Coerce(float), vol.Range(min=0, max=1e6)),
        }
    ),
)


def _whole_steps(minutes: int) -> int:
    if minutes % 15:
        raise vol.Invalid("horizon_min must be a multiple of 15 (the simulation's step)")
    return minutes


def _quantiles(values: list[float]) -> list[float]:
    if not values or len(set(values)) != len(values) or any(not 0 < q < 1 for q in values):
        raise vol.Invalid("quantiles must be distinct and strictly between 0 and 1")
    return sorted(values)


def _contract(
    name: str, side: SideEffect, scope: Scope, timeout_ms: int, schema: dict[Any, Any], *, outputs: tuple[str, ...]
) -> ToolContract:
    return ToolContract(name, side, scope, timeout_ms, closed(schema), outputs)


INSPECT_GRID_STATE = _contract(
    "inspect_grid_state",
    SideEffect.READ,
    Scope.READ,
    2000,
    {
        **_TENANT,
        vol.Optional("network_id", default=HOME): _NETWORK,
        vol.Optional("at"): _aware,
        vol.Optional("depth", default=1): vol.All(vol.Coerce(int), vol.In([1, 2, 3])),
    },
    outputs=("snapshot_id", "state", "stale"),
)
RETRIEVE_ASSET = _contract(
    "retrieve_asset",
    SideEffect.READ,
    Scope.READ,
    1000,
    {**_TENANT, vol.Required("asset_id"): _ID, vol.Optional("network_id", default=HOME): _NETWORK},
    outputs=("asset", "limits", "connection_point", "health"),
)
RUN_POWER_FLOW = _contract(
    "run_power_flow",
    SideEffect.COMPUTE,
    Scope.SIMULATE,
    10000,
    {
        **_TENANT,
        vol.Required("snapshot_id"): _ID,
        vol.Optional("method", default="ac"): vol.In(["ac", "dc", "pinn"]),
        vol.Optional("modifications", default=list): [_MODIFICATION],
    },
    outputs=("result_id", "voltages", "flows", "converged", "iterations", "solver", "latency_ms"),
)
RUN_CONTINGENCY = _contract(
    "run_contingency",
    SideEffect.COMPUTE,
    Scope.SIMULATE,
    30000,
    {
        **_TENANT,
        vol.Required("snapshot_id"): _ID,
        vol.Optional("set", default="n-1"): vol.In(["n-1", "list"]),
        vol.Optional("branches", default=list): [vol.All(int, vol.Range(min=1))],
        vol.Optional("limit_margin_pct", default=0.0): vol.All(vol.Coerce(float), vol.Range(min=0, max=100)),
        vol.Optional("method", default="ac"): vol.In(["ac", "dc"]),
    },
    outputs=("violations", "worst_case", "latency_ms", "completed", "unevaluated"),
)
RUN_FORECAST = _contract(
    "run_forecast",
    SideEffect.COMPUTE,
    Scope.READ,
    5000,
    {
        **_TENANT,
        vol.Required("target"): vol.In(["load", "pv", "price"]),
        vol.Required("horizon_h"): vol.All(vol.Coerce(float), vol.Range(min=0, min_included=False)),
        vol.Optional("quantiles", default=lambda: [0.1, 0.5, 0.9]): vol.All([vol.Coerce(float)], _quantiles),
        vol.Optional("step_min", default=60): vol.All(vol.Coerce(int), vol.In([15, 30, 60])),
    },
    outputs=("forecast_id", "series", "model_version", "backtest_error", "baseline"),
)
SIMULATE_ACTION = _contract(
    "simulate_action",
    SideEffect.SIMULATE,
    Scope.SIMULATE,
    20000,
    {
        **_TENANT,
        vol.Required("snapshot_id"): _ID,
        vol.Required("actions"): vol.All([_ACTION], vol.Length(min=1)),
        vol.Required("horizon_min"): vol.All(vol.Coerce(int), vol.Range(min=15, max=48 * 60), _whole_steps),
        vol.Required("signature"): vol.All(str, vol.Length(min=64, max=64)),
        vol.Optional("plan_id"): _ID,
    },
    outputs=("sim_id", "trajectory", "constraint_report", "valid"),
)
CALCULATE_FLEXIBILITY = _contract(
    "calculate_flexibility",
    SideEffect.COMPUTE,
    Scope.READ,
    5000,
    {**_TENANT, vol.Optional("asset_ids", default=list): [_ID], vol.Required("window"): _WINDOW},
    outputs=("per_asset", "aggregate", "assumptions", "excluded"),
)
OPTIMIZE_DISPATCH = _contract(
    "optimize_dispatch",
    SideEffect.COMPUTE,
    Scope.SIMULATE,
    60000,
    {
        **_TENANT,
        vol.Optional("portfolio", default=list): [_ID],
        vol.Optional("objective", default="cost"): vol.In([o.value for o in Objective]),
        vol.Optional("horizon_h", default=24.0): vol.All(vol.Coerce(float), vol.Range(min=0.25, max=MAX_HORIZON_H)),
        vol.Optional("constraints", default=dict): closed(
            {
                vol.Optional("import_limit_kw"): vol.All(vol.Coerce(float), vol.Range(min=0)),
                vol.Optional("export_limit_kw"): vol.All(vol.Coerce(float), vol.Range(min=0)),
                vol.Optional("terminal_soc_pct"): {_ID: vol.All(vol.Coerce(float), vol.Range(min=0, max=100))},
            }
        ),
    },
    outputs=("plan_id", "schedule", "objective_value", "baseline_value", "gap", "solver_status"),
)
VALIDATE_CONSTRAINTS = _contract(
    "validate_constraints",
    SideEffect.COMPUTE,
    Scope.SIMULATE,
    10000,
    {**_TENANT, vol.Exclusive("plan_id", "subject"): _ID, vol.Exclusive("sim_id", "subject"): _ID},
    outputs=("validation_id", "pass", "violations", "margins"),
)
REQUEST_AUTHORIZATION = _contract(
    "request_authorization",
    SideEffect.REQUEST,
    Scope.REQUEST,
    3000,
    {
        **_TENANT,
        vol.Required("plan_id"): _ID,
        vol.Required("sim_id"): _ID,
        vol.Required("validation_id"): _ID,
        vol.Required("explanation_id"): _ID,
        vol.Required("requested_window"): _WINDOW,
    },
    outputs=("request_id", "status", "expires_at"),
)
GENERATE_EXPLANATION = _contract(
    "generate_explanation",
    SideEffect.COMPUTE,
    Scope.READ,
    15000,
    {
        **_TENANT,
        vol.Exclusive("plan_id", "subject"): _ID,  # a dispatch plan of optimize_dispatch
        vol.Exclusive("home_plan", "subject"): HOME_PLAN_SCHEMA,  # a whole-home plan (grid/explain_home.py)
        vol.Exclusive("current_home_plan", "subject"): vol.In([True]),  # the site's live plan, filled in by the host
        vol.Optional("audience", default="operator"): vol.In(AUDIENCES),
        vol.Optional("lang", default="en"): vol.In(LANGUAGES),
    },
    outputs=("explanation_id", "text", "structured"),
)
CREATE_INCIDENT = _contract(
    "create_incident",
    SideEffect.RECORD,
    Scope.INCIDENT,
    3000,
    {
        **_TENANT,
        vol.Required("severity"): vol.In(["info", "warning", "critical"]),
        vol.Required("title"): vol.All(str, vol.Length(min=1, max=200)),
        vol.Required("evidence_ids"): vol.All([_ID], vol.Length(min=1, max=50)),
    },
    outputs=("incident_id",),
)
