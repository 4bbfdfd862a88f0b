"""Diagnostics: settings, price cache summary and plans, with the API key redacted."""

from __future__ import annotations

from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.core import HomeAssistant

from custom_components.agentic_hems.diagnostics import async_get_config_entry_diagnostics


async def test_diagnostics_sample(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """The sample entry reports its cache window and every appliance's plan."""
    diag = await async_get_config_entry_diagnostics(hass, loaded_entry)
    assert diag["entry"]["data"] == {"price_source": "sample"}
    assert diag["prices"]["start"] == "2026-11-28T23:00:00+00:00"
    assert diag["prices"]["known_until"] == "2026-11-30T23:00:00+00:00"
    assert diag["prices"]["sample"] is True
    assert set(diag["appliances"]) == {"dishwasher", "washer", "ev"}
    assert diag["appliances"]["dishwasher"]["plan"]["feasible"] is True
    assert diag["last_update_success"] is True
    control = diag["device_control"]
    assert control["allow_device_control"] is False and control["pending"] == [] and control["last_decision"] is None
    assert control["policy"][0] == {"operation": "lock", "device_type": "*", "risk_min": 4, "risk_max": 5,
                                    "action": "deny", "source": "default"}


async def test_diagnostics_redacts_api_key(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """An ENTSO-E key never appears in diagnostics."""
    entsoe = MockConfigEntry(
        domain="agentic_hems", data={"price_source": "entsoe", "api_key": "secret-token", "bidding_zone": "BE"}
    )
    entsoe.runtime_data = loaded_entry.runtime_data
    diag = await async_get_config_entry_diagnostics(hass, entsoe)
    assert diag["entry"]["data"] == {"price_source": "entsoe", "api_key": "**REDACTED**", "bidding_zone": "BE"}
    assert "secret-token" not in repr(diag)
