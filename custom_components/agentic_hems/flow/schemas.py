"""The forms of the config, options and appliance flows: their schemas and selectors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from homeassistant.const import CONF_API_KEY, CONF_ENTITY_ID, CONF_NAME
from homeassistant.helpers.selector import (
    BooleanSelector,
    ConfigEntrySelector,
    ConfigEntrySelectorConfig,
    EntitySelector,
    EntitySelectorConfig,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
    TimeSelector,
    TimeSelectorConfig,
    make_selector_config_schema,
)

from ..const import (
    APPLIANCE_KINDS,
    CONF_AREA,
    CONF_ASK_DAILY,
    CONF_ASK_HOURLY,
    CONF_ASK_PER_MINUTE,
    CONF_BATTERY_CAPACITY_KWH,
    CONF_BATTERY_POWER_KW,
    CONF_BIDDING_ZONE,
    CONF_CALENDAR_ENTITY,
    CONF_CALENDAR_KEYWORD,
    CONF_CONFIRM_MINUTES,
    CONF_CONTIGUOUS,
    CONF_DEADLINE,
    CONF_DURATION_MIN,
    CONF_EARLIEST_START,
    CONF_ENERGY_KWH,
    CONF_GATED_ENTITIES,
    CONF_GRID_FEE,
    CONF_GRID_INCIDENT_USERS,
    CONF_GRID_REQUEST_USERS,
    CONF_GRID_SIMULATE_USERS,
    CONF_INCLUDE_APPLIANCES,
    CONF_KIND,
    CONF_LLM_API_KEY,
    CONF_LLM_BASE_URL,
    CONF_MARKUP,
    CONF_NORDPOOL_ENTRY,
    CONF_NOTIFY_SERVICE,
    CONF_PHASE,
    CONF_POLICY_RULES,
    CONF_POWER_KW,
    CONF_POWER_LIMIT_KW,
    CONF_PRICE_ENTITY,
    CONF_PV_PEAK_KW,
    CONF_SHARE_CALENDAR_TITLES,
    CONF_VAT_ON_NEGATIVE,
    CONF_VAT_PERCENT,
    CONF_WAIT_S,
    MEASUREMENT_OPTIONS,
)
from ..gates.tables import INTENT_SERVICES
from ..prices.entsoe import ZONES
from ..validation import vol
from .devices import ControlEntitySelector
from .program import program_fields
from .yaml_field import as_yaml_text, yaml_selector


def _country_zones() -> dict[str, str]:
    """Return the bidding zone a country's homes price against, by HA's country code (``hass.config.country``).

    A country split into several zones (Denmark, Italy, Norway, Sweden) gets its first zone in :data:`ZONES` order
    (DK_1, IT_CALA, NO_1, SE_1) as a starting point for the user to change; Luxembourg shares Germany's zone.
    """
    zones: dict[str, str] = {"LU": "DE_LU"}
    for zone in ZONES:
        zones.setdefault(zone.split("_")[0], zone)
    return zones


COUNTRY_ZONES = _country_zones()


def number_selector(minimum: float, maximum: float, step: float | Literal["any"], unit: str) -> NumberSelector:
    """Return a number box from ``minimum`` to ``maximum`` in ``step`` (``"any"``: free), labelled with ``unit``."""
    return NumberSelector(
        NumberSelectorConfig(min=minimum, max=maximum, step=step, unit_of_measurement=unit, mode=NumberSelectorMode.BOX)
    )


# The price formula's and household limit's numbers: field -> (minimum, maximum, step, unit); settings_errors names
# the range of one outside (a markup or fee of up to 10 per kWh either way, VAT 0-100 %, a house of 0.5-100 kW).
SETTINGS_LIMITS: dict[str, tuple[float, float, float | Literal["any"], str]] = {
    CONF_MARKUP: (-10, 10, "any", "per kWh"),
    CONF_VAT_PERCENT: (0, 100, 0.1, "%"),
    CONF_GRID_FEE: (-10, 10, "any", "per kWh"),
    CONF_POWER_LIMIT_KW: (0.5, 100, 0.1, "kW"),
}


def settings_schema(values: Mapping[str, Any]) -> vol.Schema:
    """Return the price formula and household limit fields, shown at creation and in the options."""

    def number(key: str) -> LooseNumberSelector:
        return appliance_number(*SETTINGS_LIMITS[key])

    return vol.Schema(
        {
            vol.Required(CONF_MARKUP, default=values[CONF_MARKUP]): number(CONF_MARKUP),
            vol.Required(CONF_VAT_PERCENT, default=values[CONF_VAT_PERCENT]): number(CONF_VAT_PERCENT),
            vol.Required(CONF_GRID_FEE, default=values[CONF_GRID_FEE]): number(CONF_GRID_FEE),
            vol.Required(CONF_VAT_ON_NEGATIVE, default=values[CONF_VAT_ON_NEGATIVE]): BooleanSelector(),
            vol.Required(CONF_POWER_LIMIT_KW, default=values[CONF_POWER_LIMIT_KW]): number(CONF_POWER_LIMIT_KW),
        }
    )


def zone_selector() -> SelectSelector:
    """Return the ENTSO-E bidding zones, sorted."""
    return SelectSelector(SelectSelectorConfig(options=list(ZONES), mode=SelectSelectorMode.DROPDOWN, sort=True))


def password_selector() -> TextSelector:
    """Return a password box (an API key)."""
    return TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD))


def entsoe_schema() -> vol.Schema:
    """ENTSO-E: the API key and the bidding zone."""
    return vol.Schema(
        {vol.Required(CONF_API_KEY): password_selector(), vol.Required(CONF_BIDDING_ZONE): zone_selector()}
    )


def nordpool_schema() -> vol.Schema:
    """Nord Pool: the core integration's entry and one of its areas.

    HA's frontend has no empty value of its own for a config entry picker: a form showing one must give it a
    suggested value (or a default), else the frontend fails to open the form.
    """
    return vol.Schema(
        {
            vol.Required(CONF_NORDPOOL_ENTRY): ConfigEntrySelector(ConfigEntrySelectorConfig(integration="nordpool")),
            vol.Required(CONF_AREA): TextSelector(),
        }
    )


def sensor_schema() -> vol.Schema:
    """Another price sensor."""
    return vol.Schema({vol.Required(CONF_PRICE_ENTITY): EntitySelector(EntitySelectorConfig(domain="sensor"))})


def control_schema(values: Mapping[str, Any], notify_services: list[str]) -> vol.Schema:
    """Device control: the wait, confirmation expiry, candidates, mobile notify, policy rules, gated-only devices.

    The policy rules are YAML text (:mod:`.yaml_field`): ``values`` holds the saved list or the text just typed.
    """
    return vol.Schema(
        {
            vol.Required(CONF_WAIT_S, default=values[CONF_WAIT_S]): number_selector(1, 120, 1, "s"),
            vol.Required(CONF_CONFIRM_MINUTES, default=values[CONF_CONFIRM_MINUTES]): number_selector(
                1, 1440, 1, "min"
            ),
            vol.Required(CONF_INCLUDE_APPLIANCES, default=values[CONF_INCLUDE_APPLIANCES]): BooleanSelector(),
            vol.Optional(
                CONF_NOTIFY_SERVICE, description={"suggested_value": values.get(CONF_NOTIFY_SERVICE)}
            ): SelectSelector(
                SelectSelectorConfig(options=notify_services, custom_value=True, mode=SelectSelectorMode.DROPDOWN)
            ),
            vol.Optional(
                CONF_POLICY_RULES, description={"suggested_value": as_yaml_text(values.get(CONF_POLICY_RULES))}
            ): yaml_selector(),
            vol.Optional(
                CONF_GATED_ENTITIES, description={"suggested_value": values.get(CONF_GATED_ENTITIES) or None}
            ): EntitySelector(EntitySelectorConfig(domain=sorted(INTENT_SERVICES), multiple=True)),
        }
    )


def assistant_schema(values: Mapping[str, Any]) -> vol.Schema:
    """Return the assistant's fields.

    The model provider (blank: the offline planner), the calendar, limits and the cost cap.
    """
    return vol.Schema(
        {
            vol.Optional(
                CONF_LLM_BASE_URL, description={"suggested_value": values.get(CONF_LLM_BASE_URL)}
            ): TextSelector(TextSelectorConfig(type=TextSelectorType.URL)),
            vol.Optional(CONF_LLM_API_KEY): password_selector(),
            vol.Optional(CONF_CALENDAR_ENTITY, description={"suggested_value": values.get(CONF_CALENDAR_ENTITY)}): (
                EntitySelector(EntitySelectorConfig(domain="calendar"))
            ),
            vol.Required(CONF_CALENDAR_KEYWORD, default=values[CONF_CALENDAR_KEYWORD]): TextSelector(),
            vol.Required(CONF_SHARE_CALENDAR_TITLES, default=values[CONF_SHARE_CALENDAR_TITLES]): BooleanSelector(),
            vol.Required(CONF_ASK_DAILY, default=values[CONF_ASK_DAILY]): number_selector(1, 100000, 1, "requests"),
            vol.Required(CONF_ASK_HOURLY, default=values[CONF_ASK_HOURLY]): number_selector(1, 10000, 1, "requests"),
            vol.Required(CONF_ASK_PER_MINUTE, default=values[CONF_ASK_PER_MINUTE]): number_selector(
                1, 1000, 1, "requests"
            ),
        }
    )


# The grid step's home twin numbers: field -> (minimum, maximum, step, unit), a home's ranges (PV up to 100 kW peak,
# a battery of up to 250 kWh and 50 kW, as the battery form's); checks.grid_errors names the range of one outside.
GRID_LIMITS: dict[str, tuple[float, float, float, str]] = {
    CONF_PV_PEAK_KW: (0, 100, 0.01, "kW"),
    CONF_BATTERY_CAPACITY_KWH: (0, 250, 0.01, "kWh"),
    CONF_BATTERY_POWER_KW: (0, 50, 0.01, "kW"),
}
GRID_OPTIONAL = (
    CONF_PV_PEAK_KW,
    CONF_BATTERY_CAPACITY_KWH,
    CONF_BATTERY_POWER_KW,
    *MEASUREMENT_OPTIONS.values(),
    CONF_GRID_SIMULATE_USERS,
    CONF_GRID_REQUEST_USERS,
    CONF_GRID_INCIDENT_USERS,
)


def grid_schema(values: Mapping[str, Any], users: list[SelectOptionDict]) -> vol.Schema:
    """Return the grid toolkit's fields.

    The home twin (PV peak, battery, measured sensors, the battery's setpoint) and the tool scopes per user.
    """

    def suggested(key: str) -> dict[str, Any]:
        return {"suggested_value": values.get(key)}

    def entity(domain: str | list[str]) -> EntitySelector:
        return EntitySelector(EntitySelectorConfig(domain=domain))

    def twin(key: str) -> LooseNumberSelector:
        return appliance_number(*GRID_LIMITS[key])

    def people() -> SelectSelector:
        return SelectSelector(SelectSelectorConfig(options=users, multiple=True, mode=SelectSelectorMode.DROPDOWN))

    return vol.Schema(
        {
            vol.Optional(CONF_PV_PEAK_KW, description=suggested(CONF_PV_PEAK_KW)): twin(CONF_PV_PEAK_KW),
            vol.Optional(CONF_BATTERY_CAPACITY_KWH, description=suggested(CONF_BATTERY_CAPACITY_KWH)): twin(
                CONF_BATTERY_CAPACITY_KWH
            ),
            vol.Optional(CONF_BATTERY_POWER_KW, description=suggested(CONF_BATTERY_POWER_KW)): twin(
                CONF_BATTERY_POWER_KW
            ),
            vol.Optional("grid_power_entity", description=suggested("grid_power_entity")): entity("sensor"),
            vol.Optional("house_power_entity", description=suggested("house_power_entity")): entity("sensor"),
            vol.Optional("pv_power_entity", description=suggested("pv_power_entity")): entity("sensor"),
            vol.Optional("battery_power_entity", description=suggested("battery_power_entity")): entity("sensor"),
            vol.Optional("battery_soc_entity", description=suggested("battery_soc_entity")): entity("sensor"),
            vol.Optional("battery_setpoint_entity", description=suggested("battery_setpoint_entity")): entity(
                ["number", "input_number"]
            ),
            vol.Optional("ev_charger_power_entity", description=suggested("ev_charger_power_entity")): entity("sensor"),
            vol.Optional("heat_pump_power_entity", description=suggested("heat_pump_power_entity")): entity("sensor"),
            vol.Optional(CONF_GRID_SIMULATE_USERS, description=suggested(CONF_GRID_SIMULATE_USERS)): people(),
            vol.Optional(CONF_GRID_REQUEST_USERS, description=suggested(CONF_GRID_REQUEST_USERS)): people(),
            vol.Optional(CONF_GRID_INCIDENT_USERS, description=suggested(CONF_GRID_INCIDENT_USERS)): people(),
        }
    )


class MinutesTimeConfig(TimeSelectorConfig, total=False):
    """A time selector's config with the frontend's ``no_second`` (hours and minutes only)."""

    no_second: bool


class MinutesTimeSelector(TimeSelector):
    """HA's time selector, shown without seconds: it sends ``HH:MM`` (``HH:MM:SS`` is accepted too)."""

    CONFIG_SCHEMA = make_selector_config_schema({vol.Optional("no_second"): bool})

    def __init__(self) -> None:
        """Take no config: the picker always hides the seconds."""
        super().__init__(MinutesTimeConfig(no_second=True))


class LooseNumberSelector(NumberSelector):
    """A number box whose limits only guide the frontend: a value outside them is left to the flow's own check.

    The flow then names the field and its limit in a translated error, instead of the selector's own English text.
    """

    def __call__(self, data: Any) -> float:
        """Return ``data`` as a number; raises ``vol.Invalid`` for a value that is not one."""
        return float(vol.Coerce(float)(data))


def appliance_number(minimum: float, maximum: float, step: float | Literal["any"], unit: str) -> LooseNumberSelector:
    """Return a number box from ``minimum`` to ``maximum`` whose limits the flow checks (:class:`LooseNumberSelector`)."""
    return LooseNumberSelector(
        NumberSelectorConfig(min=minimum, max=maximum, step=step, unit_of_measurement=unit, mode=NumberSelectorMode.BOX)
    )


# The appliance form's numbers: field -> (minimum, maximum, step, unit); validate_appliance checks the limits. A
# household load draws at most 50 kW (an EV's 22 kW AC charger, a small DC one); a run lasts at most two days; an
# EV's battery takes at most 200 kWh.
APPLIANCE_LIMITS: dict[str, tuple[float, float, float, str]] = {
    CONF_POWER_KW: (0.01, 50, 0.01, "kW"),
    CONF_DURATION_MIN: (1, 2880, 1, "min"),
    CONF_ENERGY_KWH: (0.01, 200, 0.01, "kWh"),
}


def phase_selector() -> SelectSelector:
    """Return the select of a device's phase: L1, L2, L3 or three-phase."""
    return SelectSelector(
        SelectSelectorConfig(
            options=["L1", "L2", "L3", "three-phase"], mode=SelectSelectorMode.DROPDOWN, translation_key=CONF_PHASE
        )
    )


def appliance_schema(exclude: list[str]) -> vol.Schema:
    """Return the appliance form; duration for contiguous loads, energy for the others.

    The numbers have no default (a pre-filled power would be saved unnoticed); the flow asks for the missing ones.
    The switch picker leaves out the entities ``exclude`` (this integration's own and the other devices' controls).
    """
    return vol.Schema(
        {
            vol.Required(CONF_NAME): TextSelector(),
            vol.Required(CONF_KIND, default="dishwasher"): SelectSelector(
                SelectSelectorConfig(
                    options=APPLIANCE_KINDS, mode=SelectSelectorMode.DROPDOWN, translation_key=CONF_KIND
                )
            ),
            vol.Required(CONF_ENTITY_ID): ControlEntitySelector(
                EntitySelectorConfig(
                    domain=["switch", "input_boolean", "climate", "water_heater", "number", "select", "button"],
                    exclude_entities=exclude,
                )
            ),
            vol.Optional(CONF_POWER_KW): appliance_number(*APPLIANCE_LIMITS[CONF_POWER_KW]),
            vol.Optional(CONF_DURATION_MIN): appliance_number(*APPLIANCE_LIMITS[CONF_DURATION_MIN]),
            vol.Optional(CONF_ENERGY_KWH): appliance_number(*APPLIANCE_LIMITS[CONF_ENERGY_KWH]),
            vol.Required(CONF_CONTIGUOUS, default=True): BooleanSelector(),
            vol.Required(CONF_EARLIEST_START, default="00:00"): MinutesTimeSelector(),
            vol.Required(CONF_DEADLINE, default="07:00"): MinutesTimeSelector(),
            vol.Optional(CONF_PHASE): phase_selector(),
            **program_fields(exclude),
        }
    )


type Limits = Mapping[str, tuple[float, float, float | Literal["any"], str]]
"""A form's numbers: field -> (minimum, maximum, step, unit)."""


def limit_placeholders(limits: Limits) -> dict[str, str]:
    """Return the placeholders of each number's limits, e.g. ``power_kw_min`` ``0.01``, ``power_kw_max`` ``50``."""
    return {
        f"{key}_{end}": f"{limit:g}"
        for key, (minimum, maximum, _, _) in limits.items()
        for end, limit in (("min", minimum), ("max", maximum))
    }


def outside_limits(data: Mapping[str, Any], limits: Limits, keys: tuple[str, ...]) -> list[str]:
    """Return those of ``keys`` whose value in ``data`` is missing, not a number or outside its ``limits``."""
    outside = []
    for key in keys:
        minimum, maximum, _, _ = limits[key]
        try:
            value = float(data[key])
        except KeyError, TypeError, ValueError:
            outside.append(key)
            continue
        if not minimum <= value <= maximum:  # NaN too
            outside.append(key)
    return outside


def schema_refuses(schema: vol.Schema, data: Mapping[str, Any], keys: tuple[str, ...]) -> list[str]:
    """Return those of ``keys`` whose value in ``data`` the dict ``schema`` refuses (a missing one counts as refused)."""
    validators = {str(marker): validator for marker, validator in schema.schema.items()}
    refused = []
    for key in keys:
        try:
            vol.Schema(validators[key])(data.get(key))
        except vol.Invalid:
            refused.append(key)
    return refused
