"""Diagnostics for a config entry, with the API key redacted."""

from __future__ import annotations

from typing import Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_API_KEY
from homeassistant.core import HomeAssistant

from . import AgenticHemsConfigEntry
from .const import CONF_NOTIFY_SERVICE

TO_REDACT = {CONF_API_KEY, CONF_NOTIFY_SERVICE}


async def async_get_config_entry_diagnostics(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> dict[str, Any]:
    """The entry's settings, the price cache summary, every appliance's plan and the device-control state (settings
    only when not loaded)."""
    settings = {
        "title": entry.title,
        "data": async_redact_data(dict(entry.data), TO_REDACT),
        "options": async_redact_data(dict(entry.options), TO_REDACT),
        "subentries": {sid: dict(sub.data) for sid, sub in entry.subentries.items()},
    }
    if entry.state is not ConfigEntryState.LOADED:
        return {"entry": settings, "state": entry.state.value}
    coordinator = entry.runtime_data.coordinator
    planner = entry.runtime_data.planner
    control = entry.runtime_data.control
    grid = entry.runtime_data.grid
    spot = coordinator.spot
    return {
        "entry": settings,
        "prices": None
        if spot is None
        else {
            "start": spot.start.isoformat(),
            "end": spot.end.isoformat(),
            "known_until": (k.isoformat() if (k := spot.known_until()) else None),
            "currency": spot.currency,
            "source": spot.source,
            "sample": spot.sample,
            "fetched_at": spot.fetched_at.isoformat() if spot.fetched_at else None,
        },
        "last_error": repr(coordinator.last_error) if coordinator.last_error else None,
        "last_update_success": coordinator.last_update_success,
        "appliances": {sid: state.as_dict() for sid, state in planner.states.items()},
        "device_control": {
            "allow_device_control": control.allow_control,
            "policy": [rule.as_dict() for rule in control.keeper.settings.rules],
            "pending": [p.trace_id for p in control.keeper.pending.values()],
            "traces_stored": len(control.traces),
            "idempotency_keys": len(control.keeper.ledger),
            "last_decision": control.last,  # redacted when stored
        },
        "grid": {  # the per-entry HMAC secret is never included
            "audit": entry.runtime_data.audit.status(),
            "requests": {r["request_id"]: r["status"] for r in grid.requests.values()},
            "open_incidents": [i["incident_id"] for i in grid.incidents.values() if not i.get("acknowledged_at")],
            "artifacts": len(grid.artifacts),
            "networks": await hass.async_add_executor_job(grid.network_ids),
        },
    }
