from __future__ import annotations

from freezegun.api import FrozenDateTimeFactory

from homeassistant.auth.models import User
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import issue_registry as ir

from custom_components.agentic_hems.const import DOMAIN

from .test_heat_pump import CLIMATE, HEAT_PUMP
from .test_home_approval import _start, entry_with, home_requests


async def test_probe_mode_switch(hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_admin_user: User) -> None:
    entry = entry_with(HEAT_PUMP)
    manager = await _start(hass, freezer, entry)
    first = manager.approvals.request_id
    hass.config_entries.async_update_entry(entry, options={**entry.options, "battery_control": "automatic"})
    await hass.async_block_till_done(wait_background_tasks=True)
    print([(r["request_id"], r["status"]) for r in home_requests(entry)], entry.runtime_data.home.approvals.request_id)
    print(ir.async_get(hass).async_get_issue(DOMAIN, f"authorization_{first}"))
    print(hass.states.get(CLIMATE).attributes["temperature"])
