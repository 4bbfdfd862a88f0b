"""The options step "tariff": network fee bands, the capacity tariff and the grid connection's phases.

The band schedule is YAML text (:mod:`.yaml_field`: text that does not parse is an error naming its line, and the
saved schedule stays), checked by :func:`..prices.tariffs.parse_schedule` (its English error shown in a translated
message); the device phases are a select on the appliance and battery forms (:func:`.schemas.phase_selector`).
Every field is optional: a cleared one is dropped and the plan's default applies (no fees, no phase limits).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.helpers.selector import (
    EntitySelector,
    EntitySelectorConfig,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
)

from ..const import (
    CONF_CAPACITY_MIN_KW,
    CONF_CAPACITY_PRICE,
    CONF_HOLIDAY_CALENDAR,
    CONF_IMPORT_POWER_ENTITY,
    CONF_NOMINAL_VOLTAGE,
    CONF_PHASE_COUNT,
    CONF_PHASE_CURRENT_A,
    CONF_TARIFF_BANDS,
)
from ..prices.tariffs import parse_schedule
from ..validation import vol
from .schemas import appliance_number, limit_placeholders, outside_limits
from .yaml_field import YamlFieldError, as_yaml_text, parse_yaml_text, yaml_selector

# The step's fields in form order; each is dropped from the options when left empty.
TARIFF_FIELDS = (
    CONF_TARIFF_BANDS,
    CONF_CAPACITY_PRICE,
    CONF_CAPACITY_MIN_KW,
    CONF_IMPORT_POWER_ENTITY,
    CONF_HOLIDAY_CALENDAR,
    CONF_PHASE_COUNT,
    CONF_PHASE_CURRENT_A,
    CONF_NOMINAL_VOLTAGE,
)
# The step's numbers: field -> (minimum, maximum, step, unit), a home connection's ranges (a capacity charge of up
# to 100 per kW and month, a billed minimum of up to 50 kW, a main fuse of 6-250 A, 100-400 V phase to neutral);
# check_tariff names the range of a number outside them.
TARIFF_LIMITS: dict[str, tuple[float, float, float, str]] = {
    CONF_CAPACITY_PRICE: (0, 100, 0.01, "EUR/kW"),
    CONF_CAPACITY_MIN_KW: (0, 50, 0.1, "kW"),
    CONF_PHASE_CURRENT_A: (6, 250, 1, "A"),
    CONF_NOMINAL_VOLTAGE: (100, 400, 1, "V"),
}
# What an empty form shows: no capacity charge, a three-phase 230 V connection.
TARIFF_SUGGESTED: dict[str, Any] = {
    CONF_CAPACITY_PRICE: 0.0,
    CONF_CAPACITY_MIN_KW: 0.0,
    CONF_PHASE_COUNT: "3",
    CONF_NOMINAL_VOLTAGE: 230.0,
}


def tariff_schema(values: Mapping[str, Any]) -> vol.Schema:
    """Return the tariff step's fields, suggesting the saved ``values`` (:data:`TARIFF_SUGGESTED` where none).

    ``values[CONF_TARIFF_BANDS]`` is the saved schedule or the text just typed; the field shows it as YAML text.
    """
    values = {**TARIFF_SUGGESTED, **values, CONF_TARIFF_BANDS: as_yaml_text(values.get(CONF_TARIFF_BANDS))}

    def suggested(key: str) -> dict[str, Any]:
        return {"suggested_value": values.get(key)}

    return vol.Schema(
        {
            vol.Optional(CONF_TARIFF_BANDS, description=suggested(CONF_TARIFF_BANDS)): yaml_selector(),
            vol.Optional(CONF_CAPACITY_PRICE, description=suggested(CONF_CAPACITY_PRICE)): appliance_number(
                *TARIFF_LIMITS[CONF_CAPACITY_PRICE]
            ),
            vol.Optional(CONF_CAPACITY_MIN_KW, description=suggested(CONF_CAPACITY_MIN_KW)): appliance_number(
                *TARIFF_LIMITS[CONF_CAPACITY_MIN_KW]
            ),
            vol.Optional(CONF_IMPORT_POWER_ENTITY, description=suggested(CONF_IMPORT_POWER_ENTITY)): EntitySelector(
                EntitySelectorConfig(domain="sensor")
            ),
            vol.Optional(CONF_HOLIDAY_CALENDAR, description=suggested(CONF_HOLIDAY_CALENDAR)): EntitySelector(
                EntitySelectorConfig(domain="calendar")
            ),
            vol.Optional(CONF_PHASE_COUNT, description=suggested(CONF_PHASE_COUNT)): SelectSelector(
                SelectSelectorConfig(options=["1", "3"], mode=SelectSelectorMode.LIST, translation_key=CONF_PHASE_COUNT)
            ),
            vol.Optional(CONF_PHASE_CURRENT_A, description=suggested(CONF_PHASE_CURRENT_A)): appliance_number(
                *TARIFF_LIMITS[CONF_PHASE_CURRENT_A]
            ),
            vol.Optional(CONF_NOMINAL_VOLTAGE, description=suggested(CONF_NOMINAL_VOLTAGE)): appliance_number(
                *TARIFF_LIMITS[CONF_NOMINAL_VOLTAGE]
            ),
        }
    )


def check_tariff(user_input: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str], dict[str, Any]]:
    """Return the form errors (field -> translation key), their placeholders and the input with the schedule parsed.

    A number given outside :data:`TARIFF_LIMITS` is ``capacity_price_range``, ``capacity_min_range``,
    ``phase_current_range`` or ``voltage_range`` (the placeholders hold each number's limits). The band schedule's
    text must parse as YAML (``yaml_invalid`` with its ``line`` and ``problem``, or ``yaml_too_long``), then as a
    schedule (``invalid_tariff`` with the schedule's English ``error``; "" when none). A schedule beyond the input
    bounds (nesting, entries, characters) is refused before it is read, so nothing that Home Assistant could not
    store or that would take long to check reaches the options. An empty text is None (the step drops it).
    """
    placeholders = {"error": "", **limit_placeholders(TARIFF_LIMITS)}
    errors = _tariff_number_errors(user_input)
    try:
        bands = parse_yaml_text(user_input.get(CONF_TARIFF_BANDS))
    except YamlFieldError as err:
        if err.too_long:
            errors[CONF_TARIFF_BANDS] = "yaml_too_long"
        else:
            errors[CONF_TARIFF_BANDS] = "yaml_invalid"
        return errors, placeholders | err.placeholders, dict(user_input)
    if bands is not None:
        try:
            parse_schedule(bands)
        except ValueError as err:
            errors[CONF_TARIFF_BANDS] = "invalid_tariff"
            placeholders["error"] = str(err)
    return errors, placeholders, dict(user_input) if errors else {**user_input, CONF_TARIFF_BANDS: bands}


def _tariff_number_errors(user_input: Mapping[str, Any]) -> dict[str, str]:
    """Return the errors of the numbers given outside :data:`TARIFF_LIMITS` (an empty field is none)."""
    given = {k: v for k, v in user_input.items() if k in TARIFF_LIMITS and v not in (None, "")}
    errors: dict[str, str] = {}
    for key in outside_limits(given, TARIFF_LIMITS, tuple(given)):
        if key == CONF_CAPACITY_PRICE:
            errors[key] = "capacity_price_range"
        elif key == CONF_CAPACITY_MIN_KW:
            errors[key] = "capacity_min_range"
        elif key == CONF_PHASE_CURRENT_A:
            errors[key] = "phase_current_range"
        else:
            errors[key] = "voltage_range"
    return errors
