"""Commands and policy rules in words (gates.words): names, not entity ids; rules in words, not table rows."""

from __future__ import annotations

import re
from typing import Any

import pytest

from custom_components.agentic_hems.gates import policy
from custom_components.agentic_hems.gates.schema import PARAMS
from custom_components.agentic_hems.gates.tables import DEFAULT_POLICY, DOMAINS, INTENTS, PolicyRule
from custom_components.agentic_hems.gates.words import ACTIONS, DEVICES, OPERATIONS, VALUE_PARAMS, command_words, rule_words
from custom_components.agentic_hems.gates.models import PolicyAction

# What a person must never read: an intent constant, a domain, a rule's table row.
INTERNAL = re.compile(r"[a-z]+_[a-z_]+|/|\*|\brisk \d-\d\b")


def test_every_intent_domain_and_param_has_words() -> None:
    """The tables cover the vocabulary (tables.INTENTS, DOMAINS and the valued intents of schema.PARAMS)."""
    assert INTENTS <= set(ACTIONS) and INTENTS | {"*"} <= set(OPERATIONS)
    assert DOMAINS | {"*", "alarm_control_panel"} <= set(DEVICES)
    assert {intent: next(iter(spec)).schema for intent, spec in PARAMS.items()} == VALUE_PARAMS


@pytest.mark.parametrize(
    ("intent", "params", "en", "de"),
    [
        ("open", None, "Open Garage door", "Garage door öffnen"),
        ("turn_on", {}, "Turn on Garage door", "Garage door einschalten"),
        ("set_temperature", {"temperature": 21.5}, "Set Garage door to 21.5°", "Garage door auf 21,5° stellen"),
        ("set_temperature", {}, "Set the temperature of Garage door", "Temperatur von Garage door einstellen"),
        ("select_option", {"option": "eco"}, "Set Garage door to eco", "Garage door auf eco stellen"),
        ("set_brightness", {"brightness": 40}, "Set Garage door to 40 % brightness",
         "Garage door auf 40 % Helligkeit stellen"),
        ("do_thing", None, "Do thing Garage door", "Garage door do thing"),  # outside the vocabulary: still words
    ],
)
def test_command_words(intent: str, params: dict[str, Any] | None, en: str, de: str) -> None:
    assert command_words(intent, "Garage door", params) == en
    assert command_words(intent, "Garage door", params, "de") == de


@pytest.mark.parametrize(
    ("rule", "index", "en", "de"),
    [
        (PolicyRule("open", "cover", 0, 5, PolicyAction.DENY, "user"), 0, "your rule 1 denies opening covers",
         "deine Regel 1 verbietet das Öffnen von Abdeckungen"),
        (DEFAULT_POLICY[1], 3, "a default rule denies unlocking at risk 4 to 5",
         "eine Standardregel verbietet das Entriegeln bei Risiko 4 bis 5"),
        (DEFAULT_POLICY[2], 4, "a default rule asks to confirm every command on locks at risk 3 to 5",
         "eine Standardregel verlangt eine Bestätigung für jeden Befehl an Schlössern bei Risiko 3 bis 5"),
        (PolicyRule("set_temperature", "*", 0, 5, PolicyAction.DENY, "user"), 1,
         "your rule 2 denies setting the temperature of any device",
         "deine Regel 2 verbietet das Einstellen der Temperatur von allen Geräten"),
        (PolicyRule("*", "*", 0, 5, PolicyAction.DENY, "user"), 2, "your rule 3 denies every command",
         "deine Regel 3 verbietet jeden Befehl"),
        (None, None, "no rule allows it", "keine Regel erlaubt es"),
    ],
)
def test_rule_words(rule: PolicyRule | None, index: int | None, en: str, de: str) -> None:
    row = rule.as_dict() if rule else None
    assert rule_words(row, index) == en and rule_words(row, index, "de") == de


@pytest.mark.parametrize("operation", sorted(INTENTS | {"*"}))
@pytest.mark.parametrize("device_type", sorted(DOMAINS | {"*"}))
def test_no_rule_reads_as_a_table_row(operation: str, device_type: str) -> None:
    """Every rule the options accept reads in words in both languages, and says its risk range when it has one."""
    for low, high in ((0, 5), (2, 4)):
        row = PolicyRule(operation, device_type, low, high, PolicyAction.DENY, "user").as_dict()
        for lang in ("en", "de"):
            text = rule_words(row, 0, lang)
            assert not INTERNAL.search(text), text
            assert (f"{low} to {high}" in text or f"{low} bis {high}" in text) == ((low, high) != (0, 5)), text


def test_the_policy_gate_names_the_user_rule_in_words() -> None:
    """A user's rule that denies opening covers: the gate's reason says so, in words (was "open/cover/risk 0-5")."""
    from tests.gates.test_policy import gate

    rules = (PolicyRule("open", "cover", 0, 5, PolicyAction.DENY, "user"), *DEFAULT_POLICY)
    result, _ctx = gate({"intent": "open", "device_alias": "garage door"}, rules)
    assert not result.passed
    assert result.reason == "blocked by policy: your rule 1 denies opening covers"
    assert result.evidence["rule_index"] == 0 and policy.NAME == "policy"
