"""Where the PV forecast comes from in Home Assistant: the Energy dashboard's solar forecasts, or a forecast sensor.

- :func:`energy_forecast_entries`: the config entries the Energy dashboard uses as solar forecasts (its solar sources'
  ``config_entry_solar_forecast``), the default when the options name none.
- :func:`async_energy_forecast`: those entries' forecasts, each read through its integration's ``energy`` platform
  (``async_get_solar_forecast``: Forecast.Solar, Open-Meteo Solar Forecast, Solcast and others), summed onto the slot
  grid (:mod:`..scheduling.solar`).
- :func:`sensor_forecast`: a sensor whose ``detailedForecast`` attribute lists mean kW per period with p10/p90 columns
  (Solcast's sensors).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from homeassistant.core import HomeAssistant
from homeassistant.loader import IntegrationNotFound, async_get_integration

from ..const import LOGGER
from ..scheduling.solar import SolarForecast, combine, from_energy_periods, from_mean_power

DETAILED_FORECAST = "detailedForecast"


async def energy_forecast_entries(hass: HomeAssistant) -> list[str]:
    """Return the config entry ids of the Energy dashboard's solar forecasts, in its order (empty without energy)."""
    if "energy" not in hass.config.components:
        return []
    from homeassistant.components.energy.data import async_get_manager  # noqa: PLC0415 - only when energy is loaded

    manager = await async_get_manager(hass)
    sources = manager.data["energy_sources"] if manager.data is not None else []
    ids = [i for s in sources if s["type"] == "solar" for i in s.get("config_entry_solar_forecast") or []]
    return list(dict.fromkeys(ids))


async def async_energy_forecast(
    hass: HomeAssistant, entry_ids: Sequence[str], start: datetime, slots: int, slot_minutes: int = 15
) -> SolarForecast | None:
    """Return the summed forecast of ``entry_ids`` on the grid (``start``, ``slots`` × ``slot_minutes``).

    An entry that is missing, not loaded, of an integration without a solar forecast, or that returns nothing is
    skipped with a debug log. Returns None when no entry gave a forecast.
    """
    forecasts: list[SolarForecast] = []
    for entry_id in entry_ids:
        entry = hass.config_entries.async_get_entry(entry_id)
        if entry is None:
            LOGGER.debug("Solar forecast entry %s does not exist", entry_id)
            continue
        try:
            platform = await (await async_get_integration(hass, entry.domain)).async_get_platform("energy")
        except IntegrationNotFound, ImportError:
            platform = None
        reader = getattr(platform, "async_get_solar_forecast", None)
        data = await reader(hass, entry_id) if reader is not None else None
        if not isinstance(data, dict) or not isinstance(data.get("wh_hours"), dict):
            LOGGER.debug("No solar forecast from %s (%s)", entry.title, entry.domain)
            continue
        forecasts.append(from_energy_periods(data["wh_hours"], start, slots, slot_minutes))
    return combine(forecasts) if forecasts else None


def sensor_forecast(
    hass: HomeAssistant, entity_id: str, start: datetime, slots: int, slot_minutes: int = 15
) -> SolarForecast | None:
    """Return the forecast in ``entity_id``'s ``detailedForecast`` attribute on the grid, or None without one."""
    state = hass.states.get(entity_id)
    items = state.attributes.get(DETAILED_FORECAST) if state is not None else None
    if not isinstance(items, list):
        return None
    return from_mean_power(items, start, slots, slot_minutes)
