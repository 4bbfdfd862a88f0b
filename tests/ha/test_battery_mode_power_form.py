"""The battery form's mode select plus power number profile, against HA's subentry flow manager.

Oracles: the stored data written out by hand, the errors and the limits they name worked out by hand from the
entities' attributes (a W number's max / 1000 in kW; a signed number's -min for discharging).
"""

from __future__ import annotations

from typing import Any

import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.agentic_hems.planning.home_config import parse_battery
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType

from .conftest import APPLIANCES, sample_entry
from .test_home_forms import FORM, STORED, add_battery, batteries, error_text

SELECT = "select.garage_battery_mode"
POWER = "number.garage_battery_power"
OPTIONS = ["Force charge", "Force discharge", "Standby", "Self-use"]
MODE_POWER_FORM = {**FORM, "power_setpoint_entity": POWER}


def _entities(hass: HomeAssistant, options: list[str] = OPTIONS, **power: Any) -> None:
    """The SoC sensor, the select (HA's select shape: ``options``) and the power number (``min``/``max``/``step``)."""
    hass.states.async_set("sensor.garage_battery_soc", "40", {"unit_of_measurement": "%", "device_class": "battery"})
    hass.states.async_set(SELECT, "Standby", {"options": options})
    attributes = {"min": 0, "max": 5000, "step": 100, "mode": "box", "unit_of_measurement": "W"} | power
    hass.states.async_set(POWER, "0", attributes)


async def test_a_mode_and_power_battery_is_stored_and_planned_with_both_entities(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    _entities(hass)
    result = await add_battery(hass, loaded_entry, MODE_POWER_FORM)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {**STORED, "power_setpoint_entity": POWER}
    await hass.async_block_till_done(wait_background_tasks=True)
    assert loaded_entry.state is ConfigEntryState.LOADED
    (battery,) = loaded_entry.runtime_data.home.config.batteries
    assert (battery.control_entity, battery.power_setpoint) == (SELECT, POWER)
    assert loaded_entry.runtime_data.home.config.control_entities() == {SELECT, POWER}


def test_a_stored_select_or_number_battery_reads_as_before_without_a_power_setpoint() -> None:
    """Existing subentries keep their data: no power setpoint, nothing new to store (so nothing replans)."""
    assert parse_battery("b", STORED).power_setpoint is None
    number = {**STORED, "control_entity": "input_number.garage_battery_power", "control_modes": {}}
    assert parse_battery("b", number).power_setpoint is None
    with pytest.raises(ValueError, match="needs a mode select"):
        parse_battery("b", {**number, "power_setpoint_entity": POWER})


@pytest.mark.parametrize(
    ("changes", "power", "errors", "limit"),
    [
        ({"control_entity": "input_number.garage_battery_power"}, {},
         {"power_setpoint_entity": "power_setpoint_needs_select"}, ""),
        ({"power_setpoint_entity": "number.gone"}, {}, {"power_setpoint_entity": "battery_entity_missing"}, ""),
        ({"control_entity": "select.gone"}, {}, {"control_entity": "battery_entity_missing"}, ""),
        ({"charge_option": "Charge"}, {}, {"charge_option": "battery_option_unknown"}, ""),
        ({}, {"max": 3000}, {"power_setpoint_entity": "power_setpoint_range"}, "3"),  # 4 kW charge on 3000 W
        ({}, {"min": -3000, "max": 5000}, {"power_setpoint_entity": "power_setpoint_range"}, "3"),  # 3.5 kW discharge
        ({}, {"min": -2.5, "max": 10, "step": 0.1, "unit_of_measurement": "kW"},
         {"power_setpoint_entity": "power_setpoint_range"}, "2.5"),
        ({}, {"unit_of_measurement": "%", "max": 100}, {"power_setpoint_entity": "power_setpoint_unit"}, ""),
        ({"power_setpoint_entity": APPLIANCES["dishwasher"]["entity_id"]}, {},
         {"power_setpoint_entity": "entity_invalid"}, ""),  # an input_boolean (and another device's)
    ],
    ids=["number-control", "power-missing", "select-missing", "unknown-option", "short-max", "short-signed-min",
         "short-kw", "percent", "not-a-number"],
)
async def test_the_form_refuses_what_the_entities_cannot_do_and_names_the_limit(
    hass: HomeAssistant, changes: dict[str, Any], power: dict[str, Any], errors: dict[str, str], limit: str
) -> None:
    entry = sample_entry()
    entry.add_to_hass(hass)
    _entities(hass, **power)
    result = await add_battery(hass, entry, {**MODE_POWER_FORM, **changes})
    assert result["type"] is FlowResultType.FORM and result["errors"] == errors
    assert all(error_text(lang, reason) for lang in ("en", "de") for reason in errors.values())
    placeholders = result["description_placeholders"]
    assert placeholders["power_limit_kw"] == limit
    if "charge_option" in errors:
        assert placeholders["select_options"] == "Force charge, Force discharge, Standby, Self-use"
    assert batteries(entry) == {}


async def test_a_signed_number_that_reaches_both_powers_is_taken_and_another_battery_cannot_share_it(
    hass: HomeAssistant,
) -> None:
    entry = sample_entry()
    entry.add_to_hass(hass)
    _entities(hass, min=-5000, max=5000, step=1)
    result = await add_battery(hass, entry, MODE_POWER_FORM)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    hass.states.async_set("sensor.loft_battery_soc", "40", {"unit_of_measurement": "%"})
    hass.states.async_set("select.loft_battery_mode", "Standby", {"options": OPTIONS})
    result = await add_battery(hass, entry, {**MODE_POWER_FORM, "name": "Loft battery",
                                             "soc_entity": "sensor.loft_battery_soc",
                                             "control_entity": "select.loft_battery_mode"})
    assert result["errors"] == {"power_setpoint_entity": "control_entity_in_use"}


async def test_a_select_alone_must_offer_its_options_when_it_exists(hass: HomeAssistant) -> None:
    """A select battery without a power setpoint: an existing select is checked, a missing one is not (as before)."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    _entities(hass, options=["Force charge", "Standby"])
    result = await add_battery(hass, entry, FORM)
    assert result["errors"] == {"discharge_option": "battery_option_unknown"}
    result = await add_battery(hass, entry, {**FORM, "control_entity": "select.not_there_yet"})
    assert result["type"] is FlowResultType.CREATE_ENTRY


async def test_an_ev_chargers_current_setpoint_is_no_batterys_power_setpoint(hass: HomeAssistant) -> None:
    """The EV charger appliance's current number is another device's control: refused, and left out of the picker."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    ev = next(s for s in entry.subentries.values() if s.data["kind"] == "ev_charger")
    hass.config_entries.async_update_subentry(entry, ev, data={**ev.data, "charger_current_entity": POWER})
    _entities(hass)
    result = await add_battery(hass, entry, MODE_POWER_FORM)
    assert result["errors"] == {"power_setpoint_entity": "control_entity_in_use"}
    schema = result["data_schema"].schema
    picker = next(selector for marker, selector in schema.items() if str(marker) == "power_setpoint_entity")
    assert POWER in picker.config["exclude_entities"]
