"""Which intents the policy holds or refuses on one entity (what the Assist exposure repair names).

Two oracles: the default table (``tables.DEFAULT_POLICY``) read by hand, and the Policy gate itself, run on the fake
house's entities for each intent.
"""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.agentic_hems.gates import capability, device_resolved, freshness, policy, schema
from custom_components.agentic_hems.gates.models import PolicyAction
from custom_components.agentic_hems.gates.policy import guarded_intents
from custom_components.agentic_hems.gates.tables import DEFAULT_POLICY, PolicyRule, effective_policy, validate_rules

from .fakes import context, through

CONFIRM, DENY = PolicyAction.CONFIRM, PolicyAction.DENY


@pytest.mark.parametrize(
    ("domain", "risk", "appliance", "guarded"),
    [
        ("cover", 4, False, {"open": CONFIRM, "close": CONFIRM}),  # a garage door
        ("cover", 1, False, {}),  # blinds
        ("lock", 4, False, {"lock": DENY, "unlock": DENY}),
        ("valve", 3, False, {"open": CONFIRM, "close": CONFIRM}),
        ("climate", 2, False, {}),
        ("climate", 3, False, {"set_temperature": CONFIRM, "set_hvac_mode": CONFIRM}),
        ("light", 5, False, {"turn_on": CONFIRM, "turn_off": CONFIRM}),  # only set_brightness is allowed at 5
        ("switch", 1, True, {}),  # an appliance's plug
        ("alarm_control_panel", 5, False, {}),  # the gates never act on it
        ("sensor", 3, False, {}),
    ],
)
def test_default_table(domain: str, risk: int, appliance: bool, guarded: dict[str, PolicyAction]) -> None:
    assert guarded_intents(DEFAULT_POLICY, domain, risk, appliance=appliance) == guarded


def test_user_rules_and_appliance_intents() -> None:
    rules = effective_policy(validate_rules([
        {"operation": "start", "device_type": "switch", "action": "deny"},
        {"operation": "close", "device_type": "cover", "action": "allow"},
    ]))
    assert guarded_intents(rules, "switch", 1, appliance=True) == {"start": DENY}
    assert guarded_intents(rules, "switch", 1) == {}  # start is no intent of a plain switch
    assert guarded_intents(rules, "cover", 4) == {"open": CONFIRM}
    assert guarded_intents((), "switch", 1) == {"turn_on": DENY, "turn_off": DENY}  # no rule: fail closed


def gate_action(intent: str, alias: str, rules: tuple[PolicyRule, ...]) -> PolicyAction:
    candidate: dict[str, Any] = {"intent": intent, "device_alias": alias}
    ctx = through(context(candidate, rules=rules), schema.evaluate, device_resolved.evaluate, capability.evaluate,
                  freshness.evaluate)
    return PolicyAction(policy.evaluate(ctx).evidence["action"])


@pytest.mark.parametrize(
    ("alias", "intents", "rules", "count"),
    [
        ("garage door", ("open", "close"), DEFAULT_POLICY, 2),
        ("front door", ("lock", "unlock"), DEFAULT_POLICY, 2),
        ("kettle", ("turn_on", "turn_off"), DEFAULT_POLICY, 0),
        ("kettle", ("turn_on", "turn_off"),
         effective_policy(validate_rules([{"operation": "turn_off", "device_type": "switch", "action": "confirm"}])), 1),
    ],
)
def test_the_policy_gate_agrees(
    alias: str, intents: tuple[str, ...], rules: tuple[PolicyRule, ...], count: int
) -> None:
    ctx = through(context({"intent": intents[0], "device_alias": alias}, rules=rules), schema.evaluate,
                  device_resolved.evaluate)
    command = ctx.command
    assert command is not None and command.domain == {"garage door": "cover", "front door": "lock"}.get(alias, "switch")
    gated = {i: a for i in intents if (a := gate_action(i, alias, rules)) is not PolicyAction.ALLOW}
    assert guarded_intents(rules, command.domain, command.risk_level) == gated and len(gated) == count
