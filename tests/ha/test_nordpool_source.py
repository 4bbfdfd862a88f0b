"""The Nord Pool source: HA core's nordpool.get_prices_for_date service, stood in by a service with its shape."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse
from homeassistant.exceptions import ServiceValidationError

from custom_components.agentic_hems.const import DEFAULT_OPTIONS, DOMAIN

STOCKHOLM = ZoneInfo("Europe/Stockholm")
NOW = datetime(2026, 11, 29, 10, 5, tzinfo=STOCKHOLM)


def day_prices(day: date) -> list[dict[str, Any]]:
    """A day of hourly prices in SEK/MWh as the service returns them (UTC ISO strings): 100 + 10 x hour."""
    start = datetime(day.year, day.month, day.day, tzinfo=STOCKHOLM)
    return [
        {
            "start": (start + timedelta(hours=h)).astimezone(ZoneInfo("UTC")).isoformat(),
            "end": (start + timedelta(hours=h + 1)).astimezone(ZoneInfo("UTC")).isoformat(),
            "price": 100.0 + 10 * h,
        }
        for h in range(24)
    ]


async def set_up(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, published: set[date], now: datetime = NOW
) -> tuple[MockConfigEntry, list[str]]:
    """A Nord Pool entry (SE3, SEK), a stand-in service publishing ``published`` days, and our entry on it."""
    await hass.config.async_set_time_zone("Europe/Stockholm")
    freezer.move_to(now)
    calls: list[str] = []
    nordpool = MockConfigEntry(domain="nordpool", data={"areas": ["SE3"], "currency": "SEK"})
    nordpool.add_to_hass(hass)

    async def get_prices_for_date(call: ServiceCall) -> ServiceResponse:
        asked = call.data["date"]
        calls.append(asked)
        assert call.data["config_entry"] == nordpool.entry_id
        assert call.data["areas"] == ["SE3"]
        if date.fromisoformat(asked) not in published:
            raise ServiceValidationError("empty response")
        return {"SE3": day_prices(date.fromisoformat(asked))}

    hass.services.async_register("nordpool", "get_prices_for_date", get_prices_for_date, supports_response=SupportsResponse.ONLY)
    entry = MockConfigEntry(
        domain=DOMAIN,
        unique_id=f"nordpool_{nordpool.entry_id}_SE3",
        data={"price_source": "nordpool", "nordpool_entry": nordpool.entry_id, "area": "SE3"},
        options=DEFAULT_OPTIONS,
        version=1,
        minor_version=1,
    )
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    return entry, calls


async def test_today_and_tomorrow_in_sek(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    """After publication both days arrive: SEK/MWh becomes SEK/kWh, each hour on four quarter-hours."""
    afternoon = NOW.replace(hour=14)
    entry, calls = await set_up(hass, freezer, {date(2026, 11, 29), date(2026, 11, 30)}, afternoon)
    assert entry.state is ConfigEntryState.LOADED
    assert calls == ["2026-11-29", "2026-11-30"]
    state = hass.states.get("sensor.agentic_hems_electricity_price")
    assert state.attributes["unit_of_measurement"] == "SEK/kWh"
    assert float(state.state) == pytest.approx((100 + 10 * 14) / 1000)  # 14:05 local
    assert [p["price"] for p in state.attributes["tomorrow"][::4]] == pytest.approx([(100 + 10 * h) / 1000 for h in range(24)])
    assert hass.states.get("binary_sensor.agentic_hems_tomorrow_s_prices_available").state == "on"


async def test_tomorrow_not_published_keeps_today(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    """Before publication the service fails for tomorrow; today's prices still serve, tomorrow stays unknown."""
    entry, calls = await set_up(hass, freezer, {date(2026, 11, 29)})
    assert entry.state is ConfigEntryState.LOADED
    assert calls == ["2026-11-29", "2026-11-30"]
    state = hass.states.get("sensor.agentic_hems_electricity_price")
    assert float(state.state) == pytest.approx(0.2)
    assert all(p["price"] is None for p in state.attributes["tomorrow"])
    assert hass.states.get("binary_sensor.agentic_hems_tomorrow_s_prices_available").state == "off"


async def test_nothing_published(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    """No day at all and nothing cached: set-up is retried (ConfigEntryNotReady), so no price is shown, never 0."""
    entry, calls = await set_up(hass, freezer, set())
    assert entry.state is ConfigEntryState.SETUP_RETRY
    assert entry.error_reason_translation_key == "price_source_error"
    assert calls == ["2026-11-29"]
    assert hass.states.get("sensor.agentic_hems_electricity_price") is None


async def test_newer_entry_version_is_refused(hass: HomeAssistant) -> None:
    """An entry written by a newer release is not downgraded."""
    entry = MockConfigEntry(domain=DOMAIN, data={"price_source": "sample"}, options=DEFAULT_OPTIONS, version=2)
    entry.add_to_hass(hass)
    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.MIGRATION_ERROR
