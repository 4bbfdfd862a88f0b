"""The appliance subentry flow: add or reconfigure an appliance."""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigSubentryFlow, SubentryFlowResult
from homeassistant.const import CONF_NAME

from .checks import appliance_placeholders, validate_appliance
from .schemas import appliance_schema


class ApplianceSubentryFlow(ConfigSubentryFlow):
    """Add or reconfigure an appliance."""

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Add an appliance."""
        errors: dict[str, str] = {}
        if user_input is not None:
            names = {sub.title for sub in self._get_entry().subentries.values()}
            errors, data = validate_appliance(user_input, names)
            if not errors:
                return self.async_create_entry(title=data[CONF_NAME], data=data)
        return self.async_show_form(
            step_id="user",
            data_schema=self.add_suggested_values_to_schema(appliance_schema(), user_input or {}),
            errors=errors,
            description_placeholders=appliance_placeholders(),
        )

    async def async_step_reconfigure(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Change an appliance."""
        subentry = self._get_reconfigure_subentry()
        errors: dict[str, str] = {}
        if user_input is not None:
            names = {sub.title for sid, sub in self._get_entry().subentries.items() if sid != subentry.subentry_id}
            errors, data = validate_appliance(user_input, names)
            if not errors:
                return self.async_update_and_abort(self._get_entry(), subentry, title=data[CONF_NAME], data=data)
        return self.async_show_form(
            step_id="reconfigure",
            data_schema=self.add_suggested_values_to_schema(appliance_schema(), user_input or dict(subentry.data)),
            errors=errors,
            description_placeholders=appliance_placeholders(),
        )
