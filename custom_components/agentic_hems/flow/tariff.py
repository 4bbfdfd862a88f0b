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
from .schemas import number_selector
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
            vol.Optional(CONF_CAPACITY_PRICE, description=suggested(CONF_CAPACITY_PRICE)): number_selector(
                0, 1000, "any", "EUR/kW"
            ),
            vol.Optional(CONF_CAPACITY_MIN_KW, description=suggested(CONF_CAPACITY_MIN_KW)): number_selector(
                0, 100, 0.1, "kW"
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
            vol.Optional(CONF_PHASE_CURRENT_A, description=suggested(CONF_PHASE_CURRENT_A)): number_selector(
                1, 1000, 1, "A"
            ),
            vol.Optional(CONF_NOMINAL_VOLTAGE, description=suggested(CONF_NOMINAL_VOLTAGE)): number_selector(
                50, 1000, 1, "V"
            ),
        }
    )


def check_tariff(user_input: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str], dict[str, Any]]:
    """Return the form errors (field -> translation key), their placeholders and the input with the schedule parsed.

    The band schedule's text must parse as YAML (``yaml_invalid`` with its ``line`` and ``problem``, or
    ``yaml_too_long``), then as a schedule (``invalid_tariff`` with the schedule's English ``error``; "" when none).
    A schedule beyond the input bounds (nesting, entries, characters) is refused before it is read, so nothing that
    Home Assistant could not store or that would take long to check reaches the options. An empty text is None
    (the step drops it).
    """
    placeholders = {"error": ""}
    try:
        bands = parse_yaml_text(user_input.get(CONF_TARIFF_BANDS))
    except YamlFieldError as err:
        if err.too_long:
            return {CONF_TARIFF_BANDS: "yaml_too_long"}, placeholders | err.placeholders, dict(user_input)
        return {CONF_TARIFF_BANDS: "yaml_invalid"}, placeholders | err.placeholders, dict(user_input)
    if bands is None:
        return {}, placeholders, {**user_input, CONF_TARIFF_BANDS: None}
    try:
        parse_schedule(bands)
    except ValueError as err:
        return {CONF_TARIFF_BANDS: "invalid_tariff"}, {"error": str(err)}, dict(user_input)
    return {}, placeholders, {**user_input, CONF_TARIFF_BANDS: bands}
