"""The options flow: price formula and household limit, device control, grid toolkit, whole-home plan, assistant.

The model provider's URL and key go into the entry's data (reauth replaces the key); everything else is options.
"""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigFlowResult, OptionsFlow
from homeassistant.helpers.selector import SelectOptionDict, SelectSelector, SelectSelectorConfig, SelectSelectorMode

from ..const import (
    CONF_CALENDAR_ENTITY,
    CONF_DAILY_COST_CAP,
    CONF_GATED_ENTITIES,
    CONF_LLM_API_KEY,
    CONF_LLM_BASE_URL,
    CONF_LLM_MODEL,
    CONF_LLM_PRICE_INPUT,
    CONF_LLM_PRICE_OUTPUT,
    CONF_NOTIFY_SERVICE,
    CONF_POLICY_RULES,
    CONF_PV_FORECAST_ENTRIES,
    DEFAULT_ASSISTANT_OPTIONS,
    DEFAULT_CONTROL_OPTIONS,
    DEFAULT_OPTIONS,
)
from ..people import async_non_admin_users
from ..validation import vol
from .checks import grid_errors, settings_errors, validate_llm
from .home import HOME_OPTIONAL, forecast_entry_options, home_schema
from .policy import policy_field
from .schemas import (
    GRID_LIMITS,
    GRID_OPTIONAL,
    SETTINGS_LIMITS,
    assistant_schema,
    control_schema,
    grid_schema,
    limit_placeholders,
    number_selector,
    settings_schema,
)
from .tariff import TARIFF_FIELDS, TARIFF_LIMITS, check_tariff, tariff_schema


class AgenticHemsOptionsFlow(OptionsFlow):
    """Change the price formula, the household power limit and device control."""

    def __init__(self) -> None:
        """Start with nothing entered."""
        self._options: dict[str, Any] = {}
        self._drop: set[str] = set()
        self._llm: dict[str, Any] = {}
        self._models: list[str] = []

    async def async_step_init(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Show the price and household settings with the current values; a number outside its range is refused."""
        errors: dict[str, str] = {}
        if user_input is not None and not (errors := settings_errors(user_input)):
            self._options = dict(user_input)
            return await self.async_step_control()
        return self.async_show_form(
            step_id="init",
            data_schema=settings_schema({**DEFAULT_OPTIONS, **self.config_entry.options, **(user_input or {})}),
            errors=errors,
            description_placeholders=limit_placeholders(SETTINGS_LIMITS),
        )

    async def async_step_assistant(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Show and check the model provider (checked live: its model list is fetched), calendar, limits."""
        errors: dict[str, str] = {}
        data = self.config_entry.data
        if user_input is not None:
            base_url = str(user_input.pop(CONF_LLM_BASE_URL, "") or "").strip().rstrip("/")
            api_key = str(user_input.pop(CONF_LLM_API_KEY, "") or "").strip() or data.get(CONF_LLM_API_KEY)
            self._options |= user_input
            if not user_input.get(CONF_CALENDAR_ENTITY):
                self._drop.add(CONF_CALENDAR_ENTITY)
            if not base_url:  # the offline planner
                self._llm = {CONF_LLM_BASE_URL: None, CONF_LLM_API_KEY: None}
                self._drop.add(CONF_LLM_MODEL)
                return self._finish()
            errors, self._models = await validate_llm(self.hass, base_url, api_key)
            if not errors:
                self._llm = {CONF_LLM_BASE_URL: base_url, CONF_LLM_API_KEY: api_key}
                return await self.async_step_model()
        values = {
            **DEFAULT_ASSISTANT_OPTIONS,
            **self.config_entry.options,
            CONF_LLM_BASE_URL: data.get(CONF_LLM_BASE_URL),
        }
        return self.async_show_form(step_id="assistant", data_schema=assistant_schema(values), errors=errors)

    async def async_step_model(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Show and store the model (from the provider's list), its prices per million tokens and the cost cap."""
        if user_input is not None:
            self._options |= user_input
            return self._finish()
        values = {**DEFAULT_ASSISTANT_OPTIONS, **self.config_entry.options}
        current = values.get(CONF_LLM_MODEL)
        per_million_tokens = number_selector(0, 1000, "any", "per 1M tokens")
        return self.async_show_form(
            step_id="model",
            data_schema=vol.Schema(
                {
                    vol.Required(CONF_LLM_MODEL, default=current if current in self._models else self._models[0]): (
                        SelectSelector(SelectSelectorConfig(options=self._models, mode=SelectSelectorMode.DROPDOWN))
                    ),
                    vol.Required(CONF_LLM_PRICE_INPUT, default=values[CONF_LLM_PRICE_INPUT]): per_million_tokens,
                    vol.Required(CONF_LLM_PRICE_OUTPUT, default=values[CONF_LLM_PRICE_OUTPUT]): per_million_tokens,
                    vol.Required(CONF_DAILY_COST_CAP, default=values[CONF_DAILY_COST_CAP]): number_selector(
                        0, 10000, "any", "per day"
                    ),
                }
            ),
            description_placeholders={"count": str(len(self._models))},
        )

    def _finish(self) -> ConfigFlowResult:
        """Save: the provider's URL and key into the entry data (reauth replaces the key), the rest as options."""
        data = {k: v for k, v in {**self.config_entry.data, **self._llm}.items() if v is not None}
        if data != dict(self.config_entry.data):
            self.hass.config_entries.async_update_entry(self.config_entry, data=data)
        options = {k: v for k, v in {**self.config_entry.options, **self._options}.items() if k not in self._drop}
        return self.async_create_entry(data=options)

    async def async_step_control(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Device control; the policy rules (YAML text) are parsed and validated before they are saved.

        Text that does not parse or rules that are not valid show the form again with the error and the typed text;
        the saved rules stay. An emptied field saves no rules.
        """
        errors: dict[str, str] = {}
        placeholders: dict[str, str] = {}
        if user_input is not None:
            # Up to 20,000 characters of YAML take PyYAML seconds when nested deeply: parsed off the event loop.
            errors, placeholders, rules = await self.hass.async_add_executor_job(
                policy_field, user_input.get(CONF_POLICY_RULES)
            )
            if not errors:
                self._options |= {**user_input, CONF_POLICY_RULES: rules}
                for key in (CONF_NOTIFY_SERVICE, CONF_GATED_ENTITIES):  # cleared: dropped
                    if not user_input.get(key):
                        self._options.pop(key, None)
                        self._drop.add(key)
                return await self.async_step_grid()
        services = sorted(f"notify.{name}" for name in self.hass.services.async_services_for_domain("notify"))
        values = {**DEFAULT_CONTROL_OPTIONS, **self.config_entry.options, **(user_input or {})}
        return self.async_show_form(
            step_id="control",
            data_schema=control_schema(values, services),
            errors=errors,
            description_placeholders=placeholders,
        )

    async def async_step_grid(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Show and store the grid toolkit: the home twin's assets and measurements, and each user's tool scopes.

        A home twin number outside :data:`.schemas.GRID_LIMITS` shows the form again with its range.
        """
        errors: dict[str, str] = {}
        if user_input is not None and not (errors := grid_errors(user_input)):
            for key in GRID_OPTIONAL:
                if user_input.get(key) in (None, "", []):
                    user_input.pop(key, None)
                    self._options.pop(key, None)
                    self._drop.add(key)
            self._options |= user_input
            return await self.async_step_home()
        users = [
            SelectOptionDict(value=user.id, label=user.name or user.id)
            for user in await async_non_admin_users(self.hass)
        ]
        return self.async_show_form(
            step_id="grid",
            data_schema=grid_schema({**self.config_entry.options, **(user_input or {})}, users),
            errors=errors,
            description_placeholders=limit_placeholders(GRID_LIMITS),
        )

    async def async_step_home(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Show and store the whole-home plan's options; cleared optional fields are dropped (the plan's default)."""
        if user_input is not None:
            for key in HOME_OPTIONAL:
                if user_input.get(key) in (None, "", []):
                    user_input.pop(key, None)
                    self._options.pop(key, None)
                    self._drop.add(key)
            self._options |= user_input
            return await self.async_step_tariff()
        saved = self.config_entry.options
        entries = await forecast_entry_options(self.hass, saved.get(CONF_PV_FORECAST_ENTRIES) or [])
        return self.async_show_form(step_id="home", data_schema=home_schema(saved, entries))

    async def async_step_tariff(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Show and store the grid tariff and connection; the band schedule is checked, cleared fields are dropped."""
        errors: dict[str, str] = {}
        placeholders = {"error": "", **limit_placeholders(TARIFF_LIMITS)}
        if user_input is not None:
            errors, placeholders, checked = await self.hass.async_add_executor_job(check_tariff, user_input)
            if not errors:
                for key in TARIFF_FIELDS:
                    if checked.get(key) in (None, "", [], {}):
                        checked.pop(key, None)
                        self._options.pop(key, None)
                        self._drop.add(key)
                self._options |= checked
                return await self.async_step_assistant()
        return self.async_show_form(
            step_id="tariff",
            data_schema=tariff_schema({**self.config_entry.options, **(user_input or {})}),
            errors=errors,
            description_placeholders=placeholders,
        )
