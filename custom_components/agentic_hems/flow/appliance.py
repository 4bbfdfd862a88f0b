"""The appliance subentry flow: add or reconfigure an appliance."""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import SOURCE_RECONFIGURE, ConfigSubentryFlow, SubentryFlowResult
from homeassistant.const import CONF_ENTITY_ID, CONF_NAME

from .charger import CHARGER_LIMITS, button_errors, charger_schema, needs_charger_step, validate_charger
from .checks import appliance_placeholders, validate_appliance
from .devices import device_errors, taken_entities
from .program import clean_program, program_errors
from .schemas import appliance_schema, limit_placeholders


class ApplianceSubentryFlow(ConfigSubentryFlow):
    """Add or reconfigure an appliance.

    A submitted form is checked and stored in one go (no await between): another flow cannot store a device with its
    name or switch in between. An EV charger that can be split then gets the charger step (:mod:`.charger`).
    """

    _appliance: dict[str, Any] | None = None  # the first step's data while the charger step is shown

    def _validate(self, user_input: dict[str, Any], own_id: str | None) -> tuple[dict[str, str], dict[str, Any]]:
        """Return the form's errors and the appliance's data; its name, switch and start button must be no other device's."""
        errors, data = validate_appliance(clean_program(user_input))
        errors = button_errors(data) | program_errors(self.hass, data) | errors
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
                return await self.async_step_reconfigure_charger()
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
        """Ask for a new EV charger's current setpoint and limits, then store the appliance."""
        errors: dict[str, str] = {}
        if user_input is not None:
            errors, data = self._validate_charger(user_input)
            if not errors:
                return self.async_create_entry(title=data[CONF_NAME], data=data)
        return self.async_show_form(
            step_id="charger",
            data_schema=self.add_suggested_values_to_schema(
                charger_schema(taken_entities(self.hass, self._get_entry(), self._own_id())),
                user_input or self._shown(),
            ),
            errors=errors,
            description_placeholders=limit_placeholders(CHARGER_LIMITS),
        )

    async def async_step_reconfigure_charger(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Ask for a reconfigured EV charger's current setpoint and limits, then store the appliance."""
        errors: dict[str, str] = {}
        if user_input is not None:
            errors, data = self._validate_charger(user_input)
            if not errors:
                subentry = self._get_reconfigure_subentry()
                return self.async_update_and_abort(self._get_entry(), subentry, title=data[CONF_NAME], data=data)
        return self.async_show_form(
            step_id="reconfigure_charger",
            data_schema=self.add_suggested_values_to_schema(
                charger_schema(taken_entities(self.hass, self._get_entry(), self._own_id())),
                user_input or self._shown(),
            ),
            errors=errors,
            description_placeholders=limit_placeholders(CHARGER_LIMITS),
        )

    def _own_id(self) -> str | None:
        return self._get_reconfigure_subentry().subentry_id if self.source == SOURCE_RECONFIGURE else None

    def _validate_charger(self, user_input: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
        assert self._appliance is not None
        return validate_charger(self.hass, self._get_entry(), self._own_id(), self._appliance, user_input)

    def _shown(self) -> dict[str, Any]:
        """Return the charger step's suggested values: the appliance's stored charger fields."""
        assert self._appliance is not None
        return {**self._appliance, "charger_phases": str(self._appliance.get("charger_phases", 3))}
