"""End to end through HA: real template, generic_thermostat and input_boolean entities behind the eight gates.

Every assertion on an actuation reads the entity's real state afterwards; confirmations go through the admin-only
services with real users; restarts reload the entry from its Stores.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from datetime import timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_capture_events, async_fire_time_changed

from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.auth.models import User
from homeassistant.components import persistent_notification
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component

from custom_components.agentic_hems.const import DOMAIN, EVENT_GATE_DECISION, MAX_TRACES
from custom_components.agentic_hems.control.manager import notification_id
from custom_components.agentic_hems.gates.models import PolicyAction
from custom_components.agentic_hems.gates.tables import PolicyRule
from custom_components.agentic_hems.logbook import describe

from .conftest import NOW, admin_context, sample_entry

SWITCH = "switch.agentic_hems_allow_device_control"
LAST = "sensor.agentic_hems_last_gate_decision"
EXPOSED = [
    "input_boolean.boiler", "switch.kettle", "switch.broken_plug", "lock.front_door", "climate.living_room",
    "cover.garage_door", "input_boolean.lamp_1", "input_boolean.lamp_2",
]


async def _setup_house(hass: HomeAssistant) -> None:
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "input_boolean", {"input_boolean": {
        "boiler": {"name": "Boiler"}, "kettle_relay": {"name": "Kettle relay"}, "lock_bolt": {"initial": True},
        "garage_motor": {"name": "Garage motor"}, "heater_relay": {"name": "Heater relay"},
        "lamp_1": {"name": "Lamp"}, "lamp_2": {"name": "Lamp"}, "hidden_fan": {"name": "Hidden fan"},
        "dishwasher": {"name": "Dishwasher plug"}, "washing_machine": {"name": "Washer plug"},
        "ev_charger": {"name": "Wallbox"},
    }})
    # the template integration's own YAML (HA 2026 rejects `platform: template` under switch:, lock:, cover:, sensor:)
    assert await async_setup_component(hass, "template", {"template": [{
        "switch": [
            {
                "name": "Kettle", "default_entity_id": "switch.kettle",
                "state": "{{ is_state('input_boolean.kettle_relay', 'on') }}",
                "turn_on": {"action": "input_boolean.turn_on", "target": {"entity_id": "input_boolean.kettle_relay"}},
                "turn_off": {"action": "input_boolean.turn_off", "target": {"entity_id": "input_boolean.kettle_relay"}},
            },
            {  # its actions do nothing: a phantom success
                "name": "Broken plug", "default_entity_id": "switch.broken_plug",
                "state": "{{ false }}",
                "turn_on": {"delay": 0},
                "turn_off": {"delay": 0},
            },
        ],
        "lock": [{
            "name": "Front door", "default_entity_id": "lock.front_door",
            "state": "{{ is_state('input_boolean.lock_bolt', 'on') }}",
            "lock": {"action": "input_boolean.turn_on", "target": {"entity_id": "input_boolean.lock_bolt"}},
            "unlock": {"action": "input_boolean.turn_off", "target": {"entity_id": "input_boolean.lock_bolt"}},
        }],
        "cover": [{
            "name": "Garage door", "default_entity_id": "cover.garage_door", "device_class": "garage",
            "state": "{{ is_state('input_boolean.garage_motor', 'on') }}",
            "open_cover": {"action": "input_boolean.turn_on", "target": {"entity_id": "input_boolean.garage_motor"}},
            "close_cover": {"action": "input_boolean.turn_off", "target": {"entity_id": "input_boolean.garage_motor"}},
        }],
        "sensor": [{
            "name": "Living temperature", "default_entity_id": "sensor.living_temperature",
            "state": "19.5", "unit_of_measurement": "°C",
        }],
    }]})
    await hass.async_block_till_done()
    assert await async_setup_component(hass, "climate", {"climate": [{
        "platform": "generic_thermostat", "name": "Living room", "heater": "input_boolean.heater_relay",
        "target_sensor": "sensor.living_temperature", "min_temp": 15, "max_temp": 25, "target_temp": 20,
    }]})
    await hass.async_block_till_done()
    for entity_id in EXPOSED:
        async_expose_entity(hass, "conversation", entity_id, True)
    for entity_id in ("input_boolean.hidden_fan", "input_boolean.kettle_relay", "input_boolean.garage_motor"):
        async_expose_entity(hass, "conversation", entity_id, False)


@pytest.fixture
async def house(hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory) -> AsyncGenerator[MockConfigEntry]:
    """The house and the sample entry (device control off, 1 s phantom-success wait)."""
    freezer.move_to(NOW)
    await _setup_house(hass)
    entry = sample_entry(execution_wait_s=1)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    yield entry


async def evaluate(
    hass: HomeAssistant, candidate: dict[str, Any], context: Context | None = None, **extra: Any
) -> dict[str, Any]:
    response = await hass.services.async_call(
        DOMAIN, "evaluate_command", {"source_agent": "hermes", "model_candidate": candidate, **extra},
        blocking=True, return_response=True, context=context,
    )
    assert isinstance(response, dict)
    return response


async def allow_control(hass: HomeAssistant) -> None:
    await hass.services.async_call("switch", "turn_on", {"entity_id": SWITCH}, blocking=True,
                                   context=await admin_context(hass))
    assert hass.states.get(SWITCH).state == "on"


async def test_control_off_is_a_dry_run(hass: HomeAssistant, house: MockConfigEntry) -> None:
    assert hass.states.get(SWITCH).state == "off"
    events = async_capture_events(hass, EVENT_GATE_DECISION)
    response = await evaluate(hass, {"intent": "turn_on", "device_alias": "boiler"}, raw_input="boiler on")
    assert response["outcome"] == "dry_run"
    assert response["result"]["plan"]["target"] == {"entity_id": "input_boolean.boiler"}
    assert [g["gate"] for g in response["gate_results"]] == [
        "input_guard", "schema", "device_resolved", "capability", "freshness", "policy", "dry_run", "execution"]
    assert hass.states.get("input_boolean.boiler").state == "off"
    await hass.async_block_till_done()
    assert [e.data for e in events] == [{
        "config_entry_id": house.entry_id, "trace_id": response["trace_id"], "outcome": "dry_run",
        "failed_gate": None, "entity_id": "input_boolean.boiler", "source_agent": "hermes",
    }]
    last = hass.states.get(LAST)
    assert last.state == "dry_run" and last.attributes["trace_id"] == response["trace_id"]


async def test_allow_executes_and_the_state_changes(hass: HomeAssistant, house: MockConfigEntry) -> None:
    await allow_control(hass)
    response = await evaluate(hass, {"intent": "turn_on", "device_alias": "Kettle"})
    assert response["outcome"] == "executed" and response["result"]["status"] == "success"
    assert response["result"]["execution"]["state_before"] == "off"
    assert response["result"]["state"] == "on"
    assert hass.states.get("switch.kettle").state == "on"
    again = await evaluate(hass, {"intent": "turn_on", "device_alias": "Kettle"})
    assert again["outcome"] == "executed" and again["result"]["execution"]["no_op"] is True


async def test_climate_set_temperature(hass: HomeAssistant, house: MockConfigEntry) -> None:
    await allow_control(hass)
    response = await evaluate(hass, {"intent": "set_temperature", "device_alias": "living room",
                                     "params": {"temperature": 21.5}})
    assert response["outcome"] == "executed", response["gate_results"][-1]
    assert hass.states.get("climate.living_room").attributes["temperature"] == 21.5
    too_hot = await evaluate(hass, {"intent": "set_temperature", "device_alias": "living room",
                                    "params": {"temperature": 30}})
    assert too_hot["outcome"] == "blocked" and too_hot["gate_results"][-1]["gate"] == "capability"


async def test_phantom_success_fails(
    hass: HomeAssistant, house: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    await allow_control(hass)
    task = hass.async_create_task(evaluate(hass, {"intent": "turn_on", "device_alias": "broken plug"}))
    for _ in range(20):  # let the call return and the wait begin
        await asyncio.sleep(0)
    assert not task.done()
    freezer.tick(timedelta(seconds=1.5))  # past the 1 s wait
    async_fire_time_changed(hass)
    response = await task
    assert response["outcome"] == "failed" and response["result"]["status"] == "failure"
    assert response["gate_results"][-1]["reason"].startswith("phantom success: switch.turn_on returned")
    assert hass.states.get("switch.broken_plug").state == "off"


async def test_lock_is_denied(hass: HomeAssistant, house: MockConfigEntry) -> None:
    await allow_control(hass)
    response = await evaluate(hass, {"intent": "unlock", "device_alias": "front door"})
    assert response["outcome"] == "blocked"
    assert response["gate_results"][-1]["gate"] == "policy"
    assert hass.states.get("lock.front_door").state == "locked"


async def test_unexposed_and_ambiguous_block_an_unchanged_push_thermostat_does_not(
    hass: HomeAssistant, house: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    await allow_control(hass)
    hidden = await evaluate(hass, {"intent": "turn_on", "device_alias": "hidden fan"})
    assert hidden["outcome"] == "blocked" and hidden["gate_results"][-1]["gate"] == "device_resolved"
    ambiguous = await evaluate(hass, {"intent": "turn_on", "device_alias": "lamp"})
    assert ambiguous["gate_results"][-1]["reason"] == (
        "ambiguous: lamp matches 2 entities (input_boolean.lamp_1, input_boolean.lamp_2)")
    assert [a["entity_id"] for a in ambiguous["gate_results"][-1]["evidence"]["alternatives"]] == [
        "input_boolean.lamp_1", "input_boolean.lamp_2"]
    freezer.tick(timedelta(seconds=31))  # the thermostat (risk 2, 30 s) pushes its state only when it changes
    unchanged = await evaluate(hass, {"intent": "set_temperature", "device_alias": "living room",
                                      "params": {"temperature": 22}})
    assert unchanged["outcome"] == "executed", unchanged["gate_results"]
    assert unchanged["gate_results"][4]["evidence"]["push"] is True
    assert unchanged["gate_results"][4]["evidence"]["polls"] is False
    assert hass.states.get("climate.living_room").attributes["temperature"] == 22
    # A template entity is computed from HA's states: refreshing it re-renders it, so it passes after one refresh.
    garage = await evaluate(hass, {"intent": "open", "device_alias": "garage door"})
    assert garage["outcome"] == "pending_confirmation"
    assert garage["gate_results"][4]["evidence"]["first_attempt"]["reason"].startswith("stale: refresh and retry")


async def test_confirm_executes_with_an_admin(
    hass: HomeAssistant, house: MockConfigEntry, hass_admin_user: User, hass_read_only_user: User
) -> None:
    await allow_control(hass)
    pending = await evaluate(hass, {"intent": "open", "device_alias": "garage door"})
    assert pending["outcome"] == "pending_confirmation"
    trace_id = pending["trace_id"]
    notes = persistent_notification._async_get_or_create_notifications(hass)
    message = notes[notification_id(trace_id)]["message"]
    assert trace_id in message and "asks: **Open Garage door**." in message  # the name, not cover.garage_door
    assert "cover.garage_door" not in message and "orchestrator" not in message
    assert hass.states.get("cover.garage_door").state == "closed"

    with pytest.raises(ServiceValidationError) as err:  # an automation (no user)
        await hass.services.async_call(DOMAIN, "confirm", {"trace_id": trace_id}, blocking=True)
    assert err.value.translation_key == "admin_required"
    with pytest.raises(ServiceValidationError) as err:  # not an Unauthorized: REST would count it as a failed login
        await hass.services.async_call(DOMAIN, "confirm", {"trace_id": trace_id}, blocking=True,
                                       context=Context(user_id=hass_read_only_user.id))
    assert err.value.translation_key == "admin_required"
    done = await hass.services.async_call(DOMAIN, "confirm", {"trace_id": trace_id}, blocking=True,
                                          context=Context(user_id=hass_admin_user.id), return_response=True)
    assert done["trace_id"] == trace_id and done["outcome"] == "executed"
    assert done["result"]["execution"]["confirmed_by"] == hass_admin_user.id
    assert hass.states.get("cover.garage_door").state == "open"
    assert notification_id(trace_id) not in persistent_notification._async_get_or_create_notifications(hass)
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(DOMAIN, "confirm", {"trace_id": trace_id}, blocking=True,
                                       context=Context(user_id=hass_admin_user.id))
    assert err.value.translation_key == "not_pending"
    stored = await hass.services.async_call(DOMAIN, "get_traces", {"entity_id": "cover.garage_door"}, blocking=True,
                                            return_response=True)
    assert [t["outcome"] for t in stored["traces"]] == ["executed"]
    assert [h["outcome"] for h in stored["traces"][0]["history"]] == [
        "requested", "pending_confirmation", "confirmed", "executed"]


async def test_reject_and_expire(
    hass: HomeAssistant, house: MockConfigEntry, hass_admin_user: User, freezer: FrozenDateTimeFactory
) -> None:
    await allow_control(hass)
    first = await evaluate(hass, {"intent": "open", "device_alias": "garage door"})
    admin = Context(user_id=hass_admin_user.id)
    await hass.services.async_call(DOMAIN, "reject", {"trace_id": first["trace_id"]}, blocking=True, context=admin)
    freezer.tick(timedelta(seconds=1))
    async_fire_time_changed(hass)
    await hass.async_block_till_done()
    hass.states.async_set("cover.garage_door", "closed", hass.states.get("cover.garage_door").attributes,
                          force_update=True)  # the cover reports again
    second = await evaluate(hass, {"intent": "open", "device_alias": "garage door"})
    assert second["outcome"] == "pending_confirmation"
    freezer.tick(timedelta(minutes=10, seconds=1))
    async_fire_time_changed(hass)
    await hass.async_block_till_done()
    traces = (await hass.services.async_call(DOMAIN, "get_traces", {}, blocking=True, return_response=True))["traces"]
    by_id = {t["trace_id"]: t for t in traces}
    assert by_id[first["trace_id"]]["outcome"] == "rejected"
    assert by_id[first["trace_id"]]["history"][-1]["user_id"] == hass_admin_user.id
    assert by_id[second["trace_id"]]["outcome"] == "expired"
    assert hass.states.get("cover.garage_door").state == "closed"
    notes = persistent_notification._async_get_or_create_notifications(hass)
    assert not [n for n in notes if n.startswith(f"{DOMAIN}_confirm_")]
    only = await hass.services.async_call(DOMAIN, "get_traces", {"outcome": "expired"}, blocking=True,
                                          return_response=True)
    assert [t["trace_id"] for t in only["traces"]] == [second["trace_id"]]


async def test_pending_survives_a_restart_with_its_notification(
    hass: HomeAssistant, house: MockConfigEntry, hass_admin_user: User, hass_storage: dict[str, Any]
) -> None:
    await allow_control(hass)
    pending = await evaluate(hass, {"intent": "open", "device_alias": "garage door"},
                             raw_input="open the garage, token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc")
    trace_id = pending["trace_id"]
    assert await hass.config_entries.async_unload(house.entry_id)
    stored = hass_storage[f"{DOMAIN}.{house.entry_id}.traces"]["data"]["traces"]
    assert stored[-1]["raw_input"] == "open the garage, token **REDACTED**"
    assert hass_storage[f"{DOMAIN}.{house.entry_id}.control"]["data"]["pending"][0]["trace_id"] == trace_id
    persistent_notification.async_dismiss_all(hass)  # notifications live only in memory: a restart loses them

    assert await hass.config_entries.async_setup(house.entry_id)
    await hass.async_block_till_done()
    assert hass.states.get(SWITCH).state == "on"
    notes = persistent_notification._async_get_or_create_notifications(hass)
    assert notification_id(trace_id) in notes
    hass.states.async_set("cover.garage_door", "closed", hass.states.get("cover.garage_door").attributes,
                          force_update=True)
    done = await hass.services.async_call(DOMAIN, "confirm", {"trace_id": trace_id}, blocking=True,
                                          context=Context(user_id=hass_admin_user.id), return_response=True)
    assert done["outcome"] == "executed" and hass.states.get("cover.garage_door").state == "open"


async def test_scheduler_issues_start_and_stop_through_the_gates(
    hass: HomeAssistant, house: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    await allow_control(hass)
    planner = house.runtime_data.planner
    plan = planner.states["dishwasher"].plan
    assert plan is not None and plan.start is not None and plan.end is not None
    freezer.move_to(plan.start)
    async_fire_time_changed(hass, plan.start)
    await hass.async_block_till_done()
    assert hass.states.get("input_boolean.dishwasher").state == "on"
    freezer.move_to(plan.end)
    async_fire_time_changed(hass, plan.end)
    await hass.async_block_till_done()
    assert hass.states.get("input_boolean.dishwasher").state == "off"
    traces = (await hass.services.async_call(DOMAIN, "get_traces", {"entity_id": "input_boolean.dishwasher"},
                                             blocking=True, return_response=True))["traces"]
    assert [(t["source_agent"], t["outcome"], t["dry_run_plan"]["service"]) for t in traces] == [
        ("scheduler", "executed", "turn_off"), ("scheduler", "executed", "turn_on")]
    assert traces[1]["dry_run_plan"]["slot_start"] == plan.start.isoformat()


def test_logbook_describes_decisions() -> None:
    assert describe({"outcome": "blocked", "failed_gate": "policy", "source_agent": "hermes"}) == (
        "was blocked by the policy check for hermes")
    assert describe({"outcome": "executed", "source_agent": "scheduler"}) == (
        "was switched by the scheduler through the gates")
    assert describe({"outcome": "pending_confirmation", "source_agent": "orchestrator"}) == (
        "waits for an administrator to confirm the assistant's command")
    assert describe({"outcome": "blocked", "failed_gate": "device_resolved", "source_agent": "grid"}) == (
        "was blocked by the device check for the grid plan")
    assert describe({"outcome": "confirmed", "source_agent": "mcp"}) == (  # an MCP client's held call
        "had an MCP assistant's command confirmed")


async def test_only_an_admin_turns_device_control_on(
    hass: HomeAssistant, house: MockConfigEntry, hass_admin_user: User
) -> None:
    kid = await hass.auth.async_create_user("kid", group_ids=[GROUP_ID_USER])
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call("switch", "turn_on", {"entity_id": SWITCH}, blocking=True,
                                       context=Context(user_id=kid.id))
    assert err.value.translation_key == "admin_required_control"
    assert hass.states.get(SWITCH).state == "off"
    await hass.services.async_call("switch", "turn_on", {"entity_id": SWITCH}, blocking=True,
                                   context=Context(user_id=hass_admin_user.id))
    assert hass.states.get(SWITCH).state == "on"
    await hass.services.async_call("switch", "turn_off", {"entity_id": SWITCH}, blocking=True,
                                   context=Context(user_id=kid.id))  # anyone may stop it
    assert hass.states.get(SWITCH).state == "off"


async def test_a_push_thermostat_confirmed_minutes_later_executes(
    hass: HomeAssistant, house: MockConfigEntry, hass_admin_user: User, freezer: FrozenDateTimeFactory
) -> None:
    await allow_control(hass)
    control = house.runtime_data.control
    control.keeper.settings.rules = (
        PolicyRule("set_temperature", "climate", 0, 5, PolicyAction.CONFIRM, "user"), *control.keeper.settings.rules)
    pending = await evaluate(hass, {"intent": "set_temperature", "device_alias": "living room",
                                    "params": {"temperature": 22}})
    assert pending["outcome"] == "pending_confirmation"
    freezer.tick(timedelta(minutes=9))  # within the 10 min a confirmation lives; the push-only thermostat has not
    # changed, so its state is current, not stale
    done = await hass.services.async_call(DOMAIN, "confirm", {"trace_id": pending["trace_id"]}, blocking=True,
                                          context=Context(user_id=hass_admin_user.id), return_response=True)
    assert done["outcome"] == "executed"
    assert hass.states.get("climate.living_room").attributes["temperature"] == 22


async def test_get_traces_validates_its_filters(hass: HomeAssistant, house: MockConfigEntry) -> None:
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(DOMAIN, "get_traces", {"since": "2026-11-30T10:00:00+00:00",
                                                              "until": "2026-11-30T09:00:00+00:00"},
                                       blocking=True, return_response=True)
    assert err.value.translation_key == "since_after_until"
    for limit, key in ((True, "field_not_a_number"), (2.7, "field_not_a_whole_number"), (0, "field_below_minimum")):
        with pytest.raises(ServiceValidationError) as err:
            await hass.services.async_call(DOMAIN, "get_traces", {"limit": limit}, blocking=True,
                                           return_response=True)
        assert err.value.translation_key == key


async def test_invalid_stored_rules_deny_everything(hass: HomeAssistant, tz: str) -> None:
    """A hand-edited rule that no longer validates: prices still load, every command is denied, a repair says why."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "input_boolean", {"input_boolean": {"boiler": {"name": "Boiler"}}})
    async_expose_entity(hass, "conversation", "input_boolean.boiler", True)
    entry = sample_entry(policy_rules=[{"operation": "turn_on", "device_type": "switch", "action": "maybe"}])
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    issue = ir.async_get(hass).async_get_issue(DOMAIN, f"policy_invalid_{entry.entry_id}")
    assert issue is not None and issue.translation_placeholders["error"].startswith("rule 0: value must be one of")
    response = await evaluate(hass, {"intent": "turn_on", "device_alias": "boiler"})
    assert response["outcome"] == "blocked" and response["gate_results"][-1]["gate"] == "policy"
    assert hass.states.get("sensor.agentic_hems_electricity_price").state != "unavailable"


async def test_the_trace_ring_keeps_the_newest(
    hass: HomeAssistant, house: MockConfigEntry, monkeypatch: pytest.MonkeyPatch, hass_storage: dict[str, Any]
) -> None:
    assert MAX_TRACES >= 500  # the ring keeps at least the last 500; shrunk here to see it turn
    monkeypatch.setattr("custom_components.agentic_hems.control.manager.MAX_TRACES", 3)
    ids = [(await evaluate(hass, {"intent": "turn_on", "device_alias": f"lamp {i}"}))["trace_id"] for i in range(5)]
    control = house.runtime_data.control
    assert list(control.traces) == ids[2:]
    assert await hass.config_entries.async_unload(house.entry_id)
    stored = hass_storage[f"{DOMAIN}.{house.entry_id}.traces"]["data"]["traces"]
    assert [t["trace_id"] for t in stored] == ids[2:]
    assert await hass.config_entries.async_setup(house.entry_id)
    await hass.async_block_till_done()
    assert list(house.runtime_data.control.traces) == ids[2:]


async def test_pending_confirmations_are_capped(hass: HomeAssistant, house: MockConfigEntry) -> None:
    await allow_control(hass)
    kid = Context(user_id=(await hass.auth.async_create_user("kid", group_ids=[GROUP_ID_USER])).id)
    garage = {"intent": "open", "device_alias": "garage door"}
    for i in range(5):  # five agents: no command repeats another (a repeat would join, see below)
        response = await evaluate(hass, garage, context=kid, source_agent=f"agent{i}")
        assert response["outcome"] == "pending_confirmation"
    with pytest.raises(ServiceValidationError) as err:
        await evaluate(hass, garage, context=kid, source_agent="agent5")
    assert err.value.translation_key == "pending_limit_user"
    assert err.value.translation_placeholders["maximum"] == "5"
    refused = house.runtime_data.control.traces[err.value.translation_placeholders["trace_id"]]
    assert refused["outcome"] == "blocked" and refused["gate_results"][-1]["reason"].startswith("refused:")
    for n in range(3):
        member = Context(user_id=(await hass.auth.async_create_user(f"m{n}", group_ids=[GROUP_ID_USER])).id)
        for i in range(5):
            response = await evaluate(hass, garage, context=member, source_agent=f"agent{i}")
            assert response["outcome"] == "pending_confirmation"
    with pytest.raises(ServiceValidationError) as err:  # the 21st, by an automation: the site's total
        await evaluate(hass, garage)
    assert err.value.translation_key == "pending_limit_total"
    notes = persistent_notification._async_get_or_create_notifications(hass)
    assert len([n for n in notes if n.startswith(f"{DOMAIN}_confirm_")]) == 20


async def test_a_repeat_joins_the_pending_command(hass: HomeAssistant, house: MockConfigEntry) -> None:
    await allow_control(hass)
    control = house.runtime_data.control
    decisions = async_capture_events(hass, EVENT_GATE_DECISION)
    created: list[str] = []
    real_create = persistent_notification.async_create

    def _create(*args: Any, **kwargs: Any) -> None:
        created.append(kwargs["notification_id"])
        real_create(*args, **kwargs)

    start = NOW + timedelta(minutes=15)
    garage = {"intent": "open", "device_alias": "garage door"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("custom_components.agentic_hems.control.manager.persistent_notification.async_create", _create)
        first = await control.async_evaluate(source_agent="scheduler", candidate=garage, context=Context(),
                                             slot_start=start)
        again = await control.async_evaluate(source_agent="scheduler", candidate=garage, context=Context(),
                                             slot_start=start)
    await hass.async_block_till_done()
    assert first["outcome"] == again["outcome"] == "pending_confirmation"
    assert again["trace_id"] == first["trace_id"] and list(control.keeper.pending) == [first["trace_id"]]
    assert created == [notification_id(first["trace_id"])] and len(decisions) == 1
