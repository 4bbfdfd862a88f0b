"""A water heater's set_temperature through the gates: vocabulary, range, risk, policy, plan and execution."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.agentic_hems.gates import capability, device_resolved, schema
from custom_components.agentic_hems.gates.execution import execute, state_matches
from custom_components.agentic_hems.gates.models import DryRunPlan, Outcome, PolicyAction
from custom_components.agentic_hems.gates.pipeline import evaluate, run
from custom_components.agentic_hems.gates.policy import decide
from custom_components.agentic_hems.gates.tables import DEFAULT_POLICY, risk_level, service_for
from custom_components.agentic_hems.gates.view import EntityInfo, StateInfo
from custom_components.agentic_hems.gates.values import plan_text

from .fakes import NOW, FakeView, RecordingActuator, context, through

TANK = "water_heater.tank"
# HA's water_heater defaults without min_temp/max_temp: 110 and 140 °F, in °C
DEFAULT_LOW_C, DEFAULT_HIGH_C = 43.333333, 60.0


def tank_view(features: int = 1, **capabilities: Any) -> FakeView:
    """One water heater ("Tank", target 50 °C) with ``capabilities`` and its set_temperature service."""
    view = FakeView()
    view.services.add(("water_heater", "set_temperature"))
    view.add(EntityInfo(entity_id=TANK, name="Tank", supported_features=features, capabilities=capabilities),
             "heat_pump", temperature=50.0, current_temperature=47.5)
    return view


def check(temperature: float, view: FakeView) -> Any:
    candidate = {"intent": "set_temperature", "device_alias": TANK, "params": {"temperature": temperature}}
    return capability.evaluate(through(context(candidate, view), schema.evaluate, device_resolved.evaluate))


def test_vocabulary_risk_and_policy() -> None:
    assert service_for("water_heater", "set_temperature") == "set_temperature"
    assert service_for("water_heater", "turn_on") is None
    assert risk_level("water_heater", None) == 2
    assert decide(DEFAULT_POLICY, "set_temperature", "water_heater", 2)[1] is PolicyAction.ALLOW
    assert decide(DEFAULT_POLICY, "set_temperature", "water_heater", 3)[1] is PolicyAction.CONFIRM


@pytest.mark.parametrize(("temperature", "passed"), [(40, True), (65, True), (39.5, False), (65.5, False)])
def test_capability_checks_the_entity_range(temperature: float, passed: bool) -> None:
    result = check(temperature, tank_view(min_temp=40, max_temp=65))
    assert result.passed is passed
    assert result.evidence["service"] == "water_heater.set_temperature"
    assert result.evidence["ranges"] == {"min": 40.0, "max": 65.0}
    if not passed:
        assert result.reason == f"temperature {temperature} outside 40.0..65.0"


@pytest.mark.parametrize(("temperature", "passed"), [(43.5, True), (60, True), (43, False), (60.5, False)])
def test_capability_without_a_range_uses_ha_defaults(temperature: float, passed: bool) -> None:
    result = check(temperature, tank_view())
    assert result.passed is passed
    assert result.evidence["ranges"] == pytest.approx({"min": DEFAULT_LOW_C, "max": DEFAULT_HIGH_C})


def test_capability_refuses_without_the_target_temperature_feature() -> None:
    result = check(55, tank_view(features=2, min_temp=40, max_temp=65))  # OPERATION_MODE only
    assert not result.passed
    assert result.reason == f"{TANK} does not support set_temperature (supported_features)"


def test_pipeline_plans_the_target_temperature() -> None:
    view = tank_view(min_temp=40, max_temp=65)
    # the scheduler's command states its plan's value, to which the Policy gate binds it
    trace = evaluate(view, source_agent="scheduler", raw_input=plan_text(TANK, 55, "°C"), now=NOW, trace_id="t1",
                     candidate={"intent": "set_temperature", "device_alias": TANK, "params": {"temperature": 55}})
    assert trace.outcome is Outcome.DRY_RUN and trace.policy_action is PolicyAction.ALLOW
    assert trace.command is not None and trace.command.risk_level == 2
    plan = trace.as_dict()["dry_run_plan"]
    assert (plan["domain"], plan["service"], plan["target"], plan["data"]) == (
        "water_heater", "set_temperature", {"entity_id": TANK}, {"temperature": 55}
    )
    assert plan["expected_state"] == {"attributes": {"temperature": 55}}


def planned(view: FakeView, temperature: float) -> DryRunPlan:
    """The dry run's plan of setting the tank to ``temperature`` (every gate passed)."""
    ctx = context({"intent": "set_temperature", "device_alias": TANK, "params": {"temperature": temperature}}, view)
    assert run(ctx).outcome is Outcome.DRY_RUN and ctx.plan is not None
    return ctx.plan


def shown(target: float) -> StateInfo:
    return StateInfo(entity_id=TANK, state="heat_pump", attributes={"temperature": target}, last_updated=NOW)


def test_expected_state_is_the_target_attribute() -> None:
    expected = {"attributes": {"temperature": 55}}
    assert state_matches(expected, shown(55.0)) and not state_matches(expected, shown(50.0))


async def test_execution_sets_and_verifies_the_target() -> None:
    view = tank_view(min_temp=40, max_temp=65)
    plan = planned(view, 55)
    actuator = RecordingActuator(view)
    result, remember = await execute(plan, view.state(TANK), actuator, wait_s=5, now=NOW)
    assert result.passed and remember and result.evidence["verified"] is True
    assert actuator.calls == [("water_heater", "set_temperature", TANK, {"temperature": 55})]
    assert view.states[TANK].attributes["temperature"] == 55
    again, _ = await execute(plan, view.state(TANK), actuator, wait_s=5, now=NOW)
    assert again.passed and again.evidence["no_op"] is True and len(actuator.calls) == 1


async def test_execution_fails_when_the_target_does_not_change() -> None:
    view = tank_view(min_temp=40, max_temp=65)
    result, _ = await execute(planned(view, 55), view.state(TANK), RecordingActuator(view, phantom={TANK}),
                              wait_s=1, now=NOW)
    assert not result.passed and result.evidence["error"] == "phantom success"
