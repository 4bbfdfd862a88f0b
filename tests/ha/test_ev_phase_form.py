"""The charger step's phase switch and power sensor fields, with the shapes of real chargers' entities.

A go-e/evcc-style phase select (options for 1 and 3 phases), HA core's ``peblar`` "force single phase" switch (on: one
phase) and a charging power sensor in kW (HA core's ``wallbox`` "charging power") or mA (``peblar``'s current).
"""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.agentic_hems.scheduling.appliance import Appliance
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType

from .conftest import sample_entry
from .test_config_flow import add_appliance
from .test_ev_charger import EV_FORM, STEP, WALLBOX_CURRENT

SELECT = "select.charger_phase_switch"
FORCE = "switch.peblar_force_single_phase"
POWER = "sensor.wallbox_charging_power"


async def _step(hass: HomeAssistant, change: dict[str, Any]) -> Any:
    entry = sample_entry()
    entry.add_to_hass(hass)
    hass.states.async_set(WALLBOX_CURRENT, "16", {"min": 6, "max": 32, "step": 1})
    hass.states.async_set(SELECT, "3-phase", {"options": ["auto", "1-phase", "3-phase"]})
    hass.states.async_set(FORCE, "off")
    hass.states.async_set(POWER, "0", {"unit_of_measurement": "kW", "device_class": "power"})
    hass.states.async_set("sensor.peblar_current", "0", {"unit_of_measurement": "mA"})
    hass.states.async_set("sensor.energy", "0", {"unit_of_measurement": "kWh"})
    result = await add_appliance(hass, entry, EV_FORM)
    assert result["step_id"] == "charger"
    return await hass.config_entries.subentries.async_configure(result["flow_id"], {**STEP, **change})


async def test_a_phase_select_and_a_power_sensor_are_stored_and_make_the_profile(hass: HomeAssistant) -> None:
    """The select's two options and the interval are stored; the profile's least power is one phase's 6 A."""
    result = await _step(hass, {"charger_phase_entity": SELECT, "charger_phase_one": " 1-phase ",
                                "charger_phase_three": "3-phase", "charger_phase_interval_min": 20,
                                "charger_power_entity": POWER})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    data = result["data"]
    assert {k: data[k] for k in data if k.startswith("charger_phase_") or k == "charger_power_entity"} == {
        "charger_phase_entity": SELECT, "charger_phase_one": "1-phase", "charger_phase_three": "3-phase",
        "charger_phase_interval_min": 20, "charger_power_entity": POWER}
    profile = Appliance.from_config("x", data).charger
    assert profile is not None and profile.min_kw == pytest.approx(1.38) and profile.phases_of("1-phase") == 1


async def test_a_force_single_phase_switch_defaults_to_on_for_one_phase(hass: HomeAssistant) -> None:
    """Without states given a switch means on = one phase, off = three (peblar's force single phase)."""
    result = await _step(hass, {"charger_phase_entity": FORCE, "charger_power_entity": "sensor.peblar_current"})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert (result["data"]["charger_phase_one"], result["data"]["charger_phase_three"]) == ("on", "off")
    assert result["data"]["charger_phase_interval_min"] == 15


@pytest.mark.parametrize(
    ("change", "errors"),
    [
        ({"charger_phase_entity": "select.none"}, {"charger_phase_entity": "charger_phase_entity_missing"}),
        ({"charger_phase_entity": SELECT, "charger_phase_one": "single", "charger_phase_three": "3-phase"},
         {"charger_phase_one": "charger_phase_option_missing"}),
        ({"charger_phase_entity": SELECT}, {"charger_phase_one": "charger_phase_option_missing",
                                            "charger_phase_three": "charger_phase_option_missing"}),
        ({"charger_phase_entity": FORCE, "charger_phase_one": "on", "charger_phase_three": "on"},
         {"charger_phase_one": "charger_phase_option_missing", "charger_phase_three": "charger_phase_option_missing"}),
        ({"charger_phase_entity": FORCE, "charger_phases": "1"}, {"charger_phases": "charger_phase_needs_three"}),
        ({"charger_phase_entity": WALLBOX_CURRENT}, {"charger_phase_entity": "charger_phase_entity_missing"}),
        ({"charger_phase_entity": "switch.wallbox_pause_resume"},
         {"charger_phase_entity": "charger_entity_in_use"}),
        ({"charger_power_entity": "sensor.energy"}, {"charger_power_entity": "charger_power_entity_invalid"}),
        ({"charger_power_entity": "sensor.none"}, {"charger_power_entity": "charger_power_entity_invalid"}),
        ({"charger_phase_interval_min": 121}, {"charger_phase_interval_min": "charger_number_out_of_range"}),
    ],
)
async def test_the_phase_and_power_fields_are_checked(
    hass: HomeAssistant, change: dict[str, Any], errors: dict[str, str]
) -> None:
    """Each field's translated error; nothing is stored."""
    hass.states.async_set("switch.wallbox_pause_resume", "off")
    result = await _step(hass, change)
    assert result["type"] is FlowResultType.FORM and result["errors"] == errors


async def test_a_phase_switch_whose_name_holds_select_is_a_switch(hass: HomeAssistant) -> None:
    """A switch is read by its domain, not its name: ``switch.wallbox_phase_select`` has on/off, no options."""
    hass.states.async_set("switch.wallbox_phase_select", "off")
    result = await _step(hass, {"charger_phase_entity": "switch.wallbox_phase_select"})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert (result["data"]["charger_phase_one"], result["data"]["charger_phase_three"]) == ("on", "off")


async def test_a_phase_switch_without_a_setpoint_is_refused_not_dropped(hass: HomeAssistant) -> None:
    """Without the current setpoint the phase switch and the power sensor would drive nothing: an error, not silence."""
    plain = {k: v for k, v in STEP.items() if k != "charger_current_entity"}
    entry = sample_entry()
    entry.add_to_hass(hass)
    hass.states.async_set(FORCE, "off")
    result = await add_appliance(hass, entry, EV_FORM)
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {**plain, "charger_phase_entity": FORCE, "charger_power_entity": POWER}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"charger_phase_entity": "charger_needs_setpoint",
                                "charger_power_entity": "charger_needs_setpoint"}


async def test_a_charger_started_by_a_button_needs_its_stop_button_and_setpoint(hass: HomeAssistant) -> None:
    """A start button is an EV charger's only (split load); its charger step wants the setpoint and the stop button
    (blue_current's "stop charge session" button shape) and stores them; a stop button with a switch is refused."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    for button in ("button.charger_start", "button.charger_stop_charge_session"):
        hass.states.async_set(button, "unknown")
    hass.states.async_set(WALLBOX_CURRENT, "16", {"min": 6, "max": 32, "step": 1})
    dishwasher = {k: v for k, v in EV_FORM.items() if k != "energy_kwh"}
    result = await add_appliance(hass, entry, {**dishwasher, "kind": "dishwasher", "contiguous": True,
                                               "duration_min": 60, "entity_id": "button.charger_start"})
    assert result["errors"] == {"entity_id": "button_needs_charger"}
    result = await add_appliance(hass, entry, {**EV_FORM, "entity_id": "button.charger_start"})
    assert result["step_id"] == "charger"
    flow_id = result["flow_id"]
    result = await hass.config_entries.subentries.async_configure(flow_id, STEP)
    assert result["errors"] == {"charger_stop_entity": "charger_buttons_incomplete"}
    plain = {k: v for k, v in STEP.items() if k != "charger_current_entity"}
    result = await hass.config_entries.subentries.async_configure(
        flow_id, {**plain, "charger_stop_entity": "button.charger_stop_charge_session"})
    assert result["errors"] == {"charger_current_entity": "charger_buttons_incomplete"}
    result = await hass.config_entries.subentries.async_configure(
        flow_id, {**STEP, "charger_stop_entity": "button.charger_stop_charge_session"})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    profile = Appliance.from_config("x", result["data"]).charger
    assert profile is not None and profile.stop_entity == "button.charger_stop_charge_session"
    result = await _step(hass, {"charger_stop_entity": "button.charger_stop_charge_session"})
    assert result["errors"] == {"charger_stop_entity": "charger_stop_needs_button"}


async def test_a_chargers_phase_entity_and_stop_button_are_no_other_devices_control(hass: HomeAssistant) -> None:
    """Another device's control that is a stored charger's phase switch, phase select or stop button is refused: two
    devices would drive one entity (an appliance on the phase switch, a battery's mode on the phase select, another
    charger's start button on the stop button). Oracle: the stored charger's entities, named by hand."""
    from homeassistant.config_entries import ConfigSubentry

    from .test_battery_mode_power_form import MODE_POWER_FORM, _entities
    from .test_home_forms import add_battery

    entry = sample_entry()
    entry.add_to_hass(hass)
    _entities(hass, ["1-phase", "3-phase"])
    hass.states.async_set(FORCE, "off")
    hass.states.async_set("button.charger_stop", "unknown")
    charger = {**EV_FORM, **STEP, "charger_phases": 3, "charger_phase_one": "on", "charger_phase_three": "off",
               "charger_phase_interval_min": 15}
    for n, extra in enumerate(({"charger_phase_entity": FORCE},
                               {"charger_phase_entity": "select.garage_battery_mode", "charger_phase_one": "1-phase",
                                "charger_phase_three": "3-phase"},
                               {"entity_id": "button.charger_start", "charger_stop_entity": "button.charger_stop"})):
        data = {**charger, "name": f"Charger {n}", "entity_id": f"switch.charger_{n}", **extra}
        hass.config_entries.async_add_subentry(
            entry, ConfigSubentry(data=data, subentry_type="appliance", title=data["name"], unique_id=None))
    dishwasher = {k: v for k, v in EV_FORM.items() if k != "energy_kwh"}
    other = {**dishwasher, "name": "Other", "kind": "dishwasher", "contiguous": True, "duration_min": 60}
    for form in ({**other, "entity_id": FORCE}, {**EV_FORM, "name": "Other", "entity_id": "button.charger_stop"}):
        result = await add_appliance(hass, entry, form)
        assert result["type"] is FlowResultType.FORM and result["errors"].get("entity_id") == "control_entity_in_use"
    result = await add_battery(hass, entry, MODE_POWER_FORM)
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"control_entity": "control_entity_in_use"}
