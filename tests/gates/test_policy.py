"""Gate 6, Policy: the first-match table, its defaults (``tables.DEFAULT_POLICY``) and validated user rules."""

from __future__ import annotations

from typing import Any

import pytest
import voluptuous as vol

from custom_components.agentic_hems.gates import capability, device_resolved, freshness, policy, schema
from custom_components.agentic_hems.gates.models import PolicyAction
from custom_components.agentic_hems.gates.policy import decide
from custom_components.agentic_hems.gates.tables import DEFAULT_POLICY, PolicyRule, effective_policy, validate_rules

from .fakes import context, through


@pytest.mark.parametrize(
    ("operation", "device_type", "risk", "index", "action"),
    [
        ("lock", "lock", 4, 0, PolicyAction.DENY),
        ("unlock", "lock", 4, 1, PolicyAction.DENY),
        ("open", "cover", 4, 7, PolicyAction.CONFIRM),  # garage cover
        ("set_temperature", "climate", 2, 3, PolicyAction.ALLOW),
        ("set_temperature", "climate", 3, 4, PolicyAction.CONFIRM),
        ("set_brightness", "light", 5, 5, PolicyAction.ALLOW),
        ("turn_on", "switch", 1, 6, PolicyAction.ALLOW),  # a low-risk appliance
        ("turn_on", "valve", 3, 7, PolicyAction.CONFIRM),
    ],
)
def test_default_table_first_match(operation: str, device_type: str, risk: int, index: int, action: PolicyAction) -> None:
    assert decide(DEFAULT_POLICY, operation, device_type, risk) == (index, action)


def test_no_matching_rule_denies() -> None:
    assert decide((), "turn_on", "switch", 1) == (None, PolicyAction.DENY)


def gate(candidate: dict[str, Any], rules: tuple[PolicyRule, ...] = DEFAULT_POLICY) -> Any:
    ctx = through(context(candidate, rules=rules), schema.evaluate, device_resolved.evaluate, capability.evaluate,
                  freshness.evaluate)
    return policy.evaluate(ctx), ctx


def test_lock_is_denied_with_evidence() -> None:
    result, ctx = gate({"intent": "unlock", "device_alias": "front door"})
    assert not result.passed and ctx.gated is None
    assert result.reason == "blocked by policy: a default rule denies unlocking at risk 4 to 5"
    assert result.evidence["rule"] == {"operation": "unlock", "device_type": "*", "risk_min": 4, "risk_max": 5,
                                       "action": "deny", "source": "default"}
    assert result.evidence["override_available"] is False


def test_garage_cover_needs_confirmation() -> None:
    result, ctx = gate({"intent": "open", "device_alias": "garage door"})
    assert result.passed and result.evidence["action"] == "confirm" and result.evidence["override_available"]
    assert ctx.gated is not None
    assert (ctx.gated.backend_action, ctx.gated.policy_action, ctx.gated.risk_level) == ("cover.open_cover", "confirm", 4)


def test_low_risk_appliance_allowed() -> None:
    result, ctx = gate({"intent": "start", "device_alias": "dishwasher"})
    assert result.passed and ctx.gated is not None
    assert ctx.gated.backend_action == "switch.turn_on" and ctx.gated.policy_action is PolicyAction.ALLOW


def test_user_rules_come_first_and_are_validated() -> None:
    rules = validate_rules([{"operation": "turn_on", "device_type": "switch", "action": "deny"}])
    assert rules == (PolicyRule("turn_on", "switch", 0, 5, PolicyAction.DENY, "user"),)
    result, _ = gate({"intent": "turn_on", "device_alias": "kettle"}, effective_policy(rules))
    assert not result.passed and result.evidence["rule"]["source"] == "user" and result.evidence["rule_index"] == 0


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"operation": "fly", "device_type": "*", "action": "deny"}, "operation"),
        ({"operation": "*", "device_type": "thermostat", "action": "deny"}, "device_type"),
        ({"operation": "*", "device_type": "*", "action": "maybe"}, "action"),
        ({"operation": "*", "device_type": "*", "risk_min": 4, "risk_max": 2, "action": "deny"}, "risk_min"),
        ({"operation": "*", "device_type": "*", "risk_max": 6, "action": "deny"}, "risk_max"),
        ({"operation": "*", "device_type": "*", "action": "deny", "why": "x"}, "extra keys"),
    ],
)
def test_invalid_user_rules_rejected(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(vol.Invalid, match=r"rule 1: .*" + message):
        validate_rules([{"operation": "*", "device_type": "*", "action": "allow"}, raw])
