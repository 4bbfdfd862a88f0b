"""The battery subentry flow: add or reconfigure a home battery of the whole-home plan.

The form's numbers only guide the frontend; :func:`validate_battery` checks them with the plan's own
:data:`..planning.home_config.BATTERY_SCHEMA` and names each bad field in a translated error.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from homeassistant.config_entries import ConfigSubentryFlow, SubentryFlowResult
from homeassistant.core import HomeAssistant
from homeassistant.helpers.selector import EntitySelectorConfig, NumberSelectorConfig, NumberSelectorMode, TextSelector

from ..const import (
    CONF_BATTERY_NAME,
    CONF_CAPACITY_KWH,
    CONF_CHARGE_EFFICIENCY,
    CONF_CHARGE_KW,
    CONF_CONTROL_ENTITY,
    CONF_CONTROL_MODES,
    CONF_DISCHARGE_EFFICIENCY,
    CONF_DISCHARGE_KW,
    CONF_PHASE,
    CONF_POWER_SETPOINT,
    CONF_RESERVE_PCT,
    CONF_SOC_ENTITY,
    CONF_SOC_MAX_PCT,
    CONF_SOC_MIN_PCT,
    CONF_WEAR_COST,
)
from ..planning.home_config import BATTERY_SCHEMA, MODES
from ..validation import vol
from .devices import (
    ControlEntitySelector,
    LooseEntitySelector,
    device_errors,
    soc_errors,
    taken_entities,
    taken_soc_sensors,
)
from .schemas import LooseNumberSelector, limit_placeholders, outside_limits, phase_selector, schema_refuses

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry

# The form's numbers: field -> (minimum, maximum, step, unit), the ranges of a home battery (a vehicle's battery
# used from home included: up to 250 kWh, an inverter of up to 50 kW, a round trip above 50 %, wear below 1 per
# kWh); validate_battery checks them, then BATTERY_SCHEMA.
BATTERY_NUMBERS: dict[str, tuple[float, float, float, str]] = {
    CONF_CAPACITY_KWH: (0.5, 250, 0.1, "kWh"),
    CONF_CHARGE_KW: (0.1, 50, 0.1, "kW"),
    CONF_DISCHARGE_KW: (0.1, 50, 0.1, "kW"),
    CONF_SOC_MIN_PCT: (0, 100, 1, "%"),
    CONF_SOC_MAX_PCT: (0, 100, 1, "%"),
    CONF_RESERVE_PCT: (0, 100, 1, "%"),
    CONF_CHARGE_EFFICIENCY: (0.5, 1, 0.01, ""),
    CONF_DISCHARGE_EFFICIENCY: (0.5, 1, 0.01, ""),
    CONF_WEAR_COST: (0, 1, 0.001, "EUR/kWh"),
}
# The select's option name per mode: three text fields, stored together as ``control_modes``.
MODE_FIELDS = {"charge_option": "charge", "discharge_option": "discharge", "idle_option": "idle"}


def _number(key: str) -> LooseNumberSelector:
    """Return the number box of ``key`` (limits and unit of :data:`BATTERY_NUMBERS`)."""
    minimum, maximum, step, unit = BATTERY_NUMBERS[key]
    config = NumberSelectorConfig(min=minimum, max=maximum, step=step, mode=NumberSelectorMode.BOX)
    if unit:
        config["unit_of_measurement"] = unit
    return LooseNumberSelector(config)


def battery_schema(exclude: list[str], exclude_soc: list[str]) -> vol.Schema:
    """Return the battery form: name, size and power, limits, efficiencies, wear, SoC sensor and control entity.

    Capacity and power are optional to the frontend, which would otherwise pre-fill their minimum (a size saved
    unnoticed); the flow asks for them. The other numbers start at BATTERY_SCHEMA's defaults. The SoC sensor is a
    battery sensor or one in %; the control entity is a number/input_number (kW) or a select, which needs its option
    name per mode and may have a power setpoint (a number/input_number in W or kW, set after the mode); the pickers
    leave out the entities ``exclude`` (this integration's own and the other devices'
    controls), the SoC sensor's picker those of ``exclude_soc`` (this integration's own and the other batteries'
    sensors).
    """
    return vol.Schema(
        {
            vol.Required(CONF_BATTERY_NAME): TextSelector(),
            vol.Optional(CONF_CAPACITY_KWH): _number(CONF_CAPACITY_KWH),
            vol.Optional(CONF_CHARGE_KW): _number(CONF_CHARGE_KW),
            vol.Optional(CONF_DISCHARGE_KW): _number(CONF_DISCHARGE_KW),
            vol.Required(CONF_SOC_MIN_PCT, default=0.0): _number(CONF_SOC_MIN_PCT),
            vol.Required(CONF_SOC_MAX_PCT, default=100.0): _number(CONF_SOC_MAX_PCT),
            vol.Required(CONF_RESERVE_PCT, default=0.0): _number(CONF_RESERVE_PCT),
            vol.Required(CONF_CHARGE_EFFICIENCY, default=0.95): _number(CONF_CHARGE_EFFICIENCY),
            vol.Required(CONF_DISCHARGE_EFFICIENCY, default=0.95): _number(CONF_DISCHARGE_EFFICIENCY),
            vol.Required(CONF_WEAR_COST, default=0.0): _number(CONF_WEAR_COST),
            vol.Required(CONF_SOC_ENTITY): ControlEntitySelector(
                EntitySelectorConfig(
                    filter=[
                        {"domain": "sensor", "device_class": "battery"},
                        {"domain": "sensor", "unit_of_measurement": "%"},
                    ],
                    exclude_entities=exclude_soc,
                )
            ),
            vol.Optional(CONF_CONTROL_ENTITY): ControlEntitySelector(
                EntitySelectorConfig(
                    domain=["number", "input_number", "select", "input_select"], exclude_entities=exclude
                )
            ),
            vol.Optional("charge_option"): TextSelector(),
            vol.Optional("discharge_option"): TextSelector(),
            vol.Optional("idle_option"): TextSelector(),
            vol.Optional(CONF_POWER_SETPOINT): LooseEntitySelector(
                EntitySelectorConfig(domain=["number", "input_number"], exclude_entities=exclude)
            ),
            vol.Optional(CONF_PHASE, description={"suggested_value": "three-phase"}): phase_selector(),
        }
    )


def form_values(data: Mapping[str, Any]) -> dict[str, Any]:
    """Return a stored battery's data as the form shows it (``control_modes`` as the three option fields)."""
    modes = data.get(CONF_CONTROL_MODES) or {}
    values = {k: v for k, v in data.items() if k != CONF_CONTROL_MODES}
    return values | {key: modes[mode] for key, mode in MODE_FIELDS.items() if modes.get(mode)}


def _outside(data: Mapping[str, Any], keys: tuple[str, ...]) -> list[str]:
    """Return those of ``keys`` whose value in ``data`` is missing, not a number or outside :data:`BATTERY_NUMBERS`."""
    return outside_limits(data, BATTERY_NUMBERS, keys)


def _refused(data: Mapping[str, Any], keys: tuple[str, ...]) -> list[str]:
    """Return those of ``keys`` whose value in ``data`` BATTERY_SCHEMA refuses (a missing one counts as refused)."""
    return schema_refuses(BATTERY_SCHEMA, data, keys)


def _number_errors(data: Mapping[str, Any]) -> dict[str, str]:
    """Return the errors of the numbers outside :data:`BATTERY_NUMBERS` and of the entities BATTERY_SCHEMA refuses.

    Then soc_min > soc_max, reserve > max.
    """
    errors: dict[str, str] = {}
    for key in _outside(data, (CONF_CAPACITY_KWH,)):
        errors[key] = "capacity_range"
    for key in _outside(data, (CONF_CHARGE_KW, CONF_DISCHARGE_KW)):
        errors[key] = "power_range"
    for key in _outside(data, (CONF_SOC_MIN_PCT, CONF_SOC_MAX_PCT, CONF_RESERVE_PCT)):
        errors[key] = "percent_range"
    for key in _outside(data, (CONF_CHARGE_EFFICIENCY, CONF_DISCHARGE_EFFICIENCY)):
        errors[key] = "efficiency_range"
    for key in _outside(data, (CONF_WEAR_COST,)):
        errors[key] = "wear_cost_range"
    setpoint = (CONF_POWER_SETPOINT,) if data.get(CONF_POWER_SETPOINT) else ()
    for key in _refused(data, (CONF_SOC_ENTITY, CONF_CONTROL_ENTITY, *setpoint)):
        errors[key] = "entity_invalid"
    if not errors.keys() & {CONF_SOC_MIN_PCT, CONF_SOC_MAX_PCT, CONF_RESERVE_PCT}:
        if float(data[CONF_SOC_MIN_PCT]) > float(data[CONF_SOC_MAX_PCT]):
            errors[CONF_SOC_MAX_PCT] = "soc_max_below_min"
        elif float(data[CONF_RESERVE_PCT]) > float(data[CONF_SOC_MAX_PCT]):
            errors[CONF_RESERVE_PCT] = "reserve_above_max"
    return errors


def validate_battery(user_input: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """Return the form errors (field -> translation key) and the data to store.

    The name is trimmed and must not be empty (:func:`.devices.device_errors` checks it against the other
    devices'); each number must pass
    BATTERY_SCHEMA; soc_min_pct must not exceed soc_max_pct nor reserve_pct soc_max_pct; a select needs the
    option names of all three modes, and a power setpoint needs a select (``power_setpoint_needs_select``). The data
    holds ``control_modes`` (only for a select) instead of the option fields, and a power setpoint only when given.
    """
    data = {k: v for k, v in user_input.items() if k not in MODE_FIELDS and (k != CONF_POWER_SETPOINT or v)}
    data[CONF_BATTERY_NAME] = str(data.get(CONF_BATTERY_NAME, "")).strip()
    is_select = str(data.get(CONF_CONTROL_ENTITY) or "").startswith(("select.", "input_select."))
    modes = {mode: str(user_input.get(key) or "").strip() for key, mode in MODE_FIELDS.items()}
    data[CONF_CONTROL_MODES] = {mode: name for mode, name in modes.items() if name} if is_select else {}
    errors = _number_errors(data)
    if not data[CONF_BATTERY_NAME]:
        errors[CONF_BATTERY_NAME] = "name_empty"
    if is_select and len(data[CONF_CONTROL_MODES]) < len(MODES):
        errors[CONF_CONTROL_ENTITY] = "select_needs_modes"
    if data.get(CONF_POWER_SETPOINT) and not is_select:
        errors[CONF_POWER_SETPOINT] = "power_setpoint_needs_select"
    return errors, data if errors else BATTERY_SCHEMA(data)


_KW_PER_UNIT = {None: 1.0, "": 1.0, "W": 1e-3, "kW": 1.0, "MW": 1e3}  # a power setpoint's unit in kW (none: kW)


def entity_errors(hass: HomeAssistant, data: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """Return a select battery's entity errors against their states, and the placeholders its errors name.

    A select that exists must offer each named option (``battery_option_unknown`` on the option's field; its options
    are ``select_options``). With a power setpoint both entities must exist (``battery_entity_missing``), the setpoint
    be in W or kW (``power_setpoint_unit``) and reach the battery's powers (``power_setpoint_range``; what the plan
    would be clipped to is ``power_limit_kw``): its ``max`` for charging and, when its ``min`` is below 0 (signed),
    ``-min`` for discharging, else its ``max`` for both.
    """
    errors: dict[str, str] = {}
    placeholders = {"select_options": "", "power_limit_kw": ""}
    select, power = str(data.get(CONF_CONTROL_ENTITY) or ""), data.get(CONF_POWER_SETPOINT)
    if not select.startswith(("select.", "input_select.")):
        return errors, placeholders
    state = hass.states.get(select)
    options = state.attributes.get("options") if state else None
    if state is None and power:
        errors[CONF_CONTROL_ENTITY] = "battery_entity_missing"
    elif isinstance(options, list):
        placeholders["select_options"] = ", ".join(str(o) for o in options)
        for key, mode in MODE_FIELDS.items():
            if mode in data[CONF_CONTROL_MODES] and data[CONF_CONTROL_MODES][mode] not in options:
                errors[key] = "battery_option_unknown"
    if power:
        errors |= _power_errors(hass, data, placeholders)
    return errors, placeholders


def _power_errors(hass: HomeAssistant, data: Mapping[str, Any], placeholders: dict[str, str]) -> dict[str, str]:
    """Return the power setpoint's error (see :func:`entity_errors`), setting ``power_limit_kw`` for a short range."""
    errors: dict[str, str] = {}
    state = hass.states.get(str(data[CONF_POWER_SETPOINT]))
    attributes = state.attributes if state else {}
    low, high, unit = attributes.get("min"), attributes.get("max"), attributes.get("unit_of_measurement")
    if state is None:
        errors[CONF_POWER_SETPOINT] = "battery_entity_missing"
    elif unit not in _KW_PER_UNIT:
        errors[CONF_POWER_SETPOINT] = "power_setpoint_unit"
    elif not (isinstance(low, (int, float)) and isinstance(high, (int, float))):
        errors[CONF_POWER_SETPOINT] = "power_setpoint_range"
    else:
        charge, discharge = high * _KW_PER_UNIT[unit], (-low if low < 0 else high) * _KW_PER_UNIT[unit]
        if charge + 1e-9 < float(data[CONF_CHARGE_KW]) or discharge + 1e-9 < float(data[CONF_DISCHARGE_KW]):
            placeholders["power_limit_kw"] = f"{round(min(charge, discharge), 3):g}"
            errors[CONF_POWER_SETPOINT] = "power_setpoint_range"
    return errors


class BatterySubentryFlow(ConfigSubentryFlow):
    """Add or reconfigure a battery of the whole-home plan.

    A submitted form is checked and stored in one go (no await between): another flow cannot store a device with its
    name or control entity in between.
    """

    _placeholders: Mapping[str, str] = MappingProxyType({"select_options": "", "power_limit_kw": ""})

    def _validate(self, user_input: dict[str, Any], own_id: str | None) -> tuple[dict[str, str], dict[str, Any]]:
        """Return the form's errors and the battery's data.

        Its name, control entity and power setpoint must be no other device's, its SoC sensor no other battery's nor
        one of this integration's; a select battery's entities are checked against their states
        (:func:`entity_errors`).
        """
        errors, data = validate_battery(user_input)
        entry: AgenticHemsConfigEntry = self._get_entry()
        taken = device_errors(self.hass, entry, own_id, data, CONF_CONTROL_ENTITY)
        errors = taken | soc_errors(self.hass, entry, own_id, data.get(CONF_SOC_ENTITY)) | errors
        if not errors:
            errors, self._placeholders = entity_errors(self.hass, data)
        return errors, data

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Add a battery; its pickers leave out what other devices and this integration use."""
        entry = self._get_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            errors, data = self._validate(user_input, None)
            if not errors:
                return self.async_create_entry(title=data[CONF_BATTERY_NAME], data=data)
        return self.async_show_form(
            step_id="user",
            data_schema=self.add_suggested_values_to_schema(
                battery_schema(taken_entities(self.hass, entry, None), taken_soc_sensors(self.hass, entry, None)),
                user_input or {},
            ),
            errors=errors,
            description_placeholders={**limit_placeholders(BATTERY_NUMBERS), **self._placeholders},
        )

    async def async_step_reconfigure(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Change a battery; its pickers leave out what other devices (not this battery) and this integration use."""
        entry = self._get_entry()
        subentry = self._get_reconfigure_subentry()
        errors: dict[str, str] = {}
        if user_input is not None:
            errors, data = self._validate(user_input, subentry.subentry_id)
            if not errors:
                return self.async_update_and_abort(entry, subentry, title=data[CONF_BATTERY_NAME], data=data)
        return self.async_show_form(
            step_id="reconfigure",
            data_schema=self.add_suggested_values_to_schema(
                battery_schema(
                    taken_entities(self.hass, entry, subentry.subentry_id),
                    taken_soc_sensors(self.hass, entry, subentry.subentry_id),
                ),
                user_input or form_values(subentry.data),
            ),
            errors=errors,
            description_placeholders={**limit_placeholders(BATTERY_NUMBERS), **self._placeholders},
        )
