"""The options step of the whole-home plan: PV forecast, export price and limit, curtailment, battery control.

The house power sensor it reads is the grid step's (the same option).

The PV forecast entries are a multiple select of config entries, not a config entry picker: HA's frontend cannot
start a config entry picker from saved data (the dialog stays locked), while a select shows any saved list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.helpers.selector import (
    EntitySelector,
    EntitySelectorConfig,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
)
from homeassistant.loader import IntegrationNotFound, async_get_integration

from ..const import (
    BATTERY_APPROVAL,
    BATTERY_AUTOMATIC,
    CONF_BATTERY_CONTROL,
    CONF_CURTAILMENT_ENTITY,
    CONF_EXPORT_FIXED_PRICE,
    CONF_EXPORT_LIMIT_KW,
    CONF_EXPORT_PRICE_MODE,
    CONF_EXPORT_SPOT_FACTOR,
    CONF_EXPORT_SPOT_FEE,
    CONF_MPC_PV_THRESHOLD_KW,
    CONF_MPC_SOC_THRESHOLD_PCT,
    CONF_MPC_TEMP_THRESHOLD_C,
    CONF_PV_FORECAST_ENTRIES,
    CONF_PV_FORECAST_SENSOR,
    EXPORT_FIXED,
    EXPORT_SPOT,
)
from ..planning.home_config import OPTION_DEFAULTS
from ..planning.solar_source import energy_forecast_entries
from ..validation import vol

# Options the step leaves out of the entry when cleared (the plan then uses its default: none).
HOME_OPTIONAL = (
    CONF_PV_FORECAST_ENTRIES,
    CONF_PV_FORECAST_SENSOR,
    CONF_EXPORT_LIMIT_KW,
    CONF_CURTAILMENT_ENTITY,
)


async def forecast_entry_options(hass: HomeAssistant, saved: Iterable[str]) -> list[SelectOptionDict]:
    """Return the config entries that can give a solar forecast, as select options labelled "title (domain)".

    These are the loaded entries whose integration has an ``energy`` platform with ``async_get_solar_forecast``,
    the Energy dashboard's solar forecasts and the ``saved`` ids (a saved id of a missing entry shows as its id).
    """
    ids = [*await energy_forecast_entries(hass), *saved]
    ids += [
        entry.entry_id
        for entry in hass.config_entries.async_entries()
        if entry.state is ConfigEntryState.LOADED and await _has_solar_forecast(hass, entry.domain)
    ]
    return [SelectOptionDict(value=entry_id, label=_label(hass, entry_id)) for entry_id in dict.fromkeys(ids)]


def _label(hass: HomeAssistant, entry_id: str) -> str:
    """Return "title (domain)" of a config entry, or its id when it does not exist."""
    entry = hass.config_entries.async_get_entry(entry_id)
    return f"{entry.title} ({entry.domain})" if entry is not None else entry_id


async def _has_solar_forecast(hass: HomeAssistant, domain: str) -> bool:
    """Whether ``domain``'s integration has an ``energy`` platform with ``async_get_solar_forecast``."""
    try:
        integration = await async_get_integration(hass, domain)
        if "energy" not in integration.platforms_exists(("energy",)):
            return False
        platform = await integration.async_get_platform("energy")
    except IntegrationNotFound, ImportError:
        return False
    return callable(getattr(platform, "async_get_solar_forecast", None))


def _number(minimum: float, maximum: float, step: float | Literal["any"], unit: str | None = None) -> NumberSelector:
    """Return a number box from ``minimum`` to ``maximum`` in ``step`` ("any": free), labelled with ``unit``."""
    config = NumberSelectorConfig(min=minimum, max=maximum, step=step, mode=NumberSelectorMode.BOX)
    if unit:
        config["unit_of_measurement"] = unit
    return NumberSelector(config)


def home_schema(values: Mapping[str, Any], entries: list[SelectOptionDict]) -> vol.Schema:
    """Return the whole-home plan's fields with the saved ``values`` (the plan's defaults where none is saved).

    ``entries`` are the PV forecast entries to choose from (:func:`forecast_entry_options`); none chosen means the
    Energy dashboard's solar forecasts.
    """
    values = {**OPTION_DEFAULTS, **values}

    def suggested(key: str) -> dict[str, Any]:
        return {"suggested_value": values.get(key)}

    def entity(domain: list[str]) -> EntitySelector:
        return EntitySelector(EntitySelectorConfig(domain=domain))

    return vol.Schema(
        {
            vol.Optional(CONF_PV_FORECAST_ENTRIES, description=suggested(CONF_PV_FORECAST_ENTRIES)): SelectSelector(
                SelectSelectorConfig(options=entries, multiple=True, mode=SelectSelectorMode.DROPDOWN)
            ),
            vol.Optional(CONF_PV_FORECAST_SENSOR, description=suggested(CONF_PV_FORECAST_SENSOR)): entity(["sensor"]),
            vol.Required(CONF_EXPORT_PRICE_MODE, default=values[CONF_EXPORT_PRICE_MODE]): SelectSelector(
                SelectSelectorConfig(
                    options=[EXPORT_FIXED, EXPORT_SPOT],
                    mode=SelectSelectorMode.LIST,
                    translation_key=CONF_EXPORT_PRICE_MODE,
                )
            ),
            vol.Required(CONF_EXPORT_FIXED_PRICE, default=values[CONF_EXPORT_FIXED_PRICE]): _number(
                -10, 10, "any", "EUR/kWh"
            ),
            vol.Required(CONF_EXPORT_SPOT_FACTOR, default=values[CONF_EXPORT_SPOT_FACTOR]): _number(-10, 10, "any"),
            vol.Required(CONF_EXPORT_SPOT_FEE, default=values[CONF_EXPORT_SPOT_FEE]): _number(
                -10, 10, "any", "EUR/kWh"
            ),
            vol.Optional(CONF_EXPORT_LIMIT_KW, description=suggested(CONF_EXPORT_LIMIT_KW)): _number(
                0, 1000, 0.1, "kW"
            ),
            vol.Optional(CONF_CURTAILMENT_ENTITY, description=suggested(CONF_CURTAILMENT_ENTITY)): entity(
                ["number", "input_number"]
            ),
            vol.Required(CONF_BATTERY_CONTROL, default=values[CONF_BATTERY_CONTROL]): SelectSelector(
                SelectSelectorConfig(
                    options=[BATTERY_APPROVAL, BATTERY_AUTOMATIC],
                    mode=SelectSelectorMode.LIST,
                    translation_key=CONF_BATTERY_CONTROL,
                )
            ),
            vol.Required(CONF_MPC_SOC_THRESHOLD_PCT, default=values[CONF_MPC_SOC_THRESHOLD_PCT]): _number(
                0.1, 100, 0.1, "%"
            ),
            vol.Required(CONF_MPC_PV_THRESHOLD_KW, default=values[CONF_MPC_PV_THRESHOLD_KW]): _number(
                0.01, 100, 0.01, "kW"
            ),
            vol.Required(CONF_MPC_TEMP_THRESHOLD_C, default=values[CONF_MPC_TEMP_THRESHOLD_C]): _number(
                0.1, 20, 0.1, "K"
            ),
        }
    )
