"""The appliance form's start profile: the Home Connect action on a Home Connect device, and the delayed start.

The device and the program select are registered as HA core's ``home_connect`` registers them (a device with a
``home_connect`` identifier, the select on it); a "start in" number has the shape of a delay in minutes or seconds.
Oracles: the stored data read back as an :class:`Appliance` and its steps, the errors per field and their texts.
"""

from __future__ import annotations

from typing import Any

import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.agentic_hems.scheduling.appliance import Appliance
from custom_components.agentic_hems.scheduling.program import (
    controlled_entities,
    delayed_steps,
    has_delayed_start,
    readbacks,
    start_steps,
)
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import device_registry as dr, entity_registry as er

from .test_config_flow import add_appliance
from .test_device_forms import error_text
from .test_program_forms import BUTTON, ECO, OPERATION, PROGRAM, REMOTE, SELECT, _entities, _entry

DELAY = "number.dishwasher_start_in"


def _home_connect(hass: HomeAssistant, *, owns_select: bool = True) -> str:
    """Register a Home Connect dishwasher (and, with ``owns_select``, the program select on it); return its id."""
    config = MockConfigEntry(domain="home_connect")
    config.add_to_hass(hass)
    device = dr.async_get(hass).async_get_or_create(
        config_entry_id=config.entry_id, identifiers={("home_connect", "BOSCH-SMV-1")}, name="Dishwasher")
    er.async_get(hass).async_get_or_create(
        "select", "home_connect", "BOSCH-SMV-1-program", config_entry=config,
        device_id=device.id if owns_select else None, suggested_object_id="dishwasher_program")
    return device.id


def _other_device(hass: HomeAssistant) -> str:
    config = MockConfigEntry(domain="wallbox")
    config.add_to_hass(hass)
    return dr.async_get(hass).async_get_or_create(
        config_entry_id=config.entry_id, identifiers={("wallbox", "WB-1")}, name="Wallbox").id


async def test_the_home_connect_action_with_a_delayed_start_is_stored_and_drives_one_action(
    hass: HomeAssistant,
) -> None:
    device_id = _home_connect(hass)  # registered before the select's state takes its entity_id
    _entities(hass)
    entry = await _entry(hass)
    form = {k: v for k, v in PROGRAM.items() if k != "start_entity"}
    result = await add_appliance(hass, entry, {**form, "program_start": "home_connect",
                                               "home_connect_device": device_id, "delayed_start": True})
    assert result["type"] is FlowResultType.CREATE_ENTRY, result.get("errors")
    appliance = Appliance.from_config("x", result["data"])
    assert (appliance.program_start, appliance.delayed_start, has_delayed_start(appliance)) == (
        "home_connect", True, True)
    assert start_steps(appliance) == [{"intent": "start_program", "device_alias": SELECT, "params": {"program": ECO}}]
    assert delayed_steps(appliance, 3600) == [
        {"intent": "start_program", "device_alias": SELECT, "params": {"program": ECO, "start_in_s": 3600}}]
    assert readbacks([appliance]) == {SELECT: (OPERATION, ("run", "delayedstart"))}


async def test_a_start_in_number_is_stored_and_set_in_its_unit_before_the_press(hass: HomeAssistant) -> None:
    _entities(hass)
    hass.states.async_set(DELAY, "0", {"min": 0, "max": 1440, "step": 15, "unit_of_measurement": "min"})
    entry = await _entry(hass)
    result = await add_appliance(hass, entry, {**PROGRAM, "delayed_start": True, "delay_entity": DELAY})
    assert result["type"] is FlowResultType.CREATE_ENTRY, result.get("errors")
    appliance = Appliance.from_config("x", result["data"])
    assert result["data"].get("program_start") is None and appliance.program_start == "button"
    assert delayed_steps(appliance, 5400, "min") == [
        {"intent": "select_option", "device_alias": SELECT, "params": {"option": ECO}},
        {"intent": "set_value", "device_alias": DELAY, "params": {"value": 90.0}},
        {"intent": "press", "device_alias": BUTTON},
    ]
    assert controlled_entities(appliance) == {SELECT, BUTTON, DELAY}


@pytest.mark.parametrize(
    ("change", "errors"),
    [
        ({"program_start": "home_connect"}, {"home_connect_device": "home_connect_device_required"}),
        ({"program_start": "home_connect", "home_connect_device": "wallbox"},
         {"home_connect_device": "home_connect_device_invalid"}),
        ({"program_start": "home_connect", "home_connect_device": "unowned"},
         {"home_connect_device": "program_select_not_on_device"}),
        ({"delayed_start": True}, {"delay_entity": "delay_entity_required"}),
        ({"delayed_start": True, "delay_entity": "number.nowhere"}, {"delay_entity": "entity_not_found"}),
        ({"delayed_start": True, "delay_entity": "number.percent"}, {"delay_entity": "delay_entity_unit"}),
        ({"delayed_start": True, "delay_entity": "number.short"}, {"delay_entity": "delay_range_short"}),
        ({"delayed_start": True, "delay_entity": DELAY, "start_entity": None},
         {"start_entity": "delay_needs_start_button"}),
        ({"delayed_start": True, "delay_entity": DELAY, "operation_entity": None},
         {"operation_entity": "delayed_start_needs_operation"}),
        ({"entity_id": "switch.boiler", "program": None, "start_entity": None, "remote_start_entity": None,
          "operation_entity": None, "program_start": "home_connect"}, {"program_start": "program_needs_select"}),
    ],
    ids=["no-device", "not-home-connect", "select-elsewhere", "no-delay", "delay-missing", "delay-unit",
         "delay-short", "delay-no-button", "delay-no-operation", "a-switch"],
)
async def test_the_start_profile_refuses_what_does_not_fit_with_a_translated_error(
    hass: HomeAssistant, change: dict[str, Any], errors: dict[str, str]
) -> None:
    devices = {"wallbox": _other_device(hass), "unowned": _home_connect(hass, owns_select=False)}
    _entities(hass)
    hass.states.async_set(DELAY, "0", {"min": 0, "max": 1440, "step": 15, "unit_of_measurement": "min"})
    hass.states.async_set("number.percent", "0", {"min": 0, "max": 100, "unit_of_measurement": "%"})
    # The window (00:00 to 07:00 in the PROGRAM form) less 90 min needs 330 min; this number holds 300.
    hass.states.async_set("number.short", "0", {"min": 0, "max": 300, "unit_of_measurement": "min"})
    if "home_connect_device" in change:
        change = {**change, "home_connect_device": devices[change["home_connect_device"]]}
    entry = await _entry(hass)
    before = dict(entry.subentries)
    form = {k: v for k, v in {**PROGRAM, **change}.items() if v is not None}
    result = await add_appliance(hass, entry, form)
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == errors
    assert entry.subentries == before
    assert all(error_text(lang, "appliance", reason) for lang in ("en", "de") for reason in errors.values())


def test_a_remote_start_interlocks_the_action_and_the_delay_number() -> None:
    from custom_components.agentic_hems.scheduling.program import interlocks  # noqa: PLC0415

    appliance = Appliance.from_config("x", {**PROGRAM, "delayed_start": True, "delay_entity": DELAY})
    assert interlocks([appliance]) == {SELECT: (REMOTE,), BUTTON: (REMOTE,), DELAY: (REMOTE,)}
