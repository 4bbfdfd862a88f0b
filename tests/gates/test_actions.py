"""Allow-listed integration actions through the gates: home_connect's program start on a dishwasher's device.

The fake dishwasher has home_connect's shapes (a program select of the ``home_connect`` platform on device
``dev-dw``, a remote-start binary sensor, an operation state sensor). Oracles: the service data written out by hand
from HA core's ``home_connect`` services.yaml (``device_id``, ``affects_to``, ``program``,
``b_s_h_common_option_start_in_relative`` in seconds), the recorded calls and the reasons.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from custom_components.agentic_hems.gates import capability, device_resolved, schema
from custom_components.agentic_hems.gates.keeper import Gatekeeper, Settings
from custom_components.agentic_hems.gates.values import plan_text
from custom_components.agentic_hems.gates.view import EntityInfo, StateInfo

from .fakes import NOW, FakeView, RecordingActuator, context, house, through

ECO = "dishcare_dishwasher_program_eco_50"
SELECT = "select.dishwasher_program"
REMOTE, OPERATION = "binary_sensor.dishwasher_remote_start", "sensor.dishwasher_operation_state"
RUNNING = ("run", "delayedstart")
START = ("home_connect", "set_program_and_options")


def dishwasher(remote: str = "on", operation: str = "ready", platform: str = "home_connect") -> FakeView:
    view = house()
    view.services |= {START, ("home_connect", "start_selected_program"), ("select", "select_option")}
    view.add(EntityInfo(entity_id=SELECT, name="Dishwasher program", capabilities={"options": [ECO, "auto_2"]},
                        requires_on=(REMOTE,), confirmed_by=(OPERATION, RUNNING), platform=platform,
                        device_id="dev-dw"), "auto_2", options=[ECO, "auto_2"])
    view.add(EntityInfo(entity_id=REMOTE, name="Remote start"), remote)
    view.add(EntityInfo(entity_id=OPERATION, name="Operation state"), operation)
    view.appliances |= {SELECT}
    return view


@dataclass
class Dishwasher(RecordingActuator):
    """A program start sets the operation state: ``delayedstart`` with a start-in delay, else ``run``."""

    async def async_call(self, domain: str, service: str, entity_id: str, data: Mapping[str, Any]) -> None:
        await super().async_call(domain, service, entity_id, data)
        if domain == "home_connect":
            state = "delayedstart" if data.get("b_s_h_common_option_start_in_relative") else "run"
            self.view.states[OPERATION] = StateInfo(entity_id=OPERATION, state=state, last_updated=NOW,
                                                    last_reported=NOW)


def start(delay: int | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"program": ECO} | ({"start_in_s": delay} if delay is not None else {})
    return {"intent": "start_program", "device_alias": SELECT, "params": params}


def test_the_action_targets_the_entitys_device_with_home_connects_fields() -> None:
    ctx = through(context(start(3600), dishwasher()), schema.evaluate, device_resolved.evaluate)
    command = ctx.command
    expected = ("home_connect", "set_program_and_options", "select")
    assert command is not None and (command.service_domain, command.service, command.domain) == expected
    assert dict(command.data) == {"device_id": "dev-dw", "affects_to": "active_program", "program": ECO,
                                  "b_s_h_common_option_start_in_relative": 3600}
    assert capability.evaluate(ctx).passed


def test_the_action_on_another_integrations_entity_has_no_service() -> None:
    ctx = through(context(start(), dishwasher(platform="template")), schema.evaluate, device_resolved.evaluate)
    result = capability.evaluate(ctx)
    assert not result.passed and result.reason == f"{SELECT} does not support start_program"


@pytest.mark.parametrize(("params", "path"), [
    ({"program": ECO, "device_id": "other"}, "params.device_id"),  # a caller never names the device
    ({"program": ECO, "start_in_s": -1}, "params.start_in_s"),
    ({"program": ECO, "start_in_s": 1.5}, "params.start_in_s"),
    ({"program": ECO, "start_in_s": True}, "params.start_in_s"),
    ({"start_in_s": 60}, "params.program"),
])
def test_the_schema_types_the_actions_params(params: dict[str, Any], path: str) -> None:
    result = schema.evaluate(context({"intent": "start_program", "device_alias": SELECT, "params": params}))
    assert not result.passed and [e["path"] for e in result.evidence["errors"]] == [path]


@pytest.mark.parametrize("intent", ["home_connect.change_setting", "change_setting", "call_service"])
def test_any_other_action_is_not_in_the_vocabulary(intent: str) -> None:
    result = schema.evaluate(context({"intent": intent, "device_alias": SELECT}))
    assert not result.passed and result.evidence["errors"][0]["path"] == "intent"


def test_a_program_the_select_does_not_offer_is_refused() -> None:
    candidate = {"intent": "start_program", "device_alias": SELECT, "params": {"program": "cooking_oven_x"}}
    ctx = through(context(candidate, dishwasher()), schema.evaluate, device_resolved.evaluate)
    result = capability.evaluate(ctx)
    assert not result.passed and result.reason.startswith("option 'cooking_oven_x' is not one of")


async def test_a_planned_delayed_start_executes_and_reads_back_delayedstart() -> None:
    view = dishwasher()
    actuator = Dishwasher(view)
    record = await Gatekeeper(Settings(allow_control=True), lambda: NOW).evaluate(
        view, actuator, source_agent="scheduler", candidate=start(5400),
        raw_input=f"{plan_text(SELECT, 5400, 's')}: delayed start of Dishwasher")
    assert record["outcome"] == "executed", record
    assert actuator.calls == [("home_connect", "set_program_and_options", SELECT,
                               {"device_id": "dev-dw", "affects_to": "active_program", "program": ECO,
                                "b_s_h_common_option_start_in_relative": 5400})]
    assert record["command"]["backend_action"] == "home_connect.set_program_and_options"
    result = record["execution_result"]
    assert (result["verified"], result["state_before"], result["state_after"]) == (True, "ready", "delayedstart")


@pytest.mark.parametrize(("raw_input", "reason"), [
    (f"{plan_text(SELECT, 3600, 's')}: delayed start", "the plan sets 3600 s, not 5400 s"),
    ("delayed start of Dishwasher", f"the plan sets no value for {SELECT}"),
])
async def test_a_delay_the_plan_did_not_state_is_refused(raw_input: str, reason: str) -> None:
    view = dishwasher()
    actuator = Dishwasher(view)
    record = await Gatekeeper(Settings(allow_control=True), lambda: NOW).evaluate(
        view, actuator, source_agent="scheduler", candidate=start(5400), raw_input=raw_input)
    assert record["outcome"] == "blocked" and actuator.calls == []
    assert record["gate_results"][-1]["reason"] == f"blocked by policy: {reason}"


async def test_the_assistant_cannot_start_a_program_nobody_asked_for() -> None:
    view = dishwasher()
    actuator = Dishwasher(view)
    record = await Gatekeeper(Settings(allow_control=True), lambda: NOW, read_request=lambda _: frozenset()).evaluate(
        view, actuator, source_agent="orchestrator", candidate=start(), raw_input="what does the dishwasher cost?")
    assert record["outcome"] == "blocked" and actuator.calls == []
    assert record["gate_results"][-1]["reason"] == "blocked by policy: the request asks for no device action"


async def test_a_running_program_is_not_started_again() -> None:
    view = dishwasher(operation="delayedstart")
    actuator = Dishwasher(view)
    record = await Gatekeeper(Settings(allow_control=True), lambda: NOW).evaluate(
        view, actuator, source_agent="scheduler", candidate=start())
    assert record["outcome"] == "executed" and record["execution_result"]["no_op"] is True
    assert actuator.calls == []


async def test_remote_start_off_sends_nothing() -> None:
    view = dishwasher(remote="off")
    actuator = Dishwasher(view)
    record = await Gatekeeper(Settings(allow_control=True), lambda: NOW).evaluate(
        view, actuator, source_agent="scheduler", candidate=start())
    assert record["outcome"] == "blocked" and actuator.calls == []
    assert record["gate_results"][-1]["reason"] == f"{SELECT} does not allow a remote start now: {REMOTE} is off"


async def test_start_selected_program_sends_only_the_device_and_the_planned_delay() -> None:
    view = dishwasher()
    actuator = Dishwasher(view)
    candidate = {"intent": "start_selected_program", "device_alias": SELECT, "params": {"start_in_s": 1800}}
    record = await Gatekeeper(Settings(allow_control=True), lambda: NOW).evaluate(
        view, actuator, source_agent="scheduler", candidate=candidate,
        raw_input=f"{plan_text(SELECT, 1800, 's')}: delayed start of Dishwasher")
    assert record["outcome"] == "executed", record
    assert actuator.calls == [("home_connect", "start_selected_program", SELECT,
                               {"device_id": "dev-dw", "b_s_h_common_option_start_in_relative": 1800})]
    assert record["execution_result"]["state_after"] == "delayedstart"
