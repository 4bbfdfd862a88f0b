"""Config flow: price source, price formula, household limit, and appliance subentries."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import time, timedelta
from typing import Any, Literal

from homeassistant.config_entries import (
    ConfigEntry,
    ConfigFlow,
    ConfigFlowResult,
    ConfigSubentryFlow,
    OptionsFlow,
    SubentryFlowResult,
)
from homeassistant.const import ATTR_UNIT_OF_MEASUREMENT, CONF_API_KEY, CONF_ENTITY_ID, CONF_NAME
from homeassistant.core import callback
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.selector import (
    BooleanSelector,
    ConfigEntrySelector,
    ConfigEntrySelectorConfig,
    EntitySelector,
    EntitySelectorConfig,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    ObjectSelector,
    SelectSelector,
    SelectOptionDict,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
    TimeSelector,
)
from homeassistant.util import dt as dt_util

from .const import (
    APPLIANCE_KINDS,
    CONF_AREA,
    CONF_BIDDING_ZONE,
    CONF_CONTIGUOUS,
    CONF_DEADLINE,
    CONF_DURATION_MIN,
    CONF_EARLIEST_START,
    CONF_ENERGY_KWH,
    CONF_GRID_FEE,
    CONF_KIND,
    CONF_MARKUP,
    CONF_NORDPOOL_ENTRY,
    CONF_POWER_KW,
    CONF_POWER_LIMIT_KW,
    CONF_PRICE_ENTITY,
    CONF_PRICE_SOURCE,
    CONF_VAT_ON_NEGATIVE,
    CONF_VAT_PERCENT,
    CONF_ASK_DAILY,
    CONF_ASK_HOURLY,
    CONF_ASK_PER_MINUTE,
    CONF_CALENDAR_ENTITY,
    CONF_CALENDAR_KEYWORD,
    CONF_CONFIRM_MINUTES,
    CONF_DAILY_COST_CAP,
    CONF_INCLUDE_APPLIANCES,
    CONF_LLM_API_KEY,
    CONF_LLM_BASE_URL,
    CONF_LLM_MODEL,
    CONF_LLM_PRICE_INPUT,
    CONF_LLM_PRICE_OUTPUT,
    CONF_SHARE_CALENDAR_TITLES,
    DEFAULT_ASSISTANT_OPTIONS,
    CONF_NOTIFY_SERVICE,
    CONF_POLICY_RULES,
    CONF_WAIT_S,
    CONF_BATTERY_CAPACITY_KWH,
    CONF_BATTERY_POWER_KW,
    CONF_GRID_INCIDENT_USERS,
    CONF_GRID_REQUEST_USERS,
    CONF_GRID_SIMULATE_USERS,
    CONF_PV_PEAK_KW,
    MEASUREMENT_OPTIONS,
    DEFAULT_CONTROL_OPTIONS,
    DEFAULT_OPTIONS,
    DOMAIN,
    LOGGER,
    PRICE_SOURCES,
    SOURCE_ENTSOE,
    SOURCE_NORDPOOL,
    SOURCE_SAMPLE,
    SOURCE_SENSOR,
    REAUTH_LLM,
    SUBENTRY_APPLIANCE,
    VALIDATE_TIMEOUT_S,
)
from .gates.tables import validate_rules
from .assistant.llm import async_list_models
from .orchestrator.loop import ModelAuthError, ModelError
from .people import async_non_admin_users
from .prices import PriceError, PricesNotPublished
from .prices.attributes import curve_from_attributes
from .prices.entsoe import ZONES, async_fetch_day_ahead
from .prices.errors import InvalidAuth
from .scheduling.appliance import Appliance, window_length
from .validation import vol

def _number(minimum: float, maximum: float, step: float | Literal["any"], unit: str) -> NumberSelector:
    return NumberSelector(
        NumberSelectorConfig(min=minimum, max=maximum, step=step, unit_of_measurement=unit, mode=NumberSelectorMode.BOX)
    )


def settings_schema(values: Mapping[str, Any]) -> vol.Schema:
    """The price formula and household limit, shown at creation and in the options."""
    return vol.Schema(
        {
            vol.Required(CONF_MARKUP, default=values[CONF_MARKUP]): _number(-10, 10, "any", "per kWh"),
            vol.Required(CONF_VAT_PERCENT, default=values[CONF_VAT_PERCENT]): _number(0, 100, 0.1, "%"),
            vol.Required(CONF_GRID_FEE, default=values[CONF_GRID_FEE]): _number(-10, 10, "any", "per kWh"),
            vol.Required(CONF_VAT_ON_NEGATIVE, default=values[CONF_VAT_ON_NEGATIVE]): BooleanSelector(),
            vol.Required(CONF_POWER_LIMIT_KW, default=values[CONF_POWER_LIMIT_KW]): _number(0.5, 100, 0.1, "kW"),
        }
    )


def _zone_selector() -> SelectSelector:
    return SelectSelector(SelectSelectorConfig(options=list(ZONES), mode=SelectSelectorMode.DROPDOWN, sort=True))


def _validate_sensor(flow: ConfigFlow, entity_id: str) -> dict[str, str]:
    """The sensor's attributes must hold prices in a shape ``curve_from_attributes`` reads."""
    state = flow.hass.states.get(entity_id)
    if state is None:
        return {CONF_PRICE_ENTITY: "not_a_price_sensor"}
    try:
        curve_from_attributes(
            state.attributes,
            unit=state.attributes.get(ATTR_UNIT_OF_MEASUREMENT),
            day_start=dt_util.start_of_local_day(),
        )
    except PriceError:
        return {CONF_PRICE_ENTITY: "not_a_price_sensor"}
    return {}


async def _validate_entsoe(flow: ConfigFlow, api_key: str, zone: str) -> dict[str, str]:
    """Check the key with one short request for today; returns form errors (empty when the key works)."""
    if not api_key.strip():
        return {CONF_API_KEY: "api_key_empty"}
    start = dt_util.as_utc(dt_util.start_of_local_day())
    try:
        await async_fetch_day_ahead(
            async_get_clientsession(flow.hass), api_key, zone, start, start + timedelta(days=1), timeout=VALIDATE_TIMEOUT_S
        )
    except InvalidAuth:
        return {"base": "invalid_auth"}
    except PricesNotPublished:
        return {}
    except PriceError:
        return {"base": "cannot_connect"}
    except Exception:  # an unexpected failure must still leave the user a form, not a 500
        LOGGER.exception("Unexpected error while checking the ENTSO-E API key")
        return {"base": "unknown"}
    return {}


class AgenticHemsConfigFlow(ConfigFlow, domain=DOMAIN):
    """Set up a price source: user → source step → settings."""

    VERSION = 1
    MINOR_VERSION = 1

    def __init__(self) -> None:
        """Start with no collected data."""
        self._data: dict[str, Any] = {}

    @staticmethod
    @callback
    def async_get_options_flow(config_entry: ConfigEntry) -> OptionsFlow:
        """Return the options flow (price formula and power limit)."""
        return AgenticHemsOptionsFlow()

    @classmethod
    @callback
    def async_get_supported_subentry_types(cls, config_entry: ConfigEntry) -> dict[str, type[ConfigSubentryFlow]]:
        """Appliances are subentries."""
        return {SUBENTRY_APPLIANCE: ApplianceSubentryFlow}

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Pick the price source."""
        if user_input is not None:
            self._data[CONF_PRICE_SOURCE] = user_input[CONF_PRICE_SOURCE]
            if user_input[CONF_PRICE_SOURCE] == SOURCE_SAMPLE:
                await self.async_set_unique_id(_unique_id(self._data))
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
            await self.async_set_unique_id(_unique_id({CONF_PRICE_SOURCE: SOURCE_ENTSOE, **user_input}))
            self._abort_if_unique_id_configured()
            errors = await _validate_entsoe(self, user_input[CONF_API_KEY], user_input[CONF_BIDDING_ZONE])
            if not errors:
                self._data.update(user_input)
                return await self.async_step_settings()
        return self.async_show_form(
            step_id=SOURCE_ENTSOE,
            data_schema=self.add_suggested_values_to_schema(_entsoe_schema(), user_input or {}),
            errors=errors,
        )

    async def async_step_nordpool(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """The core Nord Pool integration: which entry and which area."""
        errors: dict[str, str] = {}
        if user_input is not None:
            errors, cleaned = _validate_nordpool(self, user_input)
            if not errors:
                await self.async_set_unique_id(_unique_id({CONF_PRICE_SOURCE: SOURCE_NORDPOOL, **cleaned}))
                self._abort_if_unique_id_configured()
                self._data.update(cleaned)
                return await self.async_step_settings()
        return self.async_show_form(
            step_id=SOURCE_NORDPOOL,
            data_schema=self.add_suggested_values_to_schema(_nordpool_schema(), user_input or {}),
            errors=errors,
        )

    async def async_step_sensor(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Another HA price sensor with today/tomorrow attributes."""
        errors: dict[str, str] = {}
        if user_input is not None:
            await self.async_set_unique_id(_unique_id({CONF_PRICE_SOURCE: SOURCE_SENSOR, **user_input}))
            self._abort_if_unique_id_configured()
            errors = _validate_sensor(self, user_input[CONF_PRICE_ENTITY])
            if not errors:
                self._data.update(user_input)
                return await self.async_step_settings()
        return self.async_show_form(step_id=SOURCE_SENSOR, data_schema=_sensor_schema(), errors=errors)

    async def async_step_settings(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Price formula and household power limit; creates the entry."""
        if user_input is not None:
            return self.async_create_entry(title=_title(self._data), data=self._data, options=user_input)
        return self.async_show_form(step_id="settings", data_schema=settings_schema(DEFAULT_OPTIONS))

    async def async_step_reconfigure(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Change the source's settings (zone and key, Nord Pool area, or the price entity)."""
        entry = self._get_reconfigure_entry()
        source = entry.data[CONF_PRICE_SOURCE]
        if source == SOURCE_SAMPLE:
            return self.async_abort(reason="nothing_to_reconfigure")
        schema = {SOURCE_ENTSOE: _entsoe_schema, SOURCE_NORDPOOL: _nordpool_schema, SOURCE_SENSOR: _sensor_schema}
        errors: dict[str, str] = {}
        if user_input is not None:
            if source == SOURCE_NORDPOOL:
                errors, user_input = _validate_nordpool(self, user_input)
            data = {**entry.data, **user_input}
            if not errors:
                # The unique id follows the zone, area or entity, which must not belong to another entry.
                other = self.hass.config_entries.async_entry_for_domain_unique_id(DOMAIN, _unique_id(data))
                if other is not None and other.entry_id != entry.entry_id:
                    return self.async_abort(reason="already_configured")
                if source == SOURCE_ENTSOE:
                    errors = await _validate_entsoe(self, user_input[CONF_API_KEY], user_input[CONF_BIDDING_ZONE])
                elif source == SOURCE_SENSOR:
                    errors = _validate_sensor(self, user_input[CONF_PRICE_ENTITY])
            if not errors:
                if _reloads_itself(entry):
                    return self.async_update_and_abort(entry, unique_id=_unique_id(data), data=data, title=_title(data))
                return self.async_update_reload_and_abort(
                    entry, unique_id=_unique_id(data), data=data, title=_title(data)
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
            errors, _ = await _validate_llm(self.hass, entry.data[CONF_LLM_BASE_URL], api_key)
            if not errors:
                if _reloads_itself(entry):
                    return self.async_update_and_abort(entry, data_updates={CONF_LLM_API_KEY: api_key})
                return self.async_update_reload_and_abort(entry, data_updates={CONF_LLM_API_KEY: api_key})
        return self.async_show_form(
            step_id="reauth_llm",
            data_schema=vol.Schema({vol.Required(CONF_LLM_API_KEY): _password()}),
            description_placeholders={"url": entry.data.get(CONF_LLM_BASE_URL, "")},
            errors=errors,
        )

    async def async_step_reauth_confirm(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Ask for a new ENTSO-E API key."""
        entry = self._get_reauth_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            api_key = user_input[CONF_API_KEY].strip()
            errors = await _validate_entsoe(self, api_key, entry.data[CONF_BIDDING_ZONE])
            if not errors:
                if _reloads_itself(entry):
                    return self.async_update_and_abort(entry, data_updates={CONF_API_KEY: api_key})
                return self.async_update_reload_and_abort(entry, data_updates={CONF_API_KEY: api_key})
        return self.async_show_form(
            step_id="reauth_confirm",
            data_schema=vol.Schema({vol.Required(CONF_API_KEY): _password()}),
            description_placeholders={"zone": entry.data[CONF_BIDDING_ZONE]},
            errors=errors,
        )


def _reloads_itself(entry: ConfigEntry) -> bool:
    """Whether the entry reloads by itself when a flow updates it: a loaded entry has an update listener
    (``async_setup_entry``), and then a flow must only update it (HA 2026.10 deprecates
    ``async_update_reload_and_abort`` on such an entry; it breaks in 2026.12). An entry that is not loaded (its set-up
    failed) has none, so the flow reloads it."""
    return bool(entry.update_listeners)


def _password() -> TextSelector:
    return TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD))


def _entsoe_schema() -> vol.Schema:
    return vol.Schema({vol.Required(CONF_API_KEY): _password(), vol.Required(CONF_BIDDING_ZONE): _zone_selector()})


def _nordpool_schema() -> vol.Schema:
    return vol.Schema(
        {
            vol.Required(CONF_NORDPOOL_ENTRY): ConfigEntrySelector(ConfigEntrySelectorConfig(integration="nordpool")),
            vol.Required(CONF_AREA): TextSelector(),
        }
    )


def _sensor_schema() -> vol.Schema:
    return vol.Schema({vol.Required(CONF_PRICE_ENTITY): EntitySelector(EntitySelectorConfig(domain="sensor"))})


def _validate_nordpool(flow: ConfigFlow, user_input: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """Form errors for a Nord Pool entry and area, and the input with the area upper-cased."""
    entry = flow.hass.config_entries.async_get_entry(user_input[CONF_NORDPOOL_ENTRY])
    area = user_input[CONF_AREA].strip().upper()
    cleaned = {**user_input, CONF_AREA: area}
    if entry is None or entry.domain != SOURCE_NORDPOOL:
        return {CONF_NORDPOOL_ENTRY: "nordpool_entry_missing"}, cleaned
    if area not in entry.data.get("areas", []):
        return {CONF_AREA: "area_not_in_entry"}, cleaned
    return {}, cleaned


def _unique_id(data: Mapping[str, Any]) -> str:
    """One entry per source instance: the sample, an ENTSO-E zone, a Nord Pool area or a price sensor."""
    source = data[CONF_PRICE_SOURCE]
    if source == SOURCE_ENTSOE:
        return f"{SOURCE_ENTSOE}_{data[CONF_BIDDING_ZONE]}"
    if source == SOURCE_NORDPOOL:
        return f"{SOURCE_NORDPOOL}_{data[CONF_NORDPOOL_ENTRY]}_{data[CONF_AREA]}"  # e.g. a EUR and a SEK entry
    if source == SOURCE_SENSOR:
        return f"{SOURCE_SENSOR}_{data[CONF_PRICE_ENTITY]}"
    return SOURCE_SAMPLE


def _title(data: Mapping[str, Any]) -> str:
    source = data[CONF_PRICE_SOURCE]
    if source == SOURCE_ENTSOE:
        return f"ENTSO-E {data[CONF_BIDDING_ZONE]}"
    if source == SOURCE_NORDPOOL:
        return f"Nord Pool {data[CONF_AREA]}"
    if source == SOURCE_SENSOR:
        return f"Prices from {data[CONF_PRICE_ENTITY]}"
    return "Sample prices"


def control_schema(values: Mapping[str, Any], notify_services: list[str]) -> vol.Schema:
    """Device control: the phantom-success wait, confirmation expiry, candidates, mobile notify, policy rules."""
    return vol.Schema(
        {
            vol.Required(CONF_WAIT_S, default=values[CONF_WAIT_S]): _number(1, 120, 1, "s"),
            vol.Required(CONF_CONFIRM_MINUTES, default=values[CONF_CONFIRM_MINUTES]): _number(1, 1440, 1, "min"),
            vol.Required(CONF_INCLUDE_APPLIANCES, default=values[CONF_INCLUDE_APPLIANCES]): BooleanSelector(),
            vol.Optional(
                CONF_NOTIFY_SERVICE, description={"suggested_value": values.get(CONF_NOTIFY_SERVICE)}
            ): SelectSelector(SelectSelectorConfig(options=notify_services, custom_value=True, mode=SelectSelectorMode.DROPDOWN)),
            vol.Optional(CONF_POLICY_RULES, default=values[CONF_POLICY_RULES]): ObjectSelector(),
        }
    )


def assistant_schema(values: Mapping[str, Any]) -> vol.Schema:
    """The assistant: the model provider (blank: the offline planner), the calendar, limits and the cost cap."""
    return vol.Schema(
        {
            vol.Optional(CONF_LLM_BASE_URL, description={"suggested_value": values.get(CONF_LLM_BASE_URL)}): TextSelector(
                TextSelectorConfig(type=TextSelectorType.URL)
            ),
            vol.Optional(CONF_LLM_API_KEY): _password(),
            vol.Optional(CONF_CALENDAR_ENTITY, description={"suggested_value": values.get(CONF_CALENDAR_ENTITY)}): (
                EntitySelector(EntitySelectorConfig(domain="calendar"))
            ),
            vol.Required(CONF_CALENDAR_KEYWORD, default=values[CONF_CALENDAR_KEYWORD]): TextSelector(),
            vol.Required(CONF_SHARE_CALENDAR_TITLES, default=values[CONF_SHARE_CALENDAR_TITLES]): BooleanSelector(),
            vol.Required(CONF_ASK_DAILY, default=values[CONF_ASK_DAILY]): _number(1, 100000, 1, "requests"),
            vol.Required(CONF_ASK_HOURLY, default=values[CONF_ASK_HOURLY]): _number(1, 10000, 1, "requests"),
            vol.Required(CONF_ASK_PER_MINUTE, default=values[CONF_ASK_PER_MINUTE]): _number(1, 1000, 1, "requests"),
        }
    )


async def _validate_llm(hass: Any, base_url: str, api_key: str | None) -> tuple[dict[str, str], list[str]]:
    """Errors and the provider's model ids (``GET {base_url}/models``)."""
    try:
        models = await async_list_models(hass, base_url, api_key)
    except ModelAuthError:
        return {CONF_LLM_API_KEY: "invalid_auth"}, []
    except ModelError as err:
        LOGGER.warning("Model provider %s: %s", base_url, err)
        return {CONF_LLM_BASE_URL: "cannot_connect"}, []
    if not models:
        return {CONF_LLM_BASE_URL: "no_models"}, []
    return {}, models


class AgenticHemsOptionsFlow(OptionsFlow):
    """Change the price formula, the household power limit and device control."""

    def __init__(self) -> None:
        """Start with nothing entered."""
        self._options: dict[str, Any] = {}
        self._drop: set[str] = set()
        self._llm: dict[str, Any] = {}
        self._models: list[str] = []

    async def async_step_init(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Show the price and household settings with the current values."""
        if user_input is not None:
            self._options = dict(user_input)
            return await self.async_step_control()
        return self.async_show_form(
            step_id="init", data_schema=settings_schema({**DEFAULT_OPTIONS, **self.config_entry.options})
        )

    async def async_step_assistant(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """The model provider (checked live: its model list is fetched), calendar, limits."""
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
            errors, self._models = await _validate_llm(self.hass, base_url, api_key)
            if not errors:
                self._llm = {CONF_LLM_BASE_URL: base_url, CONF_LLM_API_KEY: api_key}
                return await self.async_step_model()
        values = {**DEFAULT_ASSISTANT_OPTIONS, **self.config_entry.options, CONF_LLM_BASE_URL: data.get(CONF_LLM_BASE_URL)}
        return self.async_show_form(step_id="assistant", data_schema=assistant_schema(values), errors=errors)

    async def async_step_model(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """The model, chosen from the provider's list, and its prices per million tokens; the daily cost cap."""
        if user_input is not None:
            self._options |= user_input
            return self._finish()
        values = {**DEFAULT_ASSISTANT_OPTIONS, **self.config_entry.options}
        current = values.get(CONF_LLM_MODEL)
        return self.async_show_form(
            step_id="model",
            data_schema=vol.Schema(
                {
                    vol.Required(CONF_LLM_MODEL, default=current if current in self._models else self._models[0]): (
                        SelectSelector(SelectSelectorConfig(options=self._models, mode=SelectSelectorMode.DROPDOWN))
                    ),
                    vol.Required(CONF_LLM_PRICE_INPUT, default=values[CONF_LLM_PRICE_INPUT]): _number(0, 1000, "any", "per 1M tokens"),
                    vol.Required(CONF_LLM_PRICE_OUTPUT, default=values[CONF_LLM_PRICE_OUTPUT]): _number(0, 1000, "any", "per 1M tokens"),
                    vol.Required(CONF_DAILY_COST_CAP, default=values[CONF_DAILY_COST_CAP]): _number(0, 10000, "any", "per day"),
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
        """Device control; policy rules are validated before they are saved."""
        errors: dict[str, str] = {}
        placeholders = {"error": ""}
        if user_input is not None:
            rules = user_input.get(CONF_POLICY_RULES) or []
            try:
                if not isinstance(rules, list):
                    raise vol.Invalid("expected a list of rules")
                validate_rules(rules)
            except vol.Invalid as err:
                errors[CONF_POLICY_RULES] = "invalid_policy"
                placeholders["error"] = str(err)
            else:
                self._options |= {**user_input, CONF_POLICY_RULES: rules}
                if not user_input.get(CONF_NOTIFY_SERVICE):
                    self._options.pop(CONF_NOTIFY_SERVICE, None)
                    self._drop.add(CONF_NOTIFY_SERVICE)
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
        """The grid toolkit: the home twin's assets and measurements, and which users get which tool scopes."""
        if user_input is not None:
            for key in GRID_OPTIONAL:
                if user_input.get(key) in (None, "", []):
                    user_input.pop(key, None)
                    self._options.pop(key, None)
                    self._drop.add(key)
            self._options |= user_input
            return await self.async_step_assistant()
        users = [
            SelectOptionDict(value=user.id, label=user.name or user.id)
            for user in await async_non_admin_users(self.hass)
        ]
        return self.async_show_form(step_id="grid", data_schema=grid_schema(self.config_entry.options, users))


GRID_OPTIONAL = (CONF_PV_PEAK_KW, CONF_BATTERY_CAPACITY_KWH, CONF_BATTERY_POWER_KW, *MEASUREMENT_OPTIONS.values(),
                 CONF_GRID_SIMULATE_USERS, CONF_GRID_REQUEST_USERS, CONF_GRID_INCIDENT_USERS)


def grid_schema(values: Mapping[str, Any], users: list[SelectOptionDict]) -> vol.Schema:
    """The home twin (PV peak, battery, measured sensors, the battery's setpoint) and the tool scopes per user."""

    def suggested(key: str) -> dict[str, Any]:
        return {"suggested_value": values.get(key)}

    def entity(domain: str | list[str]) -> EntitySelector:
        return EntitySelector(EntitySelectorConfig(domain=domain))

    def people() -> SelectSelector:
        return SelectSelector(SelectSelectorConfig(options=users, multiple=True, mode=SelectSelectorMode.DROPDOWN))

    return vol.Schema(
        {
            vol.Optional(CONF_PV_PEAK_KW, description=suggested(CONF_PV_PEAK_KW)): _number(0, 1000, "any", "kW"),
            vol.Optional(CONF_BATTERY_CAPACITY_KWH, description=suggested(CONF_BATTERY_CAPACITY_KWH)): _number(
                0, 1000, "any", "kWh"
            ),
            vol.Optional(CONF_BATTERY_POWER_KW, description=suggested(CONF_BATTERY_POWER_KW)): _number(
                0, 1000, "any", "kW"
            ),
            vol.Optional("grid_power_entity", description=suggested("grid_power_entity")): entity("sensor"),
            vol.Optional("house_power_entity", description=suggested("house_power_entity")): entity("sensor"),
            vol.Optional("pv_power_entity", description=suggested("pv_power_entity")): entity("sensor"),
            vol.Optional("battery_power_entity", description=suggested("battery_power_entity")): entity("sensor"),
            vol.Optional("battery_soc_entity", description=suggested("battery_soc_entity")): entity("sensor"),
            vol.Optional("battery_setpoint_entity", description=suggested("battery_setpoint_entity")): entity(["number", "input_number"]),
            vol.Optional("ev_charger_power_entity", description=suggested("ev_charger_power_entity")): entity("sensor"),
            vol.Optional("heat_pump_power_entity", description=suggested("heat_pump_power_entity")): entity("sensor"),
            vol.Optional(CONF_GRID_SIMULATE_USERS, description=suggested(CONF_GRID_SIMULATE_USERS)): people(),
            vol.Optional(CONF_GRID_REQUEST_USERS, description=suggested(CONF_GRID_REQUEST_USERS)): people(),
            vol.Optional(CONF_GRID_INCIDENT_USERS, description=suggested(CONF_GRID_INCIDENT_USERS)): people(),
        }
    )


def appliance_schema() -> vol.Schema:
    """The appliance form; duration for contiguous loads, energy for the others."""
    return vol.Schema(
        {
            vol.Required(CONF_NAME): TextSelector(),
            vol.Required(CONF_KIND, default="dishwasher"): SelectSelector(
                SelectSelectorConfig(options=APPLIANCE_KINDS, mode=SelectSelectorMode.DROPDOWN, translation_key=CONF_KIND)
            ),
            vol.Required(CONF_ENTITY_ID): EntitySelector(
                EntitySelectorConfig(domain=["switch", "input_boolean", "climate", "water_heater", "number", "select"])
            ),
            vol.Required(CONF_POWER_KW): _number(0.01, 100, 0.01, "kW"),
            vol.Optional(CONF_DURATION_MIN): _number(1, 2880, 1, "min"),
            vol.Optional(CONF_ENERGY_KWH): _number(0.01, 500, 0.01, "kWh"),
            vol.Required(CONF_CONTIGUOUS, default=True): BooleanSelector(),
            vol.Required(CONF_EARLIEST_START, default="00:00:00"): TimeSelector(),
            vol.Required(CONF_DEADLINE, default="07:00:00"): TimeSelector(),
        }
    )


def validate_appliance(data: Mapping[str, Any], other_names: set[str]) -> tuple[dict[str, str], dict[str, Any]]:
    """Form errors and the data to store for an appliance.

    The name is trimmed and must be new (case-insensitive) among ``other_names``; a contiguous load needs a
    duration, an energy load an energy amount (only that one is stored); the run must fit the daily window.
    """
    cleaned = {**data, CONF_NAME: str(data[CONF_NAME]).strip()}
    cleaned.pop(CONF_ENERGY_KWH if data[CONF_CONTIGUOUS] else CONF_DURATION_MIN, None)
    errors: dict[str, str] = {}
    if not cleaned[CONF_NAME]:
        errors[CONF_NAME] = "name_empty"
    elif cleaned[CONF_NAME].casefold() in {name.casefold() for name in other_names}:
        errors[CONF_NAME] = "name_exists"
    if data[CONF_CONTIGUOUS] and data.get(CONF_DURATION_MIN) is None:
        errors[CONF_DURATION_MIN] = "duration_required"
    if not data[CONF_CONTIGUOUS] and data.get(CONF_ENERGY_KWH) is None:
        errors[CONF_ENERGY_KWH] = "energy_required"
    for key in (CONF_EARLIEST_START, CONF_DEADLINE):
        try:
            time.fromisoformat(str(data[key]))
        except ValueError:
            errors[key] = "invalid_time"
    if not errors:
        appliance = Appliance.from_config("new", cleaned)
        if appliance.run_time > window_length(appliance.earliest_start, appliance.deadline):
            errors[CONF_DEADLINE] = "window_too_short"
    return errors, cleaned


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
        )
