"""The tables: intent vocabulary -> services, risk by domain and device class."""

from __future__ import annotations

import pytest

from custom_components.agentic_hems.gates.tables import INTENTS, risk_level, service_data, service_for


@pytest.mark.parametrize(
    ("domain", "device_class", "appliance", "risk"),
    [
        ("lock", None, False, 4),
        ("alarm_control_panel", None, False, 5),
        ("cover", "garage", False, 4),
        ("cover", "door", False, 4),
        ("cover", "gate", False, 4),
        ("cover", "blind", False, 1),
        ("climate", None, False, 2),
        ("switch", "outlet", False, 1),
        ("input_boolean", None, False, 1),
        ("button", None, False, 1),
        ("light", None, False, 0),
        ("siren", None, False, 3),  # not in the table: DEFAULT_RISK
        ("switch", None, True, 1),  # a planned appliance's entity
        ("siren", None, True, 1),
        ("lock", None, True, 4),  # an appliance never lowers a lock's risk
    ],
)
def test_risk_level(domain: str, device_class: str | None, appliance: bool, risk: int) -> None:
    assert risk_level(domain, device_class, appliance=appliance) == risk


@pytest.mark.parametrize(
    ("domain", "intent", "appliance", "service"),
    [
        ("light", "set_brightness", False, "turn_on"),
        ("cover", "open", False, "open_cover"),
        ("valve", "close", False, "close_valve"),
        ("vacuum", "start", False, "start"),
        ("switch", "start", True, "turn_on"),
        ("switch", "stop", True, "turn_off"),
        ("switch", "start", False, None),
        ("button", "start", True, None),  # a button has no turn_on
        ("lock", "open", False, None),
        ("climate", "turn_on", False, None),
    ],
)
def test_service_for(domain: str, intent: str, appliance: bool, service: str | None) -> None:
    assert service_for(domain, intent, appliance=appliance) == service


def test_vocabulary_and_service_data() -> None:
    assert INTENTS == {"turn_on", "turn_off", "set_brightness", "set_temperature", "set_hvac_mode", "set_value",
                       "open", "close", "lock", "unlock", "press", "start", "stop", "select_option",
                       "start_program", "start_selected_program"}
    assert service_data("set_brightness", {"brightness": 40}) == {"brightness_pct": 40}
    assert service_data("set_temperature", {"temperature": 21}) == {"temperature": 21}
