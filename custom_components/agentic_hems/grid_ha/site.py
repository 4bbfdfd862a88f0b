"""The home site of the grid toolkit: the twin's site from the options and appliances, and power in HA's units.

:func:`home_site` reads the options' PV, battery and measured entities and the flexible appliances (EV chargers and
heat pumps). :func:`to_kw` reads a power state in kW; :func:`setpoint_value` writes kW in a setpoint entity's unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from homeassistant.const import UnitOfPower
from homeassistant.core import HomeAssistant, State
from homeassistant.util.unit_conversion import PowerConverter

from ..const import (
    CONF_BATTERY_CAPACITY_KWH,
    CONF_BATTERY_POWER_KW,
    CONF_POWER_LIMIT_KW,
    CONF_PV_PEAK_KW,
    MEASUREMENT_OPTIONS,
)
from ..grid.twin import HomeSite

if TYPE_CHECKING:
    from ..scheduling.appliance import Appliance

POWER_UNITS = (UnitOfPower.WATT, UnitOfPower.KILO_WATT, UnitOfPower.MEGA_WATT)
SETPOINT = "battery.setpoint"  # the measurement key of the battery's setpoint entity


def to_kw(state: State) -> float:
    """Return a power state in kW (W, kW and MW units; none means kW); raise ValueError when not numeric."""
    value = float(state.state)
    if not np.isfinite(value):
        raise ValueError(state.state)
    unit = state.attributes.get("unit_of_measurement") or UnitOfPower.KILO_WATT
    if unit not in POWER_UNITS:
        raise ValueError(f"{unit} is not a power unit (W, kW or MW)")
    return float(PowerConverter.convert(value, unit, UnitOfPower.KILO_WATT))


def setpoint_value(hass: HomeAssistant, entity_id: str, p_kw: float) -> float:
    """``p_kw`` in the setpoint entity's unit (W, kW or MW; kW without one), on its step grid from ``min``."""
    state = hass.states.get(entity_id)
    attributes = state.attributes if state else {}
    unit = attributes.get("unit_of_measurement")
    value = float(PowerConverter.convert(p_kw, UnitOfPower.KILO_WATT, unit)) if unit in POWER_UNITS else p_kw
    step, low = attributes.get("step"), attributes.get("min", 0.0)
    if isinstance(step, (int, float)) and step > 0 and isinstance(low, (int, float)):
        value = low + round((value - low) / step) * step
    return round(value, 6)


def home_site(options: Mapping[str, Any], appliances: Mapping[str, Appliance]) -> HomeSite:
    """Return the home twin's site from the options and the appliance subentries."""
    flexible: list[tuple[str, str, float]] = []
    ids: dict[str, str] = {}
    for appliance in appliances.values():
        if appliance.kind in ("ev_charger", "heat_pump"):
            asset_id = appliance.kind if appliance.kind not in ids.values() else f"{appliance.kind}_{len(ids) + 1}"
            ids[appliance.appliance_id] = asset_id
            flexible.append((asset_id, appliance.kind, appliance.power_kw))
    entities = {key: options[option] for key, option in MEASUREMENT_OPTIONS.items() if options.get(option)}

    def number(key: str) -> float | None:
        value = options.get(key)
        return float(value) if isinstance(value, (int, float, str)) and value != "" else None

    return HomeSite(
        fuse_kw=float(options[CONF_POWER_LIMIT_KW]),
        pv_peak_kw=number(CONF_PV_PEAK_KW),
        battery_kwh=number(CONF_BATTERY_CAPACITY_KWH),
        battery_kw=number(CONF_BATTERY_POWER_KW),
        appliances=tuple(flexible),
        entities=entities,
    )
