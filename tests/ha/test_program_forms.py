"""The appliance form's program profile: a program select, its program, start button, remote start and operation
state, checked against the entities HA has (the shapes of HA core's ``home_connect``).

Oracles: the stored subentry data (what the planner reads back as an :class:`Appliance`), the errors named per field,
and the translated texts of each error in en and de.
"""

from __future__ import annotations

from typing import Any

import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.agentic_hems.scheduling.appliance import Appliance
from custom_components.agentic_hems.scheduling.program import controlled_entities, interlocks, readbacks, start_steps
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType

from .conftest import sample_entry
from .test_config_flow import BOILER, add_appliance
from .test_device_forms import error_text, store

ECO = "dishcare_dishwasher_program_eco_50"
SELECT, BUTTON = "select.dishwasher_program", "button.dishwasher_start"
REMOTE, OPERATION = "binary_sensor.dishwasher_remote_start", "sensor.dishwasher_operation_state"
PROGRAM = {
    **BOILER,
    "name": "Bosch dishwasher",
    "kind": "dishwasher",
    "entity_id": SELECT,
    "program": f"  {ECO} ",
    "start_entity": BUTTON,
    "remote_start_entity": REMOTE,
    "operation_entity": OPERATION,
}


def _entities(hass: HomeAssistant) -> None:
    """States in home_connect's shapes: program options, a never-pressed button, remote start, operation state."""
    hass.states.async_set(SELECT, "dishcare_dishwasher_program_auto_2", {"options": [ECO, "dishcare_dishwasher_program_auto_2"]})
    hass.states.async_set(BUTTON, "unknown")
    hass.states.async_set(REMOTE, "on")
    hass.states.async_set(OPERATION, "ready", {"device_class": "enum", "options": ["inactive", "ready", "run"]})


async def _entry(hass: HomeAssistant) -> MockConfigEntry:
    entry = sample_entry()
    entry.add_to_hass(hass)
    return entry


async def test_a_program_dishwasher_is_stored_with_its_profile(hass: HomeAssistant) -> None:
    _entities(hass)
    entry = await _entry(hass)
    result = await add_appliance(hass, entry, PROGRAM)
    assert result["type"] is FlowResultType.CREATE_ENTRY, result.get("errors")
    assert result["data"]["program"] == ECO  # trimmed
    appliance = Appliance.from_config("x", result["data"])
    assert (appliance.program, appliance.start_entity, appliance.remote_start_entity, appliance.operation_entity) == (
        ECO, BUTTON, REMOTE, OPERATION)
    assert start_steps(appliance) == [
        {"intent": "select_option", "device_alias": SELECT, "params": {"option": ECO}},
        {"intent": "press", "device_alias": BUTTON},
    ]
    assert controlled_entities(appliance) == {SELECT, BUTTON}
    assert interlocks([appliance]) == {SELECT: (REMOTE,), BUTTON: (REMOTE,)}
    assert readbacks([appliance]) == {BUTTON: (OPERATION, ("run", "delayedstart"))}


@pytest.mark.parametrize(
    ("change", "errors"),
    [
        ({"program": "dishcare_dishwasher_program_intensiv_70"}, {"program": "program_not_offered"}),
        ({"program": ""}, {"program": "program_required"}),
        ({"start_entity": "button.nowhere"}, {"start_entity": "entity_not_found"}),
        ({"remote_start_entity": "binary_sensor.nowhere"}, {"remote_start_entity": "entity_not_found"}),
        ({"entity_id": "select.nowhere"}, {"entity_id": "entity_not_found"}),
        ({"entity_id": "switch.boiler"}, {k: "program_needs_select" for k in
                                         ("program", "start_entity", "remote_start_entity", "operation_entity")}),
    ],
    ids=["program-not-offered", "no-program", "no-button", "no-remote-start", "no-select", "a-switch"],
)
async def test_the_form_refuses_what_does_not_fit_with_a_translated_error(
    hass: HomeAssistant, change: dict[str, Any], errors: dict[str, str]
) -> None:
    _entities(hass)
    entry = await _entry(hass)
    before = dict(entry.subentries)
    result = await add_appliance(hass, entry, {**PROGRAM, **change})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == errors
    assert entry.subentries == before
    assert all(error_text(lang, "appliance", reason) for lang in ("en", "de") for reason in errors.values())


async def test_a_start_button_another_appliance_uses_is_refused(hass: HomeAssistant) -> None:
    _entities(hass)
    hass.states.async_set("select.other_program", ECO, {"options": [ECO]})
    entry = await _entry(hass)
    store(hass, entry, "appliance", {**PROGRAM, "program": ECO})
    result = await add_appliance(hass, entry, {**PROGRAM, "name": "Second", "entity_id": "select.other_program"})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"start_entity": "control_entity_in_use"}
    assert len(entry.subentries) == 4  # the sample's three and the first dishwasher


async def test_a_switch_appliance_without_program_fields_is_stored_as_before(hass: HomeAssistant) -> None:
    entry = await _entry(hass)
    result = await add_appliance(hass, entry, BOILER)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert not {"program", "start_entity", "remote_start_entity", "operation_entity"} & set(result["data"])
    assert start_steps(Appliance.from_config("x", result["data"])) == []


def test_the_program_profile_is_no_plan_setting() -> None:
    """A plan does not depend on how its run is started: the stored plans' basis stays as it was before profiles."""
    plain = Appliance.from_config("x", {**PROGRAM, "program": None, "start_entity": None,
                                        "remote_start_entity": None, "operation_entity": None})
    profiled = Appliance.from_config("x", PROGRAM)
    assert profiled.plan_settings() == plain.plan_settings() == (
        "x", "Bosch dishwasher", "dishwasher", SELECT, 3.0, 90.0, None, True,
        plain.earliest_start, plain.deadline)
