"""Diagnostics for a config entry, with every secret redacted.

Secrets are the ENTSO-E key and the LLM key, tokens, passwords, the credentials and query string of the LLM's
base URL, and the grid toolkit's per-entry HMAC secret (never included). Besides redacting the keys that hold them,
every string of the result is scrubbed of each secret's value (an error's text can carry a key or a URL with one).

Only administrators may download them. HA 2026.10's download view requires an admin itself; HA 2026.4's does not
(any logged-in user could download), so over HTTP the request's user is checked here too (:mod:`.people`'s rule).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from homeassistant.components.diagnostics import REDACTED, async_redact_data
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_ACCESS_TOKEN, CONF_API_KEY, CONF_PASSWORD, CONF_TOKEN, CONF_USERNAME
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import Unauthorized
from homeassistant.helpers.http import current_request

from .const import CONF_LLM_API_KEY, CONF_LLM_BASE_URL, CONF_NOTIFY_SERVICE
from .gates.redact import redact_url
from .people import is_admin
from .runtime import AgenticHemsConfigEntry

TO_REDACT = {
    CONF_API_KEY,
    CONF_LLM_API_KEY,
    CONF_ACCESS_TOKEN,
    CONF_TOKEN,
    CONF_PASSWORD,
    CONF_USERNAME,
    "secret",
    CONF_NOTIFY_SERVICE,
}
URL_KEYS = {CONF_LLM_BASE_URL}


def _secrets(entry: AgenticHemsConfigEntry, extra: Iterable[bytes]) -> set[str]:
    """Return the secret values of the entry, as they could appear in text."""
    found: set[str] = set()
    for source in (entry.data, entry.options):
        for key, value in source.items():
            if key in TO_REDACT and isinstance(value, str) and value:
                found.add(value)
            if key in URL_KEYS and isinstance(value, str) and value:
                try:
                    parts = urlsplit(value)
                    found.update(v for v in (parts.username, parts.password) if v)
                    found.update(v for _, v in parse_qsl(parts.query) if v)
                except ValueError:
                    found.add(value)
    for raw in extra:
        if raw:
            found.update(
                {
                    raw.hex(),
                    raw.hex().upper(),
                    base64.b64encode(raw).decode(),
                    base64.urlsafe_b64encode(raw).decode().rstrip("="),
                }
            )
    return {value for value in found if len(value) >= 4}  # too short to scrub text without destroying it


def _scrub(value: Any, secrets: set[str]) -> Any:
    """``value`` with every secret in any string replaced, recursively."""
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {_scrub(k, secrets): _scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrub(v, secrets) for v in value]
    return value


def _settings(data: dict[str, Any]) -> dict[str, Any]:
    redacted: dict[str, Any] = async_redact_data(data, TO_REDACT)
    return {k: redact_url(v) if k in URL_KEYS and isinstance(v, str) else v for k, v in redacted.items()}


async def async_get_config_entry_diagnostics(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> dict[str, Any]:
    """Return the entry's diagnostics, with every secret redacted.

    They hold the entry's settings, the price cache summary, every appliance's plan and the device-control state
    (only the settings when the entry is not loaded).

    Raises:
        Unauthorized: over HTTP, for a user who is not an administrator (HA answers 401).

    """
    if (request := current_request.get()) is not None and not is_admin(request.get("hass_user")):
        raise Unauthorized
    loaded = entry.state is ConfigEntryState.LOADED
    secrets = _secrets(entry, [entry.runtime_data.grid.secret] if loaded else [])
    result: dict[str, Any] = _scrub(await _diagnostics(hass, entry), secrets)
    return result


async def _diagnostics(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> dict[str, Any]:
    settings = {
        "title": entry.title,
        "data": _settings(dict(entry.data)),
        "options": _settings(dict(entry.options)),
        "subentries": {sid: _settings(dict(sub.data)) for sid, sub in entry.subentries.items()},
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
