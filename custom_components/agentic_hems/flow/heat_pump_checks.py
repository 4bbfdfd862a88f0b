"""The heat pump forms' checks: a stored heat pump as the forms show it, and each step's errors and data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
    CONF_ROOM_TEMP_C,
    CONF_SOLAR_ENTITY,
    CONF_SOLAR_GAIN,
    CONF_TEMPERATURE_ENTITY,
    CONF_THERMAL_MODEL,
    CONF_UA_W_PER_K,
    CONF_WEATHER_ENTITY,
    COP_POINTS,
    MODEL_FIT,
    STORE_HOT_WATER,
    STORE_SPACE,
)
from ..planning.heat_config import HEAT_PUMP_SCHEMA, cop_points_error
from .schemas import outside_limits, schema_refuses
from .sg_ready import flat

# The form's numbers: field -> (minimum, maximum, step, unit); the validators check the powers, run times, draw, UA
# and C against these limits, the rest with HEAT_PUMP_SCHEMA. A home's heat pump draws at most 50 kW; run times are
# whole 15-minute slots up to a day; a tank's daily draw stays below 100 kWh; UA spans a tank (about 1-3 W/K) to a
# large house (about 1000 W/K), C a tank (about 0.2 kWh/K) to a large house (about 100 kWh/K).
HEAT_NUMBERS: dict[str, tuple[float, float, float, str]] = {
    CONF_HEAT_MIN_KW: (0, 50, 0.01, "kW"),
    CONF_HEAT_MAX_KW: (0.1, 50, 0.01, "kW"),
    CONF_MIN_RUN_MIN: (0, 1440, 15, "min"),
    CONF_MIN_OFF_MIN: (0, 1440, 15, "min"),
    CONF_DAY_LOW_C: (-30, 95, 0.5, "°C"),
    CONF_DAY_HIGH_C: (-30, 95, 0.5, "°C"),
    CONF_NIGHT_LOW_C: (-30, 95, 0.5, "°C"),
    CONF_NIGHT_HIGH_C: (-30, 95, 0.5, "°C"),
    CONF_ROOM_TEMP_C: (-30, 95, 0.5, "°C"),
    CONF_HOT_WATER_KWH: (0, 100, 0.1, "kWh"),
    CONF_CARNOT_FRACTION: (0.01, 1, 0.01, ""),
    CONF_FLOW_TEMP_C: (20, 90, 1, "°C"),
    CONF_UA_W_PER_K: (0.5, 5000, 0.1, "W/K"),
    CONF_CAPACITY_KWH_PER_K: (0.05, 500, 0.01, "kWh/K"),
    CONF_GAINS_KW: (-100, 100, 0.01, "kW"),
    CONF_SOLAR_GAIN: (0, 10, 0.01, ""),
    "cop_outdoor_1": (-40, 50, 1, "°C"),
    "cop_outdoor_2": (-40, 50, 1, "°C"),
    "cop_outdoor_3": (-40, 50, 1, "°C"),
    "cop_1": (0.1, 20, 0.01, ""),
    "cop_2": (0.1, 20, 0.01, ""),
    "cop_3": (0.1, 20, 0.01, ""),
}

COP_FIELDS = (("cop_outdoor_1", "cop_1"), ("cop_outdoor_2", "cop_2"), ("cop_outdoor_3", "cop_3"))
HOUSE_KEYS = (CONF_GAINS_KW, CONF_SOLAR_GAIN, CONF_SOLAR_ENTITY)  # a house's own model fields
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


def refused(data: Mapping[str, Any], keys: tuple[str, ...]) -> list[str]:
    """Return those of ``keys`` whose value in ``data`` HEAT_PUMP_SCHEMA refuses (a missing one counts as refused)."""
    return schema_refuses(HEAT_PUMP_SCHEMA, data, keys)


def validate_store(user_input: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """Return the first step's errors (field -> translation key) and its data: the name and the store.

    The name is trimmed and must not be empty (:func:`.devices.device_errors` checks it against the other
    devices'); the store is space heating or a hot-water tank (the form's selector offers no other; space heating
    when missing).
    """
    data = {
        CONF_BATTERY_NAME: str(user_input.get(CONF_BATTERY_NAME, "")).strip(),
        CONF_HEAT_STORE: user_input.get(CONF_HEAT_STORE) or STORE_SPACE,
    }
    errors: dict[str, str] = {}
    if not data[CONF_BATTERY_NAME]:
        errors[CONF_BATTERY_NAME] = "name_empty"
    return errors, data


def validate_device(user_input: Mapping[str, Any], store: str) -> tuple[dict[str, str], dict[str, Any]]:
    """Return the device step's errors (field -> translation key) and its data for ``store``.

    The powers, run times (whole 15-minute slots) and a tank's draw must lie within :data:`HEAT_NUMBERS`, the other
    numbers, entities and times pass HEAT_PUMP_SCHEMA; min_kw must not exceed max_kw nor a band's low edge its high
    edge. A hot-water tank's room temperature, daily draw and draw hours (``store`` hot water) are checked
    too; space heating's form has none of them (HEAT_PUMP_SCHEMA's defaults fill them in). A water heater controls
    only a hot-water tank (:func:`.devices.device_errors` checks the control entity against the other devices').
    """
    tank = store == STORE_HOT_WATER
    data = flat(user_input)
    if tank:
        data[CONF_HOT_WATER_HOURS] = sorted({int(h) for h in data.get(CONF_HOT_WATER_HOURS) or () if str(h).isdigit()})
    for key in (CONF_HEAT_POWER_ENTITY, CONF_OUTDOOR_ENTITY):
        data[key] = data.get(key) or None
    errors: dict[str, str] = {}
    for key in outside_limits(data, HEAT_NUMBERS, (CONF_HEAT_MAX_KW,)):
        errors[key] = "max_power_range"
    for key in outside_limits(data, HEAT_NUMBERS, (CONF_HEAT_MIN_KW,)):
        errors[key] = "min_power_range"
    for key in outside_limits(data, HEAT_NUMBERS, (CONF_MIN_RUN_MIN, CONF_MIN_OFF_MIN)):
        errors[key] = "run_time_slots"
    for key in (CONF_MIN_RUN_MIN, CONF_MIN_OFF_MIN):
        if key not in errors and float(data[key]) % 15:
            errors[key] = "run_time_slots"
    for key in outside_limits(data, HEAT_NUMBERS, (CONF_HOT_WATER_KWH,) if tank else ()):
        errors[key] = "hot_water_range"
    bands = (CONF_DAY_LOW_C, CONF_DAY_HIGH_C, CONF_NIGHT_LOW_C, CONF_NIGHT_HIGH_C) + (
        (CONF_ROOM_TEMP_C,) if tank else ()
    )
    for key in refused(data, bands):
        errors[key] = "temperature_range"
    for key in refused(data, (CONF_DAY_START, CONF_DAY_END)):
        errors[key] = "time_invalid"
    entities = (
        CONF_CONTROL_ENTITY,
        CONF_TEMPERATURE_ENTITY,
        CONF_WEATHER_ENTITY,
        CONF_HEAT_POWER_ENTITY,
        CONF_OUTDOOR_ENTITY,
    )
    for key in refused(data, entities):
        errors[key] = "entity_invalid"
    if CONF_CONTROL_ENTITY not in errors and not tank and data[CONF_CONTROL_ENTITY].startswith("water_heater."):
        errors[CONF_CONTROL_ENTITY] = "water_heater_needs_tank"
    if not errors.keys() & {CONF_HEAT_MIN_KW, CONF_HEAT_MAX_KW} and float(data[CONF_HEAT_MIN_KW]) > float(
        data[CONF_HEAT_MAX_KW]
    ):
        errors[CONF_HEAT_MAX_KW] = "max_below_min"
    for low, high in ((CONF_DAY_LOW_C, CONF_DAY_HIGH_C), (CONF_NIGHT_LOW_C, CONF_NIGHT_HIGH_C)):
        if not errors.keys() & {low, high} and float(data[low]) > float(data[high]):
            errors[high] = "band_inverted"
    return errors, data


def cop_points(user_input: Mapping[str, Any]) -> list[list[float]]:
    """Return the rated COP points the form's fields give (a pair with an empty field is left out)."""
    points = []
    for outdoor, cop in COP_FIELDS:
        if user_input.get(outdoor) is not None and user_input.get(cop) is not None:
            points.append([float(user_input[outdoor]), float(user_input[cop])])
    return points


def validate_model(user_input: Mapping[str, Any], device: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """Return the model step's errors and the heat pump's whole data (``device`` plus the model, validated).

    Rated points need two or three pairs at different outdoor temperatures; a thermal model by hand needs UA and
    C within :data:`HEAT_NUMBERS`; a fit needs the heat pump's power and outdoor temperature sensors (the PV power sensor is optional). A
    house's internal gains must lie within -100 to 100 kW, its solar gain within 0 to 10; a hot-water tank's data
    leaves them out (HEAT_PUMP_SCHEMA's defaults, 0). The data is HEAT_PUMP_SCHEMA's when there is no error
    (without UA and C before a fit).
    """
    house = device.get(CONF_HEAT_STORE) != STORE_HOT_WATER
    point_fields = {key for pair in COP_FIELDS for key in pair}  # stored together as cop_points
    kept = {k for k in MODEL_KEYS if k not in point_fields and (house or k not in HOUSE_KEYS)}
    data = {**device, **{k: v for k, v in user_input.items() if k in kept}, CONF_COP_POINTS: cop_points(user_input)}
    if house:
        data[CONF_SOLAR_ENTITY] = data.get(CONF_SOLAR_ENTITY) or None
    errors: dict[str, str] = {}
    if data.get(CONF_COP_MODE) == COP_POINTS:
        if refused(data, (CONF_COP_POINTS,)) or not _cop_curve(data[CONF_COP_POINTS]):
            errors["cop_1"] = "cop_points_invalid"
    for key in refused(data, (CONF_CARNOT_FRACTION,)):
        errors[key] = "efficiency_range"
    for key in refused(data, (CONF_FLOW_TEMP_C,)):
        errors[key] = "flow_temp_range"
    for key in refused(data, (CONF_GAINS_KW,) if house else ()):
        errors[key] = "gains_range"
    for key in refused(data, (CONF_SOLAR_GAIN,) if house else ()):
        errors[key] = "solar_gain_range"
    for key in refused(data, (CONF_SOLAR_ENTITY,) if house else ()):
        errors[key] = "entity_invalid"
    if data.get(CONF_THERMAL_MODEL) == MODEL_FIT:
        if not (device.get(CONF_HEAT_POWER_ENTITY) and device.get(CONF_OUTDOOR_ENTITY)):
            errors[CONF_THERMAL_MODEL] = "fit_needs_sensors"
    else:
        errors |= model_size_errors(data)
    return errors, data


def model_size_errors(data: Mapping[str, Any]) -> dict[str, str]:
    """Return the errors of UA and C (given by hand or by a fit) outside :data:`HEAT_NUMBERS`."""
    errors: dict[str, str] = {}
    for key in outside_limits(data, HEAT_NUMBERS, (CONF_UA_W_PER_K,)):
        errors[key] = "ua_range"
    for key in outside_limits(data, HEAT_NUMBERS, (CONF_CAPACITY_KWH_PER_K,)):
        errors[key] = "heat_capacity_range"
    return errors
