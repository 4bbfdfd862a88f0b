"""The heat pump subentry flow: add or reconfigure a heat pump of the whole-home plan.

Two steps: the device (``user`` / ``reconfigure``: what it heats, how it is controlled and measured, its power
range, run times, comfort bands, a tank's hot-water draw, its phase) and its model (``model``: the COP from rated
points or a Carnot fraction, the thermal model by hand or fitted from the recorder's history). A fit shows its result
and error in the step's description and fills in UA, C and a house's internal and solar gains; submitting again
stores them.

The form's numbers only guide the frontend; the validators check them with the plan's own
:data:`..planning.home_config.HEAT_PUMP_SCHEMA` and name each bad field in a translated error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.config_entries import ConfigSubentryFlow, SubentryFlowResult
from homeassistant.helpers.selector import (
    EntitySelector,
    EntitySelectorConfig,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
)

from ..const import (
    CONF_BATTERY_NAME,
    CONF_CAPACITY_KWH_PER_K,
    CONF_CARNOT_FRACTION,
    CONF_CONTROL_ENTITY,
    CONF_COP_MODE,
    CONF_COP_POINTS,
    CONF_DAY_END,
    CONF_DAY_HIGH_C,
    CONF_DAY_LOW_C,
    CONF_DAY_START,
    CONF_FIT_RMSE_C,
    CONF_FLOW_TEMP_C,
    CONF_GAINS_KW,
    CONF_HEAT_MAX_KW,
    CONF_HEAT_MIN_KW,
    CONF_HEAT_POWER_ENTITY,
    CONF_HEAT_STORE,
    CONF_HOT_WATER_HOURS,
    CONF_HOT_WATER_KWH,
    CONF_MIN_OFF_MIN,
    CONF_MIN_RUN_MIN,
    CONF_NIGHT_HIGH_C,
    CONF_NIGHT_LOW_C,
    CONF_OUTDOOR_ENTITY,
    CONF_PHASE,
    CONF_ROOM_TEMP_C,
    CONF_SOLAR_ENTITY,
    CONF_SOLAR_GAIN,
    CONF_TEMPERATURE_ENTITY,
    CONF_THERMAL_MODEL,
    CONF_UA_W_PER_K,
    CONF_WEATHER_ENTITY,
    COP_CARNOT,
    COP_POINTS,
    MODEL_FIT,
    MODEL_MANUAL,
    STORE_HOT_WATER,
    STORE_SPACE,
    SUBENTRY_HEAT_PUMP,
)
from ..planning.heat_config import HEAT_PUMP_SCHEMA, cop_points_error
from ..planning.heat_inputs import async_fit
from ..validation import vol
from .schemas import LooseNumberSelector, MinutesTimeSelector, phase_selector

# The form's numbers: field -> (minimum, maximum, step, unit); the validators check them with HEAT_PUMP_SCHEMA.
HEAT_NUMBERS: dict[str, tuple[float, float, float, str]] = {
    CONF_HEAT_MIN_KW: (0, 1000, 0.01, "kW"),
    CONF_HEAT_MAX_KW: (0.01, 1000, 0.01, "kW"),
    CONF_MIN_RUN_MIN: (0, 1440, 1, "min"),
    CONF_MIN_OFF_MIN: (0, 1440, 1, "min"),
    CONF_DAY_LOW_C: (-30, 95, 0.5, "°C"),
    CONF_DAY_HIGH_C: (-30, 95, 0.5, "°C"),
    CONF_NIGHT_LOW_C: (-30, 95, 0.5, "°C"),
    CONF_NIGHT_HIGH_C: (-30, 95, 0.5, "°C"),
    CONF_ROOM_TEMP_C: (-30, 95, 0.5, "°C"),
    CONF_HOT_WATER_KWH: (0, 1000, 0.1, "kWh"),
    CONF_CARNOT_FRACTION: (0.01, 1, 0.01, ""),
    CONF_FLOW_TEMP_C: (20, 90, 1, "°C"),
    CONF_UA_W_PER_K: (1, 100000, 1, "W/K"),
    CONF_CAPACITY_KWH_PER_K: (0.01, 100000, 0.01, "kWh/K"),
    CONF_GAINS_KW: (-100, 100, 0.01, "kW"),
    CONF_SOLAR_GAIN: (0, 10, 0.01, ""),
    "cop_outdoor_1": (-40, 50, 1, "°C"),
    "cop_outdoor_2": (-40, 50, 1, "°C"),
    "cop_outdoor_3": (-40, 50, 1, "°C"),
    "cop_1": (0.1, 20, 0.01, ""),
    "cop_2": (0.1, 20, 0.01, ""),
    "cop_3": (0.1, 20, 0.01, ""),
}
# The rated COP points' form fields: (outdoor °C field, COP field), stored together as ``cop_points``.
COP_FIELDS = (("cop_outdoor_1", "cop_1"), ("cop_outdoor_2", "cop_2"), ("cop_outdoor_3", "cop_3"))
MODEL_KEYS = (
    CONF_COP_MODE,
    CONF_CARNOT_FRACTION,
    CONF_FLOW_TEMP_C,
    CONF_THERMAL_MODEL,
    CONF_UA_W_PER_K,
    CONF_CAPACITY_KWH_PER_K,
    CONF_GAINS_KW,
    CONF_SOLAR_GAIN,
    CONF_SOLAR_ENTITY,
    *(key for pair in COP_FIELDS for key in pair),
)


def _number(key: str) -> LooseNumberSelector:
    """Return the number box of ``key`` (limits and unit of :data:`HEAT_NUMBERS`)."""
    minimum, maximum, step, unit = HEAT_NUMBERS[key]
    config = NumberSelectorConfig(min=minimum, max=maximum, step=step, mode=NumberSelectorMode.BOX)
    if unit:
        config["unit_of_measurement"] = unit
    return LooseNumberSelector(config)


def device_schema() -> vol.Schema:
    """Return the first step: name, store, entities, power range, run times, comfort bands, hot water, phase.

    The maximum power is optional to the frontend, which would otherwise pre-fill its minimum; the flow asks for it.
    """
    hours = [SelectOptionDict(value=str(h), label=f"{h:02d}:00") for h in range(24)]
    return vol.Schema(
        {
            vol.Required(CONF_BATTERY_NAME): TextSelector(),
            vol.Required(CONF_HEAT_STORE, default=STORE_SPACE): SelectSelector(
                SelectSelectorConfig(options=[STORE_SPACE, STORE_HOT_WATER], translation_key="heat_store")
            ),
            vol.Required(CONF_CONTROL_ENTITY): EntitySelector(EntitySelectorConfig(domain=["climate", "switch"])),
            vol.Required(CONF_TEMPERATURE_ENTITY): EntitySelector(
                EntitySelectorConfig(domain="sensor", device_class="temperature")
            ),
            vol.Required(CONF_WEATHER_ENTITY): EntitySelector(EntitySelectorConfig(domain="weather")),
            vol.Optional(CONF_HEAT_POWER_ENTITY): EntitySelector(
                EntitySelectorConfig(domain="sensor", device_class="power")
            ),
            vol.Optional(CONF_OUTDOOR_ENTITY): EntitySelector(
                EntitySelectorConfig(domain="sensor", device_class="temperature")
            ),
            vol.Required(CONF_HEAT_MIN_KW, default=0.0): _number(CONF_HEAT_MIN_KW),
            vol.Optional(CONF_HEAT_MAX_KW): _number(CONF_HEAT_MAX_KW),
            vol.Required(CONF_MIN_RUN_MIN, default=0): _number(CONF_MIN_RUN_MIN),
            vol.Required(CONF_MIN_OFF_MIN, default=0): _number(CONF_MIN_OFF_MIN),
            vol.Required(CONF_DAY_START, default="06:00:00"): MinutesTimeSelector(),
            vol.Required(CONF_DAY_END, default="22:00:00"): MinutesTimeSelector(),
            vol.Required(CONF_DAY_LOW_C, default=20.0): _number(CONF_DAY_LOW_C),
            vol.Required(CONF_DAY_HIGH_C, default=22.0): _number(CONF_DAY_HIGH_C),
            vol.Required(CONF_NIGHT_LOW_C, default=17.0): _number(CONF_NIGHT_LOW_C),
            vol.Required(CONF_NIGHT_HIGH_C, default=22.0): _number(CONF_NIGHT_HIGH_C),
            vol.Required(CONF_ROOM_TEMP_C, default=20.0): _number(CONF_ROOM_TEMP_C),
            vol.Required(CONF_HOT_WATER_KWH, default=0.0): _number(CONF_HOT_WATER_KWH),
            vol.Optional(CONF_HOT_WATER_HOURS): SelectSelector(
                SelectSelectorConfig(options=hours, multiple=True, mode=SelectSelectorMode.DROPDOWN)
            ),
            vol.Optional(CONF_PHASE, description={"suggested_value": "three-phase"}): phase_selector(),
        }
    )


def model_schema() -> vol.Schema:
    """Return the second step: the COP (rated points or a Carnot fraction) and the thermal model (fit or by hand).

    The thermal model: UA, C, a house's internal gains and solar gain, and the PV power sensor a fit reads.
    """
    return vol.Schema(
        {
            vol.Required(CONF_COP_MODE, default=COP_POINTS): SelectSelector(
                SelectSelectorConfig(options=[COP_POINTS, COP_CARNOT], translation_key="cop_mode")
            ),
            vol.Optional("cop_outdoor_1"): _number("cop_outdoor_1"),
            vol.Optional("cop_1"): _number("cop_1"),
            vol.Optional("cop_outdoor_2"): _number("cop_outdoor_2"),
            vol.Optional("cop_2"): _number("cop_2"),
            vol.Optional("cop_outdoor_3"): _number("cop_outdoor_3"),
            vol.Optional("cop_3"): _number("cop_3"),
            vol.Required(CONF_CARNOT_FRACTION, default=0.45): _number(CONF_CARNOT_FRACTION),
            vol.Required(CONF_FLOW_TEMP_C, default=35.0): _number(CONF_FLOW_TEMP_C),
            vol.Required(CONF_THERMAL_MODEL, default=MODEL_MANUAL): SelectSelector(
                SelectSelectorConfig(options=[MODEL_MANUAL, MODEL_FIT], translation_key="thermal_model")
            ),
            vol.Optional(CONF_UA_W_PER_K): _number(CONF_UA_W_PER_K),
            vol.Optional(CONF_CAPACITY_KWH_PER_K): _number(CONF_CAPACITY_KWH_PER_K),
            vol.Optional(CONF_GAINS_KW, default=0.0): _number(CONF_GAINS_KW),
            vol.Optional(CONF_SOLAR_GAIN, default=0.0): _number(CONF_SOLAR_GAIN),
            vol.Optional(CONF_SOLAR_ENTITY): EntitySelector(
                EntitySelectorConfig(domain="sensor", device_class="power")
            ),
        }
    )


def form_values(data: Mapping[str, Any]) -> dict[str, Any]:
    """Return a stored heat pump's data as the forms show it (COP points as fields, hours as strings).

    Stored data that is not of the stored shape (a repair issue points here) leaves those fields empty.
    """
    values = {k: v for k, v in data.items() if k not in (CONF_COP_POINTS, CONF_HOT_WATER_HOURS, CONF_FIT_RMSE_C)}
    stored = data.get(CONF_COP_POINTS)
    points = [p for p in stored if isinstance(p, (list, tuple)) and len(p) == 2] if isinstance(stored, list) else []
    for (outdoor, cop), point in zip(COP_FIELDS, points, strict=False):
        values[outdoor], values[cop] = point[0], point[1]
    hours = data.get(CONF_HOT_WATER_HOURS)
    values[CONF_HOT_WATER_HOURS] = [str(h) for h in hours] if isinstance(hours, list) else []
    return values


def _cop_curve(points: Any) -> bool:
    """Return True when ``points`` make a COP curve the plan can use (:func:`.heat_config.cop_points_error`)."""
    try:
        cop_points_error(tuple((float(t), float(c)) for t, c in points))
    except TypeError, ValueError:
        return False
    return True


def _refused(data: Mapping[str, Any], keys: tuple[str, ...]) -> list[str]:
    """Return those of ``keys`` whose value in ``data`` HEAT_PUMP_SCHEMA refuses (a missing one counts as refused)."""
    validators = {str(marker): validator for marker, validator in HEAT_PUMP_SCHEMA.schema.items()}
    refused = []
    for key in keys:
        try:
            vol.Schema(validators[key])(data.get(key))
        except vol.Invalid:
            refused.append(key)
    return refused


def validate_device(user_input: Mapping[str, Any], other_names: set[str]) -> tuple[dict[str, str], dict[str, Any]]:
    """Return the first step's errors (field -> translation key) and its data.

    The name is trimmed and must be new among ``other_names`` (case-insensitive); the numbers, entities and times
    must pass HEAT_PUMP_SCHEMA; min_kw must not exceed max_kw nor a band's low edge its high edge.
    """
    data = dict(user_input)
    data[CONF_BATTERY_NAME] = str(data.get(CONF_BATTERY_NAME, "")).strip()
    data[CONF_HOT_WATER_HOURS] = sorted({int(h) for h in data.get(CONF_HOT_WATER_HOURS) or () if str(h).isdigit()})
    for key in (CONF_HEAT_POWER_ENTITY, CONF_OUTDOOR_ENTITY):
        data[key] = data.get(key) or None
    errors: dict[str, str] = {}
    for key in _refused(data, (CONF_HEAT_MAX_KW,)):
        errors[key] = "must_be_positive"
    for key in _refused(data, (CONF_HEAT_MIN_KW, CONF_MIN_RUN_MIN, CONF_MIN_OFF_MIN, CONF_HOT_WATER_KWH)):
        errors[key] = "must_not_be_negative"
    bands = (CONF_DAY_LOW_C, CONF_DAY_HIGH_C, CONF_NIGHT_LOW_C, CONF_NIGHT_HIGH_C, CONF_ROOM_TEMP_C)
    for key in _refused(data, bands):
        errors[key] = "temperature_range"
    for key in _refused(data, (CONF_DAY_START, CONF_DAY_END)):
        errors[key] = "time_invalid"
    entities = (
        CONF_CONTROL_ENTITY,
        CONF_TEMPERATURE_ENTITY,
        CONF_WEATHER_ENTITY,
        CONF_HEAT_POWER_ENTITY,
        CONF_OUTDOOR_ENTITY,
    )
    for key in _refused(data, entities):
        errors[key] = "entity_invalid"
    if not errors.keys() & {CONF_HEAT_MIN_KW, CONF_HEAT_MAX_KW} and float(data[CONF_HEAT_MIN_KW]) > float(
        data[CONF_HEAT_MAX_KW]
    ):
        errors[CONF_HEAT_MAX_KW] = "max_below_min"
    for low, high in ((CONF_DAY_LOW_C, CONF_DAY_HIGH_C), (CONF_NIGHT_LOW_C, CONF_NIGHT_HIGH_C)):
        if not errors.keys() & {low, high} and float(data[low]) > float(data[high]):
            errors[high] = "band_inverted"
    if not data[CONF_BATTERY_NAME]:
        errors[CONF_BATTERY_NAME] = "name_empty"
    elif data[CONF_BATTERY_NAME].casefold() in {name.casefold() for name in other_names}:
        errors[CONF_BATTERY_NAME] = "name_exists"
    return errors, data


def cop_points(user_input: Mapping[str, Any]) -> list[list[float]]:
    """Return the rated COP points the form's fields give (a pair with an empty field is left out)."""
    points = []
    for outdoor, cop in COP_FIELDS:
        if user_input.get(outdoor) is not None and user_input.get(cop) is not None:
            points.append([float(user_input[outdoor]), float(user_input[cop])])
    return points


def validate_model(user_input: Mapping[str, Any], device: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """Return the second step's errors and the heat pump's whole data (``device`` plus the model, validated).

    Rated points need two or three pairs at different outdoor temperatures; a thermal model by hand needs UA and
    C; a fit needs the heat pump's power and outdoor temperature sensors (the PV power sensor is optional). The
    internal gains must lie within -100 to 100 kW, the solar gain within 0 to 10. The data is HEAT_PUMP_SCHEMA's
    when there is no error (without UA and C before a fit).
    """
    point_fields = {key for pair in COP_FIELDS for key in pair}  # stored together as cop_points
    model = {k: v for k, v in user_input.items() if k in MODEL_KEYS and k not in point_fields}
    data = {**device, **model, CONF_COP_POINTS: cop_points(user_input)}
    data[CONF_SOLAR_ENTITY] = data.get(CONF_SOLAR_ENTITY) or None
    errors: dict[str, str] = {}
    if data.get(CONF_COP_MODE) == COP_POINTS:
        if _refused(data, (CONF_COP_POINTS,)) or not _cop_curve(data[CONF_COP_POINTS]):
            errors["cop_1"] = "cop_points_invalid"
    for key in _refused(data, (CONF_CARNOT_FRACTION,)):
        errors[key] = "efficiency_range"
    for key in _refused(data, (CONF_FLOW_TEMP_C,)):
        errors[key] = "flow_temp_range"
    for key in _refused(data, (CONF_GAINS_KW,)):
        errors[key] = "gains_range"
    for key in _refused(data, (CONF_SOLAR_GAIN,)):
        errors[key] = "solar_gain_range"
    for key in _refused(data, (CONF_SOLAR_ENTITY,)):
        errors[key] = "entity_invalid"
    if data.get(CONF_THERMAL_MODEL) == MODEL_FIT:
        if not (device.get(CONF_HEAT_POWER_ENTITY) and device.get(CONF_OUTDOOR_ENTITY)):
            errors[CONF_THERMAL_MODEL] = "fit_needs_sensors"
    else:
        for key in _refused(data, (CONF_UA_W_PER_K, CONF_CAPACITY_KWH_PER_K)):
            errors[key] = "must_be_positive"
    return errors, data


class HeatPumpSubentryFlow(ConfigSubentryFlow):
    """Add or reconfigure a heat pump of the whole-home plan."""

    def __init__(self) -> None:
        """Start with no device step and no fit."""
        super().__init__()
        self._device: dict[str, Any] = {}
        self._fit: dict[str, float] | None = None
        self._fit_text = ""

    def _other_names(self, own_id: str | None = None) -> set[str]:
        """Return the names of the entry's other heat pumps."""
        return {
            sub.title
            for sid, sub in self._get_entry().subentries.items()
            if sub.subentry_type == SUBENTRY_HEAT_PUMP and sid != own_id
        }

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Add a heat pump: the device step."""
        errors: dict[str, str] = {}
        if user_input is not None:
            errors, self._device = validate_device(user_input, self._other_names())
            if not errors:
                return await self.async_step_model()
        return self.async_show_form(
            step_id="user",
            data_schema=self.add_suggested_values_to_schema(device_schema(), user_input or {}),
            errors=errors,
        )

    async def async_step_reconfigure(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Change a heat pump: the device step."""
        subentry = self._get_reconfigure_subentry()
        errors: dict[str, str] = {}
        if user_input is not None:
            errors, self._device = validate_device(user_input, self._other_names(subentry.subentry_id))
            if not errors:
                return await self.async_step_model()
        return self.async_show_form(
            step_id="reconfigure",
            data_schema=self.add_suggested_values_to_schema(device_schema(), user_input or form_values(subentry.data)),
            errors=errors,
        )

    async def async_step_model(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Ask for the COP and the thermal model; a fit fills in UA and C and shows its result before they are stored."""
        errors: dict[str, str] = {}
        suggested: dict[str, Any] = dict(user_input or {})
        if user_input is None and self.source == "reconfigure":
            suggested = form_values(self._get_reconfigure_subentry().data)
        if user_input is not None:
            errors, data = validate_model(user_input, self._device)
            if not errors and data[CONF_THERMAL_MODEL] == MODEL_FIT and self._fit is None:
                self._fit, self._fit_text = await async_fit(self.hass, data)
                if self._fit is None:
                    errors[CONF_THERMAL_MODEL] = "fit_failed"
            elif not errors and self._fit is not None and data[CONF_THERMAL_MODEL] == MODEL_FIT:  # shown: store it
                for key in _refused(data, (CONF_UA_W_PER_K, CONF_CAPACITY_KWH_PER_K)):
                    errors[key] = "must_be_positive"
                if not errors:
                    return self._finish(HEAT_PUMP_SCHEMA({**data, CONF_FIT_RMSE_C: self._fit["rmse_c"]}))
            elif not errors:
                return self._finish(HEAT_PUMP_SCHEMA({**data, CONF_FIT_RMSE_C: None}))
            if self._fit is not None and not errors:  # a fit just ran: show it with UA, C and the gains filled in
                fitted = (CONF_UA_W_PER_K, CONF_CAPACITY_KWH_PER_K, CONF_GAINS_KW, CONF_SOLAR_GAIN)
                suggested |= {k: self._fit[k] for k in fitted}
        return self.async_show_form(
            step_id="model",
            data_schema=self.add_suggested_values_to_schema(model_schema(), suggested),
            errors=errors,
            description_placeholders={"fit_result": self._fit_text},
        )

    def _finish(self, data: dict[str, Any]) -> SubentryFlowResult:
        """Store the heat pump: a new subentry, or the reconfigured one."""
        if self.source == "reconfigure":
            return self._finish_reconfigure(data)
        return self.async_create_entry(title=data[CONF_BATTERY_NAME], data=data)

    def _finish_reconfigure(self, data: dict[str, Any]) -> SubentryFlowResult:
        """Store the reconfigured heat pump and end the flow (reason ``reconfigure_successful``)."""
        return self.async_update_and_abort(
            self._get_entry(), self._get_reconfigure_subentry(), title=data[CONF_BATTERY_NAME], data=data
        )
