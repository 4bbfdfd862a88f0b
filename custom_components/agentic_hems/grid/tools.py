"""The thirteen grid tools: each contract with its handler, over a :class:`~.host.TenantHost`.

Each entry of :data:`TOOLS` pairs a :class:`~.contracts.ToolContract` (:mod:`.catalog`) with a handler ``(host, data,
caller) -> ToolOutput`` (:mod:`.tools_state`, :mod:`.tools_plan`); :func:`~.contracts.invoke` runs them. No handler
writes a setpoint: ``request_authorization`` produces a request for a person, and an approved plan reaches devices
only through the gate pipeline (the HA shell). ``generate_audit_record`` is internal (:mod:`.contracts`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .catalog import (
    CALCULATE_FLEXIBILITY,
    CREATE_INCIDENT,
    GENERATE_EXPLANATION,
    INSPECT_GRID_STATE,
    OPTIMIZE_DISPATCH,
    REQUEST_AUTHORIZATION,
    RETRIEVE_ASSET,
    RUN_CONTINGENCY,
    RUN_FORECAST,
    RUN_POWER_FLOW,
    SIMULATE_ACTION,
    VALIDATE_CONSTRAINTS,
)
from .contracts import Caller, ToolContract, ToolOutput
from .host import TenantHost
from .tools_plan import (
    calculate_flexibility,
    create_incident,
    generate_explanation,
    optimize_dispatch_tool,
    request_authorization,
    sign,
    simulate_action,
    validate_constraints,
)
from .tools_state import inspect_grid_state, retrieve_asset, run_contingency_tool, run_forecast, run_power_flow_tool

__all__ = ["TOOLS", "ToolHandler", "sign"]

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
