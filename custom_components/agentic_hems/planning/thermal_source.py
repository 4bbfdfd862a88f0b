"""What a heat pump's plan stands on, read from Home Assistant: the outdoor temperature forecast, the house's model.

- :func:`async_outdoor_forecast`: a weather entity's hourly forecast (``weather.get_forecasts``, type ``hourly``) as
  °C per slot of a price curve: each slot takes the forecast at its middle, linear between two forecast hours; NaN
  before the first forecast hour, after the last and between two more than ``MAX_FORECAST_GAP`` apart (a forecast
  is never stretched). The forecast's unit is the entity's ``temperature_unit`` (HA converts to its unit system).
- :func:`async_fit_from_history`: the recorder's states of the indoor and outdoor temperature, the heat pump's
  electrical power (and optionally the PV production), as 15-minute time-weighted means
  (:func:`~..grid.forecast.resample`), heat = COP(outdoor) x electrical kW, fitted by
  :func:`~..scheduling.thermal.fit_thermal`; all but the recorder's query in one executor job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
import math
from typing import Any

import numpy as np

from homeassistant.const import UnitOfTemperature
from homeassistant.core import HomeAssistant, State
from homeassistant.exceptions import HomeAssistantError
from homeassistant.util.unit_conversion import TemperatureConverter

from ..const import DOMAIN
from ..grid.forecast import resample
from ..grid_ha.manager import async_recorded_states
from ..grid_ha.site import to_kw
from ..prices.curve import FloatArray, PriceCurve, floor_slot
from ..scheduling.thermal import ThermalDataError, ThermalFit, fit_thermal

MAX_FORECAST_GAP = timedelta(hours=3)  # two forecast points further apart than this are not interpolated between
STEP_MIN = 15  # the history's resampling step, minutes

type Cop = Callable[[FloatArray], FloatArray]  # COP per outdoor temperature (°C), e.g. a partial of cop_from_points


def _no_hourly(entity_id: str) -> HomeAssistantError:
    return HomeAssistantError(
        translation_domain=DOMAIN,
        translation_key="weather_no_hourly_forecast",
        translation_placeholders={"entity_id": entity_id},
    )


def _celsius(value: Any, unit: Any) -> float:
    """``value`` in °C from ``unit`` (°C, °F or K; °C when none); NaN when not a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return math.nan
    try:
        number = float(value)
    except ValueError:
        return math.nan
    if unit in TemperatureConverter.VALID_UNITS and unit != UnitOfTemperature.CELSIUS:
        number = TemperatureConverter.convert(number, unit, UnitOfTemperature.CELSIUS)
    return number if math.isfinite(number) else math.nan


# Outdoor temperatures a forecast can hold (°C): Earth's records are -89.2 and 56.7; others are garbage, left unknown.
PLAUSIBLE_OUTDOOR_C = (-90.0, 60.0)


def _forecast_points(entries: Any, unit: Any) -> tuple[FloatArray, FloatArray]:
    """(POSIX seconds, °C) of the forecast entries with a time and a plausible temperature, sorted by time."""
    points: dict[float, float] = {}
    for entry in entries if isinstance(entries, list) else []:
        try:
            moment = datetime.fromisoformat(entry["datetime"])
        except KeyError, TypeError, ValueError:
            continue
        temp = _celsius(entry.get("temperature"), unit)
        if moment.tzinfo is not None and PLAUSIBLE_OUTDOOR_C[0] <= temp <= PLAUSIBLE_OUTDOOR_C[1]:
            points[moment.timestamp()] = temp
    times = np.array(sorted(points), dtype=np.float64)
    return times, np.array([points[t] for t in times], dtype=np.float64)


def at_slots(times: FloatArray, temps: FloatArray, curve: PriceCurve) -> FloatArray:
    """Forecast points (sorted POSIX seconds, °C) at each slot's middle of ``curve``, shape (len(curve),).

    Linear between two points at most ``MAX_FORECAST_GAP`` apart; NaN outside the points and across larger gaps.
    """
    start = curve.start.timestamp() + curve.resolution.total_seconds() / 2
    middle = start + curve.resolution.total_seconds() * np.arange(len(curve))
    if not len(times):
        return np.full(len(curve), np.nan)
    values = np.interp(middle, times, temps, left=np.nan, right=np.nan)
    after = np.searchsorted(times, middle)  # the first point at or after each middle
    inside = (after > 0) & (after < len(times))
    gap = np.zeros(len(curve), dtype=bool)
    gap[inside] = times[after[inside]] - times[after[inside] - 1] > MAX_FORECAST_GAP.total_seconds()
    return np.where(gap, np.nan, values)


async def async_outdoor_forecast(hass: HomeAssistant, weather_entity_id: str, curve: PriceCurve) -> FloatArray:
    """Outdoor temperature per slot of ``curve`` from the weather entity's hourly forecast, °C (see the module).

    Raises:
        HomeAssistantError: ``weather_entity_missing`` when the entity does not exist, ``weather_no_hourly_forecast``
            when it has no hourly forecast (not supported, or empty).

    """
    state = hass.states.get(weather_entity_id)
    if state is None:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="weather_entity_missing",
            translation_placeholders={"entity_id": weather_entity_id},
        )
    try:
        response = await hass.services.async_call(
            "weather",
            "get_forecasts",
            {"entity_id": weather_entity_id, "type": "hourly"},
            blocking=True,
            return_response=True,
        )
    except HomeAssistantError as err:
        raise _no_hourly(weather_entity_id) from err
    found = response.get(weather_entity_id) if response else None
    entries = found.get("forecast") if isinstance(found, dict) else None
    times, temps = _forecast_points(entries, state.attributes.get("temperature_unit"))
    if not len(times):
        raise _no_hourly(weather_entity_id)
    return at_slots(times, temps, curve)


def _reading(state: State, power: bool) -> float:
    """Return a state's value: kW for a power sensor (W, kW, MW), °C for a temperature; NaN when not numeric."""
    if not power:
        return _celsius(state.state, state.attributes.get("unit_of_measurement"))
    try:
        return to_kw(state)
    except ValueError, TypeError:
        return math.nan


def _means(entity_id: str, states: list[State], start: datetime, end: datetime, *, power: bool) -> FloatArray:
    """Return the 15-minute means of ``states``; HomeAssistantError ``thermal_no_history`` when none is a number."""
    values = [_reading(state, power) for state in states]
    if not any(math.isfinite(v) for v in values):
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="thermal_no_history",
            translation_placeholders={"entity_id": entity_id},
        )
    return resample([state.last_updated for state in states], values, start, end, STEP_MIN)


def _fit(history: Mapping[str, tuple[str, list[State]]], cop: Cop, start: datetime, end: datetime) -> ThermalFit:
    """Read the states (role -> (entity id, states)), resample them to 15-minute means and fit (executor job)."""
    means = {
        role: _means(entity_id, states, start, end, power=role in ("power", "solar"))
        for role, (entity_id, states) in history.items()
    }
    heat = np.asarray(cop(means["outdoor"]), dtype=np.float64) * means["power"]
    return fit_thermal(means["indoor"], means["outdoor"], heat, hours=STEP_MIN / 60, solar_kw=means.get("solar"))


async def async_fit_from_history(
    hass: HomeAssistant,
    *,
    indoor_entity: str,
    outdoor_entity: str,
    power_entity: str,
    cop: Cop,
    days: float,
    now: datetime,
    solar_entity: str | None = None,
) -> ThermalFit:
    """Fit the house's thermal model to the last ``days`` days of recorded history before ``now`` (see the module).

    Args:
        hass: Home Assistant, with the recorder.
        indoor_entity: the indoor temperature sensor (°C, °F or K; °C when without a unit).
        outdoor_entity: the outdoor temperature sensor (units as the indoor one).
        power_entity: the heat pump's electrical power (W, kW or MW).
        cop: COP per outdoor temperature (°C), e.g. ``functools.partial(cop_from_points, points)``.
        days: history length, days, > 0.
        now: aware datetime; the history ends at the start of its 15-minute slot.
        solar_entity: PV production (W, kW or MW), fitted as the solar input; None for none.

    Raises:
        ValueError: ``days`` <= 0.
        HomeAssistantError: ``thermal_no_history`` when an entity has no numeric recorded state in the period; the
            fit's own errors (``thermal_too_little_data``, ``thermal_no_heating``, ``thermal_flat_temperatures``,
            ``thermal_non_physical``) with their placeholders.

    """
    if not (math.isfinite(days) and days > 0):
        raise ValueError(f"days must be finite and > 0, got {days!r}")
    end = floor_slot(now)
    start = floor_slot(end - timedelta(days=days))
    entities = {"indoor": indoor_entity, "outdoor": outdoor_entity, "power": power_entity, "solar": solar_entity}
    history = {
        role: (entity_id, await async_recorded_states(hass, entity_id, start, end))
        for role, entity_id in entities.items()
        if entity_id
    }
    try:
        return await hass.async_add_executor_job(_fit, history, cop, start, end)
    except ThermalDataError as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key=err.translation_key,
            translation_placeholders=err.placeholders,
        ) from err
