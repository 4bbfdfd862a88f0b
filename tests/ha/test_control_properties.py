"""Property test in a real HA: no actuating service call reaches an entity unless every gate passed and policy
allowed or an administrator confirmed.

Calls are counted by a recorder of ``call_service`` events on the bus, not by mocking gates. A call counts as an
actuation when it targets one of the house's nameable entities with anything but ``homeassistant.update_entity``
(template entities then call their own relays, which are unexposed helpers no candidate can name).
"""

from __future__ import annotations

import asyncio
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from hypothesis import HealthCheck, given, settings, strategies as st
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from homeassistant.auth.models import User
from homeassistant.const import EVENT_CALL_SERVICE
from homeassistant.core import Context, Event, HomeAssistant, callback

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.gates.models import PolicyAction
from custom_components.agentic_hems.gates.tables import DOMAINS, INTENTS, PolicyRule, effective_policy

from .test_control import EXPOSED, allow_control, house  # noqa: F401  (house is a fixture)

NAMEABLE = set(EXPOSED) | {"input_boolean.dishwasher", "input_boolean.washing_machine", "input_boolean.ev_charger",
                           "input_boolean.hidden_fan"}
ALIASES = ["boiler", "kettle", "front door", "living room", "garage door", "lamp", "hidden fan", "dishwasher plug",
           "input_boolean.dishwasher", "switch.agentic_hems_allow_device_control", "wallbox", "nothing"]
PARAMS = {"set_temperature": {"temperature": 21}, "set_brightness": {"brightness": 50},
          "set_hvac_mode": {"hvac_mode": "heat"}, "set_value": {"value": 3}}

PASSABLE = [("boiler", "turn_on"), ("boiler", "turn_off"), ("kettle", "turn_on"), ("kettle", "turn_off"),
            ("front door", "lock"), ("front door", "unlock"), ("living room", "set_temperature"),
            ("living room", "set_hvac_mode"), ("garage door", "open"), ("garage door", "close"),
            ("dishwasher plug", "start"), ("wallbox", "stop"), ("input_boolean.dishwasher", "turn_on")]
pairs = st.one_of(st.sampled_from(PASSABLE), st.tuples(st.sampled_from(ALIASES), st.sampled_from(sorted(INTENTS))))
candidates = st.builds(
    lambda pair: {"intent": pair[1], "device_alias": pair[0], "params": PARAMS.get(pair[1], {})}, pairs
)
rules = st.lists(
    st.builds(lambda op, dt, action: PolicyRule(op, dt, 0, 5, action, "user"),
              st.sampled_from(["*", *sorted(INTENTS)]), st.sampled_from(["*", *sorted(DOMAINS)]),
              st.sampled_from(list(PolicyAction))),
    max_size=3,
)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(st.tuples(candidates, st.booleans()), min_size=1, max_size=3), policy=rules)
async def test_no_actuation_without_every_gate_and_allow_or_admin_confirmation(
    hass: HomeAssistant, house: MockConfigEntry, hass_admin_user: User, freezer: FrozenDateTimeFactory,  # noqa: F811
    steps: list[tuple[dict[str, Any], bool]], policy: list[PolicyRule],
) -> None:
    if hass.states.get("switch.agentic_hems_allow_device_control").state != "on":
        await allow_control(hass)
    control = house.runtime_data.control
    control.keeper.settings.rules = effective_policy(policy)
    calls: list[tuple[str, str, str]] = []

    @callback
    def _record(event: Event) -> None:
        data = event.data
        targets = data.get("service_data", {}).get("entity_id", [])
        for entity_id in [targets] if isinstance(targets, str) else targets:
            if entity_id in NAMEABLE and (data["domain"], data["service"]) != ("homeassistant", "update_entity"):
                calls.append((data["domain"], data["service"], entity_id))

    unsub = hass.bus.async_listen(EVENT_CALL_SERVICE, _record)

    async def run(coro: Any) -> Any:
        task = hass.async_create_task(coro)
        for _ in range(50):
            await asyncio.sleep(0)
            if task.done():
                break
        else:  # waiting for a state that does not come: let the phantom-success timer fire
            freezer.tick(11)
            async_fire_time_changed(hass)
        return await task

    records = []
    try:
        for candidate, confirm in steps:
            hass.states.async_set("cover.garage_door", hass.states.get("cover.garage_door").state,
                                  hass.states.get("cover.garage_door").attributes, force_update=True)
            response = await run(hass.services.async_call(
                DOMAIN, "evaluate_command", {"source_agent": "prop", "model_candidate": candidate},
                blocking=True, return_response=True, context=Context()))
            records.append(control.traces[response["trace_id"]])
            if confirm and response["outcome"] == "pending_confirmation":
                await run(hass.services.async_call(DOMAIN, "confirm", {"trace_id": response["trace_id"]},
                                                   blocking=True, context=Context(user_id=hass_admin_user.id)))
                records.append(control.traces[response["trace_id"]])
    finally:
        unsub()

    latest = {r["trace_id"]: r for r in records}.values()  # a confirmed trace replaces its pending record
    acted = [r for r in latest if r["outcome"] in ("executed", "failed") and not r["execution_result"]["no_op"]]
    allowed = {}
    for record in acted:
        gates = record["gate_results"]
        assert [g["gate"] for g in gates][:7] == ["input_guard", "schema", "device_resolved", "capability",
                                                  "freshness", "policy", "dry_run"]
        assert all(g["passed"] for g in gates[:7])
        action = gates[5]["evidence"]["action"]
        confirmed_by = [h["user_id"] for h in record["history"] if h["outcome"] == "confirmed"]
        assert action == "allow" or (action == "confirm" and confirmed_by == [hass_admin_user.id]), record
        plan = record["dry_run_plan"]
        allowed[(plan["domain"], plan["service"], plan["target"]["entity_id"])] = True
    for call in calls:
        assert call in allowed, (call, [r["outcome"] for r in records])
    assert "switch.agentic_hems_allow_device_control" not in {c[2] for c in calls}
