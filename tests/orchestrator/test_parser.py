"""The reply parser: the text form in many model styles, JSON and native tool calls, and what it refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest
import voluptuous as vol

from custom_components.agentic_hems.orchestrator.actions import Action, validate
from custom_components.agentic_hems.orchestrator.parser import Reply, ToolCall, parse

SCHEDULE = Action("SCHEDULE", {"appliance": "dishwasher", "deadline": "07:30"})


@pytest.mark.parametrize(
    "content",
    [
        "Thought: cheapest slot first.\nACTION: SCHEDULE | appliance=dishwasher | deadline=07:30",
        "action: schedule | appliance = dishwasher | deadline = 07:30",  # lowercase, spaces
        "Action:SCHEDULE|appliance=dishwasher|deadline=07:30",
        "**ACTION:** SCHEDULE | appliance: dishwasher | deadline: '07:30'",  # markdown, k: v, quotes
        "```\nACTION: SCHEDULE | appliance=dishwasher | deadline=07:30\n```",  # code fence
        '<think>The user wants it by 7:30. ACTION: FINISH maybe?</think>\nACTION: SCHEDULE {"appliance": "dishwasher", "deadline": "07:30"}',
        '```json\n{"action": "SCHEDULE", "args": {"appliance": "dishwasher", "deadline": "07:30"}}\n```',  # fenced JSON
        'I will schedule it. {"name": "schedule", "arguments": {"appliance": "dishwasher", "deadline": "07:30"}}',  # tool call in content
        '{"action": "schedule", "appliance": "dishwasher", "deadline": "07:30"}',  # flat JSON
        "Let me think step by step. First prices are known.\n\nACTION: Schedule | appliance=dishwasher | deadline=07:30",
    ],
)
def test_model_styles(content: str) -> None:
    parsed = parse(Reply(content))
    assert parsed.error is None, parsed.error
    assert parsed.action == SCHEDULE


def test_native_tool_call_wins_and_extras_are_reported() -> None:
    reply = Reply("calling tools", [ToolCall("schedule", '{"appliance": "dishwasher", "deadline": "07:30"}'),
                                    ToolCall("evaluate_command", '{"intent": "unlock"}')])
    parsed = parse(reply)
    assert parsed.action == SCHEDULE and parsed.ignored == ["EVALUATE_COMMAND"] and parsed.thought == "calling tools"


def test_more_than_one_text_action_takes_the_first() -> None:
    parsed = parse(Reply("ACTION: GET_PRICES\nACTION: SCHEDULE | appliance=ev\nACTION: FINISH"))
    assert parsed.action == Action("GET_PRICES", {}) and parsed.ignored == ["SCHEDULE", "FINISH"]


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (Reply("ACTION: SCHEDULE | appliance=dish", finish_reason="length"), "the reply was cut off"),
        (Reply(""), "empty reply"),
        (Reply("<think>still thinking about the cheapest slot"), "empty reply"),  # unterminated think
        (Reply("I think the dishwasher should run at night."), "no action found"),
        (Reply('ACTION: SCHEDULE {"appliance": "dishwasher",'), "arguments are not valid JSON"),  # never repaired
        (Reply("ACTION: SCHEDULE | dishwasher"), "argument 'dishwasher' is not key=value"),
        (Reply(None, [ToolCall("schedule", "{bad json")]), "tool call arguments are not valid JSON"),
        (Reply(None, [ToolCall("schedule", "[1, 2]")]), "tool call arguments must be a JSON object"),
    ],
)
def test_refused(reply: Reply, error: str) -> None:
    parsed = parse(reply)
    assert parsed.action is None and parsed.error is not None and parsed.error.startswith(error), parsed.error


DEEP = '{"intent": "turn_on", "params": ' + "[" * 4000 + "]" * 4000 + "}"  # 8 kB, 4000 levels
WIDE = json.dumps({"intent": "turn_on", "params": {f"k{i}": i for i in range(1001)}})


@pytest.mark.parametrize(
    ("args", "limit"), [(DEEP, "more than 8 depth"), (WIDE, "more than 1000 items")], ids=["deep", "wide"]
)
def test_arguments_over_the_input_caps_are_refused(args: str, limit: str) -> None:
    """Within the reply cap, but nested or wide past the caps every other input has: refused like an oversized
    reply (recording such arguments in a trace or run recursed without end)."""
    for reply in (Reply(None, [ToolCall("evaluate_command", args)]), Reply(f"ACTION: EVALUATE_COMMAND {args}"),
                  Reply(f'{{"action": "EVALUATE_COMMAND", "args": {args}}}')):
        parsed = parse(reply)
        assert parsed.action is None and parsed.error == (
            f"the action's arguments are too large (input too large: {limit}); send a short action")


def test_empty_tool_calls_fall_back_to_content() -> None:
    assert parse(Reply("ACTION: GET_PRICES", [])).action == Action("GET_PRICES", {})


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (Action("UNLOCK_DOOR", {}), "unknown action UNLOCK_DOOR"),
        (Action("SCHEDULE", {}), "required key not provided"),
        (Action("SCHEDULE", {"appliance": "ev", "shell": "rm -rf"}), "extra keys not allowed"),
        (Action("CALCULATE_WINDOW_SUMS", {"duration_min": "5"}), "value must be at least 15"),
    ],
)
def test_validate_refuses(action: Action, message: str) -> None:
    with pytest.raises(vol.Invalid) as err:
        validate(action)
    assert message in str(err.value)


def test_validate_coerces() -> None:
    action: Any = validate(Action("CALCULATE_WINDOW_SUMS", {"duration_min": "120"}))
    assert action.args == {"duration_min": 120.0}
    assert validate(Action("FINISH", {})).args == {"summary": ""}
