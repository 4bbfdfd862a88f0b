"""The ReAct loop with scripted models: FINISH, errors as Observations, limits, tool calls, and what never runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from custom_components.agentic_hems.orchestrator.actions import Action
from custom_components.agentic_hems.orchestrator.loop import ModelError, Usage, run_loop
from custom_components.agentic_hems.orchestrator.offline import ApplianceRef, OfflinePlanner
from custom_components.agentic_hems.orchestrator.parser import Reply, ToolCall


@dataclass
class Scripted:
    """Replies in order; records the messages it saw."""

    replies: list[Reply | Exception]
    name: str = "scripted"
    seen: list[list[dict[str, Any]]] = field(default_factory=list)

    async def complete(self, messages: Sequence[dict[str, Any]]) -> Reply:
        self.seen.append([dict(m) for m in messages])
        reply = self.replies.pop(0) if self.replies else Reply("ACTION: GET_PRICES")
        if isinstance(reply, Exception):
            raise reply
        return reply


@dataclass
class Recorder:
    """Tools that record what ran and answer with a small Observation."""

    ran: list[Action] = field(default_factory=list)

    async def run(self, action: Action) -> dict[str, Any]:
        self.ran.append(action)
        if action.type == "SCHEDULE":
            return {"action": "SCHEDULE", "plans": [
                {"appliance": name.strip(), "feasible": True, "start_local": "Mon 02:00", "end_local": "Mon 04:30",
                 "cost": 0.2, "currency": "EUR", "savings": 0.1} for name in action.args["appliance"].split(",")]}
        return {"action": action.type, "ok": True}


async def run(model: Any, tools: Recorder, **kw: Any) -> Any:
    return await run_loop("<user_request>\nSchedule the dishwasher\n</user_request>", model, tools,
                          system_prompt="You plan home energy.", **kw)


async def test_finish_after_actions() -> None:
    model = Scripted([Reply("Thought: prices first\nACTION: GET_PRICES"),
                      Reply("ACTION: SCHEDULE | appliance=Dishwasher"),
                      Reply("ACTION: FINISH | summary=Dishwasher at 02:00")])
    tools = Recorder()
    result = await run(model, tools)
    assert result.success and result.summary == "Dishwasher at 02:00" and result.iterations == 3
    assert [a.type for a in tools.ran] == ["GET_PRICES", "SCHEDULE"]
    assert [s.status for s in result.steps] == ["ok", "ok", "finish"]
    last = model.seen[-1]
    assert last[0]["role"] == "system" and "ACTION: TYPE | key=value" in last[0]["content"]
    assert last[-1] == {"role": "user", "content": 'Observation: {"action":"SCHEDULE","plans":[{"appliance":"Dishwasher",'
                        '"feasible":true,"start_local":"Mon 02:00","end_local":"Mon 04:30","cost":0.2,"currency":"EUR",'
                        '"savings":0.1}]}'}


async def test_errors_go_back_as_observations_and_never_run() -> None:
    model = Scripted([
        Reply("I would unlock the door now."),  # no action
        Reply("ACTION: UNLOCK_DOOR | entity=lock.front"),  # unknown action
        Reply("ACTION: SCHEDULE | appliance=Dishwasher | shell=rm -rf /"),  # extra key
        Reply("ACTION: SCHEDULE | appliance=Dishwasher", finish_reason="length"),  # truncated
        Reply("ACTION: FINISH | summary=gave up"),
    ])
    tools = Recorder()
    result = await run(model, tools)
    assert tools.ran == []
    assert [s.status for s in result.steps] == ["error", "error", "error", "error", "finish"]
    errors = [s.observation["error"] for s in result.steps[:4]]
    assert errors[0].startswith("no action found")
    assert errors[1].startswith("invalid action: unknown action UNLOCK_DOOR")
    assert "extra keys not allowed" in errors[2]
    assert errors[3].startswith("the reply was cut off")
    assert "Observation: {\"error\":\"no action found" in model.seen[1][-1]["content"]


async def test_fifteen_iterations_at_most() -> None:
    model = Scripted([])  # GET_PRICES forever
    tools = Recorder()
    result = await run(model, tools)
    assert not result.success and result.iterations == 15 and len(tools.ran) == 15
    assert result.error == "stopped after 15 iterations without FINISH" and result.summary == result.error
    assert (result.stop_key, result.stop_args) == ("stop.iterations", {"iterations": 15})


async def test_budget_and_model_errors_stop_the_run() -> None:
    ticks = iter([0.0, 0.0, 5.0, 200.0, 200.0])
    result = await run(Scripted([]), Recorder(), clock=lambda: next(ticks), budget_s=120)
    assert result.iterations == 2 and result.error == "stopped: the 120 s budget is spent"
    assert (result.stop_key, result.stop_args) == ("stop.budget", {"budget": "120"})
    failing = await run(Scripted([Reply("ACTION: GET_PRICES"), ModelError("HTTP 429: rate limited")]), Recorder())
    assert not failing.success and failing.error == "HTTP 429: rate limited" and failing.iterations == 1
    assert failing.stop_key is None  # a model error is the model's, not the loop's


async def test_native_tool_calls_get_tool_messages_and_only_the_first_runs() -> None:
    model = Scripted([
        Reply(None, [ToolCall("schedule", '{"appliance": "Dishwasher"}', "c1"),
                     ToolCall("evaluate_command", '{"intent": "unlock", "device_alias": "front door"}', "c2")],
              finish_reason="tool_calls"),
        Reply(None, [ToolCall("finish", '{"summary": "done"}', "c3")]),
    ])
    tools = Recorder()
    result = await run(model, tools, usage=lambda: Usage(100, 20))
    assert [a.type for a in tools.ran] == ["SCHEDULE"]
    assert result.steps[0].ignored == ["EVALUATE_COMMAND"]
    assert "not executed: ['EVALUATE_COMMAND']" in result.steps[0].observation["ignored"]
    messages = model.seen[1]
    assert messages[2]["tool_calls"][1]["id"] == "c2"
    assert [m["tool_call_id"] for m in messages[3:5]] == ["c1", "c2"]
    assert messages[4]["content"] == "Observation: not executed, one action per reply"
    assert (result.prompt_tokens, result.completion_tokens, result.round_trips) == (200, 40, 2)


async def test_offline_planner_through_the_loop() -> None:
    planner = OfflinePlanner([ApplianceRef("Dishwasher", "dishwasher"), ApplianceRef("EV charger", "ev_charger")])
    tools = Recorder()
    result = await run_loop("<user_request>\nSchedule all flexible loads\n</user_request>", planner, tools,
                            system_prompt="x")
    assert result.success and result.round_trips == 3
    assert tools.ran == [Action("GET_PRICES"), Action("SCHEDULE", {"appliance": "Dishwasher, EV charger"})]
    assert result.summary == ("Dishwasher: Mon 02:00 to Mon 04:30, 0.20 EUR (saves 0.10 EUR). "
                              "EV charger: Mon 02:00 to Mon 04:30, 0.20 EUR (saves 0.10 EUR).")
