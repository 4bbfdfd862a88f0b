"""The appliance subentry flow: add or reconfigure an appliance."""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigSubentryFlow, SubentryFlowResult
from homeassistant.const import CONF_ENTITY_ID, CONF_NAME

from .charger import CHARGER_LIMITS, charger_schema, needs_charger_step, validate_charger
from .checks import appliance_placeholders, validate_appliance
from .devices import device_errors, taken_entities
from .schemas import appliance_schema, limit_placeholders


class ApplianceSubentryFlow(ConfigSubentryFlow):
    """Add or reconfigure an appliance.

    A submitted form is checked and stored in one go (no await between): another flow cannot store a device with its
    name or switch in between. An EV charger that can be split then gets the charger step (:mod:`.charger`).
    """

    _appliance: dict[str, Any] | None = None  # the first step's data while the charger step is shown

    def _validate(self, user_input: dict[str, Any], own_id: str | None) -> tuple[dict[str, str], dict[str, Any]]:
        """Return the form's errors and the appliance's data; its name and switch must be no other device's."""
        errors, data = validate_appliance(user_input)
        return device_errors(self.hass, self._get_entry(), own_id, data, CONF_ENTITY_ID) | errors, data

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Add an appliance."""
        errors: dict[str, str] = {}
        if user_input is not None:
            errors, data = self._validate(user_input, None)
            if not errors and needs_charger_step(data):
                self._appliance = data
                return await self.async_step_charger()
            if not errors:
                return self.async_create_entry(title=data[CONF_NAME], data=data)
        return self.async_show_form(
            step_id="user",
            data_schema=self.add_suggested_values_to_schema(
                appliance_schema(taken_entities(self.hass, self._get_entry(), None)), user_input or {}
            ),
            errors=errors,
            description_placeholders=appliance_placeholders(),
        )

    async def async_step_reconfigure(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Change an appliance."""
        subentry = self._get_reconfigure_subentry()
        errors: dict[str, str] = {}
        if user_input is not None:
            errors, data = self._validate(user_input, subentry.subentry_id)
            if not errors and needs_charger_step(data):
                self._appliance = {**{k: v for k, v in subentry.data.items() if k.startswith("charger_")}, **data}
                return await self.async_step_charger()
            if not errors:
                return self.async_update_and_abort(self._get_entry(), subentry, title=data[CONF_NAME], data=data)
        return self.async_show_form(
            step_id="reconfigure",
            data_schema=self.add_suggested_values_to_schema(
                appliance_schema(taken_entities(self.hass, self._get_entry(), subentry.subentry_id)),
                user_input or dict(subentry.data),
            ),
            errors=errors,
            description_placeholders=appliance_placeholders(),
        )

    async def async_step_charger(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Ask for the EV charger's current setpoint and limits, then store the appliance (added or changed)."""
        assert self._appliance is not None
        reconfiguring = self.source == "reconfigure"
        own_id = self._get_reconfigure_subentry().subentry_id if reconfiguring else None
        errors: dict[str, str] = {}
        if user_input is not None:
            errors, data = validate_charger(self.hass, self._get_entry(), own_id, self._appliance, user_input)
            if not errors and reconfiguring:
                subentry = self._get_reconfigure_subentry()
                return self.async_update_and_abort(self._get_entry(), subentry, title=data[CONF_NAME], data=data)
            if not errors:
                return self.async_create_entry(title=data[CONF_NAME], data=data)
        shown = {**self._appliance, "charger_phases": str(self._appliance.get("charger_phases", 3))}
        return self.async_show_form(
            step_id="charger",
            data_schema=self.add_suggested_values_to_schema(
                charger_schema(taken_entities(self.hass, self._get_entry(), own_id)), user_input or shown
            ),
            errors=errors,
            description_placeholders=limit_placeholders(CHARGER_LIMITS),
        )
