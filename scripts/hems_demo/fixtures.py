"""The demo's computed fixtures: the Bosch dishwasher's answers and steps, the simulated house, grid YAML, PV forecast."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .constants import (
    CLIMATE_YAML,
    COP_POINTS,
    COVER_TEMPLATE_YAML,
    FREE_SWITCH_YAML,
    HOUSE_C_KWH_PER_K,
    HOUSE_HP_KW,
    HOUSE_METERS,
    HOUSE_UA_KW_PER_K,
    METERS,
    SG_READY_YAML,
    WEATHER_YAML,
)
from .devices import (
    MODE_BATTERY_POWER_YAML,
    MODE_BATTERY_SELECT_YAML,
    PROGRAM_DW,
    PROGRAM_DW_ENTITIES,
    PROGRAM_DW_HELPERS_YAML,
    PROGRAM_DW_LEAD,
    PROGRAM_DW_OPTIONS,
    PROGRAM_DW_TEMPLATE_YAML,
    PROGRAM_DW_WINDOW,
    PV_PEAK_KW,
    SUNRISE_H,
    SUNSET_H,
)


def program_dishwasher(now: datetime) -> dict[str, Any]:
    """The Bosch dishwasher's "Add appliance" answers: its window opens PROGRAM_DW_LEAD after ``now`` (local, on a
    slot boundary) and lasts PROGRAM_DW_WINDOW, so its planned start is always ahead (a delayed start to set)."""
    opens = now + PROGRAM_DW_LEAD + (-now.minute % 15) * timedelta(minutes=1)
    return {
        "name": PROGRAM_DW, "kind": "dishwasher", "entity_id": PROGRAM_DW_ENTITIES["select"],
        "program": PROGRAM_DW_OPTIONS[1], "start_entity": PROGRAM_DW_ENTITIES["button"],
        "remote_start_entity": PROGRAM_DW_ENTITIES["remote"], "operation_entity": PROGRAM_DW_ENTITIES["operation"],
        "program_start": "button", "delayed_start": True, "delay_entity": PROGRAM_DW_ENTITIES["delay"],
        "power_kw": 1.8, "duration_min": 150, "contiguous": True,
        "earliest_start": f"{opens:%H:%M}:00", "deadline": f"{opens + PROGRAM_DW_WINDOW:%H:%M}:00",
    }


def house_step(indoor_c: float, outdoor_c: float, heating: bool, hours: float) -> tuple[float, float]:
    """One step of the simulated house: (new indoor °C, the heat pump's electrical kW) after ``hours``."""
    (t0, c0), (t1, c1) = COP_POINTS
    cop = min(max(c0 + (c1 - c0) * (outdoor_c - t0) / (t1 - t0), 1.0), 6.0)
    kw = HOUSE_HP_KW if heating else 0.0
    change = hours / HOUSE_C_KWH_PER_K * (cop * kw - HOUSE_UA_KW_PER_K * (indoor_c - outdoor_c))
    return round(indoor_c + change, 3), kw


def grid_yaml() -> str:
    """The meters' input_number helpers, the battery setpoint, and the `template:` key: sensors reading the helpers,
    the garage door (COVER_TEMPLATE_YAML), the house's weather and a free switch (FREE_SWITCH_YAML)."""
    numbers = []
    sensors = []
    for oid, (name, unit, low, high, step, initial, device_class) in {**METERS, **HOUSE_METERS}.items():
        numbers.append(
            f"  {oid}_value:\n    name: {name} (stand-in)\n    min: {low}\n    max: {high}\n    step: {step}\n"
            f"    initial: {initial}\n    unit_of_measurement: \"{unit}\"\n    mode: box"
        )
        sensors.append(
            f"      - name: {name}\n        unique_id: demo_{oid}\n        unit_of_measurement: \"{unit}\"\n"
            f"        device_class: {device_class}\n        state_class: measurement\n"
            f"        state: \"{{{{ states('input_number.{oid}_value') | float }}}}\"\n"
            f"        availability: \"{{{{ is_number(states('input_number.{oid}_value')) }}}}\""
        )
    numbers.append(
        "  hot_water_offset_value:\n    name: Hot water offset (stand-in)\n    min: -13\n    max: 40\n    step: 1\n"
        '    initial: 0\n    unit_of_measurement: "°C"\n    mode: box'
    )
    numbers.append(
        "  battery_setpoint:\n    name: Battery setpoint\n    min: -5\n    max: 5\n    step: 0.001\n    initial: 0\n"
        '    unit_of_measurement: "kW"\n    mode: box'
    )
    numbers.append(MODE_BATTERY_POWER_YAML)
    numbers.append(  # the EV charger's current (HA core's wallbox: no unit, 6 A to the charger's maximum, step 1)
        "  ev_charger_current:\n    name: EV charger current\n    min: 6\n    max: 16\n    step: 1\n    initial: 16\n"
        "    mode: box"
    )
    phases = (  # in the same input_select mapping as the inverter battery's mode
        '  ev_charger_phases:\n    name: EV charger phases\n    options: ["1-phase", "3-phase"]\n    initial: "3-phase"\n\n'
    )
    return (
        MODE_BATTERY_SELECT_YAML + phases + PROGRAM_DW_HELPERS_YAML
        + "input_number:\n" + "\n".join(numbers) + "\n\ntemplate:\n  - sensor:\n" + "\n".join(sensors) + "\n"
        + COVER_TEMPLATE_YAML + WEATHER_YAML + FREE_SWITCH_YAML + SG_READY_YAML + PROGRAM_DW_TEMPLATE_YAML + "\n" + CLIMATE_YAML
    )


def clear_sky_kw(moment: datetime) -> float:
    """The simulated PV's mean power (kW) at a local time: a sine between sunrise and sunset, 0 at night."""
    hour = moment.hour + moment.minute / 60
    if not SUNRISE_H < hour < SUNSET_H:
        return 0.0
    return round(PV_PEAK_KW * math.sin(math.pi * (hour - SUNRISE_H) / (SUNSET_H - SUNRISE_H)) ** 1.5, 3)


def pv_forecast(today: datetime) -> list[dict[str, Any]]:
    """Solcast's ``detailedForecast``: 30-minute periods of the local day of ``today`` and the next, p10/p90 at
    60 % / 110 % of the estimate."""
    start = today.replace(hour=0, minute=0, second=0, microsecond=0)
    items = []
    for i in range(96):
        moment = start + i * timedelta(minutes=30)
        kw = clear_sky_kw(moment)
        items.append({"period_start": moment.isoformat(), "pv_estimate": kw,
                      "pv_estimate10": round(0.6 * kw, 3), "pv_estimate90": round(min(1.1 * kw, 8.0), 3)})
    return items
