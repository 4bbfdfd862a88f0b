"""What the flows check before they save, and the entry's unique id and title.

The checks cover a price source's settings, the model provider and an appliance.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import time, timedelta
from typing import TYPE_CHECKING, Any

from homeassistant.const import ATTR_UNIT_OF_MEASUREMENT, CONF_API_KEY, CONF_NAME
from homeassistant.core import HomeAssistant
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.util import dt as dt_util

from ..assistant.llm import async_list_models
from ..const import (
    CONF_AREA,
    CONF_BATTERY_CAPACITY_KWH,
    CONF_BIDDING_ZONE,
    CONF_CONTIGUOUS,
    CONF_DEADLINE,
    CONF_DURATION_MIN,
    CONF_EARLIEST_START,
    CONF_ENERGY_KWH,
    CONF_GRID_FEE,
    CONF_LLM_API_KEY,
    CONF_LLM_BASE_URL,
    CONF_MARKUP,
    CONF_NORDPOOL_ENTRY,
    CONF_POWER_KW,
    CONF_PRICE_ENTITY,
    CONF_PRICE_SOURCE,
    CONF_PV_PEAK_KW,
    CONF_VAT_PERCENT,
    LOGGER,
    SOURCE_ENTSOE,
    SOURCE_NORDPOOL,
    SOURCE_SAMPLE,
    SOURCE_SENSOR,
    VALIDATE_TIMEOUT_S,
)
from ..orchestrator.loop import ModelAuthError, ModelError
from ..prices import PriceError, PricesNotPublished
from ..prices.attributes import curve_from_attributes
from ..prices.entsoe import async_fetch_day_ahead
from ..prices.errors import InvalidAuth
from ..scheduling.appliance import Appliance, window_length
from .schemas import APPLIANCE_LIMITS, GRID_LIMITS, SETTINGS_LIMITS, limit_placeholders, outside_limits

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry


def validate_sensor(hass: HomeAssistant, entity_id: str) -> dict[str, str]:
    """Check that the sensor's attributes hold prices in a shape ``curve_from_attributes`` reads."""
    state = hass.states.get(entity_id)
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


async def validate_entsoe(hass: HomeAssistant, api_key: str, zone: str) -> dict[str, str]:
    """Check the key with one short request for today; returns form errors (empty when the key works)."""
    if not api_key.strip():
        return {CONF_API_KEY: "api_key_empty"}
    start = dt_util.as_utc(dt_util.start_of_local_day())
    try:
        await async_fetch_day_ahead(
            async_get_clientsession(hass), api_key, zone, start, start + timedelta(days=1), timeout=VALIDATE_TIMEOUT_S
        )
    except InvalidAuth:
        return {"base": "invalid_auth"}
    except PricesNotPublished:
        return {}
    except PriceError:
        return {"base": "cannot_connect"}
    except Exception:  # noqa: BLE001 - an unexpected failure must still leave the user a form, not a 500
        LOGGER.exception("Unexpected error while checking the ENTSO-E API key")
        return {"base": "unknown"}
    return {}


def validate_nordpool(hass: HomeAssistant, user_input: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """Form errors for a Nord Pool entry and area, and the input with the area upper-cased."""
    entry = hass.config_entries.async_get_entry(user_input[CONF_NORDPOOL_ENTRY])
    area = user_input[CONF_AREA].strip().upper()
    cleaned = {**user_input, CONF_AREA: area}
    if entry is None or entry.domain != SOURCE_NORDPOOL:
        return {CONF_NORDPOOL_ENTRY: "nordpool_entry_missing"}, cleaned
    if area not in entry.data.get("areas", []):
        return {CONF_AREA: "area_not_in_entry"}, cleaned
    return {}, cleaned


async def validate_llm(hass: HomeAssistant, base_url: str, api_key: str | None) -> tuple[dict[str, str], list[str]]:
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


def appliance_placeholders() -> dict[str, str]:
    """Return the appliance form's placeholders: each number's limits, e.g. ``power_kw_min`` ``0.01``, ``power_kw_max``."""
    return limit_placeholders(APPLIANCE_LIMITS)


def settings_errors(user_input: Mapping[str, Any]) -> dict[str, str]:
    """Return the errors of the price formula's and household limit's numbers outside :data:`.schemas.SETTINGS_LIMITS`."""
    errors: dict[str, str] = {}
    for key in outside_limits(user_input, SETTINGS_LIMITS, tuple(SETTINGS_LIMITS)):
        if key == CONF_MARKUP:
            errors[key] = "markup_range"
        elif key == CONF_VAT_PERCENT:
            errors[key] = "vat_range"
        elif key == CONF_GRID_FEE:
            errors[key] = "grid_fee_range"
        else:
            errors[key] = "power_limit_range"
    return errors


def grid_errors(user_input: Mapping[str, Any]) -> dict[str, str]:
    """Return the errors of the grid step's home twin numbers given outside :data:`.schemas.GRID_LIMITS`."""
    given = {k: v for k, v in user_input.items() if k in GRID_LIMITS and v not in (None, "")}
    errors: dict[str, str] = {}
    for key in outside_limits(given, GRID_LIMITS, tuple(given)):
        if key == CONF_PV_PEAK_KW:
            errors[key] = "pv_peak_range"
        elif key == CONF_BATTERY_CAPACITY_KWH:
            errors[key] = "twin_capacity_range"
        else:
            errors[key] = "twin_power_range"
    return errors


def validate_appliance(data: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """Form errors and the data to store for an appliance.

    The name is trimmed and must not be empty (:func:`.devices.device_errors` checks it against the other devices');
    the power is required; a contiguous load needs a duration, an energy load an energy amount, and a form giving
    both is refused (as the ``plan`` action does); each number lies within :data:`.schemas.APPLIANCE_LIMITS`; the times of day are stored as
    ``HH:MM:SS``; the run must fit the daily window.
    """
    cleaned = {**data, CONF_NAME: str(data[CONF_NAME]).strip()}
    errors = _amount_errors(data)
    if not cleaned[CONF_NAME]:
        errors[CONF_NAME] = "name_empty"
    if _outside_limits(data, CONF_POWER_KW):
        errors[CONF_POWER_KW] = "power_out_of_range"
    if _outside_limits(data, CONF_DURATION_MIN):
        errors[CONF_DURATION_MIN] = "duration_out_of_range"
    if _outside_limits(data, CONF_ENERGY_KWH):
        errors[CONF_ENERGY_KWH] = "energy_out_of_range"
    for key in (CONF_EARLIEST_START, CONF_DEADLINE):
        try:
            cleaned[key] = time.fromisoformat(str(data[key])).isoformat("seconds")
        except ValueError:
            errors[key] = "invalid_time"
    if not errors:
        appliance = Appliance.from_config("new", cleaned)
        if appliance.run_time > window_length(appliance.earliest_start, appliance.deadline):
            errors[CONF_DEADLINE] = "window_too_short"
    return errors, cleaned


def _outside_limits(data: Mapping[str, Any], key: str) -> bool:
    """Whether the number ``data[key]`` is given and outside its :data:`.schemas.APPLIANCE_LIMITS`."""
    minimum, maximum, _, _ = APPLIANCE_LIMITS[key]
    return data.get(key) is not None and not minimum <= float(data[key]) <= maximum


def _amount_errors(data: Mapping[str, Any]) -> dict[str, str]:
    """Return the power and amount errors: power missing, the amount the load kind needs missing, or both amounts given."""
    errors: dict[str, str] = {}
    if data.get(CONF_POWER_KW) is None:
        errors[CONF_POWER_KW] = "power_required"
    duration, energy = data.get(CONF_DURATION_MIN), data.get(CONF_ENERGY_KWH)
    if duration is not None and energy is not None:
        errors[CONF_ENERGY_KWH] = "duration_and_energy"
    elif data[CONF_CONTIGUOUS] and duration is None:
        errors[CONF_DURATION_MIN] = "duration_required"
    elif not data[CONF_CONTIGUOUS] and energy is None:
        errors[CONF_ENERGY_KWH] = "energy_required"
    return errors


def source_unique_id(data: Mapping[str, Any]) -> str:
    """One entry per source instance: the sample, an ENTSO-E zone, a Nord Pool area or a price sensor."""
    source = data[CONF_PRICE_SOURCE]
    if source == SOURCE_ENTSOE:
        return f"{SOURCE_ENTSOE}_{data[CONF_BIDDING_ZONE]}"
    if source == SOURCE_NORDPOOL:
        return f"{SOURCE_NORDPOOL}_{data[CONF_NORDPOOL_ENTRY]}_{data[CONF_AREA]}"  # e.g. a EUR and a SEK entry
    if source == SOURCE_SENSOR:
        return f"{SOURCE_SENSOR}_{data[CONF_PRICE_ENTITY]}"
    return SOURCE_SAMPLE


def source_title(data: Mapping[str, Any]) -> str:
    """Return the entry's title: its source and zone, area or sensor."""
    source = data[CONF_PRICE_SOURCE]
    if source == SOURCE_ENTSOE:
        return f"ENTSO-E {data[CONF_BIDDING_ZONE]}"
    if source == SOURCE_NORDPOOL:
        return f"Nord Pool {data[CONF_AREA]}"
    if source == SOURCE_SENSOR:
        return f"Prices from {data[CONF_PRICE_ENTITY]}"
    return "Sample prices"


def reloads_itself(entry: AgenticHemsConfigEntry) -> bool:
    """Return whether the entry reloads by itself when a flow updates it.

    A loaded entry has an update listener (``async_setup_entry``), and then a flow must only update it (HA 2026.10
    deprecates ``async_update_reload_and_abort`` on such an entry; it breaks in 2026.12). An entry that is not loaded
    (its set-up failed) has none, so the flow reloads it.
    """
    return bool(entry.update_listeners)
