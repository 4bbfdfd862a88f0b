"""The pipeline's tables: intent vocabulary → HA services, risk by domain and device class, default policy.

One place per fact: every gate reads these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..validation import closed, describe, vol
from .actions import ACTIONS
from .models import PolicyAction

# domain -> intent -> HA service in that domain (the vocabulary the gates accept).
INTENT_SERVICES: dict[str, dict[str, str]] = {
    "switch": {"turn_on": "turn_on", "turn_off": "turn_off"},
    "input_boolean": {"turn_on": "turn_on", "turn_off": "turn_off"},
    "fan": {"turn_on": "turn_on", "turn_off": "turn_off"},
    "light": {"turn_on": "turn_on", "turn_off": "turn_off", "set_brightness": "turn_on"},
    "climate": {"set_temperature": "set_temperature", "set_hvac_mode": "set_hvac_mode"},
    "water_heater": {"set_temperature": "set_temperature"},
    "number": {"set_value": "set_value"},
    "input_number": {"set_value": "set_value"},
    "select": {"select_option": "select_option"},
    "input_select": {"select_option": "select_option"},
    "cover": {"open": "open_cover", "close": "close_cover"},
    "valve": {"open": "open_valve", "close": "close_valve"},
    "lock": {"lock": "lock", "unlock": "unlock"},
    "button": {"press": "press"},
    "vacuum": {"start": "start", "stop": "stop"},
}
# A planned appliance's start and stop map to its controlled entity's on and off.
APPLIANCE_INTENTS: dict[str, str] = {"start": "turn_on", "stop": "turn_off"}

# (domain, service) -> the states that show the service took effect (DryRun's expected state, Execution's wait).
# Transitional states count where HA reports them (a cover "opening"); value-setting services are handled in
# ``expected_state``; a button press has no state to wait for.
EXPECTED_STATES: dict[tuple[str, str], tuple[str, ...]] = {
    **{(d, "turn_on"): ("on",) for d in ("switch", "input_boolean", "light", "fan")},
    **{(d, "turn_off"): ("off",) for d in ("switch", "input_boolean", "light", "fan")},
    ("cover", "open_cover"): ("open", "opening"),
    ("cover", "close_cover"): ("closed", "closing"),
    ("valve", "open_valve"): ("open", "opening"),
    ("valve", "close_valve"): ("closed", "closing"),
    ("lock", "lock"): ("locked",),
    ("lock", "unlock"): ("unlocked",),
    ("vacuum", "start"): ("cleaning",),
    ("vacuum", "stop"): ("idle", "docked", "returning"),
}

DOMAINS: frozenset[str] = frozenset(INTENT_SERVICES)
INTENTS: frozenset[str] = (
    frozenset(i for services in INTENT_SERVICES.values() for i in services)
    | frozenset(APPLIANCE_INTENTS)
    | frozenset(ACTIONS)  # allow-listed integration actions (.actions), on their integration's entities only
)

# Feature bits a service needs (values of HA's *EntityFeature enums in 2025.4, copied to keep the core HA-free).
REQUIRED_FEATURES: dict[tuple[str, str], int] = {
    ("climate", "set_temperature"): 1,  # ClimateEntityFeature.TARGET_TEMPERATURE
    ("water_heater", "set_temperature"): 1,  # WaterHeaterEntityFeature.TARGET_TEMPERATURE
    ("fan", "turn_on"): 32,  # FanEntityFeature.TURN_ON
    ("fan", "turn_off"): 16,  # FanEntityFeature.TURN_OFF
    ("cover", "open"): 1,  # CoverEntityFeature.OPEN
    ("cover", "close"): 2,  # CoverEntityFeature.CLOSE
    ("valve", "open"): 1,  # ValveEntityFeature.OPEN
    ("valve", "close"): 2,  # ValveEntityFeature.CLOSE
    ("vacuum", "start"): 8192,  # VacuumEntityFeature.START
    ("vacuum", "stop"): 8,  # VacuumEntityFeature.STOP
}
# Light color modes that carry brightness (HA: every mode but onoff and unknown).
BRIGHTNESS_COLOR_MODES: frozenset[str] = frozenset(
    {"brightness", "color_temp", "hs", "xy", "rgb", "rgbw", "rgbww", "white"}
)
# HA's defaults (°C) when an entity has no min_temp/max_temp attribute: climate 7-35 °C, water_heater 110-140 °F.
DEFAULT_TEMP_RANGES: dict[str, tuple[float, float]] = {
    "climate": (7.0, 35.0),
    "water_heater": ((110 - 32) / 1.8, (140 - 32) / 1.8),
}

# (domain, device_class or None for any class) -> risk 0 (harmless) .. 5 (critical). The base table, plus the
# domains its vocabulary names without a risk (marked "added"); anything else is DEFAULT_RISK.
RISK_TABLE: dict[tuple[str, str | None], int] = {
    ("lock", None): 4,
    ("alarm_control_panel", None): 5,
    ("cover", "garage"): 4,
    ("cover", "door"): 4,
    ("cover", "gate"): 4,
    ("climate", None): 2,
    ("water_heater", None): 2,  # added: a hot-water setpoint, like a thermostat's
    ("switch", None): 1,
    ("input_boolean", None): 1,
    ("button", None): 1,
    ("light", None): 0,
    ("cover", None): 1,  # added: blinds, shades, curtains
    ("fan", None): 1,  # added
    ("vacuum", None): 1,  # added
    ("input_number", None): 1,  # added: a helper, no device
    ("number", None): 2,  # added: a device setpoint
    ("input_select", None): 1,  # added: a helper, no device
    ("select", None): 2,  # added: a device mode (a battery's charge/discharge/idle)
    ("valve", None): 3,  # added: may be a water or gas main
}
APPLIANCE_RISK = 1
DEFAULT_RISK = 3
MAX_RISK = 5


def risk_level(domain: str, device_class: str | None, *, appliance: bool = False) -> int:
    """Return the risk 0..5 of acting on an entity.

    The (domain, device_class) row, else the (domain, any) row, else ``DEFAULT_RISK``. A planned appliance's entity
    is ``APPLIANCE_RISK`` unless its row says more (a lock stays 4).
    """
    row = RISK_TABLE.get((domain, device_class), RISK_TABLE.get((domain, None)))
    if appliance:
        return max(APPLIANCE_RISK, row or 0)
    return DEFAULT_RISK if row is None else row


def service_for(domain: str, intent: str, *, appliance: bool = False) -> str | None:
    """Return the HA service in ``domain`` that carries out ``intent``, or None.

    ``start``/``stop`` on a planned appliance's entity are its ``turn_on``/``turn_off`` (when the domain has them).
    """
    services = INTENT_SERVICES.get(domain, {})
    if intent in services:
        return services[intent]
    if appliance and intent in APPLIANCE_INTENTS:
        return services.get(APPLIANCE_INTENTS[intent])
    return None


def service_data(intent: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Service data (without the target) for a schema-checked intent and its params."""
    if intent == "set_brightness":
        return {"brightness_pct": params["brightness"]}
    return dict(params)


def expected_state(domain: str, service: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """Return what the entity should show once ``domain.service`` with ``data`` took effect (JSON-safe).

    ``{"states": [...]}`` (any of them), ``{"attributes": {name: value}}`` (climate or water_heater
    ``set_temperature``: the target temperature),
    ``{"numeric_state": value}`` (number/input_number ``set_value``), ``{"states": [option]}`` (select/input_select
    ``select_option``), or ``{}`` when nothing is observable (a button press, an unknown pair).
    """
    if (domain, service) in EXPECTED_STATES:
        return {"states": list(EXPECTED_STATES[(domain, service)])}
    if service == "set_temperature" and domain in ("climate", "water_heater"):
        return {"attributes": {"temperature": data["temperature"]}}
    if (domain, service) == ("climate", "set_hvac_mode"):
        return {"states": [data["hvac_mode"]]}
    if service == "set_value" and domain in ("number", "input_number"):
        return {"numeric_state": data["value"]}
    if service == "select_option" and domain in ("select", "input_select"):
        return {"states": [data["option"]]}
    return {}


@dataclass(frozen=True)
class PolicyRule:
    """One row of the policy table: first match wins.

    Attributes:
        operation: an intent or ``*``.
        device_type: an HA domain or ``*`` (domains, not "thermostat").
        risk_min, risk_max: inclusive risk range, 0..5.
        action: allow | confirm | deny.
        source: ``default`` or ``user``.

    """

    operation: str
    device_type: str
    risk_min: int
    risk_max: int
    action: PolicyAction
    source: str = "default"

    def matches(self, operation: str, device_type: str, risk: int) -> bool:
        """Return True when this rule applies."""
        return (
            self.operation in ("*", operation)
            and self.device_type in ("*", device_type)
            and self.risk_min <= risk <= self.risk_max
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form (the shape :func:`validate_rules` accepts, plus ``source``)."""
        return {
            "operation": self.operation,
            "device_type": self.device_type,
            "risk_min": self.risk_min,
            "risk_max": self.risk_max,
            "action": str(self.action),
            "source": self.source,
        }


# The default policy, with domains for device types (thermostat -> climate).
DEFAULT_POLICY: tuple[PolicyRule, ...] = (
    PolicyRule("lock", "*", 4, 5, PolicyAction.DENY),  # never auto-lock/unlock
    PolicyRule("unlock", "*", 4, 5, PolicyAction.DENY),
    PolicyRule("*", "lock", 3, 5, PolicyAction.CONFIRM),  # anything on a lock requires confirmation
    PolicyRule("set_temperature", "climate", 0, 2, PolicyAction.ALLOW),
    PolicyRule("set_temperature", "climate", 3, 5, PolicyAction.CONFIRM),
    PolicyRule("set_brightness", "light", 0, 5, PolicyAction.ALLOW),  # lights are low-risk
    PolicyRule("*", "*", 0, 2, PolicyAction.ALLOW),  # default: allow low risk
    PolicyRule("*", "*", 3, 5, PolicyAction.CONFIRM),  # default: confirm mid and high risk
)

_RISK = vol.All(int, vol.Range(min=0, max=MAX_RISK))


def _ordered(rule: dict[str, Any]) -> dict[str, Any]:
    if rule["risk_min"] > rule["risk_max"]:
        raise vol.Invalid("risk_min must not exceed risk_max")
    return rule


RULE_SCHEMA = vol.All(
    closed(
        {
            vol.Required("operation"): vol.In(sorted(INTENTS | {"*"})),
            vol.Required("device_type"): vol.In(sorted(DOMAINS | {"alarm_control_panel", "*"})),
            vol.Required("risk_min", default=0): _RISK,
            vol.Required("risk_max", default=MAX_RISK): _RISK,
            vol.Required("action"): vol.In([str(a) for a in PolicyAction]),
        }
    ),
    _ordered,
)


def validate_rules(raw: Iterable[Mapping[str, Any]]) -> tuple[PolicyRule, ...]:
    """User rules from the options, validated when saved.

    Each item is ``{"operation", "device_type", "risk_min" (default 0), "risk_max" (default 5), "action"}``.

    Raises:
        vol.Invalid: a malformed rule; the message names its index.

    """
    rules = []
    for index, item in enumerate(raw):
        try:
            rule = RULE_SCHEMA(dict(item))
        except vol.Invalid as err:
            raise vol.Invalid(f"rule {index}: {describe(err)}") from err
        rules.append(
            PolicyRule(
                rule["operation"],
                rule["device_type"],
                rule["risk_min"],
                rule["risk_max"],
                PolicyAction(rule["action"]),
                "user",
            )
        )
    return tuple(rules)


def effective_policy(user_rules: Sequence[PolicyRule] = ()) -> tuple[PolicyRule, ...]:
    """User rules first, then the defaults: a user rule can tighten or loosen a default."""
    return (*user_rules, *DEFAULT_POLICY)
