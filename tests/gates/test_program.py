"""A program appliance's steps through the gates: the remote-start interlock and the read-back of a start button.

The fake dishwasher has home_connect's shapes: a program select, a start button (``unknown`` until pressed), a
"remote start" binary sensor and an operation state sensor. Oracles: the recorded calls, the sensor's state, and the
reasons written out by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from custom_components.agentic_hems.gates import capability, device_resolved, freshness, schema
from custom_components.agentic_hems.gates.keeper import Gatekeeper, Settings
from custom_components.agentic_hems.gates.view import EntityInfo, StateInfo

from .fakes import NOW, FakeView, RecordingActuator, context, house, through

ECO = "dishcare_dishwasher_program_eco_50"
SELECT, BUTTON = "select.dishwasher_program", "button.dishwasher_start"
REMOTE, OPERATION = "binary_sensor.dishwasher_remote_start", "sensor.dishwasher_operation_state"
RUNNING = ("run", "delayedstart")


def dishwasher(remote: str = "on", operation: str = "ready", button: str = "unknown") -> FakeView:
    view = house()
    view.services |= {("select", "select_option")}
    view.add(EntityInfo(entity_id=SELECT, name="Dishwasher program", capabilities={"options": [ECO, "auto_2"]},
                        requires_on=(REMOTE,)), "auto_2", options=[ECO, "auto_2"])
    view.add(EntityInfo(entity_id=BUTTON, name="Dishwasher start", requires_on=(REMOTE,),
                        confirmed_by=(OPERATION, RUNNING)), button)
    view.add(EntityInfo(entity_id=REMOTE, name="Remote start"), remote)
    view.add(EntityInfo(entity_id=OPERATION, name="Operation state"), operation)
    view.appliances |= {SELECT, BUTTON}
    return view


@dataclass
class Dishwasher(RecordingActuator):
    """A start press sets the operation state to ``run`` (unless the button is in ``phantom``)."""

    async def async_call(self, domain: str, service: str, entity_id: str, data: Mapping[str, Any]) -> None:
        await super().async_call(domain, service, entity_id, data)
        if (domain, service) == ("button", "press") and entity_id not in self.phantom:
            old = self.view.states[OPERATION]
            self.view.states[OPERATION] = StateInfo(entity_id=OPERATION, state="run", last_updated=NOW,
                                                    last_reported=NOW, attributes=old.attributes)


PRESS = {"intent": "press", "device_alias": BUTTON}
SELECT_ECO = {"intent": "select_option", "device_alias": SELECT, "params": {"option": ECO}}


@pytest.mark.parametrize(("remote", "shown"), [("off", "off"), ("unavailable", "unavailable"), (None, "missing")])
def test_capability_refuses_a_program_step_while_remote_start_is_not_on(remote: str | None, shown: str) -> None:
    view = dishwasher(remote or "on")
    if remote is None:
        del view.states[REMOTE]
    for candidate, entity_id in ((SELECT_ECO, SELECT), (PRESS, BUTTON)):
        ctx = through(context(candidate, view), schema.evaluate, device_resolved.evaluate)
        result = capability.evaluate(ctx)
        assert not result.passed
        assert result.reason == f"{entity_id} does not allow a remote start now: {REMOTE} is {shown}"
        assert result.evidence["requires_on"] == {REMOTE: remote}


def test_capability_passes_a_program_step_while_remote_start_is_on() -> None:
    ctx = through(context(SELECT_ECO, dishwasher()), schema.evaluate, device_resolved.evaluate)
    result = capability.evaluate(ctx)
    assert result.passed and result.evidence["requires_on"] == {REMOTE: "on"}


@pytest.mark.parametrize(("state", "passes"), [("unknown", True), ("2026-01-05T11:00:00+00:00", True),
                                               ("unavailable", False)])
def test_a_button_is_fresh_unless_unavailable_however_old(state: str, passes: bool) -> None:
    view = dishwasher(button=state)
    view.add(view.entities[BUTTON], state, age=timedelta(days=3))
    ctx = through(context(PRESS, view), schema.evaluate, device_resolved.evaluate, capability.evaluate)
    result = freshness.evaluate(ctx)
    assert result.passed is passes
    assert result.evidence.get("stateless", False) is passes


async def test_a_press_is_executed_and_read_back_on_the_operation_sensor() -> None:
    view = dishwasher()
    actuator = Dishwasher(view)
    record = await Gatekeeper(Settings(allow_control=True), lambda: NOW).evaluate(
        view, actuator, source_agent="scheduler", candidate=PRESS)
    assert record["outcome"] == "executed", record
    assert actuator.calls == [("button", "press", BUTTON, {})]
    assert record["dry_run_plan"]["expected_state"] == {"entity_id": OPERATION, "states": ["run", "delayedstart"]}
    result = record["execution_result"]
    assert (result["verified"], result["state_before"], result["state_after"]) == (True, "ready", "run")


async def test_a_press_the_appliance_ignores_fails_as_a_phantom_success() -> None:
    view = dishwasher()
    actuator = Dishwasher(view, phantom={BUTTON})
    record = await Gatekeeper(Settings(allow_control=True, wait_s=0.0), lambda: NOW).evaluate(
        view, actuator, source_agent="scheduler", candidate=PRESS)
    assert record["outcome"] == "failed"
    assert record["gate_results"][-1]["reason"] == (
        f"phantom success: button.press returned but {OPERATION} did not reach "
        "{'entity_id': 'sensor.dishwasher_operation_state', 'states': ['run', 'delayedstart']} within 0 s")
    assert view.states[OPERATION].state == "ready"


@pytest.mark.parametrize("running", RUNNING)
async def test_a_running_program_is_not_started_again(running: str) -> None:
    view = dishwasher(operation=running)
    actuator = Dishwasher(view)
    record = await Gatekeeper(Settings(allow_control=True), lambda: NOW).evaluate(
        view, actuator, source_agent="scheduler", candidate=PRESS)
    assert record["outcome"] == "executed" and record["execution_result"]["no_op"] is True
    assert actuator.calls == []


async def test_remote_start_off_sends_nothing() -> None:
    view = dishwasher(remote="off")
    actuator = Dishwasher(view)
    keeper = Gatekeeper(Settings(allow_control=True), lambda: NOW)
    for candidate in (SELECT_ECO, PRESS):
        record = await keeper.evaluate(view, actuator, source_agent="scheduler", candidate=candidate)
        assert record["outcome"] == "blocked" and record["gate_results"][-1]["gate"] == "capability"
    assert actuator.calls == []
    assert view.states[SELECT].state == "auto_2"


@pytest.mark.parametrize(("idle_unknown", "passes"), [(True, True), (False, False)])
async def test_an_unknown_program_select_is_usable_only_where_unknown_means_idle(
    idle_unknown: bool, passes: bool
) -> None:
    view = dishwasher()
    view.add(EntityInfo(entity_id=SELECT, name="Dishwasher program", capabilities={"options": [ECO, "auto_2"]},
                        idle_unknown=idle_unknown), "unknown", options=[ECO, "auto_2"])
    actuator = Dishwasher(view)
    record = await Gatekeeper(Settings(allow_control=True), lambda: NOW).evaluate(
        view, actuator, source_agent="scheduler", candidate=SELECT_ECO)
    if passes:
        assert record["outcome"] == "executed" and view.states[SELECT].state == ECO
        assert actuator.calls == [("select", "select_option", SELECT, {"option": ECO})]
    else:
        assert record["outcome"] == "blocked" and actuator.calls == []
        assert (record["gate_results"][-1]["gate"], record["gate_results"][-1]["reason"]) == (
            "freshness", "state is unknown")


def test_an_unavailable_program_select_is_refused_even_where_unknown_means_idle() -> None:
    view = dishwasher()
    view.add(EntityInfo(entity_id=SELECT, capabilities={"options": [ECO]}, idle_unknown=True), "unavailable")
    passed, reason, _ = freshness.check(view.states[SELECT], 2, NOW, idle_unknown=True)
    assert (passed, reason) == (False, "state is unavailable")
