"""Gate 2, Schema: extra keys forbidden, vocabulary intents only, params typed per intent."""

from __future__ import annotations

from typing import Any

import pytest
import voluptuous as vol

from custom_components.agentic_hems.gates import schema
from custom_components.agentic_hems.gates.models import ModelCandidate

from .fakes import context


def test_valid_candidate_parses_with_defaults() -> None:
    ctx = context({"intent": "set_brightness", "device_alias": "main light", "params": {"brightness": 80}})
    result = schema.evaluate(ctx)
    assert result.passed
    assert ctx.candidate == ModelCandidate(intent="set_brightness", device_alias="main light", params={"brightness": 80})
    assert result.evidence["candidate"] == {
        "intent": "set_brightness", "room": None, "device_alias": "main light", "device_type": None,
        "params": {"brightness": 80},
    }


@pytest.mark.parametrize(
    ("candidate", "path", "message"),
    [
        ({"intent": "fly", "device_alias": "x"}, "intent", "value must be one of"),
        ({"intent": "turn_on", "device_alias": "x", "command": "rm"}, "command", "extra keys not allowed"),
        ({"intent": "turn_on", "device_alias": "x", "params": {"transition": 2}}, "params.transition", "extra keys"),
        ({"intent": "set_brightness", "device_alias": "x", "params": {"brightness": "80"}}, "params.brightness", "finite number"),
        ({"intent": "set_brightness", "device_alias": "x", "params": {"brightness": True}}, "params.brightness", "finite number"),
        ({"intent": "set_brightness", "device_alias": "x", "params": {"brightness": 101}}, "params.brightness", "value must be at most 100"),
        ({"intent": "set_temperature", "device_alias": "x", "params": {"temperature": float("nan")}}, "params.temperature", "finite"),
        ({"intent": "set_temperature", "device_alias": "x", "params": {}}, "params.temperature", "required key not provided"),
        ({"intent": "set_hvac_mode", "device_alias": "x", "params": {"hvac_mode": "turbo"}}, "params.hvac_mode", "value must be one of"),
        ({"intent": "turn_on", "device_alias": "x", "device_type": "thermostat"}, "device_type", "value must be one of"),
        ({"intent": "turn_on", "device_alias": ""}, "device_alias", "non-empty string"),
        ({"intent": "turn_on"}, "", "room or device_alias is required"),
        ({"room": "kitchen"}, "intent", "required key not provided"),
    ],
)
def test_invalid_candidates_fail_with_errors(candidate: dict[str, Any], path: str, message: str) -> None:
    result = schema.evaluate(context(candidate))
    assert not result.passed
    assert result.reason.startswith("invalid command format: ")
    errors = result.evidence["errors"]
    assert any(e["path"] == path and message in e["message"] for e in errors), errors
    assert result.evidence["actual_keys"] == sorted(candidate)
    assert "set_brightness" in result.evidence["expected"]["intents"]


def test_missing_candidate_fails() -> None:
    result = schema.evaluate(context(None, raw_input="turn on the light"))
    assert not result.passed and "no model_candidate" in result.reason


def test_non_mapping_candidate_fails() -> None:
    with pytest.raises(vol.Invalid):
        schema.parse_candidate(["turn_on"])


def test_model_candidate_rejects_extra_keys() -> None:
    with pytest.raises(ValueError, match="extra keys"):
        ModelCandidate.from_dict({"intent": "turn_on", "entity_id": "lock.front_door"})
