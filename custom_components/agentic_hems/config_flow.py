"""Config flow: the price source, the price formula and the household limit; reconfigure and reauth.

The price source is the sample, ENTSO-E, Nord Pool or a price sensor. The options flow and the appliance and battery
subentry flows are in :mod:`.flow`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from homeassistant.config_entries import ConfigFlow, ConfigFlowResult, ConfigSubentryFlow, OptionsFlow
from homeassistant.const import CONF_API_KEY
from homeassistant.core import callback
from homeassistant.helpers.selector import SelectSelector, SelectSelectorConfig, SelectSelectorMode

from .const import (
    CONF_AREA,
    CONF_BIDDING_ZONE,
    CONF_LLM_API_KEY,
    CONF_LLM_BASE_URL,
    CONF_NORDPOOL_ENTRY,
    CONF_PRICE_ENTITY,
    CONF_PRICE_SOURCE,
    DEFAULT_OPTIONS,
    DOMAIN,
    PRICE_SOURCES,
    REAUTH_LLM,
    SOURCE_ENTSOE,
    SOURCE_NORDPOOL,
    SOURCE_SAMPLE,
    SOURCE_SENSOR,
    SUBENTRY_APPLIANCE,
    SUBENTRY_BATTERY,
    SUBENTRY_HEAT_PUMP,
)
from .flow.appliance import ApplianceSubentryFlow
from .flow.battery import BatterySubentryFlow
from .flow.checks import (
    reloads_itself,
    settings_errors,
    source_title,
    source_unique_id,
    validate_entsoe,
    validate_llm,
    validate_nordpool,
    validate_sensor,
)
from .flow.heat_pump import HeatPumpSubentryFlow
from .flow.options import AgenticHemsOptionsFlow
from .flow.schemas import (
    COUNTRY_ZONES,
    SETTINGS_LIMITS,
    entsoe_schema,
    limit_placeholders,
    nordpool_schema,
    password_selector,
    sensor_schema,
    settings_schema,
)
from .validation import vol

if TYPE_CHECKING:
    from .runtime import AgenticHemsConfigEntry


class AgenticHemsConfigFlow(ConfigFlow, domain=DOMAIN):
    """Set up a price source: user → source step → settings."""

    VERSION = 1
    MINOR_VERSION = 1

    def __init__(self) -> None:
        """Start with no collected data."""
        self._data: dict[str, Any] = {}

    @staticmethod
    @callback
    def async_get_options_flow(config_entry: AgenticHemsConfigEntry) -> OptionsFlow:
        """Return the options flow (price formula and power limit)."""
        return AgenticHemsOptionsFlow()

    @classmethod
    @callback
    def async_get_supported_subentry_types(
        cls, config_entry: AgenticHemsConfigEntry
    ) -> dict[str, type[ConfigSubentryFlow]]:
        """Appliances and the whole-home plan's batteries and heat pumps are subentries."""
        return {
            SUBENTRY_APPLIANCE: ApplianceSubentryFlow,
            SUBENTRY_BATTERY: BatterySubentryFlow,
            SUBENTRY_HEAT_PUMP: HeatPumpSubentryFlow,
        }

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Pick the price source."""
        if user_input is not None:
            self._data[CONF_PRICE_SOURCE] = user_input[CONF_PRICE_SOURCE]
            if user_input[CONF_PRICE_SOURCE] == SOURCE_SAMPLE:
                await self.async_set_unique_id(source_unique_id(self._data))
                self._abort_if_unique_id_configured()
                return await self.async_step_settings()
            source_steps = {
                SOURCE_ENTSOE: self.async_step_entsoe,
                SOURCE_NORDPOOL: self.async_step_nordpool,
                SOURCE_SENSOR: self.async_step_sensor,
            }
            return await source_steps[user_input[CONF_PRICE_SOURCE]]()
        return self.async_show_form(
            step_id="user",
            data_schema=vol.Schema(
                {
                    vol.Required(CONF_PRICE_SOURCE, default=SOURCE_SAMPLE): SelectSelector(
                        SelectSelectorConfig(
                            options=PRICE_SOURCES, mode=SelectSelectorMode.LIST, translation_key=CONF_PRICE_SOURCE
                        )
                    )
                }
            ),
        )

    async def async_step_entsoe(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """ENTSO-E: API key and bidding zone, checked with one request."""
        errors: dict[str, str] = {}
        if user_input is not None:
            user_input = {**user_input, CONF_API_KEY: user_input[CONF_API_KEY].strip()}
            await self.async_set_unique_id(source_unique_id({CONF_PRICE_SOURCE: SOURCE_ENTSOE, **user_input}))
            self._abort_if_unique_id_configured()
            errors = await validate_entsoe(self.hass, user_input[CONF_API_KEY], user_input[CONF_BIDDING_ZONE])
            if not errors:
                self._data.update(user_input)
                return await self.async_step_settings()
        suggested = {CONF_BIDDING_ZONE: COUNTRY_ZONES.get(self.hass.config.country or "")}
        return self.async_show_form(
            step_id=SOURCE_ENTSOE,
            data_schema=self.add_suggested_values_to_schema(entsoe_schema(), user_input or suggested),
            errors=errors,
        )

    async def async_step_nordpool(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Ask which entry and which area of the core Nord Pool integration to use (its first ones suggested).

        Without a Nord Pool entry there is nothing to pick: the flow ends with ``nordpool_not_set_up``.
        """
        errors: dict[str, str] = {}
        if not (nordpool := self.hass.config_entries.async_entries(SOURCE_NORDPOOL)):
            return self.async_abort(reason="nordpool_not_set_up")
        if user_input is not None:
            errors, cleaned = validate_nordpool(self.hass, user_input)
            if not errors:
                await self.async_set_unique_id(source_unique_id({CONF_PRICE_SOURCE: SOURCE_NORDPOOL, **cleaned}))
                self._abort_if_unique_id_configured()
                self._data.update(cleaned)
                return await self.async_step_settings()
        areas = nordpool[0].data.get("areas") or [""]
        suggested = {CONF_NORDPOOL_ENTRY: nordpool[0].entry_id, CONF_AREA: areas[0]}
        return self.async_show_form(
            step_id=SOURCE_NORDPOOL,
            data_schema=self.add_suggested_values_to_schema(nordpool_schema(), user_input or suggested),
            errors=errors,
        )

    async def async_step_sensor(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Another HA price sensor with today/tomorrow attributes."""
        errors: dict[str, str] = {}
        if user_input is not None:
            await self.async_set_unique_id(source_unique_id({CONF_PRICE_SOURCE: SOURCE_SENSOR, **user_input}))
            self._abort_if_unique_id_configured()
            errors = validate_sensor(self.hass, user_input[CONF_PRICE_ENTITY])
            if not errors:
                self._data.update(user_input)
                return await self.async_step_settings()
        return self.async_show_form(
            step_id=SOURCE_SENSOR,
            data_schema=self.add_suggested_values_to_schema(sensor_schema(), user_input or {}),
            errors=errors,
        )

    async def async_step_settings(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Price formula and household power limit (each number within its range); creates the entry."""
        errors: dict[str, str] = {}
        if user_input is not None and not (errors := settings_errors(user_input)):
            return self.async_create_entry(title=source_title(self._data), data=self._data, options=user_input)
        return self.async_show_form(
            step_id="settings",
            data_schema=settings_schema({**DEFAULT_OPTIONS, **(user_input or {})}),
            errors=errors,
            description_placeholders=limit_placeholders(SETTINGS_LIMITS),
        )

    async def async_step_reconfigure(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Change the source's settings (zone and key, Nord Pool area, or the price entity)."""
        entry = self._get_reconfigure_entry()
        source = entry.data[CONF_PRICE_SOURCE]
        if source == SOURCE_SAMPLE:
            return self.async_abort(reason="nothing_to_reconfigure")
        schema = {SOURCE_ENTSOE: entsoe_schema, SOURCE_NORDPOOL: nordpool_schema, SOURCE_SENSOR: sensor_schema}
        errors: dict[str, str] = {}
        if user_input is not None:
            if source == SOURCE_NORDPOOL:
                errors, user_input = validate_nordpool(self.hass, user_input)
            data = {**entry.data, **user_input}
            if not errors:
                # The unique id follows the zone, area or entity, which must not belong to another entry.
                other = self.hass.config_entries.async_entry_for_domain_unique_id(DOMAIN, source_unique_id(data))
                if other is not None and other.entry_id != entry.entry_id:
                    return self.async_abort(reason="already_configured")
                if source == SOURCE_ENTSOE:
                    errors = await validate_entsoe(self.hass, user_input[CONF_API_KEY], user_input[CONF_BIDDING_ZONE])
                elif source == SOURCE_SENSOR:
                    errors = validate_sensor(self.hass, user_input[CONF_PRICE_ENTITY])
            if not errors:
                if reloads_itself(entry):
                    return self.async_update_and_abort(
                        entry, unique_id=source_unique_id(data), data=data, title=source_title(data)
                    )
                return self.async_update_reload_and_abort(
                    entry, unique_id=source_unique_id(data), data=data, title=source_title(data)
                )
        return self.async_show_form(
            step_id="reconfigure",
            data_schema=self.add_suggested_values_to_schema(schema[source](), user_input or dict(entry.data)),
            errors=errors,
        )

    async def async_step_reauth(self, entry_data: Mapping[str, Any]) -> ConfigFlowResult:
        """ENTSO-E, or the model provider (``REAUTH_LLM`` in the data), rejected the API key."""
        if entry_data.get(REAUTH_LLM):
            return await self.async_step_reauth_llm()
        return await self.async_step_reauth_confirm()

    async def async_step_reauth_llm(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Ask for a new key of the model provider; it is checked against the provider's model list."""
        entry = self._get_reauth_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            api_key = user_input[CONF_LLM_API_KEY].strip()
            errors, _ = await validate_llm(self.hass, entry.data[CONF_LLM_BASE_URL], api_key)
            if not errors:
                if reloads_itself(entry):
                    return self.async_update_and_abort(entry, data_updates={CONF_LLM_API_KEY: api_key})
                return self.async_update_reload_and_abort(entry, data_updates={CONF_LLM_API_KEY: api_key})
        return self.async_show_form(
            step_id="reauth_llm",
            data_schema=vol.Schema({vol.Required(CONF_LLM_API_KEY): password_selector()}),
            description_placeholders={"url": entry.data.get(CONF_LLM_BASE_URL, "")},
            errors=errors,
        )

    async def async_step_reauth_confirm(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Ask for a new ENTSO-E API key."""
        entry = self._get_reauth_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            api_key = user_input[CONF_API_KEY].strip()
            errors = await validate_entsoe(self.hass, api_key, entry.data[CONF_BIDDING_ZONE])
            if not errors:
                if reloads_itself(entry):
                    return self.async_update_and_abort(entry, data_updates={CONF_API_KEY: api_key})
                return self.async_update_reload_and_abort(entry, data_updates={CONF_API_KEY: api_key})
        return self.async_show_form(
            step_id="reauth_confirm",
            data_schema=vol.Schema({vol.Required(CONF_API_KEY): password_selector()}),
            description_placeholders={"zone": entry.data[CONF_BIDDING_ZONE]},
            errors=errors,
        )
