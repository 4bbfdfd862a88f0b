"""Gate 4, Capability: service registered, features and color modes, params in the entity's ranges."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.agentic_hems.gates import capability, device_resolved, schema
from custom_components.agentic_hems.gates.view import EntityInfo

from .fakes import FakeView, context, house, through


def check(candidate: dict[str, Any], view: FakeView | None = None) -> Any:
    ctx = through(context(candidate, view), schema.evaluate, device_resolved.evaluate)
    return capability.evaluate(ctx)


@pytest.mark.parametrize(
    "candidate",
    [
        {"intent": "set_brightness", "device_alias": "ceiling", "params": {"brightness": 80}},
        {"intent": "turn_off", "device_alias": "Kitchen Main light"},
        {"intent": "set_temperature", "device_alias": "thermostat", "params": {"temperature": 21.5}},
        {"intent": "set_temperature", "device_alias": "thermostat", "params": {"temperature": 28}},
        {"intent": "set_hvac_mode", "device_alias": "thermostat", "params": {"hvac_mode": "heat"}},
        {"intent": "set_value", "device_alias": "boiler setpoint", "params": {"value": 55.5}},
        {"intent": "open", "device_alias": "garage door"},
        {"intent": "unlock", "device_alias": "front door"},
    ],
)
def test_supported_requests_pass(candidate: dict[str, Any]) -> None:
    result = check(candidate)
    assert result.passed, result


def test_evidence_on_pass() -> None:
    result = check({"intent": "set_temperature", "device_alias": "thermostat", "params": {"temperature": 21.5}})
    assert result.evidence["service"] == "climate.set_temperature"
    assert result.evidence["ranges"] == {"min": 16.0, "max": 28.0}
    assert result.evidence["supported_features"] == 1 and result.evidence["required_features"] == 1


@pytest.mark.parametrize(
    ("candidate", "reason"),
    [
        ({"intent": "set_brightness", "device_alias": "Kitchen Main light", "params": {"brightness": 50}},
         "light.kitchen_main does not support brightness (color modes ['onoff'])"),
        ({"intent": "set_temperature", "device_alias": "thermostat", "params": {"temperature": 30}},
         "temperature 30 outside 16.0..28.0"),
        ({"intent": "set_hvac_mode", "device_alias": "thermostat", "params": {"hvac_mode": "cool"}},
         "hvac_mode cool not in ['off', 'heat']"),
        ({"intent": "set_value", "device_alias": "boiler setpoint", "params": {"value": 55.2}},
         "value 55.2 not on the step 0.5 from 40.0"),
        ({"intent": "set_value", "device_alias": "boiler setpoint", "params": {"value": 80}},
         "value 80 outside 40.0..70.0"),
        ({"intent": "lock", "device_alias": "kettle"}, "switch.kettle does not support lock"),
        ({"intent": "start", "device_alias": "kettle"}, "switch.kettle does not support start"),  # not an appliance
    ],
)
def test_unsupported_requests_fail(candidate: dict[str, Any], reason: str) -> None:
    result = check(candidate)
    assert not result.passed
    assert result.reason == reason


def test_missing_service_fails() -> None:
    view = house()
    view.services.discard(("cover", "open_cover"))
    result = check({"intent": "open", "device_alias": "garage door"}, view)
    assert not result.passed and result.reason == "service cover.open_cover is not registered"


def test_feature_bits_are_checked_outside_lights() -> None:
    view = house()
    view.add(EntityInfo(entity_id="cover.blind", name="Blind", supported_features=2))  # CLOSE only
    assert check({"intent": "close", "device_alias": "blind"}, view).passed
    result = check({"intent": "open", "device_alias": "blind"}, view)
    assert not result.passed and result.reason == "cover.blind does not support open (supported_features)"
    assert result.evidence["required_features"] == 1 and result.evidence["supported_features"] == 2


def test_light_brightness_ignores_supported_features() -> None:
    view = house()
    view.add(EntityInfo(entity_id="light.strip", name="Strip", supported_features=0,
                        supported_color_modes=frozenset({"hs", "color_temp"})))
    assert check({"intent": "set_brightness", "device_alias": "strip", "params": {"brightness": 0}}, view).passed
