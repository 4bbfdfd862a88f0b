"""The heat pump's inputs from Home Assistant: a weather entity's hourly forecast on the slot grid, and the house's
thermal model fitted from the recorder's history of a simulated house with known parameters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import partial
import math
from typing import Any

import numpy as np
import pytest
from pytest_homeassistant_custom_component.components.recorder.common import async_wait_recording_done

from homeassistant.components.recorder import Recorder
from homeassistant.components.weather import Forecast, WeatherEntity, WeatherEntityFeature
from homeassistant.components.weather.const import DATA_COMPONENT
from homeassistant.const import UnitOfTemperature
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.planning.thermal_source import async_fit_from_history, async_outdoor_forecast
from custom_components.agentic_hems.prices.curve import PriceCurve
from custom_components.agentic_hems.scheduling.thermal import cop_from_points, fit_thermal

from scheduling.thermal_house import house  # tests/ is on the path: the simulated house of the core's tests

T0 = datetime(2026, 12, 1, 10, tzinfo=UTC)
HOURLY = {0: 2.0, 1: 4.0, 2: 3.0, 4: 7.0, 5: 6.0, 9: 0.0}  # hours after T0 -> °C (13:00 missing, 15:00-19:00 a gap)
COP = [(-10.0, 2.2), (10.0, 3.8)]  # the simulated house's COP, 3 + 0.08/K, as two rated points


class ForecastWeather(WeatherEntity):
    """A weather entity with a fixed hourly forecast (None: no hourly forecast at all)."""

    _attr_condition = "sunny"
    _attr_native_temperature = 5.0

    def __init__(self, name: str, hourly: list[Forecast] | None, unit: str = UnitOfTemperature.CELSIUS) -> None:
        self._attr_name = name
        self._attr_unique_id = name
        self._attr_native_temperature_unit = unit
        self._attr_supported_features = (
            WeatherEntityFeature.FORECAST_DAILY if hourly is None else WeatherEntityFeature.FORECAST_HOURLY
        )
        self._hourly = hourly

    async def async_forecast_hourly(self) -> list[Forecast] | None:
        return self._hourly

    async def async_forecast_daily(self) -> list[Forecast] | None:
        return [Forecast(datetime=T0.isoformat(), native_temperature=3.0)]


def hourly(points: dict[int, float]) -> list[Forecast]:
    return [Forecast(datetime=(T0 + timedelta(hours=h)).isoformat(), native_temperature=t) for h, t in points.items()]


@pytest.fixture
async def weather(hass: HomeAssistant) -> None:
    """weather.forecast (°C), weather.fahrenheit (50 °F at T0 and 68 °F an hour later), weather.daily_only,
    weather.empty."""
    assert await async_setup_component(hass, "weather", {})
    await hass.data[DATA_COMPONENT].async_add_entities([
        ForecastWeather("Forecast", hourly(HOURLY)),
        ForecastWeather("Fahrenheit", hourly({0: 50.0, 1: 68.0}), UnitOfTemperature.FAHRENHEIT),
        ForecastWeather("Daily only", None),
        ForecastWeather("Empty", []),
        ForecastWeather("Garbage", hourly({0: 3.0, 1: 1e300, 2: 5.0, 3: -120.0, 4: 6.0})),
    ])
    await hass.async_block_till_done()


def curve(start: datetime, slots: int, minutes: int = 15) -> PriceCurve:
    return PriceCurve(start=start, resolution=timedelta(minutes=minutes), prices=np.full(slots, 0.3))


@pytest.mark.usefixtures("weather")
async def test_hourly_forecast_on_the_slot_grid(hass: HomeAssistant) -> None:
    """Each slot takes the forecast at its middle, linear between the hours (13:00 is missing, so 12:00-14:00 is one
    line); NaN before 10:00, after 15:00 (19:00 is four hours on: not interpolated) and after the last point."""
    found = await async_outdoor_forecast(hass, "weather.forecast", curve(T0 - timedelta(minutes=30), 48))
    middles = [T0 + timedelta(minutes=-22.5 + 15 * i) for i in range(48)]

    def oracle(moment: datetime) -> float:
        hours = (moment - T0).total_seconds() / 3600
        known = sorted(HOURLY)
        for a, b in zip(known, known[1:], strict=False):
            if a <= hours <= b and b - a <= 3:
                return HOURLY[a] + (HOURLY[b] - HOURLY[a]) * (hours - a) / (b - a)
        return math.nan

    assert found == pytest.approx([oracle(m) for m in middles], nan_ok=True)
    assert found[2] == pytest.approx(2.25) and found[12] == pytest.approx(3 + 4 * 37.5 / 120)  # 10:07:30, 12:37:30
    assert np.isnan(found[:2]).all() and np.isnan(found[22:]).all()  # before 10:00; after 15:00
    hourly_grid = await async_outdoor_forecast(hass, "weather.forecast", curve(T0, 6, 60))
    assert hourly_grid[:4] == pytest.approx([3.0, 3.5, 4.0, 6.0])  # 10:30, 11:30, 12:30 (12-14 line), 13:30
    assert hourly_grid[4] == pytest.approx(6.5) and np.isnan(hourly_grid[5])
    fahrenheit = await async_outdoor_forecast(hass, "weather.fahrenheit", curve(T0, 4, 15))
    assert fahrenheit == pytest.approx([10 + 10 * 0.125, 10 + 10 * 0.375, 10 + 10 * 0.625, 10 + 10 * 0.875])
    # 1e300 °C and -120 °C are no outdoor temperatures: those hours are gaps, bridged where the gap is <= 3 h
    garbage = await async_outdoor_forecast(hass, "weather.garbage", curve(T0, 5, 60))
    assert garbage[:4] == pytest.approx([3.5, 4.5, 5.25, 5.75]) and np.isnan(garbage[4])


@pytest.mark.usefixtures("weather")
async def test_forecast_errors_are_translated(hass: HomeAssistant) -> None:
    for entity_id, key in (("weather.nowhere", "weather_entity_missing"), ("weather.daily_only",
                                                                           "weather_no_hourly_forecast"),
                           ("weather.empty", "weather_no_hourly_forecast")):
        with pytest.raises(HomeAssistantError) as err:
            await async_outdoor_forecast(hass, entity_id, curve(T0, 4))
        assert err.value.translation_key == key
        assert err.value.translation_placeholders == {"entity_id": entity_id}


def record(hass: HomeAssistant, entity_id: str, start: datetime, values: np.ndarray, unit: str) -> None:
    """One state per 15-minute slot from ``start`` (NaN as unavailable), at the slot's start; the first value also a
    slot earlier, in force at ``start`` (the recorder's history leaves out a state recorded exactly at its start)."""
    for i, value in enumerate(np.concatenate([values[:1], values])):
        moment = start + timedelta(minutes=15 * (i - 1))
        state = "unavailable" if math.isnan(value) else f"{value:.4f}"
        hass.states.async_set(entity_id, state, {"unit_of_measurement": unit}, timestamp=moment.timestamp())


async def test_fit_from_the_recorders_history(recorder_mock: Recorder, hass: HomeAssistant) -> None:
    """Seven days of a simulated house (UA 200 W/K, C 10 kWh/K, g 0.3, G 0.3 kW; indoor noise 0.05 °C and gaps) in
    the recorder, power in W: the fit from the history is the core's fit of the same samples, and within 5 % of the
    true UA and C."""
    h = house(7)
    now = dt_util.utcnow().replace(second=0, microsecond=0)
    end = now - timedelta(minutes=now.minute % 15)
    start = end - timedelta(days=7)
    record(hass, "sensor.indoor", start, h.indoor_c, "°C")
    record(hass, "sensor.outdoor", start, h.outdoor_c, "°C")
    record(hass, "sensor.heat_pump_power", start, h.electric_kw * 1000, "W")
    record(hass, "sensor.pv_power", start, h.solar_kw, "kW")
    await async_wait_recording_done(hass)

    fit = await async_fit_from_history(
        hass, indoor_entity="sensor.indoor", outdoor_entity="sensor.outdoor", power_entity="sensor.heat_pump_power",
        cop=partial(cop_from_points, COP), days=7, now=now, solar_entity="sensor.pv_power",
    )
    rounded = {key: np.round(values, 4) for key, values in
               {"indoor": h.indoor_c, "outdoor": h.outdoor_c, "power": h.electric_kw, "pv": h.solar_kw}.items()}
    core = fit_thermal(rounded["indoor"], rounded["outdoor"], (3 + 0.08 * rounded["outdoor"]) * rounded["power"],
                       hours=0.25, solar_kw=rounded["pv"])
    assert fit.samples == core.samples
    found = [fit.ua_kw_per_k, fit.capacity_kwh_per_k, fit.solar_gain, fit.gains_kw]
    assert found == pytest.approx([core.ua_kw_per_k, core.capacity_kwh_per_k, core.solar_gain, core.gains_kw],
                                  rel=1e-6)
    assert fit.ua_kw_per_k == pytest.approx(0.2, rel=0.05) and fit.capacity_kwh_per_k == pytest.approx(10, rel=0.05)


async def test_fit_errors_are_translated(recorder_mock: Recorder, hass: HomeAssistant) -> None:
    """An entity without numeric history, and a heat pump that never ran."""
    h = house(1, days=2, gaps=False)
    now = dt_util.utcnow().replace(second=0, microsecond=0)
    start = now - timedelta(minutes=now.minute % 15) - timedelta(days=2)
    record(hass, "sensor.indoor", start, h.indoor_c, "°C")
    record(hass, "sensor.outdoor", start, h.outdoor_c, "°C")
    record(hass, "sensor.heat_pump_power", start, np.zeros(len(h.outdoor_c)), "W")
    await async_wait_recording_done(hass)
    kwargs: dict[str, Any] = {"indoor_entity": "sensor.indoor", "outdoor_entity": "sensor.outdoor",
                              "cop": partial(cop_from_points, COP), "days": 2, "now": now}
    with pytest.raises(HomeAssistantError) as err:
        await async_fit_from_history(hass, power_entity="sensor.missing", **kwargs)
    assert err.value.translation_key == "thermal_no_history"
    assert err.value.translation_placeholders == {"entity_id": "sensor.missing"}
    with pytest.raises(HomeAssistantError) as err:
        await async_fit_from_history(hass, power_entity="sensor.heat_pump_power", **kwargs)
    assert err.value.translation_key == "thermal_no_heating"
    with pytest.raises(ValueError, match="days"):
        await async_fit_from_history(hass, power_entity="sensor.heat_pump_power", **{**kwargs, "days": 0})
