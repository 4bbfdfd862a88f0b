"""Gate 8, Execution: verified calls, no-ops, phantom success and call failures (pure core, recording actuator)."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.agentic_hems.gates.execution import execute, state_matches
from custom_components.agentic_hems.gates.models import DryRunPlan
from custom_components.agentic_hems.gates.tables import expected_state
from custom_components.agentic_hems.gates.view import StateInfo

from .fakes import NOW, RecordingActuator, house


def plan(entity_id: str, domain: str, service: str, data: dict[str, Any] | None = None) -> DryRunPlan:
    data = data or {}
    return DryRunPlan(domain=domain, service=service, target={"entity_id": entity_id}, data=data,
                      expected_state=expected_state(domain, service, data), idempotency_key="k")


def state(value: str, **attributes: Any) -> StateInfo:
    return StateInfo(entity_id="x.y", state=value, attributes=attributes, last_updated=NOW)


@pytest.mark.parametrize(
    ("expected", "shown", "matches"),
    [
        ({"states": ["open", "opening"]}, state("opening"), True),
        ({"states": ["open", "opening"]}, state("closed"), False),
        ({"numeric_state": 45.5}, state("45.5"), True),
        ({"numeric_state": 45.5}, state("45.0"), False),
        ({"numeric_state": 45.5}, state("unknown"), False),
        ({"attributes": {"temperature": 21.5}}, state("heat", temperature=21.5), True),
        ({"attributes": {"temperature": 21.5}}, state("heat", temperature=20), False),
        ({"attributes": {"temperature": 21.5}}, state("heat"), False),
        ({}, state("on"), False),  # nothing observable never "already there"
        ({"states": ["on"]}, None, False),
    ],
)
def test_state_matches(expected: dict[str, Any], shown: StateInfo | None, matches: bool) -> None:
    assert state_matches(expected, shown) is matches


async def test_executes_and_verifies() -> None:
    view = house()
    actuator = RecordingActuator(view)
    result, remember = await execute(plan("cover.garage_door", "cover", "open_cover"), view.state("cover.garage_door"),
                                     actuator, wait_s=10, now=NOW)
    assert result.passed and remember
    assert actuator.calls == [("cover", "open_cover", "cover.garage_door", {})]
    assert result.evidence | {"executed_at": None} == {
        "service": "cover.open_cover", "entity_id": "cover.garage_door", "data": {}, "state_before": "closed",
        "state_after": "open", "no_op": False, "verified": True, "wait_s": 10, "error": None, "executed_at": None,
    }


async def test_already_there_is_a_no_op_without_a_call() -> None:
    view = house()
    actuator = RecordingActuator(view)
    result, remember = await execute(plan("lock.front_door", "lock", "lock"), view.state("lock.front_door"), actuator,
                                     wait_s=10, now=NOW)
    assert result.passed and remember and result.evidence["no_op"] is True
    assert actuator.calls == []


async def test_phantom_success_fails_but_is_remembered() -> None:
    view = house()
    actuator = RecordingActuator(view, phantom={"switch.kettle"})
    result, remember = await execute(plan("switch.kettle", "switch", "turn_on"), view.state("switch.kettle"), actuator,
                                     wait_s=3, now=NOW)
    assert not result.passed and remember
    assert result.reason.startswith("phantom success: switch.turn_on returned but switch.kettle did not reach")
    assert result.evidence["error"] == "phantom success" and result.evidence["state_after"] is None
    assert len(actuator.calls) == 1


async def test_call_error_fails_and_is_not_remembered() -> None:
    view = house()
    actuator = RecordingActuator(view, failing={"switch.kettle"})
    result, remember = await execute(plan("switch.kettle", "switch", "turn_on"), view.state("switch.kettle"), actuator,
                                     wait_s=3, now=NOW)
    assert not result.passed and not remember
    assert result.evidence["error"] == "switch.kettle did not answer"


async def test_nothing_observable_is_executed_unverified() -> None:
    view = house()
    actuator = RecordingActuator(view)
    result, remember = await execute(plan("switch.kettle", "button", "press"), view.state("switch.kettle"), actuator,
                                     wait_s=3, now=NOW)
    assert result.passed and remember and result.evidence["verified"] is False
    assert len(actuator.calls) == 1
