"""What the whole-home plan stands on, read from Home Assistant: prices, export prices, PV, house load, batteries.

:func:`async_inputs` gathers one :class:`HomeInputs` for ``now``: the coordinator's total price curve from the current
slot on (unknown prices stay NaN: the plan's horizon stops at the first one), the export price per the options, the
PV forecast (unknown slots as 0 kW, with the first such slot named), the house load forecast from the recorder and
each battery at its measured state of charge (a battery without a readable SoC is left out, and said so).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta, tzinfo
import math
from typing import TYPE_CHECKING

import numpy as np

from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util

from ..const import EXPORT_SPOT
from ..grid.forecast import MAX_HORIZON_H, ForecastError, forecast
from ..prices.curve import FloatArray, PriceCurve, floor_slot
from ..prices.tariffs import band_fees, billing_months, peak_floors
from ..scheduling.home_model import GridFees, HomeBattery, HomeHeatPump, PhaseLimits
from ..scheduling.solar import SolarForecast
from .home_config import HomeConfig
from .solar_source import async_energy_forecast, energy_forecast_entries, sensor_forecast
from .tariff_source import async_holidays, async_month_peak

if TYPE_CHECKING:
    from ..coordinator import PriceData
    from ..grid_ha.manager import GridManager

HISTORY_DAYS = 14


@dataclass
class HomeInputs:
    """The plan's inputs on the slot grid of ``curve`` (from the current slot); arrays have len(curve)."""

    curve: PriceCurve
    export_price: FloatArray
    pv_kw: FloatArray
    base_load_kw: FloatArray
    batteries: tuple[HomeBattery, ...]
    pv_source: str  # "sensor", "energy" or "none"
    pv_unknown_from: datetime | None  # first slot whose PV forecast is unknown (planned as 0 kW)
    soc_measured_at: dict[str, datetime] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    fees: GridFees | None = None  # network fees and capacity charge (:func:`grid_terms`)
    phases: PhaseLimits | None = None  # per-phase limit and every configured device's phase
    heat_pumps: tuple[HomeHeatPump, ...] = ()  # heat_inputs.async_heat_pumps's, set by the manager


def export_prices(config: HomeConfig, data: PriceData, curve: PriceCurve) -> FloatArray:
    """Per slot of ``curve``: factor x spot - fee (NaN where the spot is unknown), or the fixed feed-in price."""
    if config.export_price_mode != EXPORT_SPOT:
        return np.full(len(curve), config.export_fixed_price)
    spot = data.spot.window(curve.start, curve.end).prices
    return config.export_spot_factor * spot - config.export_spot_fee


async def async_pv(
    hass: HomeAssistant, config: HomeConfig, curve: PriceCurve
) -> tuple[FloatArray, str, datetime | None]:
    """PV kW per slot (unknown as 0), its source and the first unknown slot (None when every slot is known)."""
    found: SolarForecast | None = None
    source = "none"
    if config.pv_forecast_sensor:
        found, source = sensor_forecast(hass, config.pv_forecast_sensor, curve.start, len(curve)), "sensor"
    else:
        entries = list(config.pv_forecast_entries) or await energy_forecast_entries(hass)
        if entries:
            found, source = await async_energy_forecast(hass, entries, curve.start, len(curve)), "energy"
    if found is None:
        return np.zeros(len(curve)), "none", curve.start if source != "none" else None
    unknown = np.flatnonzero(~found.known)
    return np.nan_to_num(found.p50, nan=0.0), source, curve.slot_start(int(unknown[0])) if unknown.size else None


async def async_house_load(
    grid: GridManager, config: HomeConfig, curve: PriceCurve, now: datetime
) -> tuple[FloatArray, str | None]:
    """House load kW per slot from the recorder's history of the house power entity (0 kW without one, with a note).

    The forecast starts at the slot after ``now``; the current slot takes its first value.
    """
    if not config.house_power_entity:
        return np.zeros(len(curve)), "no house power entity: base load planned as 0 kW"
    times, values = await grid.async_history(config.house_power_entity, now - timedelta(days=HISTORY_DAYS), now)
    try:
        horizon_h = min(len(curve) / 4, MAX_HORIZON_H)
        found = forecast(times, values, now=now, horizon_h=horizon_h, quantiles=[0.5], step_min=15)
    except (ForecastError, ValueError) as err:
        return np.zeros(len(curve)), f"no house load forecast ({err}): base load planned as 0 kW"
    series = np.clip(np.nan_to_num(np.asarray(found.series[0.5], dtype=np.float64)), 0.0, None)
    out = np.zeros(len(curve))
    for start, value in zip(found.starts, series, strict=True):
        if 0 <= (i := curve.index_of(start)) < len(curve):
            out[i] = value
    out[0] = series[0] if series.size else 0.0
    return out, None


def measured_batteries(
    hass: HomeAssistant, config: HomeConfig
) -> tuple[list[HomeBattery], dict[str, datetime], list[str]]:
    """Each battery at its SoC entity's state (percent); one without a finite SoC is left out with a note."""
    batteries, measured, notes = [], {}, []
    for bat in config.batteries:
        state = hass.states.get(bat.soc_entity) if bat.soc_entity else None
        try:
            soc = float(state.state) if state is not None else math.nan
        except ValueError:
            soc = math.nan
        if not math.isfinite(soc) or state is None:
            notes.append(f"battery {bat.name!r} left out: no state of charge from {bat.soc_entity}")
            continue
        batteries.append(bat.battery(soc))
        measured[bat.subentry_id] = state.last_updated
    return batteries, measured, notes


async def async_inputs(
    hass: HomeAssistant, config: HomeConfig, data: PriceData, grid: GridManager, now: datetime
) -> HomeInputs:
    """Gather the plan's inputs at ``now`` (see the module docstring); the curve starts at the current slot."""
    curve = data.total.window(floor_slot(now), max(data.total.end, floor_slot(now) + data.total.resolution))
    pv, source, unknown = await async_pv(hass, config, curve)
    base, load_note = await async_house_load(grid, config, curve, now)
    batteries, measured, notes = measured_batteries(hass, config)
    fees, phases, fee_note = await async_grid_terms(hass, config, curve, now)
    return HomeInputs(
        curve=curve,
        export_price=export_prices(config, data, curve),
        pv_kw=pv,
        base_load_kw=base,
        batteries=tuple(batteries),
        pv_source=source,
        pv_unknown_from=unknown,
        soc_measured_at=measured,
        notes=[*notes, *([load_note] if load_note else []), *([fee_note] if fee_note else [])],
        fees=fees,
        phases=phases,
    )


def grid_terms(
    config: HomeConfig, curve: PriceCurve, peak_so_far_kw: float, *, tz: tzinfo, holidays: Collection[date] = ()
) -> tuple[GridFees | None, PhaseLimits | None]:
    """Return the network fees and phase limits of the plan over ``curve`` (None for each that is not configured).

    The fees hold the band fee per slot (0 without bands, local time ``tz``, ``holidays`` as the bands say) and, with
    a capacity price, each slot's billing month and each month's peak floor: the current month (that of the curve's
    first slot) at ``peak_so_far_kw`` (kW) or the minimum billed peak, later months at the minimum. The phase limit
    is current x voltage per phase; a single-phase connection puts every device, the PV and the base load on L1.
    """
    starts = curve.slot_starts()
    fees = None
    if config.tariff is not None or config.capacity_price > 0:
        energy = band_fees(starts, config.tariff, tz=tz, holidays=holidays) if config.tariff else np.zeros(len(starts))
        month, keys = billing_months(starts, tz)
        floors = peak_floors(keys, current=keys[0], peak_so_far_kw=peak_so_far_kw, minimum_kw=config.capacity_min_kw)
        fees = GridFees(
            energy_fee=energy,
            capacity_price=config.capacity_price,
            month=month if config.capacity_price > 0 else None,
            peak_floor_kw=floors if config.capacity_price > 0 else (0.0,),
        )
    if config.phase_current_a is None:
        return fees, None
    if config.phase_count == 1:
        assignment = dict.fromkeys([*config.device_phases, "pv", "base"], "L1")
    else:
        assignment = {name: "3" if phase == "three-phase" else phase for name, phase in config.device_phases.items()}
    return fees, PhaseLimits(limit_kw=config.phase_current_a * config.nominal_voltage / 1000, assignment=assignment)


async def async_grid_terms(
    hass: HomeAssistant, config: HomeConfig, curve: PriceCurve, now: datetime
) -> tuple[GridFees | None, PhaseLimits | None, str | None]:
    """Return :func:`grid_terms` of ``curve`` in HA's time zone, with the month's peak and the holidays read from HA.

    The peak so far comes from the import power sensor's statistics (0 kW, with a note, when there are none); the
    holidays from the holiday calendar over the curve (only read when there are bands).
    """
    peak, note = 0.0, None
    if config.capacity_price > 0:
        found = await async_month_peak(hass, config.import_power_entity, now) if config.import_power_entity else None
        if found is None:
            note = "no month's peak so far from the import power sensor: the capacity charge starts at the minimum"
        peak = found or 0.0
    holidays = set()
    if config.tariff is not None and config.holiday_calendar:
        holidays = await async_holidays(hass, config.holiday_calendar, curve.start, curve.end)
    fees, phases = grid_terms(config, curve, peak, tz=dt_util.get_default_time_zone(), holidays=holidays)
    return fees, phases, note


def phases_of(phases: PhaseLimits | None, names: Collection[str]) -> PhaseLimits | None:
    """Return ``phases`` with only the devices ``names`` (and "pv", "base") assigned: those the plan holds."""
    if phases is None:
        return None
    keep = {*names, "pv", "base"}
    return replace(phases, assignment={k: v for k, v in phases.assignment.items() if k in keep})
