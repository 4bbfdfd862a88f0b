"""The stand-in's config flow: one step without fields, one entry."""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigFlow, ConfigFlowResult

from . import DOMAIN, HA_ID


class StandInConfigFlow(ConfigFlow, domain=DOMAIN):
    """Add the simulated Siemens dishwasher."""

    VERSION = 1

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Confirm, then create the entry."""
        await self.async_set_unique_id(HA_ID)
        self._abort_if_unique_id_configured()
        if user_input is None:
            return self.async_show_form(step_id="user")
        return self.async_create_entry(title="Home Connect (demo stand-in)", data={})
