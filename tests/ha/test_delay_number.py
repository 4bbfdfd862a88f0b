"""A dishwasher whose own delayed start is a "start in" number in minutes, set before its start button, in a real HA.

Template entities over helpers stand in for the appliance, in home_connect's shapes (a program select with program
keys, a start button, a remote-start binary sensor, an enum-like operation state) plus a "start in" number in minutes
(0-1440 in steps of 15, as appliances of other integrations offer it). The start button sets the operation state to
``delayedstart`` while a delay is set and remote start is allowed, else ``run``.

Oracles: the plan's own start (the delay in minutes to it, computed by hand), the ``call_service`` events, the
helpers' states and the repair issue registry.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_capture_events

from custom_components.agentic_hems.const import DOMAIN
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from .conftest import NOW
from .test_programs import BUTTON, DISHWASHER, ECO, OPERATION, SELECT, TEMPLATES, _boundary
from .test_programs import _dishwasher as _programs_dishwasher

DELAY = "number.dishwasher_start_in"
DELAYED = {**DISHWASHER, "delayed_start": True, "delay_entity": DELAY}
START_IN = {
    "name": "Dishwasher start in",
    "state": "{{ states('input_number.dw_start_in') }}",
    "min": 0, "max": 1440, "step": 15, "unit_of_measurement": "min",
    "set_value": [{"action": "input_number.set_value", "target": {"entity_id": "input_number.dw_start_in"},
                   "data": {"value": "{{ value }}"}}],
}
START = {  # the start button: a delay set means a delayed start
    "name": "Dishwasher start",
    "press": [
        {"condition": "state", "entity_id": "input_boolean.dw_remote_start", "state": "on"},
        {"action": "input_text.set_value", "target": {"entity_id": "input_text.dw_operation"},
         "data": {"value": "{{ 'delayedstart' if states('input_number.dw_start_in') | float(0) > 0 else 'run' }}"}},
    ],
}


async def _dishwasher(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> MockConfigEntry:
    numbers = {"dw_start_in": {"min": 0, "max": 1440, "step": 15, "initial": 0}}
    templates = {**TEMPLATES, "button": [START], "number": [START_IN]}
    return await _programs_dishwasher(
        hass, freezer, remote_start=True, appliance=DELAYED, templates=templates, numbers=numbers
    )


def _sent(events: list[Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(e.data["domain"], e.data["service"], dict(e.data["service_data"])) for e in events
            if e.data["domain"] in ("select", "number", "button")]


async def test_a_plan_made_mid_slot_waits_for_the_boundary_when_the_delay_is_off_the_numbers_step(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """At 20:07:42 the planner notifies; the delay from 20:07 is 7 min off the number's 15 min step, so nothing is sent
    until the 20:15 boundary, which sets the exact delay."""
    entry = await _dishwasher(hass, freezer)
    planner = entry.runtime_data.planner
    plan = planner.states["dishwasher"].plan
    assert plan is not None and plan.start is not None
    events = async_capture_events(hass, "call_service")
    freezer.move_to(NOW.replace(minute=7, second=42))
    await planner.async_set_auto("dishwasher", False)
    await planner.async_set_auto("dishwasher", True)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert _sent(events) == []
    first = NOW.replace(minute=15)
    await _boundary(hass, freezer, first)
    assert ("number", "set_value", {"entity_id": DELAY, "value": (plan.start - first).total_seconds() / 60}) in _sent(
        events)


async def test_the_start_in_number_is_set_in_minutes_before_the_press_once_and_the_start_is_read_back(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    entry = await _dishwasher(hass, freezer)
    assert hass.states.get(DELAY).attributes["unit_of_measurement"] == "min"
    plan = entry.runtime_data.planner.states["dishwasher"].plan
    assert plan is not None and plan.start is not None
    first = NOW.replace(minute=15)  # NOW is 20:05
    minutes = (plan.start - first).total_seconds() / 60
    events = async_capture_events(hass, "call_service")
    await _boundary(hass, freezer, first)
    assert _sent(events) == [
        ("select", "select_option", {"entity_id": SELECT, "option": ECO}),
        ("number", "set_value", {"entity_id": DELAY, "value": minutes}),
        ("button", "press", {"entity_id": BUTTON}),
    ]
    assert float(hass.states.get(DELAY).state) == minutes
    assert hass.states.get(OPERATION).state == "delayedstart"
    value_trace = [t for t in entry.runtime_data.control.traces.values() if t["entity_id"] == DELAY][-1]
    assert value_trace["raw_input"].startswith(f"set {DELAY} to {minutes!r} min")
    await _boundary(hass, freezer, first + timedelta(minutes=15))
    assert len(_sent(events)) == 3
    await hass.services.async_call("input_text", "set_value", {"entity_id": "input_text.dw_operation", "value": "run"},
                                   blocking=True)  # the appliance starts by itself at the planned time
    await _boundary(hass, freezer, plan.start)
    assert len(_sent(events)) == 3  # no second start
    assert ir.async_get(hass).async_get_issue(DOMAIN, "program_not_started_dishwasher") is None
