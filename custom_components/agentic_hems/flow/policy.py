"""The policy rules field of the options: YAML text, its first problem as a translated form error.

The errors are keys of the options flow's ``error`` strings; their placeholders say which line does not parse, or
which rule (counted from 1), which key, and what it may be.
"""

from __future__ import annotations

from typing import Any

from ..const import CONF_POLICY_RULES
from ..gates.models import PolicyAction
from ..gates.tables import DOMAINS, INTENTS, MAX_RISK, RULE_SCHEMA
from ..validation import vol
from .yaml_field import YamlFieldError, parse_yaml_text

RULE_KEYS = ("operation", "device_type", "risk_min", "risk_max", "action")
REQUIRED = ("operation", "device_type", "action")
CHOICES = {  # the same choices as RULE_SCHEMA's
    "operation": sorted(INTENTS | {"*"}),
    "device_type": sorted(DOMAINS | {"alarm_control_panel", "*"}),
    "action": [str(action) for action in PolicyAction],
}


type FormErrors = tuple[dict[str, str], dict[str, str]]


def policy_field(text: Any) -> tuple[dict[str, str], dict[str, str], Any]:
    """Return the form's errors, their placeholders and the rules the field's YAML ``text`` holds (``[]``: empty).

    Text that does not parse is ``yaml_invalid`` (or ``yaml_too_long``, see :func:`.yaml_field.parse_yaml_text`);
    rules that parse are checked by :func:`policy_errors`. With an error, the rules are not to be saved.
    """
    try:
        rules = parse_yaml_text(text)
    except YamlFieldError as err:
        if err.too_long:
            return {CONF_POLICY_RULES: "yaml_too_long"}, err.placeholders, None
        return {CONF_POLICY_RULES: "yaml_invalid"}, err.placeholders, None
    rules = [] if rules is None else rules
    errors, placeholders = policy_errors(rules)
    return errors, placeholders, rules


def policy_errors(rules: Any) -> FormErrors:
    """Return the form's errors for ``rules`` (the field -> error key) and their placeholders; empty when valid.

    The first problem counts: ``policy_not_a_list``, ``policy_rule_not_a_mapping``, ``policy_rule_unknown_key``,
    ``policy_rule_missing``, ``policy_rule_not_an_option``, ``policy_rule_risk``, ``policy_rule_order``; the
    placeholders name the rule (counted from 1), the key and what it may be.
    """
    if not isinstance(rules, list):
        return {CONF_POLICY_RULES: "policy_not_a_list"}, {}
    for number, rule in enumerate(rules, start=1):
        where = {"number": str(number)}
        if not isinstance(rule, dict):
            return {CONF_POLICY_RULES: "policy_rule_not_a_mapping"}, where
        try:
            RULE_SCHEMA(dict(rule))
        except vol.Invalid as err:
            first = err.errors[0] if isinstance(err, vol.MultipleInvalid) else err
            key = str(first.path[0]) if first.path else ""
        else:
            continue
        if unknown := sorted(str(k) for k in rule if k not in RULE_KEYS):
            return {CONF_POLICY_RULES: "policy_rule_unknown_key"}, where | {
                "key": unknown[0],
                "keys": ", ".join(RULE_KEYS),
            }
        if missing := [k for k in REQUIRED if k not in rule]:
            return {CONF_POLICY_RULES: "policy_rule_missing"}, where | {"key": missing[0]}
        if key in CHOICES:
            return {CONF_POLICY_RULES: "policy_rule_not_an_option"}, where | {
                "key": key,
                "options": ", ".join(CHOICES[key]),
            }
        if key in ("risk_min", "risk_max"):
            return {CONF_POLICY_RULES: "policy_rule_risk"}, where | {"key": key, "maximum": str(MAX_RISK)}
        return {CONF_POLICY_RULES: "policy_rule_order"}, where
    return {}, {}
