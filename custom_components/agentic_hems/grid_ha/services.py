"""Service actions of the grid toolkit: one per tool of :data:`..grid.tools.TOOLS`, plus the people's side.

Read and compute tools respond only (``SupportsResponse.ONLY``); ``request_authorization`` and ``create_incident``
respond optionally. ``generate_audit_record`` has no service: the integration appends every record itself.
``approve_authorization``, ``deny_authorization`` and ``verify_audit_chain`` need an administrator;
``acknowledge_incident`` needs the ``tenant:write:incident`` scope. Every call runs through
:func:`..grid.contracts.invoke` as the calling HA user (``system`` for automations); a typed tool error becomes a
translated HA error (:func:`raising_ha_errors`): a rejected input names the field and its limit
(:func:`..service_helpers.field_error`), and times in a message are the HA time zone's.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import datetime
import functools
from typing import TYPE_CHECKING, Any

from homeassistant.core import Context, HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse, callback
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import config_validation as cv, translation
from homeassistant.util import dt as dt_util

from ..bounds import MAX_PLAN_TOTAL_CHARS
from ..const import (
    ATTR_CONFIG_ENTRY_ID,
    CONF_GRID_INCIDENT_USERS,
    CONF_GRID_REQUEST_USERS,
    CONF_GRID_SIMULATE_USERS,
    DOMAIN,
)
from ..grid.contracts import Scope, SideEffect, ToolError, generate_audit_record, invoke
from ..grid.tools import TOOLS
from ..people import async_active_user, async_admin, async_viewer, is_admin
from ..planning.home_view import explanation_input
from ..service_helpers import (
    ATTR_TENANT,
    ENTRY_SCHEMA,
    accepting_tenant,
    field_error,
    invalid,
    local_text,
    register,
    resolve_entry,
)
from ..validation import vol

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry

TIME_KEYS = frozenset({"at", "start", "end", "from_start", "to_start"})
ID_KEYS = ("snapshot_id", "plan_id", "sim_id", "validation_id", "explanation_id")
SERVICE_APPROVE = "approve_authorization"
SERVICE_DENY = "deny_authorization"
SERVICE_ACKNOWLEDGE = "acknowledge_incident"
SERVICE_VERIFY = "verify_audit_chain"
DECIDE_SCHEMA = vol.Schema({**ENTRY_SCHEMA, vol.Required("request_id"): cv.string})
ACKNOWLEDGE_SCHEMA = vol.Schema({**ENTRY_SCHEMA, vol.Required("incident_id"): cv.string})
VERIFY_SCHEMA = vol.Schema(ENTRY_SCHEMA)


def service_schema(name: str) -> vol.Schema:
    """Return the HA-side schema of a tool's service: the entry and the tool's fields.

    The fields are checked by the contract inside :func:`invoke` (the contract's own ``tenant`` is the entry, which
    the service names with ``config_entry_id``).
    """
    contract = TOOLS[name][0]
    fields: dict[vol.Marker, Any] = {
        vol.Optional(str(key)): object for key in contract.schema.schema if str(key) != ATTR_TENANT
    }
    return vol.Schema({**ENTRY_SCHEMA, **fields}, extra=vol.ALLOW_EXTRA)


def localized(value: Any, key: str | None = None) -> Any:
    """Naive times (from automations and the UI) are the HA time zone's; nested data is walked."""
    if isinstance(value, dict):
        return {k: localized(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [localized(v, key) for v in value]
    if key in TIME_KEYS and isinstance(value, (str, datetime)):
        moment = dt_util.parse_datetime(value) if isinstance(value, str) else value
        if moment is not None and moment.tzinfo is None:
            return moment.replace(tzinfo=dt_util.get_default_time_zone()).isoformat()
    return value


def _local(value: str) -> str:
    """Return a placeholder that is an aware ISO time as the HA time zone's ``YYYY-MM-DD HH:MM``; anything else as is."""
    moment = dt_util.parse_datetime(value) if "T" in value else None
    return local_text(moment) if moment is not None and moment.tzinfo is not None else value


def tool_error(err: ToolError) -> HomeAssistantError:
    """Return a typed tool error as a translated HA error (validation errors for the caller's mistakes).

    Times among its placeholders are shown in the HA time zone.
    """
    cls = ServiceValidationError if err.status in ("invalid", "not_found", "forbidden") else HomeAssistantError
    placeholders = {key: _local(str(value)) for key, value in err.placeholders.items()}
    return cls(translation_domain=DOMAIN, translation_key=err.key, translation_placeholders=placeholders or None)


# A scope a non-admin user gets through the grid options -> that option.
_GRANTS = {
    Scope.SIMULATE: CONF_GRID_SIMULATE_USERS,
    Scope.REQUEST: CONF_GRID_REQUEST_USERS,
    Scope.INCIDENT: CONF_GRID_INCIDENT_USERS,
}


async def _ha_error(hass: HomeAssistant, call: ServiceCall, err: ToolError) -> HomeAssistantError:
    """Return ``err`` as a translated HA error; a tool's rejected input names the field (:func:`field_error`)."""
    if err.key == "tool_invalid_input" and isinstance(err.__cause__, vol.Invalid) and call.service in TOOLS:
        contract = TOOLS[call.service][0]
        return await field_error(hass, call.service, contract.schema, dict(call.data), err.__cause__)
    if err.key == "tool_forbidden":
        return await _forbidden(hass, err)
    return tool_error(err)


async def _forbidden(hass: HomeAssistant, err: ToolError) -> ServiceValidationError:
    """Return a refused tool call in HA's language: the action's name and the grid option that would allow it.

    ``tool_not_granted`` names that option; ``tool_forbidden_system`` is for a tool only HA itself may call.
    """
    lang = hass.config.language
    tool, scope = str(err.placeholders.get("tool", "")), str(err.placeholders.get("scope", ""))
    services = await translation.async_get_translations(hass, lang, "services", [DOMAIN])
    name = services.get(f"component.{DOMAIN}.services.{tool}.name", tool)
    if (grant := _GRANTS.get(Scope(scope)) if scope in set(Scope) else None) is None:
        return invalid("tool_forbidden_system", tool=name)
    options = await translation.async_get_translations(hass, lang, "options", [DOMAIN])
    label = options.get(f"component.{DOMAIN}.options.step.grid.data.{grant}", grant)
    return invalid("tool_not_granted", tool=name, grant=label)


type _Handler = Callable[[HomeAssistant, ServiceCall], Coroutine[Any, Any, ServiceResponse]]


def raising_ha_errors(handler: _Handler) -> _Handler:
    """Wrap ``handler``: every typed tool error it raises is turned into a translated HA error (:func:`_ha_error`)."""

    @functools.wraps(handler)
    async def _handler(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
        try:
            return await handler(hass, call)
        except ToolError as err:
            raise await _ha_error(hass, call, err) from err

    return _handler


def entry_for_grid_call(hass: HomeAssistant, data: dict[str, Any]) -> AgenticHemsConfigEntry:
    """Return the tenant: ``config_entry_id``, else the entry holding a referenced id, else the only one."""
    if not (entry_id := data.get(ATTR_CONFIG_ENTRY_ID)):
        loaded: list[AgenticHemsConfigEntry] = hass.config_entries.async_loaded_entries(DOMAIN)
        for key in ID_KEYS:
            if isinstance(ref := data.get(key), str):
                for entry in loaded:
                    if ref in entry.runtime_data.grid.artifacts:
                        return entry
    return resolve_entry(hass, entry_id)


async def async_call_tool(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, name: str, data: dict[str, Any], context: Context
) -> dict[str, Any]:
    """Invoke tool ``name`` on ``entry`` as the context's user.

    Raises:
        ToolError: as :func:`~.grid.contracts.invoke`.

    """
    grid = entry.runtime_data.grid
    # No user id is system; an id HA does not know (a deleted user) is an ordinary user, never system.
    viewer = await async_viewer(hass, context)
    caller = grid.scopes(viewer.user_id, viewer.admin)
    contract, handler = TOOLS[name]
    inputs = {k: v for k, v in localized(dict(data)).items() if k not in (ATTR_CONFIG_ENTRY_ID, ATTR_TENANT)}
    if name == "generate_explanation" and inputs.get("current_home_plan") is True:
        inputs = _current_home_plan(entry, inputs)
    return await invoke(
        contract,
        functools.partial(handler, grid),
        inputs,
        caller,
        tenant=entry.entry_id,
        audit=grid,
        now=dt_util.utcnow,
    )


def _current_home_plan(entry: AgenticHemsConfigEntry, inputs: dict[str, Any]) -> dict[str, Any]:
    """Return ``inputs`` with ``current_home_plan`` replaced by the entry's live ``home_plan``, when it has one.

    Without a live plan with a battery or a heat pump the inputs stay, and the tool answers ``home_plan_not_available``.
    """
    home = entry.runtime_data.home
    if home is None or (live := explanation_input(home)) is None:
        return inputs
    return {**{k: v for k, v in inputs.items() if k != "current_home_plan"}, "home_plan": live}


@raising_ha_errors
async def _tool_service(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Run the tool named by the call's service as the calling user on the call's entry."""
    entry = entry_for_grid_call(hass, dict(call.data))
    result = await async_call_tool(hass, entry, call.service, dict(call.data), call.context)
    return result if call.return_response else None


async def _refusal(entry: AgenticHemsConfigEntry, call: ServiceCall, key: str) -> ServiceValidationError:
    """Audit a refused people-side call, then return the translated error to raise."""
    await generate_audit_record(
        entry.runtime_data.audit,
        {
            "type": "refused",
            "actor": call.context.user_id or "system",
            "tool": call.service,
            "inputs_hash": None,
            "outputs_hash": None,
            "decision": f"forbidden:{key}",
        },
    )
    return ServiceValidationError(translation_domain=DOMAIN, translation_key=key)


async def _admin_id(hass: HomeAssistant, entry: AgenticHemsConfigEntry, call: ServiceCall) -> str:
    """Return the calling administrator's user id; audit and raise ``admin_required_grid`` otherwise."""
    if (user := await async_admin(hass, call.context.user_id)) is None:
        raise await _refusal(entry, call, "admin_required_grid")
    return user.id


async def _decide(hass: HomeAssistant, call: ServiceCall, *, approve: bool) -> ServiceResponse:
    """Approve or deny an authorization request as an administrator."""
    entry = entry_for_grid_call(hass, dict(call.data))
    user_id = await _admin_id(hass, entry, call)
    request = await entry.runtime_data.grid.async_decide(call.data["request_id"], approve, user_id, call.context)
    return dict(request) if call.return_response else None


@raising_ha_errors
async def _acknowledge(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Acknowledge an incident as a user with the incident scope."""
    entry = entry_for_grid_call(hass, dict(call.data))
    grid = entry.runtime_data.grid
    user = await async_active_user(hass, call.context.user_id)
    if user is None or Scope.INCIDENT not in grid.scopes(user.id, is_admin(user)).scopes:
        raise await _refusal(entry, call, "incident_scope_required")
    incident = await grid.async_acknowledge(call.data["incident_id"], user.id)
    return dict(incident) if call.return_response else None


@raising_ha_errors
async def _verify(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Verify the audit chain as an administrator and return its status."""
    entry = entry_for_grid_call(hass, dict(call.data))
    await _admin_id(hass, entry, call)
    await entry.runtime_data.audit.async_verify()
    status: dict[str, Any] = entry.runtime_data.audit.status()
    return status


_approve = raising_ha_errors(functools.partial(_decide, approve=True))
_deny = raising_ha_errors(functools.partial(_decide, approve=False))
PEOPLE_SERVICES: tuple[tuple[str, _Handler, vol.Schema, SupportsResponse], ...] = (
    (SERVICE_APPROVE, _approve, DECIDE_SCHEMA, SupportsResponse.OPTIONAL),
    (SERVICE_DENY, _deny, DECIDE_SCHEMA, SupportsResponse.OPTIONAL),
    (SERVICE_ACKNOWLEDGE, _acknowledge, ACKNOWLEDGE_SCHEMA, SupportsResponse.OPTIONAL),
    (SERVICE_VERIFY, _verify, VERIFY_SCHEMA, SupportsResponse.ONLY),
)


@callback
def async_setup_grid_services(hass: HomeAssistant) -> None:
    """Register the grid toolkit's service actions: one per tool, then :data:`PEOPLE_SERVICES`."""
    for name, (contract, _) in TOOLS.items():
        optional = contract.side_effect in (SideEffect.REQUEST, SideEffect.RECORD)
        response = SupportsResponse.OPTIONAL if optional else SupportsResponse.ONLY
        register(
            hass,
            name,
            functools.partial(_tool_service, hass),
            accepting_tenant(hass, name, service_schema(name)),
            response,
            max_total_chars=MAX_PLAN_TOTAL_CHARS,  # a dispatch plan's actions come back in simulate/validate
        )
    for name, handler, schema, response in PEOPLE_SERVICES:
        register(hass, name, functools.partial(handler, hass), accepting_tenant(hass, name, schema), response)
