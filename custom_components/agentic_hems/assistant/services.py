"""Service actions of the assistant: ask and get_runs."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse, callback
from homeassistant.helpers import config_validation as cv

from ..bounds import MAX_ASK_CHARS
from ..const import DOMAIN
from ..people import async_viewer
from ..service_helpers import ENTRY_SCHEMA, bounded, entry_for_call
from ..validation import vol

SERVICE_ASK = "ask"
SERVICE_GET_RUNS = "get_runs"
ASK_SCHEMA = vol.Schema({**ENTRY_SCHEMA, vol.Required("text"): vol.All(cv.string, vol.Length(max=MAX_ASK_CHARS))})
RUNS_SCHEMA = vol.Schema(
    {**ENTRY_SCHEMA, vol.Optional("limit", default=20): vol.All(vol.Coerce(int), vol.Range(min=1, max=200))}
)


@callback
def async_setup_assistant_services(hass: HomeAssistant) -> None:
    """Register ``ask`` (a plain-language request) and ``get_runs`` (stored runs, newest first).

    A non-admin user gets only their own runs, see :mod:`.people`.
    """

    async def ask(call: ServiceCall) -> ServiceResponse:
        entry = entry_for_call(hass, call)
        response: dict[str, Any] = await entry.runtime_data.assistant.async_ask(call.data["text"], call.context)
        return response if call.return_response else None

    async def get_runs(call: ServiceCall) -> ServiceResponse:
        entry = entry_for_call(hass, call)
        viewer = await async_viewer(hass, call.context)
        visible = [run for run in reversed(entry.runtime_data.assistant.runs) if viewer.may_see_run(run)]
        runs: list[Any] = visible[: call.data["limit"]]
        return {"runs": runs}

    hass.services.async_register(
        DOMAIN,
        SERVICE_ASK,
        ask,
        schema=bounded(ASK_SCHEMA, max_chars=MAX_ASK_CHARS),
        supports_response=SupportsResponse.OPTIONAL,
    )
    hass.services.async_register(
        DOMAIN, SERVICE_GET_RUNS, get_runs, schema=bounded(RUNS_SCHEMA), supports_response=SupportsResponse.ONLY
    )
