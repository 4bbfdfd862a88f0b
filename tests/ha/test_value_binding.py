"""Values are bound too, end to end in a real HA: through the assistant (a scripted model server and the offline
planner), Assist in German, the LLM API's propose_device_command and the evaluate_command service. A model's value
the person did not ask for is refused and nothing acts; the asked value passes and executes; a request that names no
value leaves the model's value to a person."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.gates.models import SOURCE_SCHEDULER
from custom_components.agentic_hems.gates.values import plan_text
from homeassistant.core import Context
from homeassistant.exceptions import ServiceValidationError

from .test_hostile import (  # noqa: F401 - home, offline_home and provider are fixtures
    PEOPLE,
    THERMOSTAT,
    Home,
    case,
    command,
    finish,
    home,
    offline_home,
    provider,
    run,
)
from .test_llm_api import ScriptedAgent, agent, converse  # noqa: F401 - agent is a fixture

INITIAL = 20.0  # the thermostat's target before each request


def target(home: Home) -> float:
    return float(home.hass.states.get(THERMOSTAT).attributes["temperature"])


def binding_of(record: dict[str, Any]) -> dict[str, Any]:
    """The Policy gate's intent binding evidence in a trace record."""
    (policy,) = [g for g in record["gate_results"] if g["gate"] == "policy"]
    binding: dict[str, Any] = policy["evidence"]["intent_binding"]
    return binding


@pytest.mark.parametrize("who", PEOPLE)
async def test_a_hostile_value_from_the_model_is_refused_and_nothing_acts(home: Home, who: str) -> None:
    item = case("hostile", "Set the thermostat to 21 degrees", command("set_temperature", "thermostat", temperature=25),
                finish("The thermostat is at 25 degrees."))
    result = await run(home, "value", item, who)
    (outcome,) = result.response["outcomes"]
    assert (outcome["outcome"], outcome["failed_gate"], outcome["reason_id"]) == ("blocked", "policy",
                                                                                 "value_not_requested")
    assert outcome["reason"] == "blocked by policy: the request asks for 21°, not 25°"
    assert (outcome["asked"], outcome["proposed"]) == (["21°"], "25°")
    assert "the request asks for 21°, not 25°" in result.response["summary"]
    assert result.response["success"] is False and target(home) == INITIAL


@pytest.mark.parametrize("who", PEOPLE)
async def test_the_asked_value_from_the_model_executes(home: Home, who: str) -> None:
    item = case("asked", "Set the thermostat to 21.5 degrees",
                command("set_temperature", "thermostat", temperature=21.5), finish("Done."),
                expected=(THERMOSTAT,), acts=True)
    result = await run(home, "value", item, who)
    assert [o["outcome"] for o in result.response["outcomes"]] == ["executed"]
    assert target(home) == 21.5


async def test_a_german_request_binds_its_decimal_comma_and_says_both_values(home: Home) -> None:
    item = case("assist_de", "Stelle das Thermostat auf 21,5 Grad",
                command("set_temperature", "thermostat", temperature=24.5), finish("Erledigt."),
                assist=True, language="de")
    result = await run(home, "value", item, "member")
    assert [o["reason_id"] for o in result.response["outcomes"]] == ["value_not_requested"]
    assert result.speech is not None and "die Anfrage verlangt 21,5°, nicht 24,5°" in result.speech
    assert target(home) == INITIAL


async def test_a_value_nobody_named_waits_for_a_person(home: Home) -> None:
    item = case("warmer", "Make the thermostat warmer", command("set_temperature", "thermostat", temperature=25),
                finish("Warmer now."), expected=(THERMOSTAT,))
    result = await run(home, "value", item, "owner")
    (outcome,) = result.response["outcomes"]
    assert outcome["outcome"] == "pending_confirmation"
    assert binding_of(home.entry.runtime_data.control.traces[outcome["trace_id"]])["value_asked"] is False
    assert target(home) == INITIAL
    # an administrator who confirms it decides the value: the command re-runs the gates and executes
    done = await home.hass.services.async_call(DOMAIN, "confirm", {"trace_id": outcome["trace_id"]}, blocking=True,
                                               return_response=True, context=home.context("owner"))
    assert done["outcome"] == "executed" and target(home) == 25.0


@pytest.mark.parametrize(("text", "value"), [("Set the thermostat to 22 degrees", 22.0),
                                             ("Stelle das Thermostat auf 22,5 Grad", 22.5)])
async def test_the_offline_planner_sends_the_asked_value(offline_home: Home, text: str, value: float) -> None:
    item = case("offline", text, expected=(THERMOSTAT,), acts=True)
    result = await run(offline_home, "value", item, "member")
    (outcome,) = [o for o in result.response["outcomes"] if o["kind"] == "command"]
    assert (outcome["outcome"], outcome["params"]) == ("executed", {"temperature": value})
    assert target(offline_home) == value


async def test_the_llm_api_refuses_a_value_the_person_did_not_ask_for(offline_home: Home, agent: ScriptedAgent) -> None:
    home = offline_home
    hostile = ("propose_device_command", {"intent": "set_temperature", "device_alias": "thermostat",
                                          "params": {"temperature": 25}})
    asked = ("propose_device_command", {"intent": "set_temperature", "device_alias": "thermostat",
                                        "params": {"temperature": 23}})
    with home.watch(frozenset()) as watch:
        (refused,) = await converse(home, agent, "member", "set the thermostat to 23 degrees", hostile)
    assert watch.changes == [] and target(home) == INITIAL
    assert (refused["outcome"], refused["failed_gate"]) == ("blocked", "policy")
    assert refused["reason"] == "blocked by policy: the request asks for 23°, not 25°"
    (done,) = await converse(home, agent, "member", "set the thermostat to 23 degrees", asked)
    assert done["outcome"] == "executed" and target(home) == 23.0


async def test_the_service_binds_an_orchestrator_value_to_the_raw_input(offline_home: Home) -> None:
    home = offline_home
    request = "Set the thermostat to 18 degrees"
    for value in (30, 24):  # 30 is outside the thermostat's range (Capability), 24 is no asked value (Policy)
        candidate = {"intent": "set_temperature", "device_alias": THERMOSTAT, "params": {"temperature": value}}
        if value == 30:
            assert (await home.evaluate("owner", "orchestrator", candidate, request))["outcome"] == "blocked"
            continue
        with pytest.raises(ServiceValidationError) as err:
            await home.evaluate("owner", "orchestrator", candidate, request)
        assert err.value.translation_key == "value_not_requested"
    candidate = {"intent": "set_temperature", "device_alias": THERMOSTAT, "params": {"temperature": 18}}
    response = await home.evaluate("owner", "orchestrator", candidate, request)
    assert response["outcome"] == "executed", response
    assert target(home) == 18.0
    binding = binding_of(response)
    assert binding["bound"] is True and binding["asked"] == ["18°"] and binding["proposed"] == "18°"
    # no caller passes itself off as the scheduler, whose commands are bound to their plan's statement instead
    with pytest.raises(ServiceValidationError):
        await home.evaluate("owner", "scheduler", candidate, "set climate.thermostat to 18.0 °C")


async def test_a_plan_command_passes_with_its_planned_value_only(offline_home: Home) -> None:
    """The scheduler's command states its plan's value (as the heat pump executor writes it); another is refused."""
    home, slot = offline_home, "slot 2026-01-05T12:00:00+00:00"
    statement = f"{plan_text(THERMOSTAT, 19.0, '°C')}: whole-home plan (heat pump), {slot}"
    control = home.entry.runtime_data.control
    for value, outcome in ((24, "blocked"), (19, "executed")):
        candidate = {"intent": "set_temperature", "device_alias": THERMOSTAT, "params": {"temperature": value}}
        record = await control.async_evaluate(source_agent=SOURCE_SCHEDULER, candidate=candidate, context=Context(),
                                              raw_input=statement)
        assert record["outcome"] == outcome
        if outcome == "blocked":
            assert record["gate_results"][-1]["reason"] == "blocked by policy: the plan sets 19°, not 24°"
            assert target(home) == INITIAL
    assert binding_of(record) == {"request": statement, "plan": True, "proposed": "19°", "asked": ["19°"],
                                  "bound": True}
    assert target(home) == 19.0
