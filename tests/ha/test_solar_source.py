"""The PV forecast from where Home Assistant has it: the Energy dashboard's solar forecasts (each integration's
``energy`` platform), and a Solcast-style sensor's ``detailedForecast``."""

from __future__ import annotations

from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockModule, mock_integration, mock_platform

from homeassistant.components.recorder import Recorder
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.planning.solar_source import (
    async_energy_forecast, energy_forecast_entries, sensor_forecast,
)

WH = {  # two forecast integrations' arrays, as their energy platforms answer (Wh per period, local offsets)
    "east": {"2026-06-01T08:00:00+02:00": 1000, "2026-06-01T09:00:00+02:00": 600},
    "west": {"2026-06-01T08:00:00+02:00": 200, "2026-06-01T09:00:00+02:00": 800},
}
START = datetime.fromisoformat("2026-06-01T08:00:00+02:00")


def forecast_integration(hass: HomeAssistant, domain: str) -> None:
    """An integration whose ``energy`` platform returns ``WH[entry.title]`` for its entries."""

    async def async_get_solar_forecast(hass: HomeAssistant, entry_id: str) -> dict[str, Any] | None:
        entry = hass.config_entries.async_get_entry(entry_id)
        return {"wh_hours": WH[entry.title]} if entry is not None and entry.title in WH else None

    mock_integration(hass, MockModule(domain))
    mock_platform(hass, f"{domain}.energy", SimpleNamespace(async_get_solar_forecast=async_get_solar_forecast))


async def test_the_energy_dashboards_solar_forecasts_are_summed(recorder_mock: Recorder, hass: HomeAssistant) -> None:
    forecast_integration(hass, "solar_test")
    mock_integration(hass, MockModule("no_forecast"))
    entries = {title: MockConfigEntry(domain=domain, title=title) for title, domain in
               (("east", "solar_test"), ("west", "solar_test"), ("silent", "solar_test"), ("other", "no_forecast"))}
    for entry in entries.values():
        entry.add_to_hass(hass)
    assert await energy_forecast_entries(hass) == []  # no energy integration yet

    assert await async_setup_component(hass, "energy", {})
    from homeassistant.components.energy.data import async_get_manager  # noqa: PLC0415 - after set-up

    manager = await async_get_manager(hass)
    ids = [entries[t].entry_id for t in ("east", "west", "silent", "other")]
    await manager.async_update({"energy_sources": [
        {"type": "solar", "stat_energy_from": "sensor.pv_east", "config_entry_solar_forecast": ids[:2]},
        {"type": "solar", "stat_energy_from": "sensor.pv_west", "config_entry_solar_forecast": [ids[1], *ids[2:]]},
        {"type": "solar", "stat_energy_from": "sensor.pv_garage", "config_entry_solar_forecast": None},
    ]})
    assert await energy_forecast_entries(hass) == ids

    forecast = await async_energy_forecast(hass, [*ids, "missing"], START, 12)
    assert forecast.p50[:8] == pytest.approx([1.2] * 4 + [1.4] * 4)  # (1000 + 200) Wh and (600 + 800) Wh per hour
    assert np.isnan(forecast.p50[8:]).all() and forecast.energy_kwh() == pytest.approx(2.6)
    assert await async_energy_forecast(hass, [ids[2], ids[3]], START, 12) is None


async def test_a_solcast_sensors_detailed_forecast(hass: HomeAssistant) -> None:
    start = dt_util.as_utc(START)
    periods = [{"period_start": (start + timedelta(minutes=30 * i)).isoformat(), "pv_estimate": 1.0 + i,
                "pv_estimate10": 0.5 + i, "pv_estimate90": 1.5 + i} for i in range(3)]
    hass.states.async_set("sensor.solcast_forecast_today", "12.5", {"detailedForecast": periods})
    forecast = sensor_forecast(hass, "sensor.solcast_forecast_today", START, 8)
    assert forecast is not None and forecast.p10 is not None and forecast.p90 is not None
    assert forecast.p50[:6] == pytest.approx([1, 1, 2, 2, 3, 3]) and np.isnan(forecast.p50[6:]).all()
    assert forecast.p10[:6] == pytest.approx([0.5, 0.5, 1.5, 1.5, 2.5, 2.5])
    hass.states.async_set("sensor.no_forecast", "3")
    assert sensor_forecast(hass, "sensor.no_forecast", START, 8) is None
    assert sensor_forecast(hass, "sensor.missing", START, 8) is None
