"""What a heat pump's plan stands on, read from Home Assistant: its temperature, the outdoor forecast, its run time.

And a fit of its thermal model.

:func:`async_heat_pumps` builds each configured heat pump's :class:`~..scheduling.home_model.HomeHeatPump` on the
slots of the plan's price curve; :func:`cut_at_forecast` ends the plan's horizon where the outdoor forecast ends;
:func:`async_fit` fits UA and C from the recorder's history for the subentry form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
import math
from typing import Any

import numpy as np

from homeassistant.core import HomeAssistant, State
from homeassistant.exceptions import HomeAssistantError
from homeassistant.util import dt as dt_util

from ..const import (
    CONF_CARNOT_FRACTION,
    CONF_COP_MODE,
    CONF_COP_POINTS,
    CONF_FLOW_TEMP_C,
    CONF_HEAT_POWER_ENTITY,
    CONF_OUTDOOR_ENTITY,
    CONF_SOLAR_ENTITY,
    CONF_TEMPERATURE_ENTITY,
    LOGGER,
)
from ..grid_ha.manager import async_recorded_states
from ..grid_ha.site import to_kw
from ..prices.curve import FloatArray, PriceCurve
from ..scheduling.home_model import HomeHeatPump
from .heat_config import HeatPumpConfig, cop_function
from .home_config import HomeConfig
from .thermal_source import async_fit_from_history, async_outdoor_forecast

ON_KW = 0.05  # a heat pump drawing more than this (or than half its minimum power) counts as running


def measured_temperature(hass: HomeAssistant, entity_id: str) -> float | None:
    """Return the sensor's temperature in °C (a °F sensor converted), None when it has no finite one."""
    state = hass.states.get(entity_id)
    try:
        value = float(state.state) if state is not None else math.nan
    except ValueError:
        return None
    if state is not None and state.attributes.get("unit_of_measurement") == "°F":
        value = (value - 32) / 1.8
    return value if math.isfinite(value) else None


async def async_run_state(
    hass: HomeAssistant, hp: HeatPumpConfig, resolution: timedelta, now: datetime
) -> tuple[int, int]:
    """Return (slots on, slots off) just before ``now``: one of them is 0, the other at least 1.

    A switch (SG Ready: contact 2) is on or off since its ``last_changed``; else the power sensor's recorded history says since when it
    runs (above :data:`ON_KW`) or stands; a climate entity without one counts by its ``hvac_action``. Unknown: off.
    """
    cap = max(hp.min_slots(hp.min_run_min, resolution), hp.min_slots(hp.min_off_min, resolution))
    running, since = False, None
    switch = hp.sg_contact_2 or hp.control_entity  # SG Ready's contact 2 is on in states 3 and 4, as planned
    control = hass.states.get(switch)
    if switch.startswith(("switch.", "input_boolean.")) and control is not None and control.state in ("on", "off"):
        running, since = control.state == "on", control.last_changed
    elif hp.power_entity:
        running, since = await _async_power_run(hass, hp, now - cap * resolution, now)
    elif control is not None:
        running, since = control.attributes.get("hvac_action") == "heating", control.last_changed
    slots = cap if since is None else min(max(math.ceil((now - since) / resolution), 1), cap)
    return (slots, 0) if running else (0, slots)


async def _async_power_run(
    hass: HomeAssistant, hp: HeatPumpConfig, start: datetime, now: datetime
) -> tuple[bool, datetime | None]:
    """Whether the power sensor shows the heat pump running, and since when (None: all of [start, now])."""
    assert hp.power_entity is not None
    states = await async_recorded_states(hass, hp.power_entity, start, now)
    if not states and (current := hass.states.get(hp.power_entity)) is not None:
        states = [current]
    threshold = max(ON_KW, hp.min_kw / 2)

    def on(state: State) -> bool | None:
        try:
            return to_kw(state) > threshold
        except ValueError, TypeError:
            return None

    flags = [(state.last_changed, on(state)) for state in states]
    flags = [(t, f) for t, f in flags if f is not None]
    if not flags:
        return False, None
    running, since = flags[-1][1], None
    for moment, flag in reversed(flags):
        if flag != running:
            break
        since = moment
    return bool(running), since if since is not None and since > start else None


async def async_heat_pumps(
    hass: HomeAssistant,
    config: HomeConfig,
    curve: PriceCurve,
    now: datetime,
    notes: list[str] | None = None,
    *,
    pv_kw: FloatArray | None = None,
) -> list[HomeHeatPump]:
    """Each heat pump on the slots of ``curve`` at its measured temperature.

    The outdoor temperature per slot comes from the weather entity's hourly forecast, NaN past its end (so are the
    COP and, for space heating, the ambient there: :func:`cut_at_forecast` ends the plan's horizon there, no
    temperature is invented). A house's gains are its internal gains plus its solar gain times ``pv_kw`` (the plan's
    PV forecast, kW per slot of ``curve``; None: no PV). A hot-water tank's ambient is its room temperature and its
    gains the hot-water draw.
    The comfort band follows the local time of each slot. A heat pump without a measured temperature is left out,
    with a note in ``notes``.
    """
    tz = dt_util.get_time_zone(hass.config.time_zone) or dt_util.get_default_time_zone()
    starts = curve.slot_starts()
    out = []
    for hp in config.heat_pumps:
        temp = measured_temperature(hass, hp.temperature_entity)
        if temp is None:
            if notes is not None:
                notes.append(f"heat pump {hp.name!r} left out: no temperature from {hp.temperature_entity}")
            continue
        try:
            outdoor = np.asarray(await async_outdoor_forecast(hass, hp.weather_entity, curve), dtype=np.float64)
        except HomeAssistantError as err:
            if notes is not None:
                notes.append(f"heat pump {hp.name!r} left out: no outdoor forecast from {hp.weather_entity} ({err})")
            continue
        on, off = await async_run_state(hass, hp, curve.resolution, now)
        out.append(
            hp.heat_pump(
                initial_temp_c=temp,
                ambient_c=np.where(np.isfinite(outdoor), hp.room_temp_c, np.nan) if hp.hot_water else outdoor,
                cop=hp.cop(outdoor),
                comfort=hp.comfort(starts, tz),
                gains_kw=hp.gains_kw(starts, curve.resolution, tz, pv_kw),
                resolution=curve.resolution,
                initial_on_slots=on,
                initial_off_slots=off,
            )
        )
    return out


def cut_at_forecast(curve: PriceCurve, heat_pumps: Sequence[HomeHeatPump]) -> tuple[PriceCurve, datetime | None]:
    """Return ``curve`` with its prices unknown from the first slot a heat pump's inputs are not finite, and that slot.

    The plan's horizon stops at the first unknown price, so it never plans on a temperature the forecast lacks.
    """
    n = len(curve)
    known = np.ones(n, dtype=bool)
    for hp in heat_pumps:
        for series in (hp.ambient_c, hp.cop, hp.comfort_low_c, hp.comfort_high_c, hp.gains_kw):
            if series is not None:
                known &= np.isfinite(np.asarray(series, dtype=np.float64)[:n])
    if known.all():
        return curve, None
    first = int(np.argmin(known))
    prices = curve.prices.copy()
    prices[first:] = np.nan
    return curve.replace(prices=prices), curve.slot_start(first)


FIT_DAYS = 14  # the history a heat pump fit reads


async def async_fit(hass: HomeAssistant, data: Mapping[str, Any]) -> tuple[dict[str, float] | None, str]:
    """Fit the thermal model from the recorder's history (the last :data:`FIT_DAYS` days).

    The history is the store's temperature, the outdoor temperature sensor's, the heat pump's power and, with a PV
    power sensor (``solar_entity``), the PV production; the heat is the power times the COP the model step gives.
    Returns ``({"ua_w_per_k", "capacity_kwh_per_k", "gains_kw", "solar_gain", "rmse_c", "samples"}, text)`` (the
    internal gains in kW, the solar gain in kW of heat per kW of PV: 0 without the sensor) or ``(None, why not)``;
    ``text`` is a sentence for the form's description.
    """
    try:
        fit = await async_fit_from_history(
            hass,
            indoor_entity=data[CONF_TEMPERATURE_ENTITY],
            outdoor_entity=data[CONF_OUTDOOR_ENTITY],
            power_entity=data[CONF_HEAT_POWER_ENTITY],
            cop=cop_function(
                data[CONF_COP_MODE], data[CONF_COP_POINTS], data[CONF_FLOW_TEMP_C], data[CONF_CARNOT_FRACTION]
            ),
            days=FIT_DAYS,
            now=dt_util.utcnow(),
            solar_entity=data.get(CONF_SOLAR_ENTITY) or None,
        )
    except (HomeAssistantError, ValueError) as err:
        LOGGER.debug("Heat pump fit failed: %s", err)
        return None, f"No fit: {str(err) or getattr(err, 'translation_key', type(err).__name__)}"
    ua, capacity, rmse = float(fit.ua_kw_per_k) * 1000, float(fit.capacity_kwh_per_k), float(fit.rmse_c)
    if not (math.isfinite(ua) and ua > 0 and math.isfinite(capacity) and capacity > 0):
        return None, f"no fit: the history gives UA {ua:.0f} W/K and C {capacity:.2f} kWh/K"
    result = {"ua_w_per_k": round(ua, 1), "capacity_kwh_per_k": round(capacity, 2), "rmse_c": round(rmse, 2)}
    result |= {"gains_kw": round(float(fit.gains_kw), 3), "solar_gain": round(float(fit.solar_gain), 3)}
    result["samples"] = int(getattr(fit, "samples", 0))
    text = (
        f"Fitted from {result['samples']} samples: UA {result['ua_w_per_k']:g} W/K, C "
        f"{result['capacity_kwh_per_k']:g} kWh/K, internal gains {result['gains_kw']:g} kW, solar gain "
        f"{result['solar_gain']:g} kW per kW of PV, error (RMSE) {result['rmse_c']:g} °C."
    )
    return result, text
