"""Demo driver: a real Home Assistant with agentic_hems on sample prices and three stand-in appliances.

Run through ``scripts/demo`` (which builds the venv first). The driver

1. prepares a fresh config directory under ``.demo/`` (``configuration.yaml`` with the home in Europe/Brussels, the
   ``input_boolean`` stand-ins, a template garage door, ``input_number`` stand-ins for the grid, PV and battery meters
   read by template sensors, the battery's setpoint, a recorder committing every second; the HTTP settings (127.0.0.1
   and the port) in ``.storage/http``; the MATPOWER case ``case9.m`` in ``agentic_hems/networks/``, and
   ``custom_components/agentic_hems`` linked to this checkout);
2. starts the venv's ``hass -c .demo/config`` on 127.0.0.1:8123 and waits for it (180 s deadline);
3. completes onboarding over the REST API (an owner account whose credentials are printed);
4. sets agentic_hems up through HA's own config flow and appliance subentry flows over REST, then maps the home twin
   (PV, battery, meters, setpoint) in the options flow's grid step; adds the battery and the simulated house's heat
   pump (a generic thermostat on a simulated indoor temperature, a template weather with an hourly forecast) through
   their subentry forms;
5. calls ``agentic_hems.get_prices`` and ``agentic_hems.plan`` for each appliance and prints the results in local time;
6. previews the gates, asks the offline planner, and calls every grid toolkit service as the owner on the home twin
   and on case9, from a snapshot through an approved plan (one gated setpoint command) to the audit chain's check;
7. checks that every agentic_hems entity exists and is not unavailable, and that every appliance has all its entities;
8. checks that the frontend imports the cards' bundle as an extra module and creates the storage-mode dashboard "Energy plan"
   (``/energy-plan``) with the four cards, over the websocket API; then checks what the frontend needs besides (the
   websocket commands it sends on every page load, the dashboard's panel, no pending HTTP settings) and that HA
   serves the integration's brand icons from its ``brand/`` folder;
9. then either leaves HA running for the browser until Ctrl-C, or (``--check``) stops HA and exits 0 only when every
   plan is feasible and every check passed.

Home Assistant always stops when the driver ends (normal exit, error, Ctrl-C, SIGTERM; PDEATHSIG covers SIGKILL).
Only the standard library and aiohttp (which Home Assistant ships) are used.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import importlib.util
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from datetime import time as dt_time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parent.parent
DEMO_DIR = ROOT / ".demo"
DOMAIN = "agentic_hems"
HOST = "127.0.0.1"
START_DEADLINE_S = 180.0
ENTITY_DEADLINE_S = 60.0
STOP_GRACE_S = 30.0
SLOT = timedelta(minutes=15)

OWNER_NAME = "Demo Owner"
USERNAME = "demo"
PASSWORD = "agentic-hems"  # a local, throw-away demo instance on 127.0.0.1 only
LANGUAGE = "en"

# input_boolean stand-ins for the real appliances (object id -> friendly name).
STAND_INS = {
    "dishwasher": "Dishwasher",
    "washing_machine": "Washing machine",
    "ev_charger": "EV charger",
    "garage_motor": "Garage motor",
    "heat_pump_compressor": "Heat pump compressor",  # the thermostat's heater (the simulated house's heat pump)
    "sg_contact_1": "SG Ready contact 1",  # the outputs of the tank's SG Ready relays (SG_READY_YAML)
    "sg_contact_2": "SG Ready contact 2",
}
# A garage-door template cover (device class garage, risk 4): opening it needs an administrator's confirmation.
GARAGE_DOOR = "cover.garage_door"
ASK_REQUEST = "Schedule all flexible loads"
# How long the garage door's command waits for an administrator (the integration's default is 10 min, which often
# ends before a new user has the browser open); set in the options flow's "control" step.
CONFIRM_MINUTES = 120
# What each gate outcome means, in the terminal's words.
OUTCOME_WORDS = {
    "dry_run": "dry run, not executed",
    "executed": "executed",
    "pending_confirmation": "waits for an administrator's confirmation, not executed yet",
    "blocked": "blocked, not executed",
}
# The template integration's own YAML (HA 2026 rejects `platform: template` under cover:); one item of the
# configuration's single `template:` list, beside the meters' template sensors. default_entity_id pins the entity id.
COVER_TEMPLATE_YAML = """\
  - cover:
      - name: Garage door
        default_entity_id: cover.garage_door
        device_class: garage
        state: "{{ is_state('input_boolean.garage_motor', 'on') }}"
        open_cover:
          action: input_boolean.turn_on
          target:
            entity_id: input_boolean.garage_motor
        close_cover:
          action: input_boolean.turn_off
          target:
            entity_id: input_boolean.garage_motor
"""

# The grid toolkit's home twin (issue 5): input_number stand-ins for the meters, exposed as template sensors (the
# options' measurement selectors take sensors), and the battery's setpoint (kW, positive = charging) the approved grid
# plan sets through the gates. Values: 2 kW import, 3 kW PV, the battery charging at 1 kW at 50 %; so the house draws
# 2 - (-3) - 1 = 4 kW. (object id -> name, unit, min, max, step, initial value, sensor device class)
METERS: dict[str, tuple[str, str, float, float, float, float, str]] = {
    "grid_power": ("Grid power", "W", -20000, 20000, 1, 2000, "power"),
    "pv_power": ("PV power", "kW", 0, 10, 0.01, 3.0, "power"),
    "battery_power": ("Battery power", "kW", -5, 5, 0.01, 1.0, "power"),
    "battery_soc": ("Battery SoC", "%", 0, 100, 1, 50, "battery"),
    "house_power": ("House power", "kW", 0, 20, 0.01, 4.0, "power"),
}
BATTERY_SETPOINT = "input_number.battery_setpoint"
CASE = "case9"  # tests/fixtures/grid/case9.m, copied to <config>/agentic_hems/networks/ (network_id = file stem)
CASE_SOURCE = ROOT / "tests" / "fixtures" / "grid" / f"{CASE}.m"
# The options flow's "grid" step (the other steps keep their current values).
GRID_OPTIONS: dict[str, Any] = {
    "pv_peak_kw": 8.0,
    "battery_capacity_kwh": 10.0,
    "battery_power_kw": 5.0,
    "grid_power_entity": "sensor.grid_power",
    "house_power_entity": "sensor.house_power",
    "pv_power_entity": "sensor.pv_power",
    "battery_power_entity": "sensor.battery_power",
    "battery_soc_entity": "sensor.battery_soc",
    "battery_setpoint_entity": BATTERY_SETPOINT,
}


# The simulated house (heat pump): its indoor temperature and the heat pump's electrical power as input_number
# stand-ins read by template sensors (like METERS), a template weather entity whose hourly forecast is a mild
# December day (CURRENT_OUTDOOR_C +- 3 K, coldest at 05:00), and a generic thermostat (climate.heat_pump) switching the
# compressor stand-in on the indoor sensor. The driver moves the indoor temperature every 20 s by the first-order
# model below (while HA runs) and adds the heat pump through the real subentry form.
HOUSE_METERS: dict[str, tuple[str, str, float, float, float, float, str]] = {
    "indoor_temperature": ("Indoor temperature", "°C", 0, 40, 0.01, 20.5, "temperature"),
    "heat_pump_power": ("Heat pump power", "kW", 0, 10, 0.01, 0.0, "power"),
    "inverter_battery_soc": ("Inverter battery SoC", "%", 0, 100, 1, 60, "battery"),
    "tank_temperature": ("Tank temperature", "°C", 0, 90, 0.1, 44.0, "temperature"),  # the SG Ready tank, below its band: it runs now
}
WEATHER = "weather.house"
HEAT_PUMP_CLIMATE = "climate.heat_pump"
HOUSE_UA_KW_PER_K, HOUSE_C_KWH_PER_K, HOUSE_HP_KW = 0.15, 8.0, 2.0  # the simulated house and heat pump
HOUSE_STEP_S = 20  # the simulation's step
COP_POINTS = ((-7.0, 2.5), (7.0, 4.0))
OUTDOOR_MEAN_C, OUTDOOR_SWING_C = 4.0, 3.0
OUTDOOR_TEMPLATE = "({m} - {a} * cos(pi * ((h - 5) % 24) / 12)) | round(1)".format(m=OUTDOOR_MEAN_C, a=OUTDOOR_SWING_C)
WEATHER_YAML = f"""\
  - weather:
      - name: House
        default_entity_id: {WEATHER}
        condition: cloudy
        humidity: "80"
        temperature: >-
          {{% set h = now().hour + now().minute / 60 %}}{{{{ {OUTDOOR_TEMPLATE} }}}}
        forecast_hourly: >-
          {{% set ns = namespace(items=[]) %}}{{% set start = now().replace(minute=0, second=0, microsecond=0) %}}
          {{% for i in range(48) %}}{{% set t = start + timedelta(hours=i) %}}{{% set h = t.hour %}}
          {{% set ns.items = ns.items + [{{'datetime': t.isoformat(), 'condition': 'cloudy',
          'temperature': {OUTDOOR_TEMPLATE}}}] %}}{{% endfor %}}{{{{ ns.items }}}}
"""
# A switch no device of the demo controls (an optimistic template switch: it keeps the state it is set to), for the
# forms that need a free control entity (tests/browser's "Add heat pump").
FREE_SWITCH = "switch.hot_water_boost"
FREE_SWITCH_YAML = f"""\
  - switch:
      - name: Hot water boost
        default_entity_id: {FREE_SWITCH}
"""
CLIMATE_YAML = f"""\
climate:
  - platform: generic_thermostat
    name: Heat pump
    unique_id: demo_heat_pump
    heater: input_boolean.heat_pump_compressor
    target_sensor: sensor.indoor_temperature
    min_temp: 15
    max_temp: 25
    target_temp: 20
    target_temp_step: 0.5
    cold_tolerance: 0.1
    hot_tolerance: 0.1
    initial_hvac_mode: heat
"""
HEAT_PUMP_SUBENTRY: dict[str, Any] = {  # the two steps of "Add heat pump"
    "name": "Heat pump", "store": "space_heating", "control_entity": HEAT_PUMP_CLIMATE,
    "temperature_entity": "sensor.indoor_temperature", "weather_entity": WEATHER,
    "power_entity": "sensor.heat_pump_power", "min_kw": 0.0, "max_kw": HOUSE_HP_KW, "min_run_min": 30,
    "min_off_min": 15, "day_start": "06:00:00", "day_end": "22:00:00", "day_low_c": 20.0, "day_high_c": 22.0,
    "night_low_c": 17.0, "night_high_c": 22.0, "phase": "three-phase",
    "cop_mode": "points", "cop_outdoor_1": COP_POINTS[0][0], "cop_1": COP_POINTS[0][1],
    "cop_outdoor_2": COP_POINTS[1][0], "cop_2": COP_POINTS[1][1], "thermal_model": "manual",
    "ua_w_per_k": HOUSE_UA_KW_PER_K * 1000, "capacity_kwh_per_k": HOUSE_C_KWH_PER_K,
}
HEAT_KEYS = {"heat_pump_planned_power", "heat_pump_planned_temperature"}
# A hot-water heat pump behind SG Ready: two relays (template switches on the sg_contact stand-ins, named like the
# Shelly relays wired to its terminals) and a ViCare-shaped setpoint offset (a number in °C, -13..40, step 1) on an
# input_number; the tank's temperature is a stand-in (HOUSE_METERS). Added through the heat pump form's SG Ready
# section; after device control is on, a replan (plan_home) drives the relays for the current slot through the gates.
SG_RELAYS = ("switch.sg_ready_relay_1", "switch.sg_ready_relay_2")
SG_OFFSET = "number.hot_water_offset"
SG_READY_YAML = "".join(
    f"""\
  - switch:
      - name: SG Ready relay {n}
        default_entity_id: {SG_RELAYS[n - 1]}
        state: "{{{{ is_state('input_boolean.sg_contact_{n}', 'on') }}}}"
        turn_on:
          action: input_boolean.turn_on
          target:
            entity_id: input_boolean.sg_contact_{n}
        turn_off:
          action: input_boolean.turn_off
          target:
            entity_id: input_boolean.sg_contact_{n}
"""
    for n in (1, 2)
) + f"""\
  - number:
      - name: Hot water offset
        default_entity_id: {SG_OFFSET}
        state: "{{{{ states('input_number.hot_water_offset_value') | float(0) }}}}"
        set_value:
          action: input_number.set_value
          target:
            entity_id: input_number.hot_water_offset_value
          data:
            value: "{{{{ value }}}}"
        min: -13
        max: 40
        step: 1
        unit_of_measurement: "°C"
"""
SG_TANK_SUBENTRY: dict[str, Any] = {  # "Add heat pump" for a hot-water tank with the SG Ready section
    "name": "Hot water tank", "store": "hot_water", "control_entity": SG_RELAYS[0],
    "temperature_entity": "sensor.tank_temperature", "weather_entity": WEATHER, "min_kw": 0.0, "max_kw": 1.5,
    "min_run_min": 30, "min_off_min": 15, "day_start": "06:00:00", "day_end": "22:00:00", "day_low_c": 45.0,
    "day_high_c": 55.0, "night_low_c": 45.0, "night_high_c": 55.0, "phase": "L1", "room_temp_c": 18.0,
    "hot_water_kwh": 4.0, "hot_water_hours": ["7", "19"],
    "sg_ready": {"sg_contact_2_entity": SG_RELAYS[1], "sg_offset_entity": SG_OFFSET, "sg_offset_k": 3,
                 "sg_forced": False, "sg_max_block_min": 120},
    "cop_mode": "carnot", "carnot_fraction": 0.4, "flow_temp_c": 55, "thermal_model": "manual",
    "ua_w_per_k": 2.0, "capacity_kwh_per_k": 0.2,
}


# A second dishwasher in the entity shapes of HA core's home_connect (issue 24): a program select whose options are
# program keys, a start button, a "Remote start" binary sensor, an "Operation state" enum sensor (home_connect's
# options: ready, delayedstart, run, finished, ...) and a "Start in" number in seconds (home_connect's
# start_in_relative option), as template entities over input_text helpers. The start button sets the operation state
# to delayedstart while a delay is set and remote start is allowed, else run. Added through "Add appliance" with the
# delayed-start profile after device control is on: at its first slot boundary the scheduler selects the program,
# sets the delay to the planned start and presses start, each through the gates (planning/program_exec.py).
PROGRAM_DW = "Bosch dishwasher"
PROGRAM_DW_OPTIONS = ("dishcare_dishwasher_program_auto_2", "dishcare_dishwasher_program_eco_50",
                      "dishcare_dishwasher_program_quick_45")
PROGRAM_DW_ENTITIES = {"select": "select.bosch_dishwasher_program", "button": "button.bosch_dishwasher_start",
                       "remote": "binary_sensor.bosch_dishwasher_remote_start",
                       "operation": "sensor.bosch_dishwasher_operation_state",
                       "delay": "number.bosch_dishwasher_start_in"}
PROGRAM_DW_MAX_DELAY_S = 86400
PROGRAM_DW_LEAD = timedelta(hours=2)  # the window opens this long after the demo adds it: the start is ahead
PROGRAM_DW_WINDOW = timedelta(hours=8)
PROGRAM_DW_BOUNDARY_WAIT_S = 150  # --check waits for the next slot boundary only when it is this close
PROGRAM_DW_HELPERS_YAML = """\
input_text:
  bosch_program:
    name: Bosch dishwasher program (stand-in)
    initial: dishcare_dishwasher_program_auto_2
  bosch_operation:
    name: Bosch dishwasher operation (stand-in)
    initial: ready
  bosch_remote_start:
    name: Bosch dishwasher remote start allowed (stand-in)
    initial: "on"
  bosch_start_in:
    name: Bosch dishwasher start in (stand-in)
    initial: "0"

"""
PROGRAM_DW_TEMPLATE_YAML = f"""\
  - select:
      - name: Bosch dishwasher program
        default_entity_id: {PROGRAM_DW_ENTITIES['select']}
        state: "{{{{ states('input_text.bosch_program') }}}}"
        options: "{{{{ {list(PROGRAM_DW_OPTIONS)} }}}}"
        select_option:
          action: input_text.set_value
          target:
            entity_id: input_text.bosch_program
          data:
            value: "{{{{ option }}}}"
    button:
      - name: Bosch dishwasher start
        default_entity_id: {PROGRAM_DW_ENTITIES['button']}
        press:
          - condition: state
            entity_id: input_text.bosch_remote_start
            state: "on"
          - action: input_text.set_value
            target:
              entity_id: input_text.bosch_operation
            data:
              value: "{{{{ 'delayedstart' if states('input_text.bosch_start_in') | float(0) > 0 else 'run' }}}}"
    binary_sensor:
      - name: Bosch dishwasher remote start
        default_entity_id: {PROGRAM_DW_ENTITIES['remote']}
        state: "{{{{ is_state('input_text.bosch_remote_start', 'on') }}}}"
    sensor:
      - name: Bosch dishwasher operation state
        default_entity_id: {PROGRAM_DW_ENTITIES['operation']}
        device_class: enum
        state: "{{{{ states('input_text.bosch_operation') }}}}"
    number:
      - name: Bosch dishwasher start in
        default_entity_id: {PROGRAM_DW_ENTITIES['delay']}
        state: "{{{{ states('input_text.bosch_start_in') | float(0) }}}}"
        set_value:
          action: input_text.set_value
          target:
            entity_id: input_text.bosch_start_in
          data:
            value: "{{{{ value | int }}}}"
        min: 0
        max: {PROGRAM_DW_MAX_DELAY_S}
        step: 1
        unit_of_measurement: "s"
"""


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


def program_steps(planned: datetime, slot: datetime) -> list[tuple[dict[str, Any], str]]:
    """The scheduler's three commands for the delayed start at the boundary ``slot`` (planning/program_exec.py's
    ``_run_steps`` over scheduling/program.py's ``delayed_steps``): (candidate, raw_input) each, the delay in s."""
    delay = float(round((planned - slot).total_seconds()))
    what = f"delayed start for {planned.astimezone(UTC).isoformat()} (slot {slot.astimezone(UTC).isoformat()})"
    return [
        ({"intent": "select_option", "device_alias": PROGRAM_DW_ENTITIES["select"],
          "params": {"option": PROGRAM_DW_OPTIONS[1]}}, f"select_option {PROGRAM_DW}: {what}"),
        ({"intent": "set_value", "device_alias": PROGRAM_DW_ENTITIES["delay"], "params": {"value": delay}},
         f"set {PROGRAM_DW_ENTITIES['delay']} to {delay!r} s: {PROGRAM_DW}: {what}"),
        ({"intent": "press", "device_alias": PROGRAM_DW_ENTITIES["button"]}, f"press {PROGRAM_DW}: {what}"),
    ]


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


# The whole-home plan (battery, PV, export in one MILP): a simulated Solcast-style PV forecast sensor the driver sets
# (a clear-sky curve for the local day and tomorrow), and a battery on the home twin's SoC sensor and setpoint, added
# through the battery subentry flow and the options flow's "home" step over REST, as a person would. The driver moves
# the SoC from the setpoint every minute while HA runs.
PV_FORECAST_SENSOR = "sensor.pv_forecast"
PV_PEAK_KW = 6.0  # the clear-sky curve's noon peak (kW)
SUNRISE_H, SUNSET_H = 8.5, 16.75  # local hours (Brussels in December)
BATTERY_SUBENTRY: dict[str, Any] = {
    "name": "Home battery",
    "capacity_kwh": 10.0,
    "charge_kw": 5.0,
    "discharge_kw": 5.0,
    "reserve_pct": 20.0,
    "soc_entity": "sensor.battery_soc",
    "control_entity": BATTERY_SETPOINT,
}
# A second battery in the shape of HA core's homevolt: a mode select (its battery_mode options) plus a power number
# (its setpoint: 0 to 11000 W in 100 W steps); each slot the mode first, then the planned power's size, through the
# gates.
MODE_BATTERY_OPTIONS = {"charge": "inverter_charge", "discharge": "inverter_discharge", "idle": "idle"}
MODE_BATTERY_MAX_W = 11000
MODE_BATTERY_SELECT, MODE_BATTERY_POWER = "input_select.inverter_battery_mode", "input_number.inverter_battery_power"
MODE_BATTERY_SUBENTRY: dict[str, Any] = {
    "name": "Inverter battery",
    "capacity_kwh": 5.0,
    "charge_kw": 2.5,
    "discharge_kw": 2.5,
    "reserve_pct": 20.0,
    "soc_entity": "sensor.inverter_battery_soc",
    "control_entity": MODE_BATTERY_SELECT,
    **{f"{mode}_option": option for mode, option in MODE_BATTERY_OPTIONS.items()},
    "power_setpoint_entity": MODE_BATTERY_POWER,
}
MODE_BATTERY_SELECT_YAML = (
    "input_select:\n  inverter_battery_mode:\n    name: Inverter battery mode\n    options:\n"
    + "".join(f"      - {o}\n" for o in (*MODE_BATTERY_OPTIONS.values(), "solar_charge", "frequency_reserve"))
    + "    initial: inverter_charge\n\n"
)
MODE_BATTERY_POWER_YAML = (
    "  inverter_battery_power:\n    name: Inverter battery power\n    min: 0\n"
    f'    max: {MODE_BATTERY_MAX_W}\n    step: 100\n    initial: 0\n    unit_of_measurement: "W"\n    mode: box'
)
HOME_OPTIONS: dict[str, Any] = {"pv_forecast_sensor": PV_FORECAST_SENSOR, "battery_control": "automatic"}
# The options flow's "tariff" step: a Flemish-style capacity tariff (EUR per kW of the month's highest 15-minute
# import, at least 2.5 kW billed) on a three-phase 3 x 25 A, 230 V connection (5.75 kW per phase).
TARIFF_OPTIONS: dict[str, Any] = {"capacity_price": 3.37, "capacity_min_kw": 2.5, "phase_count": "3",
                                  "phase_current_a": 25, "nominal_voltage": 230}
HOME_KEYS = {"pv_kw", "load_kw", "battery_kw", "soc_pct", "import_kw", "export_kw", "curtail_kw",
             "l1_kw", "l2_kw", "l3_kw"}
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

# The grid toolkit's twelve callable tools (the thirteenth, generate_audit_record, runs inside every call).
TOOL_SERVICES = (
    "inspect_grid_state", "retrieve_asset", "run_power_flow", "run_contingency", "run_forecast", "simulate_action",
    "calculate_flexibility", "optimize_dispatch", "validate_constraints", "request_authorization",
    "generate_explanation", "create_incident",
)

# The config flow's answers, step by step (step_id -> user input).
CONFIG_FLOW_STEPS: dict[str, dict[str, Any]] = {
    "user": {"price_source": "sample"},
    "settings": {"markup": 0.0, "vat_percent": 0.0, "grid_fee": 0.0, "vat_on_negative": True, "power_limit_kw": 11.0},
}

# The appliance subentries. A deadline at or before the earliest start is on the next day, and each window is the next
# one that can still hold the run, so every window lies within the sample prices (local today and tomorrow) whenever
# the demo runs: "ready by 07:00" = any time in the 24 h before the next 07:00, starting now.
EV_CHARGER_STEP: dict[str, Any] = {
    "charger_current_entity": "input_number.ev_charger_current",
    "charger_unit": "A",
    "charger_phases": "3",
    "charger_min_a": 6,
    "charger_step_a": 1,
    "charger_voltage_v": 230,
    "charger_phase_entity": "input_select.ev_charger_phases",
    "charger_phase_one": "1-phase",
    "charger_phase_three": "3-phase",
    "charger_phase_interval_min": 15,
}
APPLIANCES: list[dict[str, Any]] = [
    {
        "name": "Dishwasher",
        "kind": "dishwasher",
        "entity_id": "input_boolean.dishwasher",
        "power_kw": 1.8,
        "duration_min": 150,
        "contiguous": True,
        "earliest_start": "07:00:00",
        "deadline": "07:00:00",
    },
    {
        "name": "Washing machine",
        "kind": "washing_machine",
        "entity_id": "input_boolean.washing_machine",
        "power_kw": 2.0,
        "duration_min": 120,
        "contiguous": True,
        "earliest_start": "18:00:00",
        "deadline": "18:00:00",
    },
    {
        "name": "EV charger",
        "kind": "ev_charger",
        "entity_id": "input_boolean.ev_charger",
        "power_kw": 7.0,  # with the dishwasher and the washer (3.8 kW) it stays under the 11 kW fuse at any hour
        "energy_kwh": 30.0,
        "contiguous": False,
        "earliest_start": "18:00:00",
        "deadline": "07:00:00",
        # the charger step (wallbox shapes: a unitless 6..16 A current number, the stand-in as its pause/resume
        # switch; a phase select): the plan's power becomes the current and the phases at each slot, through the gates
        **EV_CHARGER_STEP,
    },
]

# The EV charger's control profile: its helpers in grid_yaml, checked in show_entities.
EV_CURRENT = "input_number.ev_charger_current"
EV_PHASES = "input_select.ev_charger_phases"

# The Lovelace dashboard with the four cards (issue 6). ``frontend:`` loads ``lovelace`` in its default storage mode,
# which is what storage dashboards and the cards' resource need; no ``lovelace:`` section is written.
DASHBOARD_URL_PATH = "energy-plan"
DASHBOARD_TITLE = "Energy plan"
BUNDLE_URL = f"/{DOMAIN}_frontend/agentic-hems-cards.js"  # custom_components/agentic_hems/cards/frontend.py
CARDS = ("agentic-hems-schedule-card", "agentic-hems-trace-card", "agentic-hems-ask-card", "agentic-hems-runs-card")
DASHBOARD_CONFIG: dict[str, Any] = {
    "title": DASHBOARD_TITLE,
    "views": [{"title": DASHBOARD_TITLE, "path": "plan", "cards": [
        {"type": f"custom:{card}", **({"max_decisions": 20} if card.endswith("trace-card") else {})} for card in CARDS
    ]}],
}

# The integration's brand images (custom_components/agentic_hems/brand/, drawn by scripts/make_brand.py), served by HA's
# brands integration at /api/brands/integration/agentic_hems/<image>: name -> side in pixels.
BRAND_IMAGES = {"icon.png": 256, "icon@2x.png": 512}

# Translation keys of the entities every appliance must have, and of the entry's own entities.
APPLIANCE_KEYS = {"next_start", "planned_cost", "run_now", "ready_by", "automatic_planning"}
ENTRY_KEYS = {"electricity_price", "tomorrow_prices", "last_decision", "allow_device_control"}

CONFIGURATION_YAML = """\
# Written by scripts/demo; regenerated on every run.
homeassistant:
  name: Agentic HEMS demo
  time_zone: Europe/Brussels
  country: BE
  currency: EUR
  unit_system: metric
  language: en

{http}
# A small, fast set instead of default_config: the UI, the REST and websocket APIs, and the stand-ins.
{frontend}
config:
api:
# history needs the recorder anyway; committing every second gives run_forecast a (short) history to read.
recorder:
  commit_interval: 1
history:
logbook:
system_log:

logger:
  default: warning
  logs:
    custom_components.{domain}: debug
    homeassistant.setup: info

input_boolean:
{stand_ins}

{grid}"""


# A log record starts with a timestamp; the rest of its lines are a traceback.
RECORD_START = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
# Known-harmless records: the integrations onboarding starts by itself (radio_browser, met, google_translate), and the
# core components HA 2026 sets up by itself whose packages are absent under --skip-pip (ffmpeg, camera's turbojpeg;
# infrared and radio_frequency only when scripts/bootstrap could not install theirs, which the demo then notes) with
# those that depend on them (tts, assist_pipeline, ai_task, image_processing, ...).
# A record that names agentic_hems ('agentic_hems', or a custom_components path or logger) is never noise.
KNOWN_NOISE = re.compile(
    r"components/(radio_browser|met|google_translate)/|integration (radio_browser|met|google_translate):"
    r"|for google_translate$"
    r"|camera\.img_util\] Error loading libturbojpeg"
    r"|\[homeassistant\.setup\] (Setup failed for '\w+': (Unable to import component: No module named"
    r"|Could not setup dependencies)|Unable to set up dependencies of '\w+')",
    re.MULTILINE,
)


def known_noise(record: str) -> bool:
    """True for a log record that log_tail leaves out (see KNOWN_NOISE)."""
    if f"'{DOMAIN}'" in record or "custom_components" in record:
        return False
    return KNOWN_NOISE.search(record) is not None


class DemoError(Exception):
    """A failure with a message meant for the user."""


def log(message: str = "") -> None:
    """Print one line of progress."""
    print(message, flush=True)


# --------------------------------------------------------------------------------------------------------------------
# The Home Assistant process
# --------------------------------------------------------------------------------------------------------------------


def port_owner_hint(port: int) -> str:
    """Best-effort description of who listens on ``port`` (``ss`` output), or ''."""
    with contextlib.suppress(Exception):
        out = subprocess.run(
            ["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True, timeout=5, check=False
        ).stdout.strip()
        if out:
            return f" ({out.splitlines()[0].split()[-1]})"
    return ""


def ensure_port_free(port: int) -> None:
    """Raise DemoError when something already listens on HOST:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1)
        if probe.connect_ex((HOST, port)) == 0:
            raise DemoError(
                f"port {port} on {HOST} is busy{port_owner_hint(port)}: stop whatever listens there "
                f"(another scripts/demo?) or pass --port"
            )
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # SO_REUSEADDR as HA's server sets it: connections of a previous run in TIME_WAIT must not count as busy.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError as err:
            raise DemoError(f"cannot bind {HOST}:{port} ({err}); pass --port to use another port") from err


def pid_alive(pid: int) -> bool:
    """True when a process with ``pid`` exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def has_http_config_store() -> bool:
    """True when the installed HA keeps its HTTP settings in storage (``homeassistant/components/http/config.py``),
    found without importing HA."""
    spec = importlib.util.find_spec("homeassistant")
    roots = list(spec.submodule_search_locations or []) if spec else []
    return any((Path(root) / "components" / "http" / "config.py").exists() for root in roots)


def http_config(config_dir: Path, port: int) -> str:
    """Serve on HOST:port only: the configuration.yaml section, and ``.storage/http``.

    HA 2026.10 keeps its HTTP settings in ``.storage/http`` and migrates a YAML ``http:`` section once, as a *pending*
    config: the frontend then asks the administrator to confirm it (a dialog over every page), a repair says that the
    YAML is deprecated (it stops working in 2027.2), and an unconfirmed config reverts after 5 minutes, restarting HA
    on the default port and all interfaces. So with such an HA the demo writes no YAML; it writes the store in its
    version-1 form (just the settings; HA validates it, fills in the defaults and migrates it on start). HA 2026.4
    reads YAML (its version-1 store only remembers the last working settings for recovery mode, and is rewritten).
    """
    settings = {"server_host": [HOST], "server_port": port}
    storage = config_dir / ".storage"
    storage.mkdir(exist_ok=True)
    (storage / "http").write_text(json.dumps({"version": 1, "key": "http", "data": settings}, indent=2))
    if has_http_config_store():
        return "# http: in .storage/http (HA 2026.10 stores its HTTP settings; see http_config in scripts/demo.py)"
    return f"http:\n  server_host: {HOST}\n  server_port: {port}\n"


def prepare_config(config_dir: Path, port: int, integration: Path) -> None:
    """Write a fresh config directory (the previous run's is removed)."""
    pid_file = config_dir.parent / "hass.pid"
    if pid_file.exists():
        with contextlib.suppress(ValueError):
            pid = int(pid_file.read_text().strip())
            if pid_alive(pid) and "hass" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                raise DemoError(
                    f"a demo Home Assistant (pid {pid}) still runs from {config_dir}; stop it first (kill {pid})"
                )
        pid_file.unlink(missing_ok=True)
    if config_dir.exists():
        shutil.rmtree(config_dir)
    (config_dir / "custom_components").mkdir(parents=True)
    (config_dir / "custom_components" / DOMAIN).symlink_to(integration.resolve())
    stand_ins = "\n".join(f"  {oid}:\n    name: {name}" for oid, name in STAND_INS.items())
    if importlib.util.find_spec("hass_frontend") is not None:
        frontend = "frontend:"
    else:  # scripts/bootstrap installs it (requirements_test.txt); without it the APIs still work, the UI does not
        log("note: home-assistant-frontend is not installed, so there is no web UI; run scripts/bootstrap")
        frontend = "# frontend: (home-assistant-frontend is not installed)"
    (config_dir / "configuration.yaml").write_text(
        CONFIGURATION_YAML.format(
            http=http_config(config_dir, port), domain=DOMAIN, stand_ins=stand_ins, frontend=frontend,
            grid=grid_yaml(),
        )
    )
    networks = config_dir / DOMAIN / "networks"
    networks.mkdir(parents=True)
    shutil.copy(CASE_SOURCE, networks / CASE_SOURCE.name)


def _set_pdeathsig() -> None:
    """In the child: get SIGTERM when the driver dies, even by SIGKILL (Linux only; best effort)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class HassProcess:
    """``hass -c CONFIG_DIR`` in its own session; :meth:`stop` is idempotent."""

    def __init__(self, config_dir: Path) -> None:
        self.config_dir = config_dir
        self.run_dir = config_dir.parent
        self.console_path = self.run_dir / "hass-console.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = False

    def start(self) -> None:
        # The venv's own interpreter (scripts/demo runs this driver in it), not its `hass` script, whose #! line names
        # the path the venv was created at (a copied venv or another mount of it would fail to start).
        if importlib.util.find_spec("homeassistant") is None:
            raise DemoError(f"Home Assistant is not installed for {sys.executable}: run scripts/bootstrap")
        with self.console_path.open("wb") as console:
            # --skip-pip: scripts/bootstrap installs every requirement; HA must not pip-install into .venv at runtime
            # (onboarding starts a few core integrations whose packages are absent; they just fail to set up).
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "homeassistant", "-c", str(self.config_dir), "--skip-pip"],
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                cwd=str(self.run_dir),
                start_new_session=True,  # Ctrl-C in the terminal reaches the driver only; it stops HA cleanly
                preexec_fn=_set_pdeathsig,
            )
        self.started = True
        (self.run_dir / "hass.pid").write_text(f"{self.proc.pid}\n")

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def exited(self) -> int | None:
        """HA's exit code once it has exited, else None."""
        return self.proc.poll() if self.proc else None

    def stop(self) -> None:
        """SIGTERM (HA shuts down cleanly), then SIGKILL the whole session after STOP_GRACE_S."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                log(f"Home Assistant did not stop within {STOP_GRACE_S:.0f} s; killing it")
        # Anything left in HA's session (HA itself after the timeout, or helpers it spawned) goes too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        (self.run_dir / "hass.pid").unlink(missing_ok=True)

    def log_tail(self, lines: int = 60) -> str:
        """The last ``lines`` lines of home-assistant.log (or of the console output when there is no log).

        Known-harmless records (KNOWN_NOISE) are left out, so the tail shows what matters: the integrations and core
        components HA starts by itself whose packages are absent under --skip-pip.
        """
        for path in (self.config_dir / "home-assistant.log", self.console_path):
            if path.exists() and path.stat().st_size:
                records: list[list[str]] = []
                for line in path.read_text(errors="replace").splitlines():
                    if RECORD_START.match(line) or not records:
                        records.append([line])
                    else:
                        records[-1].append(line)
                kept = [r for r in records if not known_noise("\n".join(r))]
                text = [line for record in kept for line in record][-lines:]
                note = f", {len(records) - len(kept)} known-harmless records left out"
                return f"--- last {len(text)} lines of {path}{note} ---\n" + "\n".join(text)
        return "(Home Assistant wrote no log)"


# --------------------------------------------------------------------------------------------------------------------
# Talking to Home Assistant
# --------------------------------------------------------------------------------------------------------------------


class HassClient:
    """REST and websocket calls against the demo instance."""

    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session = session
        self.base = base
        self.token: str | None = None

    @property
    def client_id(self) -> str:
        return f"{self.base}/"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def request(self, method: str, path: str, *, expect: tuple[int, ...] = (200,), **kwargs: Any) -> Any:
        """One REST call; DemoError (with the response body) unless the status is in ``expect``."""
        async with self.session.request(
            method, self.base + path, headers=self._headers(), timeout=aiohttp.ClientTimeout(total=60), **kwargs
        ) as resp:
            body = await resp.text()
            if resp.status not in expect:
                raise DemoError(f"{method} {path} -> HTTP {resp.status}: {body[:2000]}")
            try:
                return json.loads(body) if body else None
            except json.JSONDecodeError:
                return body

    async def wait_http(self, deadline: float, hass: HassProcess) -> None:
        """Wait until HA's HTTP server answers (the onboarding API needs no auth)."""
        last = "no answer yet"
        while time.monotonic() < deadline:
            if (code := hass.exited()) is not None:
                raise DemoError(f"Home Assistant exited with code {code} while starting")
            try:
                async with self.session.get(
                    self.base + "/api/onboarding", timeout=aiohttp.ClientTimeout(total=5)
                ) as resp:
                    if resp.status == 200:
                        return
                    last = f"HTTP {resp.status}"
            except (TimeoutError, aiohttp.ClientError) as err:
                last = type(err).__name__
            await asyncio.sleep(0.5)
        raise DemoError(f"Home Assistant did not answer on {self.base} within {START_DEADLINE_S:.0f} s ({last})")

    async def onboard(self) -> None:
        """Create the owner, log in and finish the remaining onboarding steps."""
        steps = {s["step"]: s["done"] for s in await self.request("GET", "/api/onboarding")}
        if steps.get("user"):
            raise DemoError("onboarding's user step is already done: the config directory was not fresh")
        created = await self.request(
            "POST",
            "/api/onboarding/users",
            json={
                "client_id": self.client_id,
                "name": OWNER_NAME,
                "username": USERNAME,
                "password": PASSWORD,
                "language": LANGUAGE,
            },
        )
        tokens = await self.request(
            "POST",
            "/auth/token",
            data={"grant_type": "authorization_code", "code": created["auth_code"], "client_id": self.client_id},
        )
        self.token = tokens["access_token"]
        await self.request("POST", "/api/onboarding/core_config", json={})
        await self.request("POST", "/api/onboarding/analytics", json={})
        await self.request(
            "POST",
            "/api/onboarding/integration",
            json={"client_id": self.client_id, "redirect_uri": f"{self.base}/?auth_callback=1"},
        )
        steps = {s["step"]: s["done"] for s in await self.request("GET", "/api/onboarding")}
        if not all(steps.values()):
            raise DemoError(f"onboarding is incomplete: {steps}")

    async def wait_running(self, deadline: float, hass: HassProcess) -> dict[str, Any]:
        """Wait until HA reports state RUNNING; return /api/config."""
        config: dict[str, Any] = {}
        while time.monotonic() < deadline:
            if (code := hass.exited()) is not None:
                raise DemoError(f"Home Assistant exited with code {code} while starting")
            config = await self.request("GET", "/api/config")
            if config.get("state") == "RUNNING":
                return config
            await asyncio.sleep(0.5)
        raise DemoError(
            f"Home Assistant did not reach RUNNING within {START_DEADLINE_S:.0f} s (state {config.get('state')!r})"
        )

    async def ws(self, messages: list[dict[str, Any]]) -> list[Any]:
        """Send websocket commands one after another; return their results (DemoError on failure)."""
        results = []
        for message, reply in zip(messages, await self.ws_replies(messages), strict=True):
            if not reply.get("success"):
                raise DemoError(f"websocket {message['type']} failed: {reply.get('error')}")
            results.append(reply.get("result"))
        return results

    async def ws_replies(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send websocket commands one after another; return their result messages, failed ones included."""
        replies = []
        async with self.session.ws_connect(
            self.base + "/api/websocket", timeout=aiohttp.ClientWSTimeout(ws_close=10), max_msg_size=0
        ) as conn:
            if (await conn.receive_json(timeout=30)).get("type") != "auth_required":
                raise DemoError("websocket: expected auth_required")
            await conn.send_json({"type": "auth", "access_token": self.token})
            if (reply := await conn.receive_json(timeout=30)).get("type") != "auth_ok":
                raise DemoError(f"websocket auth failed: {reply}")
            for number, message in enumerate(messages, start=1):
                await conn.send_json({"id": number, **message})
                while True:
                    reply = await conn.receive_json(timeout=60)
                    if reply.get("id") == number and reply.get("type") == "result":
                        break
                replies.append(reply)
        return replies

    async def drive_flow(self, kind: str, start_path: str, handler: Any, answers: Callable[[dict], dict]) -> dict:
        """Run a config or subentry flow over REST to its end; return the final result.

        ``answers(step)`` gives the user input for a form step (the step's JSON as HA returns it).
        """
        result = await self.request("POST", start_path, json={"handler": handler, "show_advanced_options": False})
        for _ in range(10):
            rtype = result.get("type")
            if rtype == "create_entry":
                return result
            if rtype == "abort":
                raise DemoError(
                    f"{kind} flow aborted: {result.get('reason')} {result.get('description_placeholders') or ''}"
                )
            flow_id = result["flow_id"]
            if rtype == "menu":
                raise DemoError(
                    f"{kind} flow shows a menu at step {result.get('step_id')!r}: {result.get('menu_options')}"
                )
            if rtype != "form":
                raise DemoError(f"{kind} flow: unexpected result {result}")
            if result.get("errors"):
                raise DemoError(f"{kind} flow step {result.get('step_id')!r} rejected the input: {result['errors']}")
            data = answers(result)
            step = result
            result = await self.request("POST", f"{start_path}/{flow_id}", json=data, expect=(200, 400))
            if not isinstance(result, dict) or "type" not in result:  # HTTP 400
                hint = ""
                if not isinstance(result, dict):  # a bare "400: Bad Request": vol.Invalid escaped the step handler
                    hint = " (a voluptuous error escaped the flow's step handler, e.g. an invalid selector config)"
                raise DemoError(f"{kind} flow step {step.get('step_id')!r} rejected {data}: {result}{hint}")
        raise DemoError(f"{kind} flow did not finish within 10 steps")

    async def call_service(self, service: str, data: dict[str, Any]) -> Any:
        """Call agentic_hems.<service> for its response."""
        reply = await self.request("POST", f"/api/services/{DOMAIN}/{service}?return_response", json=data)
        if not isinstance(reply, dict) or "service_response" not in reply:
            raise DemoError(f"{DOMAIN}.{service} returned no service_response: {reply}")
        return reply["service_response"]


def fill_form(step: dict[str, Any], wanted: dict[str, Any], what: str) -> dict[str, Any]:
    """Answer a form with the fields of ``wanted`` its schema has; DemoError on a required field we cannot fill."""
    schema = step.get("data_schema") or []
    names = {field["name"] for field in schema}
    missing = [f["name"] for f in schema if f.get("required") and f["name"] not in wanted and "default" not in f]
    if missing:
        raise DemoError(f"{what}: step {step.get('step_id')!r} requires {missing}, which the demo does not know")
    unused = sorted(set(wanted) - names)
    if unused:
        log(f"  note: {what} step {step.get('step_id')!r} has no field(s) {unused}; not sent")
    return {key: value for key, value in wanted.items() if key in names}


def step_fields(step: dict[str, Any], appliance: dict[str, Any]) -> dict[str, Any]:
    """An appliance's fields for its form ``step``: the charger step's (:data:`EV_CHARGER_STEP`) there, the rest else."""
    charger = step.get("step_id") == "charger"
    return {key: value for key, value in appliance.items() if (key in EV_CHARGER_STEP) == charger}


def keep_form(step: dict[str, Any], wanted: dict[str, Any], what: str) -> dict[str, Any]:
    """Answer a form with its current values (each field's default or suggested value), ``wanted`` overriding them;
    DemoError when ``wanted`` names a field the form does not have."""
    schema = step.get("data_schema") or []
    unknown = sorted(set(wanted) - {field["name"] for field in schema})
    if unknown:
        raise DemoError(f"{what}: step {step.get('step_id')!r} has no field(s) {unknown}")
    answer: dict[str, Any] = {}
    for field in schema:
        name = field["name"]
        current = field.get("default", (field.get("description") or {}).get("suggested_value"))
        value = wanted.get(name, current)
        if value is not None:
            answer[name] = value
    return answer


# --------------------------------------------------------------------------------------------------------------------
# The demo proper
# --------------------------------------------------------------------------------------------------------------------


def local(iso: str | None, tz: ZoneInfo) -> datetime | None:
    """Parse an ISO datetime and convert it to the home's zone."""
    if not iso:
        return None
    return datetime.fromisoformat(iso).astimezone(tz)


def at(moment: datetime, tz: ZoneInfo, fmt: str = "%a %H:%M") -> str:
    """``moment`` in the home's zone as ``fmt`` with the zone's abbreviation: "Wed 04:00 CET"."""
    here = moment.astimezone(tz)
    return f"{here:{fmt}} {here.tzname()}"


# Times the services write in UTC: ISO 8601 (gate reasons), "01.12.2026 17:45 UTC", "17:45–18:00 UTC", "17:45 UTC"
# (the grid explanations, which know no time zone).
ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:\+00:00|Z)")
DATE_UTC = re.compile(r"(\d\d)\.(\d\d)\.(\d{4}) (\d\d):(\d\d) UTC")
CLOCK_UTC = re.compile(r"(\d\d:\d\d)(?:([–-])(\d\d:\d\d))? UTC")


def local_text(text: str, tz: ZoneInfo, after: datetime) -> str:
    """``text`` with the UTC times above in the home's zone, with its abbreviation.

    A bare clock time is the first such UTC time from ``after`` (aware) on: the explanations cover the 24 h from the
    plan's start.
    """

    def bare(clock: str) -> datetime:
        hour, minute = (int(part) for part in clock.split(":"))
        moment = after.astimezone(ZoneInfo("UTC")).replace(hour=hour, minute=minute, second=0, microsecond=0)
        return moment + timedelta(days=1) if moment < after - SLOT else moment

    def clocks(match: re.Match[str]) -> str:
        first = at(bare(match[1]), tz, "%H:%M")
        if match[3] is None:
            return first
        return f"{first.rsplit(' ', 1)[0]}{match[2]}{at(bare(match[3]), tz, '%H:%M')}"

    text = ISO_UTC.sub(lambda m: at(datetime.fromisoformat(m[0].replace("Z", "+00:00")), tz), text)
    text = DATE_UTC.sub(
        lambda m: at(datetime(int(m[3]), int(m[2]), int(m[1]), int(m[4]), int(m[5]), tzinfo=ZoneInfo("UTC")), tz,
                     "%d.%m.%Y %H:%M"),
        text,
    )
    return CLOCK_UTC.sub(clocks, text)


def run_time(appliance: dict[str, Any]) -> timedelta:
    """The load's shortest run, in whole 15-minute slots."""
    if appliance.get("contiguous"):
        minutes = float(appliance["duration_min"])
    else:
        minutes = 60.0 * appliance["energy_kwh"] / appliance["power_kw"]
    return SLOT * math.ceil(minutes / 15.0 - 1e-9)


def next_window(appliance: dict[str, Any], now: datetime, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """The appliance's next daily window that can still hold its run, as the integration computes it.

    Only used to label the baseline ("start now" or a later window start); the plan itself comes from the service.
    """
    earliest, deadline = (
        dt_time.fromisoformat(appliance["earliest_start"]),
        dt_time.fromisoformat(appliance["deadline"]),
    )
    for offset in (-1, 0, 1, 2):
        day = now.astimezone(tz).date() + timedelta(days=offset)
        start = datetime.combine(day, earliest, tzinfo=tz)
        end = datetime.combine(day + timedelta(days=1) if deadline <= earliest else day, deadline, tzinfo=tz)
        start = max(start, now)
        if end - start >= max(run_time(appliance), SLOT):
            return start, end
    raise DemoError(f"no window for {appliance['name']}")


def png_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's header, or None when ``data`` is not a PNG."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def fmt_money(value: Any, currency: str) -> str:
    if not isinstance(value, (int, float)):
        return f"{value} {currency}"
    text = f"{float(value):.4f}"
    return f"{'0.0000' if text == '-0.0000' else text} {currency}"


class Demo:
    """The steps after HA answers: onboarding, setup, plans, checks."""

    def __init__(self, client: HassClient, args: argparse.Namespace) -> None:
        self.client = client
        self.args = args
        self.problems: list[str] = []
        self.report: dict[str, Any] = {
            "plans": {}, "prices": None, "entities": [], "gates": {}, "ask": None, "grid": {}, "grid_options": None,
            "dashboard": None, "resource": None, "frontend": None, "brand": None,
        }
        self.entry_id = ""
        self.config_dir: Path | None = None
        self.tz = ZoneInfo("UTC")

    async def setup_integration(self) -> str:
        """Create the agentic_hems entry and its appliance subentries; return the entry id."""
        result = await self.client.drive_flow(
            "config",
            "/api/config/config_entries/flow",
            DOMAIN,
            lambda step: fill_form(step, CONFIG_FLOW_STEPS.get(step["step_id"], {}), "config flow"),
        )
        entry = result["result"]
        entry_id = entry["entry_id"]
        log(f"  config entry {entry['title']!r} ({entry_id}): {entry.get('state')}")
        if entry.get("state") != "loaded":
            raise DemoError(
                f"the agentic_hems entry did not load: state {entry.get('state')!r}, reason {entry.get('reason')!r}"
            )
        done: list[str] = []
        for appliance in APPLIANCES:
            await self.client.drive_flow(
                "appliance subentry",
                "/api/config/config_entries/subentries/flow",
                [entry_id, "appliance"],
                lambda step, a=appliance: fill_form(step, step_fields(step, a), f"appliance {a['name']!r}"),
            )
            # Adding a subentry reloads the entry; wait for that before adding the next one, as a user would.
            done.append(appliance["name"])
            await self.wait_settled(entry_id, done)
            log(f"  appliance {appliance['name']!r}: {self.describe(appliance)}")
        await self.set_grid_options(entry_id)
        return entry_id

    async def set_grid_options(self, entry_id: str) -> None:
        """Drive the options flow (init, control, grid, assistant) over REST: the control step keeps a command waiting
        for confirmation CONFIRM_MINUTES and gives the garage door (hidden from Assist) to the gates, the grid step maps the home twin's meters and battery; every other step keeps
        its current values. Saving the options reloads the entry."""
        steps: list[str] = []

        def answer(step: dict[str, Any]) -> dict[str, Any]:
            steps.append(step["step_id"])
            control = {"confirmation_minutes": CONFIRM_MINUTES, "gated_entities": [GARAGE_DOOR]}
            wanted = {"grid": GRID_OPTIONS, "control": control}
            return keep_form(step, wanted.get(step["step_id"], {}), "options flow")

        result = await self.client.drive_flow("options", "/api/config/config_entries/options/flow", entry_id, answer)
        if "grid" not in steps:
            raise DemoError(f"the options flow has no grid step (steps {steps})")
        if result.get("type") != "create_entry":
            raise DemoError(f"the options flow ended with {result}")
        await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        # The REST answer carries no options: open the flow again, read the grid step's current values, abort it.
        path = "/api/config/config_entries/options/flow"
        step = await self.client.request("POST", path, json={"handler": entry_id, "show_advanced_options": False})
        while step.get("type") == "form" and step.get("step_id") != "grid":
            step = await self.client.request("POST", f"{path}/{step['flow_id']}", json=keep_form(step, {}, "options"))
        if step.get("flow_id"):
            await self.client.request("DELETE", f"{path}/{step['flow_id']}")
        saved = keep_form(step, {}, "options flow") if step.get("step_id") == "grid" else {}
        wrong = {k: saved.get(k) for k, v in GRID_OPTIONS.items() if saved.get(k) != v}
        if wrong:
            raise DemoError(f"the options flow did not save the grid options: {wrong}")
        self.report["grid_options"] = saved
        meters = ", ".join(GRID_OPTIONS[f"{meter}_entity"] for meter in METERS)
        log(
            f"  options ({' -> '.join(steps)}): PV {GRID_OPTIONS['pv_peak_kw']:g} kW peak, battery "
            f"{GRID_OPTIONS['battery_capacity_kwh']:g} kWh / {GRID_OPTIONS['battery_power_kw']:g} kW set by "
            f"{BATTERY_SETPOINT}, meters {meters}"
        )

    @staticmethod
    def describe(appliance: dict[str, Any]) -> str:
        amount = f"{appliance['duration_min']} min" if "duration_min" in appliance else f"{appliance['energy_kwh']} kWh"
        shape = "in one run" if appliance.get("contiguous") else "in any slots"
        window = f"daily {appliance['earliest_start'][:5]} to {appliance['deadline'][:5]}"
        return f"{appliance['power_kw']} kW, {amount} {shape}, {window}"

    async def show_prices(self) -> None:
        prices = await self.client.call_service("get_prices", {})
        slots = prices.get("prices") or []
        values = [s["price"] for s in slots if isinstance(s.get("price"), (int, float)) and math.isfinite(s["price"])]
        if not values:
            self.problems.append(f"get_prices returned no prices: {json.dumps(prices)[:500]}")
            return
        first, last = local(slots[0]["start"], self.tz), local(slots[-1]["end"], self.tz)
        unit = prices.get("unit") or f"{prices.get('currency', '')}/kWh"
        summary = {
            "min": min(values),
            "max": max(values),
            "slots": len(slots),
            "resolution_minutes": prices.get("resolution_minutes"),
            "first": first.isoformat() if first else None,
            "last": last.isoformat() if last else None,
            "sample": prices.get("sample"),
            "source": prices.get("source"),
            "unit": unit,
        }
        self.report["prices"] = summary
        log(
            f"PRICES min {fmt_money(summary['min'], unit)} max {fmt_money(summary['max'], unit)}, "
            f"{len(slots)} slots of {summary['resolution_minutes']} min, "
            f"{at(first, self.tz, '%a %d %b %H:%M')} to {at(last, self.tz, '%a %d %b %H:%M')}, "
            f"source {summary['source']}, sample: {str(summary['sample']).lower()}"
        )

    async def show_plans(self) -> None:
        log("")
        log(f"Plans (times in {self.tz.key}; 'baseline' = starting at the start of the window (now, when the window is open)):")
        width = max(len(a["name"]) for a in APPLIANCES)
        dearer: list[tuple[str, datetime, datetime, float, float]] = []
        spans: list[tuple[str, datetime, datetime]] = []
        for appliance in APPLIANCES:
            name = appliance["name"]
            window_start, window_end = next_window(appliance, datetime.now(self.tz), self.tz)
            plan = await self.client.call_service("plan", {"appliance": name})
            self.report["plans"][name] = plan
            if not isinstance(plan, dict):
                self.problems.append(f"plan for {name!r} is not a dict: {plan!r}")
                continue
            if not plan.get("feasible"):
                log(f"PLAN {name:<{width}}  INFEASIBLE: {plan.get('reason')} {plan.get('detail') or ''}")
                self.problems.append(f"plan for {name!r} is infeasible: {plan.get('reason')} {plan.get('detail')}")
                continue
            currency = plan.get("currency") or "EUR"
            start, end = local(plan.get("start"), self.tz), local(plan.get("end"), self.tz)
            cost, baseline, savings = plan.get("cost"), plan.get("baseline_cost"), plan.get("savings")
            if start is None or end is None or not start < end:
                self.problems.append(
                    f"plan for {name!r}: start {plan.get('start')} is not before end {plan.get('end')}"
                )
                continue
            if not all(isinstance(v, (int, float)) for v in (cost, baseline)):
                self.problems.append(f"plan for {name!r}: cost {cost!r} or baseline {baseline!r} is not a number")
                continue
            if cost > baseline + 1e-9:
                dearer.append((name, start, end, cost, baseline))
            spans.append((name, start, end))
            if savings is None:
                savings = baseline - cost
            percent = f" ({100 * savings / baseline:.0f}%)" if baseline > 0 else ""
            right_away = "now" if window_start <= datetime.now(self.tz) + SLOT else at(window_start, self.tz)
            log(
                f"PLAN {name:<{width}}  start {at(start, self.tz, '%a %Y-%m-%d %H:%M')}  "
                f"end {at(end, self.tz, '%a %Y-%m-%d %H:%M')}  "
                f"cost {fmt_money(cost, currency)}  baseline {fmt_money(baseline, currency)} (start {right_away})  "
                f"saves {fmt_money(savings, currency)}{percent}"
            )
            log(f"     {'':<{width}}  {self.describe(appliance)}; window {right_away} to {at(window_end, self.tz)}")
        # The baseline ignores the main-fuse limit; a plan may cost more than it only when it shares slots with others.
        for name, start, end, cost, baseline in dearer:
            if any(other != name and s < end and start < e for other, s, e in spans):
                log(f"NOTE {name}: costs more than starting now because the main-fuse limit binds (the baseline ignores it)")
            else:
                self.problems.append(f"plan for {name!r} costs {cost} > baseline (start of the window) {baseline}")

    async def show_gates(self) -> None:
        """Turn device control on, preview the scheduler's gate decision for each planned start, and ask to open
        the garage door (which waits for an administrator's confirmation)."""
        log("")
        await self.check_assist_exposure()
        await self.client.request("POST", "/api/services/switch/turn_on",
                                  json={"entity_id": f"switch.{DOMAIN}_allow_device_control"})
        log("Device control: ON (switch.agentic_hems_allow_device_control). Gate decisions (the scheduled starts as dry-run previews; they run at their slots):")
        for appliance in APPLIANCES:
            plan = self.report["plans"].get(appliance["name"]) or {}
            start = local(plan.get("start"), self.tz)
            if start is None:
                continue
            decision = await self.client.call_service("evaluate_command", {
                "source_agent": "scheduler", "dry_run": True,
                "raw_input": f"start {appliance['name']} at {start:%H:%M} (preview of the scheduled start)",
                "model_candidate": {"intent": "start", "device_alias": appliance["entity_id"]},
            })
            self.report["gates"][appliance["name"]] = decision
            self._log_decision(f"scheduled start {appliance['name']} {at(start, self.tz)}", decision, "dry_run")
        decision = await self.client.call_service("evaluate_command", {
            "source_agent": "demo", "raw_input": "open the garage door",
            "model_candidate": {"intent": "open", "device_alias": "garage door"},
        })
        self.report["gates"]["garage door"] = decision
        traces = await self.client.call_service("get_traces", {"entity_id": GARAGE_DOOR, "limit": 1})
        self.report["garage_trace"] = (traces.get("traces") or [{}])[0]
        self._log_decision("open the garage door", decision, "pending_confirmation")
        if decision.get("outcome") == "pending_confirmation":
            log(f"     decide it (administrators only) before {at(self.pending_expiry(decision), self.tz)}: the Confirm "
                f"and Reject buttons of the trace card on /{DASHBOARD_URL_PATH} (the notification links there), or "
                f"action agentic_hems.confirm / agentic_hems.reject with trace_id {decision['trace_id']}")
        await self.show_value_refused()

    async def show_value_refused(self) -> None:
        """A value the request did not name is refused with the translated error (report ``gates.value_refused``)."""
        reply = await self.client.request(
            "POST", f"/api/services/{DOMAIN}/evaluate_command?return_response", expect=(400,), json={
                "source_agent": "orchestrator", "raw_input": "Set the heat pump to 21 degrees", "dry_run": True,
                "model_candidate": {"intent": "set_temperature", "device_alias": HEAT_PUMP_CLIMATE,
                                    "params": {"temperature": 25}}})
        message = str((reply or {}).get("message") if isinstance(reply, dict) else reply)
        self.report["gates"]["value_refused"] = message
        log(f"GATE a model's 25° for 'Set the heat pump to 21 degrees': {message}")
        if "the request asks for 21° on Heat pump, not 25°" not in message:
            self.problems.append(f"a value nobody asked for was not refused with its translated error: {message}")

    async def hide_from_assist(self) -> None:
        """Hide the garage door from Assist before the integration is set up: HA's own intents ("Prefer handling
        commands locally", on by default) would open it at once, with no gate; the options give it to the gates."""
        await self.client.ws([{"type": "homeassistant/expose_entity", "assistants": ["conversation"],
                               "entity_ids": [GARAGE_DOOR], "should_expose": False}])
        log(f"Assist: {GARAGE_DOOR} hidden (HA's own intents would open it without a gate); the options give it to the gates")

    async def check_assist_exposure(self) -> None:
        """Check that no device the policy protects is exposed to Assist: the garage door is not, and the
        integration raised no ``assist_exposed_*`` repair (report ``assist``; its issues are None without the frontend,
        which loads the repairs integration)."""
        (listed,) = await self.client.ws([{"type": "homeassistant/expose_entity/list"}])
        garage = bool(((listed or {}).get("exposed_entities") or {}).get(GARAGE_DOOR, {}).get("conversation"))
        repairs = (await self.client.ws_replies([{"type": "repairs/list_issues"}]))[0]  # with the frontend only
        issues = [i["issue_id"] for i in (repairs.get("result") or {}).get("issues") or []
                  if i.get("domain") == DOMAIN and i["issue_id"].startswith("assist_exposed_")
                  ] if repairs.get("success") else None
        self.report["assist"] = {"garage_door_exposed": garage, "exposure_issues": issues}
        if garage:
            self.problems.append(f"{GARAGE_DOOR} is exposed to Assist: HA's own intents open it without a gate")
        if issues:
            self.problems.append(f"protected devices exposed to Assist: {issues}")

    @staticmethod
    def pending_expiry(decision: dict[str, Any]) -> datetime:
        """When a pending command expires: the ``expires_at`` its gate results carry."""
        expiry = next(g["evidence"]["expires_at"] for g in decision["gate_results"] if "expires_at" in g["evidence"])
        return datetime.fromisoformat(expiry)

    async def link_notification(self) -> None:
        """Give the garage door's pending-confirmation notification a link to the dashboard whose trace card confirms
        or rejects it (a persistent notification has no buttons; the integration's own names the actions to call).
        It keeps the integration's notification id, so deciding the command dismisses it as before."""
        decision = self.report["gates"].get("garage door") or {}
        if decision.get("outcome") != "pending_confirmation":
            return
        trace_id = decision["trace_id"]
        message = (
            "The demo asks: **Open Garage door**.\n\n"
            f"[Open the {DASHBOARD_TITLE} dashboard](/{DASHBOARD_URL_PATH}) and press *Confirm* or *Reject* on its "
            f"trace card (administrators only) before {at(self.pending_expiry(decision), self.tz)}. Or call the "
            f"action `agentic_hems.confirm` (or `agentic_hems.reject`) with `trace_id: {trace_id}`."
        )
        await self.client.request("POST", "/api/services/persistent_notification/create", json={
            "notification_id": f"{DOMAIN}_confirm_{trace_id}", "title": "Agentic HEMS: confirmation needed",
            "message": message})
        shown = (await self.client.ws([{"type": "persistent_notification/get"}]))[0] or []
        self.report["notifications"] = shown
        log(f"NOTIFY pending garage door: a notification links to /{DASHBOARD_URL_PATH} (its trace card decides it)")
        for note in shown:  # HA's own, on the first page a new user sees
            if note.get("notification_id") == "invalid_config":
                log(f"NOTE Home Assistant shows 'Invalid config': {' '.join(str(note.get('message')).split())} (the "
                    "requirements of the platforms HA sets up by itself are missing: run scripts/bootstrap)")
        if not any(f"](/{DASHBOARD_URL_PATH})" in str(n.get("message")) for n in shown):
            self.problems.append(f"no notification links to the dashboard: {shown}")

    async def show_ask(self) -> None:
        """Answer a typed request through the offline planner (agentic_hems.ask), as a user would in Assist."""
        log("")
        log(f'ASK "{ASK_REQUEST}" (offline planner, no model, no network):')
        answer = await self.client.call_service("ask", {"text": ASK_REQUEST})
        self.report["ask"] = answer
        log(f"     {answer.get('summary')}")
        log(f"     {answer.get('iterations')} iterations, actions: {', '.join(a['type'] for a in answer.get('actions') or [])}")
        if not answer.get("success") or len(answer.get("plans") or []) != len(APPLIANCES):
            self.problems.append(f"ask did not plan every appliance: {answer}")

    # ----------------------------------------------------------------------------------------------------------------
    # The grid toolkit (issue 5)
    # ----------------------------------------------------------------------------------------------------------------

    def expect(self, ok: bool, what: str) -> bool:
        """Record a problem unless ``ok``; returns ``ok``."""
        if not ok:
            self.problems.append(f"GRID: {what}")
        return ok

    def require(self, ok: bool, what: str) -> None:
        """Stop the section unless ``ok`` (the next calls need this one's result)."""
        if not ok:
            raise DemoError(what)

    async def grid_call(self, key: str, service: str, data: dict[str, Any]) -> dict[str, Any]:
        """Call agentic_hems.<service> for its response and keep it in the report under ``key``."""
        response = await self.client.call_service(service, data)
        if not isinstance(response, dict):
            raise DemoError(f"{DOMAIN}.{service} answered {response!r}")
        self.report["grid"][key] = response
        return response

    async def show_grid(self) -> None:
        """Call every grid toolkit service as the owner (an administrator) on the home twin the options' grid step
        built and on the MATPOWER case in <config>/agentic_hems/networks, one line per call."""
        log("")
        log(f"GRID toolkit as the owner (admin): the home twin and networks/{CASE}.m (times in {self.tz.key}):")
        try:
            await self._grid_home()
            await self._grid_case()
            await self._grid_forecast_and_flexibility()
            await self._grid_plan()
        except DemoError as err:  # a failed call ends the section; the rest of the demo still runs
            self.problems.append(f"GRID section stopped: {err}")
            log(f"GRID FAILED: {err}")

    async def _grid_home(self) -> None:
        """inspect_grid_state on the home twin (depth 3) and retrieve_asset battery."""
        home = await self.grid_call("inspect_home", "inspect_grid_state", {"network_id": "home", "depth": 3})
        state = home.get("state") or {}
        assets = {a["asset_id"]: a for a in state.get("assets") or []}
        fuse = (state.get("branch_state") or [{}])[0]
        panel: dict[str, Any] = next((b for b in state.get("bus_state") or [] if b.get("bus") == 2), {})
        shown = []
        for asset_id, asset in assets.items():
            if asset["kind"] == "main_panel_fuse":
                continue
            if not isinstance(asset.get("p_kw"), (int, float)):
                shown.append(f"{asset_id} n/a")
                continue
            charge = f" (SoC {asset['soc_pct']:g} %)" if "soc_pct" in asset else ""
            shown.append(f"{asset_id} {asset['p_kw']:+.2f} kW{charge}")
        alarms = ", ".join(a["alarm"] for a in state.get("alarms") or []) or "none"
        log(
            f"GRID inspect_grid_state home depth 3: {', '.join(shown)}; fuse {fuse.get('loading_pct', math.nan):.1f} % "
            f"of {1000 * fuse.get('rate_a_mva', 0):g} kW, panel {panel.get('vm_pu', math.nan):.5f} pu; "
            f"alarms: {alarms}; stale {str(home.get('stale')).lower()}"
        )
        p = {k: v.get("p_kw") for k, v in assets.items()}
        self.expect(home.get("stale") is False and state.get("depth") == 3, f"home snapshot stale or shallow: {state}")
        self.expect(
            p.get("grid") == 2.0 and p.get("pv") == -3.0 and p.get("battery") == 1.0
            and abs((p.get("house") or 0) - 4.0) < 1e-9 and assets.get("battery", {}).get("soc_pct") == 50.0,
            f"home asset powers {p} (want grid 2, pv -3, battery 1, house 4 kW, SoC 50 %)",
        )
        self.expect(state.get("alarms") == [] and isinstance(fuse.get("loading_pct"), (int, float)),
                    f"home alarms {state.get('alarms')} or no fuse loading {fuse}")

        battery = await self.grid_call("battery", "retrieve_asset", {"asset_id": "battery"})
        limits = battery.get("limits") or {}
        soc = ((battery.get("health") or {}).get("measurements") or {}).get("soc") or {}
        log(
            f"GRID retrieve_asset battery: {limits.get('p_min_kw'):g}..{limits.get('p_max_kw'):g} kW, "
            f"{limits.get('capacity_kwh'):g} kWh, SoC {limits.get('soc_min_pct'):g}-{limits.get('soc_max_pct'):g} %, "
            f"bus {(battery.get('connection_point') or {}).get('bus')} of home; {soc.get('entity_id')} = "
            f"{soc.get('state')} {soc.get('unit') or ''} (available {str(soc.get('available')).lower()})"
        )
        want = {"p_min_kw": -GRID_OPTIONS["battery_power_kw"], "p_max_kw": GRID_OPTIONS["battery_power_kw"],
                "capacity_kwh": GRID_OPTIONS["battery_capacity_kwh"], "soc_min_pct": 10.0, "soc_max_pct": 100.0}
        self.expect(limits == want and soc.get("available") is True, f"battery asset {battery}")

    async def _grid_case(self) -> None:
        """inspect_grid_state, run_power_flow (ac, dc) and run_contingency n-1 on the MATPOWER case."""
        reference = json.loads(CASE_SOURCE.with_suffix(".json").read_text())
        snapshot = await self.grid_call("inspect_case", "inspect_grid_state", {"network_id": CASE})
        state = snapshot.get("state") or {}
        kinds: dict[str, int] = {}
        for asset in state.get("assets") or []:
            kinds[asset["kind"]] = kinds.get(asset["kind"], 0) + 1
        log(
            f"GRID inspect_grid_state {CASE}: {state.get('buses')} buses, {state.get('branches')} branches, assets "
            f"{', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}; "
            f"alarms: {', '.join(a['alarm'] for a in state.get('alarms') or []) or 'none'}"
        )
        self.require(state.get("network_id") == CASE and state.get("buses") == len(reference["bus"])
                     and snapshot.get("stale") is False, f"{CASE} snapshot {state}")
        for method in ("ac", "dc"):
            flow = await self.grid_call(f"power_flow_{method}", "run_power_flow",
                                        {"snapshot_id": snapshot["snapshot_id"], "method": method})
            vm = [v["vm_pu"] for v in flow.get("voltages") or []]
            loading = [f["loading_pct"] for f in flow.get("flows") or [] if f.get("loading_pct") is not None]
            losses = flow.get("losses_mw")
            log(
                f"GRID run_power_flow {CASE} {method}: converged {str(flow.get('converged')).lower()} in "
                f"{flow.get('iterations')} iteration(s), Vm {min(vm, default=math.nan):.4f}.."
                f"{max(vm, default=math.nan):.4f} pu, losses {math.nan if losses is None else losses:.4f} MW, "
                f"max loading {max(loading, default=math.nan):.1f} % ({flow.get('solver')})"
            )
            self.expect(flow.get("converged") is True and len(vm) == len(reference["bus"]),
                        f"{method} power flow on {CASE}: converged {flow.get('converged')}, {len(vm)} voltages")
        ac_losses = self.report["grid"]["power_flow_ac"].get("losses_mw")
        want = reference["ac_pf"]["total_P_losses_MW"]
        self.expect(isinstance(ac_losses, (int, float)) and abs(ac_losses - want) < 1e-3,
                    f"ac losses on {CASE} {ac_losses} MW, the reference says {want} MW")
        n1 = await self.grid_call("contingency", "run_contingency",
                                  {"snapshot_id": snapshot["snapshot_id"], "set": "n-1"})
        worst = n1.get("worst_case") or {}
        log(
            f"GRID run_contingency {CASE} n-1: {n1.get('evaluated')} outages evaluated (completed "
            f"{str(n1.get('completed')).lower()}), {len(n1.get('violations') or [])} violations, islanded branches "
            f"{n1.get('islanded')}, worst case: branch {worst.get('branch')} out -> max loading "
            f"{worst.get('max_loading_pct', math.nan):.1f} %"
        )
        self.expect(n1.get("completed") is True and n1.get("evaluated") == len(reference["branch"])
                    and n1.get("unevaluated") == [] and bool(worst), f"contingency on {CASE}: {n1}")

    async def _grid_forecast_and_flexibility(self) -> None:
        """run_forecast load 6 h (the persistence baseline on minutes of history) and calculate_flexibility 2 h."""
        deadline = time.monotonic() + 5  # the recorder commits every second; wait for its first rows if need be
        while True:
            try:
                forecast = await self.grid_call("forecast", "run_forecast", {"target": "load", "horizon_h": 6})
                break
            except DemoError:  # HA's REST API answers a service's error with HTTP 500 and no message
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.5)
        median = (forecast.get("series") or {}).get("0.5") or []
        log(
            f"GRID run_forecast load 6 h from {forecast.get('entity_id')}: baseline "
            f"{str(forecast.get('baseline')).lower()} ({forecast.get('model_version')}), {len(median)} steps of "
            f"{forecast.get('step_min')} min, median {min(median, default=math.nan):.2f}.."
            f"{max(median, default=math.nan):.2f} {forecast.get('unit')}, "
            f"{forecast.get('history_steps')} history step(s)"
        )
        self.expect(forecast.get("baseline") is True and len(median) == 6,
                    f"forecast on minutes of history: baseline {forecast.get('baseline')}, {len(median)} steps")

        now = datetime.now(self.tz).replace(microsecond=0)
        window = {"start": now.isoformat(), "end": (now + timedelta(hours=2)).isoformat()}
        flex = await self.grid_call("flexibility", "calculate_flexibility", {"window": window})
        per = ", ".join(f"{a['asset_id']} +{a['up_kw']:.2f}/-{a['down_kw']:.2f}" for a in flex.get("per_asset") or [])
        excluded = ", ".join(f"{e['asset_id']} ({e['reason']})" for e in flex.get("excluded") or []) or "none"
        aggregate = flex.get("aggregate") or {}
        log(
            f"GRID calculate_flexibility next 2 h: up {aggregate.get('up_kw', math.nan):.2f} kW, down "
            f"{aggregate.get('down_kw', math.nan):.2f} kW (up/down per asset: {per}); excluded: {excluded}"
        )
        self.expect(any(a["asset_id"] == "battery" for a in flex.get("per_asset") or [])
                    and aggregate.get("up_kw", 0) > 0 and aggregate.get("down_kw", 0) > 0, f"flexibility {flex}")

    async def _grid_plan(self) -> None:
        """optimize_dispatch -> simulate_action -> validate_constraints -> generate_explanation ->
        request_authorization -> approve_authorization (one gated command), then an incident and the audit chain."""
        # The plan starts in the current 15-minute slot and the sim in its snapshot's: keep both in the same slot.
        to_boundary = 900 - (time.time() % 900)
        if to_boundary < 8:
            await asyncio.sleep(to_boundary + 0.5)
        plan = await self.grid_call("plan", "optimize_dispatch", {"objective": "cost", "horizon_h": 24})
        schedule, actions = plan.get("schedule") or [], plan.get("actions") or []
        currency = plan.get("currency") or "EUR"
        cost, baseline = plan.get("cost"), plan.get("baseline_value")
        saves = baseline - cost if isinstance(cost, (int, float)) and isinstance(baseline, (int, float)) else None
        log(
            f"GRID optimize_dispatch cost 24 h: {plan.get('solver_status')}, cost {fmt_money(cost, currency)} vs "
            f"baseline (battery idle) {fmt_money(baseline, currency)}, saves {fmt_money(saves, currency)}; "
            f"{len(schedule)} slots, {len(actions)} battery actions"
        )
        log(f"     assumptions: {'; '.join(str(v) for v in (plan.get('assumptions') or {}).values())}")
        self.require(plan.get("solver_status") == "optimal" and len(schedule) == 96 and bool(actions),
                     f"dispatch plan: {plan.get('solver_status')}, {len(schedule)} slots, {len(actions)} actions")
        self.expect(saves is not None and saves >= -1e-9, f"dispatch plan costs {cost}, more than idle {baseline}")

        snapshot = await self.grid_call("inspect_fresh", "inspect_grid_state", {"network_id": "home"})
        sim = await self.grid_call("sim", "simulate_action", {
            "snapshot_id": snapshot["snapshot_id"], "actions": actions, "signature": plan["signature"],
            "plan_id": plan["plan_id"], "horizon_min": 24 * 60})
        trajectory = sim.get("trajectory") or []
        soc = [row["soc_pct"]["battery"] for row in trajectory if "battery" in (row.get("soc_pct") or {})]
        report = sim.get("constraint_report") or {}
        violations = report.get("violations") or []
        log(
            f"GRID simulate_action (the plan's {len(actions)} signed actions on a fresh home snapshot, 24 h): valid "
            f"{str(sim.get('valid')).lower()}, constraints ok {str(report.get('ok')).lower()}, {len(trajectory)} "
            f"steps, battery SoC {self._soc(snapshot):g} % now, {min(soc, default=math.nan):.1f}-"
            f"{max(soc, default=math.nan):.1f} % on the way, {soc[-1] if soc else math.nan:.1f} % at the end"
        )
        self.expect(sim.get("valid") is True and report.get("ok") is True and len(trajectory) == 96,
                    f"sim: valid {sim.get('valid')}, violations {violations[:3]}")
        if violations and all(".soc_" in v["constraint"] and v["margin"] > -1e-4 for v in violations):
            log("     NOTE: only SoC limits missed by <= 1e-4 %: the plan's actions are rounded to 1e-6 kW and "
                "simulate_action's tolerance is 1e-6 % (an integration bug; see GRID_OPTIONS in scripts/demo.py)")

        validation = await self.grid_call("validation", "validate_constraints", {"sim_id": sim["sim_id"]})
        margins = validation.get("margins") or {}
        log(
            f"GRID validate_constraints sim: pass {str(validation.get('pass')).lower()}, "
            f"{len(validation.get('violations') or [])} violations, {len(margins)} margins (fuse "
            f"{margins.get('branch_1.loading_pct', math.nan):.1f} % headroom, SoC "
            f"{margins.get('battery.soc_min_pct', math.nan) + 0.0:g}/"
            f"{margins.get('battery.soc_max_pct', math.nan) + 0.0:g} % to min/max)"
        )
        self.expect(validation.get("pass") is True and validation.get("violations") == [],
                    f"validation: pass {validation.get('pass')}, violations {(validation.get('violations') or [])[:3]}")

        explanation = await self.grid_call("explanation_en", "generate_explanation",
                                           {"plan_id": plan["plan_id"], "audience": "manager", "lang": "en"})
        text = str(explanation.get("text") or "")
        first_step = datetime.fromisoformat(schedule[0]["start"])  # the explanations write UTC: shown in local time
        log(f"GRID generate_explanation manager en: {local_text(text, self.tz, first_step)}")
        self.expect(bool(text.strip()) and explanation.get("lang") == "en", f"explanation {explanation}")
        german = await self.grid_call("explanation_de", "generate_explanation",
                                      {"plan_id": plan["plan_id"], "audience": "operator", "lang": "de"})
        lines = [line for line in str(german.get("text") or "").splitlines() if line.strip()]
        log(f"GRID generate_explanation operator de: {local_text(lines[0], self.tz, first_step) if lines else ''}")
        for line in lines[1:3]:
            log(f"     {local_text(line, self.tz, first_step)}")
        self.expect(bool(lines) and german.get("lang") == "de", f"German explanation {german}")

        window = {"start": schedule[0]["start"], "end": schedule[3]["end"]}
        request = await self.grid_call("request", "request_authorization", {
            "plan_id": plan["plan_id"], "sim_id": sim["sim_id"], "validation_id": validation["validation_id"],
            "explanation_id": explanation["explanation_id"], "requested_window": window})
        start, end = local(window["start"], self.tz), local(window["end"], self.tz)
        expires = local(request.get("expires_at"), self.tz)
        log(
            f"GRID request_authorization {start:%H:%M}-{at(end, self.tz, '%H:%M')} (the plan's first hour): "
            f"{request.get('status')}" + (f", expires {at(expires, self.tz, '%H:%M')}" if expires else "")
            + (f", reasons {request.get('reasons')}" if request.get("reasons") else "")
        )
        self.require(request.get("status") == "pending" and request.get("reasons") == [],
                     f"request_authorization: {request.get('status')}, reasons {request.get('reasons')}")
        await self._grid_approve(request["request_id"], schedule[0])
        await self._grid_incident_and_audit([self.report["grid"]["inspect_home"]["snapshot_id"],
                                             snapshot["snapshot_id"]])

    async def _grid_approve(self, request_id: str, first_slot: dict[str, Any]) -> None:
        """approve_authorization as the owner: the current slot's battery power goes through the gates (source
        grid) to the setpoint; print the gate trace (agentic_hems.get_traces) and the setpoint."""
        owner = (await self.client.ws([{"type": "auth/current_user"}]))[0]
        self.report["grid"]["owner"] = owner.get("id")
        approved = await self.grid_call("approved", "approve_authorization", {"request_id": request_id})
        traces = await self.client.call_service("get_traces", {"entity_id": BATTERY_SETPOINT, "limit": 5})
        trace: dict[str, Any] = next((t for t in traces.get("traces") or [] if t.get("source_agent") == "grid"), {})
        self.report["grid"]["trace"] = trace
        setpoint = await self.client.request("GET", f"/api/states/{BATTERY_SETPOINT}")
        self.report["grid"]["setpoint"] = setpoint.get("state")
        battery = first_slot["batteries"]["battery"]
        wanted = battery["charge_kw"] - battery["discharge_kw"]
        gates = " ".join(f"{g['gate']}:{'ok' if g['passed'] else 'FAIL'}" for g in trace.get("gate_results") or [])
        decider = owner.get("name") if approved.get("decided_by") == owner.get("id") else approved.get("decided_by")
        log(
            f"GRID approve_authorization: {approved.get('status')} by {decider}; gated command (source grid) -> "
            f"{trace.get('outcome')} [{gates}]"
        )
        unit = (setpoint.get("attributes") or {}).get("unit_of_measurement", "")
        log(f"     {BATTERY_SETPOINT} = {setpoint.get('state')} {unit} (the plan's first slot: {wanted:+.3f} kW)")
        self.expect(approved.get("status") == "approved" and approved.get("decided_by") == owner.get("id"),
                    f"approval {approved}")
        self.expect(trace.get("outcome") == "executed" and len(trace.get("gate_results") or []) == 8
                    and all(g["passed"] for g in trace["gate_results"]), f"grid gate trace {trace}")
        try:
            self.expect(abs(float(setpoint["state"]) - wanted) < 1e-3, f"setpoint {setpoint['state']} != {wanted}")
        except (TypeError, ValueError):
            self.expect(False, f"setpoint {setpoint.get('state')!r} is not a number")

    async def _grid_incident_and_audit(self, evidence: list[str]) -> None:
        """create_incident with the snapshots as evidence, acknowledge_incident, verify_audit_chain."""
        incident = await self.grid_call("incident", "create_incident", {
            "severity": "warning", "title": "Demo: check the main fuse loading", "evidence_ids": evidence})
        log(f"GRID create_incident warning: {incident.get('incident_id')}, evidence {', '.join(evidence)}")
        self.expect(str(incident.get("incident_id", "")).startswith("incident_"), f"incident {incident}")
        acknowledged = await self.grid_call("acknowledged", "acknowledge_incident",
                                            {"incident_id": incident["incident_id"]})
        done = local(acknowledged.get("acknowledged_at"), self.tz)
        by = "the owner" if acknowledged.get("acknowledged_by") == self.report["grid"]["owner"] else "someone else"
        log(f"GRID acknowledge_incident: acknowledged by {by}" + (f" at {at(done, self.tz, '%H:%M:%S')}" if done else ""))
        self.expect(acknowledged.get("acknowledged_by") == self.report["grid"]["owner"] and done is not None,
                    f"acknowledgement {acknowledged}")

        chain = await self.grid_call("audit", "verify_audit_chain", {})
        records = self._audit_records()
        self.report["grid"]["audit_records"] = records
        log(
            f"GRID verify_audit_chain: ok {str(chain.get('ok')).lower()}, {chain.get('lines')} lines; records: "
            f"{', '.join(f'{k} {n}' for k, n in records.items())}"
        )
        self.expect(chain.get("ok") is True and isinstance(chain.get("lines"), int) and chain["lines"] > 0,
                    f"audit chain {chain}")
        missing = sorted(set(TOOL_SERVICES) - set(records))
        self.expect(not missing, f"no audit record for {missing}")

    @staticmethod
    def _soc(snapshot: dict[str, Any]) -> float:
        """The battery's SoC (%) in a home snapshot (NaN when unknown)."""
        battery: dict[str, Any] = next((a for a in snapshot["state"]["assets"] if a["asset_id"] == "battery"), {})
        return float(battery.get("soc_pct", math.nan))

    def _audit_records(self) -> dict[str, int]:
        """Records per tool (or per type for the others) in the entry's audit log, read from the config folder."""
        counts: dict[str, int] = {}
        if self.config_dir is None:
            return counts
        path = self.config_dir / DOMAIN / "audit" / f"{self.entry_id}.jsonl"
        if not path.exists():
            self.problems.append(f"GRID: no audit log at {path}")
            return counts
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError, AttributeError):
                record = json.loads(line).get("record") or {}
                key = str(record.get("tool") if record.get("type") == "tool_call" else record.get("type"))
                counts[key] = counts.get(key, 0) + 1
        return counts

    def _log_decision(self, what: str, decision: dict[str, Any], wanted: str) -> None:
        """One line per gate decision: what happened in words, each gate's result (the execution gate of a command
        that did not run says so), and the last gate's reason in local time."""
        gates = decision.get("gate_results") or []
        outcome = str(decision.get("outcome"))
        held = outcome in ("dry_run", "pending_confirmation")
        steps = " ".join(
            f"{g['gate']}:{'not run' if held and g['gate'] == 'execution' else 'ok' if g['passed'] else 'FAIL'}"
            for g in gates
        )
        log(f"GATE {what}: {OUTCOME_WORDS.get(outcome, outcome)}  [{steps}]")
        if gates:
            log(f"     {local_text(str(gates[-1]['reason']), self.tz, datetime.now(self.tz))}")
        if decision.get("outcome") != wanted:
            self.problems.append(f"gate decision for {what}: {decision.get('outcome')}, expected {wanted}")

    async def show_dashboard(self) -> None:
        """Check that the frontend loads the bundle as an extra module (imported by its index page), then create the
        storage-mode dashboard with the four cards (issue 6) over the websocket API and read its config back."""
        log("")
        page = str(await self.client.request("GET", "/"))
        ours = re.findall(rf'import\("({re.escape(BUNDLE_URL)}\?v=[^"]*)"\)', page)
        self.report["resource"] = {"type": "module", "url": ours[0]} if len(ours) == 1 else None
        if len(ours) == 1:
            log(f"LOVELACE bundle: {ours[0]} (a frontend extra module, every dashboard)")
        else:
            log(f"LOVELACE bundle: MISSING ({len(ours)} imports of {BUNDLE_URL} in the frontend's page)")
            self.problems.append(f"the frontend does not import the cards' bundle once as an extra module: {ours}")
        dashboard, _, saved = await self.client.ws([
            {"type": "lovelace/dashboards/create", "url_path": DASHBOARD_URL_PATH, "title": DASHBOARD_TITLE,
             "icon": "mdi:calendar-clock", "mode": "storage", "show_in_sidebar": True, "require_admin": False},
            {"type": "lovelace/config/save", "url_path": DASHBOARD_URL_PATH, "config": DASHBOARD_CONFIG},
            {"type": "lovelace/config", "url_path": DASHBOARD_URL_PATH},
        ])
        cards = [c.get("type") for view in (saved or {}).get("views") or [] for c in view.get("cards") or []]
        url = f"{self.client.base}/{DASHBOARD_URL_PATH}"
        self.report["dashboard"] = {**(dashboard or {}), "url": url, "cards": cards}
        log(f"LOVELACE dashboard {DASHBOARD_TITLE!r} (storage mode, in the sidebar): {url}")
        log(f"     cards: {', '.join(cards)}")
        if (dashboard or {}).get("url_path") != DASHBOARD_URL_PATH or cards != [f"custom:{c}" for c in CARDS]:
            self.problems.append(f"dashboard {dashboard} with cards {cards}")

    async def show_frontend(self) -> None:
        """What HA's frontend needs from the server beyond the cards: the websocket commands it sends on every page
        load (``get_services`` fails when a component that HA's service descriptions import lacks its packages, and
        then the UI never leaves "Loading..."), the dashboard's panel, HTTP settings with nothing pending (else an
        administrator gets a confirmation dialog over every page), and the integration's brand icons."""
        log("")
        replies = await self.client.ws_replies(
            [{"type": "get_services"}, {"type": "get_panels"}, {"type": "http/config"}]
        )
        services, panels, http = (reply.get("result") if reply.get("success") else None for reply in replies)
        ours = sorted((services or {}).get(DOMAIN) or {})
        self.report["frontend"] = {"services": ours, "panel": (panels or {}).get(DASHBOARD_URL_PATH),
                                   "http": http or replies[2].get("error")}
        if services is None:
            log(f"FRONTEND get_services: FAILED ({replies[0].get('error')}); the UI would stay at 'Loading...'")
            self.problems.append(f"websocket get_services failed (HA's log says why): {replies[0].get('error')}")
        else:
            log(f"FRONTEND get_services: {len(services)} domains, {DOMAIN} with {len(ours)} actions")
            if "ask" not in ours or "evaluate_command" not in ours:
                self.problems.append(f"get_services lists no {DOMAIN}.ask or .evaluate_command: {ours}")
        panel = (panels or {}).get(DASHBOARD_URL_PATH) or {}
        log(f"FRONTEND panel /{DASHBOARD_URL_PATH}: {panel.get('component_name')} {panel.get('title')!r}")
        if panel.get("component_name") != "lovelace" or panel.get("title") != DASHBOARD_TITLE:
            self.problems.append(f"get_panels has no Lovelace panel {DASHBOARD_URL_PATH!r}: {panel}")
        if http is None:  # HA 2026.4 has no stored HTTP settings (unknown_command): YAML
            log(f"FRONTEND http/config: {replies[2].get('error', {}).get('code')} (HTTP settings from YAML)")
        else:
            stable = http.get("stable") or {}
            log(
                f"FRONTEND http/config: {http.get('active_config_type')} {stable.get('server_host')}:"
                f"{stable.get('server_port')}, pending {http.get('pending')}"
            )
            wanted = {"server_host": [HOST], "server_port": self.args.port}
            if http.get("pending") is not None or http.get("active_config_type") != "stable" or any(
                stable.get(key) != value for key, value in wanted.items()
            ):
                self.problems.append(f"HTTP settings are not the demo's stable ones {wanted}: {http}")
        await self.check_brand()

    async def check_brand(self) -> None:
        """GET the brand icons as the frontend does (``?token=`` from ``brands/access_token``, no Authorization
        header): HA's brands integration serves them from the integration's ``brand/`` folder, byte for byte."""
        (token,) = await self.client.ws([{"type": "brands/access_token"}])
        brand = Path(self.args.integration) / "brand"
        self.report["brand"] = {}
        for image, side in BRAND_IMAGES.items():
            path = f"/api/brands/integration/{DOMAIN}/{image}"
            async with self.client.session.get(
                self.client.base + path, params={"token": token["token"], "placeholder": "no"},
                timeout=aiohttp.ClientTimeout(total=30),
            ) as resp:
                body = await resp.read()
                status, kind = resp.status, resp.content_type
            size = png_size(body)
            same = (brand / image).exists() and body == (brand / image).read_bytes()
            self.report["brand"][image] = {"status": status, "content_type": kind, "size": size, "bytes": len(body),
                                           "same_as_file": same}
            shown = f"{size[0]}x{size[1]} PNG" if size else f"not a PNG ({kind}, {len(body)} bytes)"
            log(f"BRAND {path}: HTTP {status}, {shown}" + (f", the integration's brand/{image}" if same else ""))
            if status != 200 or size != (side, side) or not same:
                self.problems.append(
                    f"{path}: HTTP {status}, {shown}, same as brand/{image}: {same} (want {side}x{side})"
                )

    async def setup_home(self, entry_id: str) -> None:
        """Publish the simulated PV forecast, add the battery through its subentry flow and set the options flow's
        "home" step, then wait for the whole-home plan in the schedule websocket (DemoError when none comes)."""
        forecast = pv_forecast(datetime.now(self.tz))
        await self.client.request(
            "POST", f"/api/states/{PV_FORECAST_SENSOR}", expect=(200, 201),
            json={"state": str(max(f["pv_estimate"] for f in forecast)),
                  "attributes": {"friendly_name": "PV forecast (simulated)", "unit_of_measurement": "kW",
                                 "detailedForecast": forecast}},
        )
        await self.client.drive_flow(
            "battery subentry", "/api/config/config_entries/subentries/flow", [entry_id, "battery"],
            lambda step: fill_form(step, BATTERY_SUBENTRY, "battery"),
        )
        await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        await self.client.drive_flow(
            "battery subentry", "/api/config/config_entries/subentries/flow", [entry_id, "battery"],
            lambda step: fill_form(step, MODE_BATTERY_SUBENTRY, "battery"),
        )
        await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        result = await self.client.drive_flow(
            "options", "/api/config/config_entries/options/flow", entry_id,
            lambda step: keep_form(
                step, {"home": HOME_OPTIONS, "tariff": TARIFF_OPTIONS}.get(step["step_id"], {}), "options flow"
            ),
        )
        if result.get("type") != "create_entry":
            raise DemoError(f"the options flow ended with {result}")
        await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        await self.client.drive_flow(
            "heat pump subentry", "/api/config/config_entries/subentries/flow", [entry_id, "heat_pump"],
            lambda step: {k: v for k, v in HEAT_PUMP_SUBENTRY.items() if k in {f["name"] for f in step["data_schema"]}},
        )
        await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        await self.client.drive_flow(
            "SG Ready tank subentry", "/api/config/config_entries/subentries/flow", [entry_id, "heat_pump"],
            lambda step: {k: v for k, v in SG_TANK_SUBENTRY.items() if k in {f["name"] for f in step["data_schema"]}},
        )
        await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        log(f"  SG Ready tank: contacts {SG_RELAYS[0]} and {SG_RELAYS[1]}, offset {SG_OFFSET} "
            f"(+{SG_TANK_SUBENTRY['sg_ready']['sg_offset_k']} K in states 3 and 4), sensor.tank_temperature, 45-55 °C")
        log(f"  heat pump: {HEAT_PUMP_CLIMATE} (generic thermostat) on sensor.indoor_temperature, {WEATHER} hourly "
            f"forecast, UA {HOUSE_UA_KW_PER_K * 1000:g} W/K, C {HOUSE_C_KWH_PER_K:g} kWh/K, {HOUSE_HP_KW:g} kW, "
            f"COP {COP_POINTS}, day 20-22 °C 06:00-22:00, night 17-22 °C")
        log(f"  home: {PV_FORECAST_SENSOR} (clear sky, {PV_PEAK_KW:g} kW peak), battery subentry "
            f"{BATTERY_SUBENTRY['name']!r} ({BATTERY_SUBENTRY['capacity_kwh']:g} kWh, {BATTERY_SUBENTRY['charge_kw']:g} kW, "
            f"reserve {BATTERY_SUBENTRY['reserve_pct']:g} %), battery control {HOME_OPTIONS['battery_control']}")
        log(f"  grid tariff: capacity {TARIFF_OPTIONS['capacity_price']:g} EUR per kW and month (at least "
            f"{TARIFF_OPTIONS['capacity_min_kw']:g} kW billed), 3 x {TARIFF_OPTIONS['phase_current_a']} A at "
            f"{TARIFF_OPTIONS['nominal_voltage']} V")
        deadline = time.monotonic() + ENTITY_DEADLINE_S
        while time.monotonic() < deadline:
            await asyncio.sleep(1)
            with contextlib.suppress(DemoError):
                (payload,) = await self.client.ws([{"type": f"{DOMAIN}/schedule", "entry_id": entry_id}])
                home = (payload.get("home") or {}) if isinstance(payload, dict) else {}
                if home.get("slots") and all(h.get("slots") for h in home.get("heat_pumps") or [{}]):
                    return
        raise DemoError(f"no whole-home plan within {ENTITY_DEADLINE_S:.0f} s of adding the battery")

    async def show_home(self) -> None:
        """Print the whole-home plan's cost, baseline, saving and its first slots; check it and its entities."""
        (payload,) = await self.client.ws([{"type": f"{DOMAIN}/schedule", "entry_id": self.entry_id}])
        home = payload.get("home") or {}
        self.report["home"] = home
        slots, currency = home.get("slots") or [], home.get("currency") or "EUR"
        log("")
        if not slots or not all(isinstance(home.get(k), (int, float)) for k in ("cost", "baseline", "saving")):
            self.problems.append(f"the whole-home plan is not feasible: {home.get('reason')} {home.get('detail')}")
            log(f"HOME PLAN INFEASIBLE: {home.get('reason')} {home.get('detail') or ''}")
            return
        log(f"Home plan ({len(slots)} slots, times in {self.tz.key}): cost {fmt_money(home['cost'], currency)}  "
            f"baseline {fmt_money(home['baseline'], currency)}  saves {fmt_money(home['saving'], currency)}")
        if bad := [s for s in slots if set(s) - {"start"} != HOME_KEYS]:
            self.problems.append(f"home plan slots lack keys: {bad[0]}")
        for slot in slots[:8]:
            log(f"  {at(datetime.fromisoformat(slot['start']), self.tz)}  battery {slot['battery_kw']:+6.2f} kW  "
                f"SoC {slot['soc_pct']:5.1f} %  PV {slot['pv_kw']:5.2f} kW  load {slot['load_kw']:5.2f} kW  "
                f"grid {slot['import_kw'] - slot['export_kw']:+6.2f} kW")
        self.show_heat_pump(home)
        self.show_home_grid(home, currency)
        for entity_id in (PV_FORECAST_SENSOR, "sensor.battery_soc", BATTERY_SETPOINT, HEAT_PUMP_CLIMATE, WEATHER):
            state = await self.client.request("GET", f"/api/states/{entity_id}", expect=(200, 404))
            if not isinstance(state, dict) or state.get("state") in (None, "unavailable", "unknown"):
                self.problems.append(f"home entity {entity_id} does not exist or has no state")

    async def show_mode_battery(self) -> None:
        """With device control on, plan the home again (plan_home): the garage battery's slot goes through the gates,
        its mode select first, then its power number; check both against the plan and their traces."""
        answer = await self.client.call_service("plan_home", {"config_entry_id": self.entry_id, "replan": True})
        battery = next((b for b in answer.get("batteries") or [] if b.get("name") == MODE_BATTERY_SUBENTRY["name"]), {})
        if not battery.get("battery_kw") or not answer.get("slots"):
            self.problems.append(f"the home plan has no {MODE_BATTERY_SUBENTRY['name']}: {battery}")
            return
        kw = float(battery["battery_kw"][0])
        mode = "charge" if kw > 0.05 else "discharge" if kw < -0.05 else "idle"
        option = MODE_BATTERY_OPTIONS[mode]
        states, traces = {}, {}
        for entity_id in (MODE_BATTERY_SELECT, MODE_BATTERY_POWER):
            states[entity_id] = (await self.client.request("GET", f"/api/states/{entity_id}"))["state"]
            found = await self.client.call_service("get_traces", {"entity_id": entity_id, "limit": 1})
            traces[entity_id] = (found.get("traces") or [{}])[0]
        slot = at(datetime.fromisoformat(answer["slots"][0]["start"]), self.tz)
        log(f"Inverter battery (mode select + power number), slot {slot}: plan {kw:+.2f} kW ({mode})")
        for entity_id, trace in traces.items():
            log(f"  {entity_id} = {states[entity_id]}  last trace: {trace.get('outcome', 'none')} "
                f"{(trace.get('candidate') or {}).get('params', '')}")
        planned = [(s["start"], float(v)) for s, v in zip(answer["slots"], battery["battery_kw"], strict=False)]
        if nxt := next(((start, v) for start, v in planned[1:] if abs(v) > 0.05), None):
            log(f"  next slot that sets the power: {at(datetime.fromisoformat(nxt[0]), self.tz)}, {nxt[1]:+.2f} kW "
                f"({min(round(abs(nxt[1]) * 10) * 100.0, MODE_BATTERY_MAX_W):g} W after its mode)")
        self.report["mode_battery"] = {"kw": kw, "mode": mode, "states": states, "traces": traces}
        if states[MODE_BATTERY_SELECT] != option:
            self.problems.append(f"{MODE_BATTERY_SELECT} shows {states[MODE_BATTERY_SELECT]!r}, not {option!r}")
        power = traces[MODE_BATTERY_POWER]
        watts = min(round(abs(kw) * 10) * 100.0, MODE_BATTERY_MAX_W)  # the power's size in W on its 100 W step
        if mode != "idle" and not (
            float(states[MODE_BATTERY_POWER]) == watts
            and (power.get("outcome"), power.get("source_agent")) == ("executed", "scheduler")
        ):
            self.problems.append(f"{MODE_BATTERY_POWER} is not {watts:g} W set through the gates: {power}")

    def show_home_grid(self, home: dict[str, Any], currency: str) -> None:
        """Print what the capacity tariff and the phase limit mean for the plan; check the plan keeps the limit."""
        grid = home.get("grid") or {}
        limit = grid.get("phase_limit_kw")
        log(f"Grid: peak {grid.get('peak_kw')} kW (month so far {grid.get('peak_so_far_kw')} kW), capacity charge "
            f"{fmt_money(grid.get('capacity_cost'), currency)}, network fees {fmt_money(grid.get('fee_cost'), currency)}"
            f", phase limit {limit} kW")
        worst = max((abs(s.get(k, 0.0)) for s in home["slots"] for k in ("l1_kw", "l2_kw", "l3_kw")), default=None)
        if limit is None or worst is None or worst > limit + 1e-3:
            self.problems.append(f"the home plan does not keep its phase limit: {limit} kW, worst phase {worst} kW")

    def show_heat_pump(self, home: dict[str, Any]) -> None:
        """Print the heat pump's first slots and check its plan: the band kept, the power within its range."""
        heat = [h for h in home.get("heat_pumps") or [] if h.get("name") == HEAT_PUMP_SUBENTRY["name"]]
        if len(heat) != 1 or not heat[0].get("slots"):
            self.problems.append(f"the home plan has no heat pump plan: {heat}")
            return
        slots = heat[0]["slots"]
        kwh = sum(s["kw"] for s in slots) / 4
        log(f"Heat pump ({len(slots)} slots from {heat[0]['measured_c']} °C indoors): {kwh:.1f} kWh planned")
        for slot in slots[:8]:
            log(f"  {at(datetime.fromisoformat(slot['start']), self.tz)}  heat pump {slot['kw']:5.2f} kW  indoor "
                f"{slot['temp_c']:5.2f} °C  band {slot['low_c']:g}-{slot['high_c']:g} °C  {slot.get('reason', '')}")
        outside = [s for s in slots if not s["low_c"] - 0.05 <= s["temp_c"] <= s["high_c"] + 0.05]
        if outside[1:]:  # the first slot may still be on its way into the band
            self.problems.append(f"the heat pump plan leaves the comfort band: {outside[1]}")
        if any(not -1e-6 <= s["kw"] <= HOUSE_HP_KW + 1e-6 for s in slots):
            self.problems.append("the heat pump plan leaves its power range")

    def sg_expect(self, ok: bool, what: str) -> None:
        """Record an SG Ready problem unless ``ok``."""
        if not ok:
            self.problems.append(f"SG Ready: {what}")

    async def show_sg_ready(self) -> None:
        """Replan with device control on and show the SG Ready tank's relays acting for the current slot.

        Checks: the relays are never both on (forced is off), relay 2 is on exactly when the plan runs the tank now
        (state 3, the offset set), each relay command went through the gates and was executed (a dry run while device
        control was still off), relay 2's latest one executed.
        """
        answer = await self.client.call_service("plan_home", {"replan": True})
        tank = next((h for h in answer.get("heat_pumps") or [] if h.get("name") == SG_TANK_SUBENTRY["name"]), {})
        slots = tank.get("slots") or []
        states = {}
        for entity_id in (*SG_RELAYS, SG_OFFSET):
            state = await self.client.request("GET", f"/api/states/{entity_id}", expect=(200, 404))
            states[entity_id] = state.get("state") if isinstance(state, dict) else None
        one, two = (states[e] == "on" for e in SG_RELAYS)
        sg_state = {(True, False): 1, (False, False): 2, (False, True): 3, (True, True): 4}[(one, two)]
        running = bool(slots) and slots[0]["kw"] > 1e-3
        log("")
        log(f"SG Ready tank now: {slots[0]['kw'] if slots else '?'} kW planned, relays {states[SG_RELAYS[0]]}/"
            f"{states[SG_RELAYS[1]]} = state {sg_state}, offset {states[SG_OFFSET]} °C")
        traces = []
        for entity_id in SG_RELAYS:
            found = await self.client.call_service("get_traces", {"entity_id": entity_id, "limit": 5})
            traces += found.get("traces") or []
        for trace in traces:
            log(f"  gates: {trace.get('raw_input', '')[:90]} -> {trace.get('outcome')}")
        self.report["sg_ready"] = {"slots": slots[:8], "states": states, "state": sg_state, "traces": traces}
        self.sg_expect(bool(slots), "the SG Ready tank has a plan")
        self.sg_expect(sg_state != 4, "the SG Ready relays are not both on (forced is off)")
        self.sg_expect(two == running, f"relay 2 is on exactly while the plan runs the tank now (state {sg_state})")
        offset = float(SG_TANK_SUBENTRY["sg_ready"]["sg_offset_k"]) if sg_state == 3 else 0.0
        self.sg_expect(states[SG_OFFSET] is not None and float(states[SG_OFFSET]) == offset, "the offset follows the state")
        latest = [max((t for t in traces if SG_RELAYS[1] in t.get("raw_input", "")), key=lambda t: t["timestamp"],
                      default={})]
        self.sg_expect(all(t.get("outcome") == "executed" for t in latest), "relay 2's latest command was executed")
        self.sg_expect(all(t.get("outcome") in ("executed", "dry_run") for t in traces),
                       "each relay command was executed (a dry run while device control was off)")

    async def show_program_dishwasher(self) -> None:
        """Add the Bosch dishwasher (delayed-start profile) through "Add appliance" with device control on, print its
        plan and the scheduler's three commands for its next slot boundary, each previewed through the gates (the
        ``scheduler`` source may only preview through evaluate_command; the boundary itself runs in HA).

        Report ``program_dishwasher``: the form's answers, the planned start, the delay, the previews, the states.
        """
        answers = program_dishwasher(datetime.now(self.tz))
        added = datetime.now(UTC)  # its first boundary is the next one after it is added
        boundary = added.replace(second=0, microsecond=0) + timedelta(minutes=15 - added.minute % 15)
        await self.client.drive_flow(
            "appliance subentry", "/api/config/config_entries/subentries/flow", [self.entry_id, "appliance"],
            lambda step: fill_form(step, answers, f"appliance {PROGRAM_DW!r}"),
        )
        await self.wait_settled(self.entry_id, [a["name"] for a in APPLIANCES] + [PROGRAM_DW])
        plan = await self.stored_plan(PROGRAM_DW)
        planned = datetime.fromisoformat(plan["start"]) if plan.get("feasible") and plan.get("start") else None
        report: dict[str, Any] = {"subentry": answers, "plan": plan, "boundary": boundary.isoformat(), "previews": []}
        self.report["program_dishwasher"] = report
        log("")
        log(f"{PROGRAM_DW} (home_connect shapes: program select, start button, remote start, operation state, "
            f"start-in number in s), window {answers['earliest_start'][:5]} to {answers['deadline'][:5]}, "
            f"program {answers['program']}:")
        if planned is None or planned <= boundary:
            self.problems.append(f"{PROGRAM_DW}: no planned start after the next boundary: {plan}")
            return
        delay = round((planned - boundary).total_seconds())
        report |= {"planned_start": planned.isoformat(), "delay_s": delay}
        log(f"  planned start {at(planned, self.tz)}; at the next slot boundary {at(boundary, self.tz, '%H:%M')} the "
            f"scheduler sets its own delayed start once: {delay} s ({delay / 3600:.2f} h)")
        if boundary <= datetime.now(UTC):  # the boundary passed while the form ran: it acted already
            return
        for candidate, raw_input in program_steps(planned, boundary):
            decision = await self.client.call_service("evaluate_command", {
                "source_agent": "scheduler", "dry_run": True, "raw_input": raw_input, "model_candidate": candidate})
            report["previews"].append(decision)
            self._log_decision(f"preview {candidate['intent']} {candidate['device_alias']}", decision, "dry_run")

    async def stored_plan(self, name: str) -> dict[str, Any]:
        """The appliance's stored plan, the one the scheduler acts on (the schedule websocket; the ``plan`` service
        answers a fresh what-if plan instead)."""
        (payload,) = await self.client.ws([{"type": f"{DOMAIN}/schedule", "entry_id": self.entry_id}])
        return next((p for p in (payload or {}).get("plans") or [] if p.get("name") == name), {})

    async def check_program_boundary(self) -> None:
        """Wait for the Bosch dishwasher's boundary when it is at most PROGRAM_DW_BOUNDARY_WAIT_S away, then check what the scheduler did: the select, the number and the button each executed
        through the gates, once, the number at the delay, the operation state ``delayedstart``.

        Report ``program_dishwasher.acted`` (None when the boundary was not waited for) and ``traces``.
        """
        report = self.report.get("program_dishwasher") or {}
        if "delay_s" not in report:
            return
        boundary = datetime.fromisoformat(report["boundary"])
        left = (boundary - datetime.now(UTC)).total_seconds()
        report["acted"] = None
        if left > PROGRAM_DW_BOUNDARY_WAIT_S:
            log(f"{PROGRAM_DW}: the boundary {at(boundary, self.tz, '%H:%M')} is {left:.0f} s away; the demo does not "
                f"wait for it (the previews above passed every gate; HA runs it at {at(boundary, self.tz, '%H:%M')})")
            return
        if left > 0:
            log(f"{PROGRAM_DW}: waiting {left:.0f} s for the slot boundary {at(boundary, self.tz, '%H:%M')}")
            await asyncio.sleep(left + 5)
        states = {}
        for deadline in range(30):
            states = {k: ((await self.client.request("GET", f"/api/states/{e}", expect=(200, 404))) or {}).get("state")
                      for k, e in PROGRAM_DW_ENTITIES.items()}
            if states["operation"] == "delayedstart" or deadline == 29:
                break
            await asyncio.sleep(1)
        traces = []
        for key in ("select", "delay", "button"):
            found = await self.client.call_service("get_traces", {"entity_id": PROGRAM_DW_ENTITIES[key], "limit": 5})
            traces += [t for t in found.get("traces") or [] if t.get("dry_run") is not True
                       and t.get("outcome") != "dry_run"]
        stored = (await self.stored_plan(PROGRAM_DW)).get("start")
        if stored and stored != report["planned_start"]:  # replanned before the boundary: the delay follows the plan
            log(f"{PROGRAM_DW}: its plan moved to {at(datetime.fromisoformat(stored), self.tz)} before the boundary")
            report |= {"planned_start": stored,
                       "delay_s": round((datetime.fromisoformat(stored) - boundary).total_seconds())}
        report |= {"states": states, "traces": traces}
        acted = [((t.get("candidate") or {}).get("intent"), t.get("outcome")) for t in sorted(traces, key=lambda t: t["timestamp"])]
        report["acted"] = acted
        log(f"{PROGRAM_DW} at {at(boundary, self.tz, '%H:%M')}: " + ", ".join(f"{i} {o}" for i, o in acted)
            + f"; start in {states['delay']} s, operation state {states['operation']}")
        wanted = [("select_option", "executed"), ("set_value", "executed"), ("press", "executed")]
        if acted != wanted:
            self.problems.append(f"{PROGRAM_DW}: the scheduler's delayed start did not act once through the gates: "
                                 f"{acted}")
        if states["operation"] != "delayedstart" or float(states["delay"] or 0) != report["delay_s"]:
            self.problems.append(f"{PROGRAM_DW}: not waiting for its start in {report['delay_s']} s: {states}")

    async def simulate_house(self) -> None:
        """Move the simulated house every HOUSE_STEP_S: the thermostat's compressor heats, the outdoors cools.

        The indoor sensor then reports often enough for the thermostat's state to stay fresh for the gates (30 s).
        """
        while True:
            await asyncio.sleep(HOUSE_STEP_S)
            with contextlib.suppress(DemoError, aiohttp.ClientError, ValueError, TypeError, KeyError):
                compressor = await self.client.request("GET", "/api/states/input_boolean.heat_pump_compressor")
                indoor = await self.client.request("GET", "/api/states/input_number.indoor_temperature_value")
                weather = await self.client.request("GET", f"/api/states/{WEATHER}")
                temp, kw = house_step(float(indoor["state"]), float(weather["attributes"]["temperature"]),
                                      compressor["state"] == "on", HOUSE_STEP_S / 3600)
                for oid, value in (("indoor_temperature", temp), ("heat_pump_power", kw)):
                    await self.client.request("POST", "/api/services/input_number/set_value",
                                              json={"entity_id": f"input_number.{oid}_value", "value": value})

    async def simulate_battery(self) -> None:
        """Move the battery's SoC stand-in by the setpoint (kW, + charging) every minute, within 0-100 %."""
        capacity = BATTERY_SUBENTRY["capacity_kwh"]
        while True:
            await asyncio.sleep(60)
            with contextlib.suppress(DemoError, aiohttp.ClientError, ValueError, TypeError):
                setpoint = await self.client.request("GET", f"/api/states/{BATTERY_SETPOINT}")
                soc = await self.client.request("GET", "/api/states/input_number.battery_soc_value")
                value = float(soc["state"]) + float(setpoint["state"]) / 60 / capacity * 100
                await self.client.request(
                    "POST", "/api/services/input_number/set_value",
                    json={"entity_id": "input_number.battery_soc_value", "value": round(min(max(value, 0), 100), 2)},
                )

    async def wait_settled(self, entry_id: str, titles: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Wait until the entry is loaded (adding a subentry reloads it) with every entity of the given appliances.

        Returns the entity registry entries of agentic_hems and the entry's subentries. Raises DemoError when the
        entry does not settle within ENTITY_DEADLINE_S.
        """
        deadline = time.monotonic() + ENTITY_DEADLINE_S
        while True:
            entries = await self.client.request("GET", f"/api/config/config_entries/entry?domain={DOMAIN}")
            state = next((e.get("state") for e in entries if e.get("entry_id") == entry_id), None)
            registry, subentries = await self.client.ws(
                [
                    {"type": "config/entity_registry/list"},
                    {"type": "config_entries/subentries/list", "entry_id": entry_id},
                ]
            )
            ours = [e for e in registry if e.get("platform") == DOMAIN]
            by_subentry: dict[str | None, set[str]] = {}
            for entity in ours:
                by_subentry.setdefault(entity.get("config_subentry_id"), set()).add(entity.get("translation_key"))
            ids = {s["title"]: s["subentry_id"] for s in subentries if s.get("subentry_type") == "appliance"}
            missing = {title: sorted(APPLIANCE_KEYS - by_subentry.get(ids.get(title), set())) for title in titles}
            missing = {title: keys for title, keys in missing.items() if keys}
            missing_entry = sorted(ENTRY_KEYS - by_subentry.get(None, set()))
            if state == "loaded" and not missing and not missing_entry:
                return ours, subentries
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        details = [f"entry state {state!r}"]
        details += [
            f"appliance {t!r} " + ("has no subentry" if t not in ids else f"lacks entities {k}")
            for t, k in missing.items()
        ]
        if missing_entry:
            details.append(f"the entry lacks entities {missing_entry}")
        raise DemoError(f"agentic_hems did not settle within {ENTITY_DEADLINE_S:.0f} s: " + "; ".join(details))

    async def show_entities(self, ours: list[dict[str, Any]], subentries: list[dict[str, Any]]) -> None:
        """Print every agentic_hems entity's state; each must exist and not be unavailable."""
        titles = {s["subentry_id"]: s["title"] for s in subentries}
        log("")
        log(f"Entities ({len(ours)}):")
        for entity in sorted(ours, key=lambda e: (titles.get(e.get("config_subentry_id"), ""), e["entity_id"])):
            entity_id = entity["entity_id"]
            if entity.get("disabled_by"):
                log(f"  {entity_id:<55} disabled by {entity['disabled_by']}")
                continue
            state = await self.client.request("GET", f"/api/states/{entity_id}", expect=(200, 404))
            value = state.get("state") if isinstance(state, dict) and "state" in state else None
            unit = (state.get("attributes") or {}).get("unit_of_measurement", "") if value is not None else ""
            self.report["entities"].append(
                {
                    "entity_id": entity_id,
                    "translation_key": entity.get("translation_key"),
                    "subentry": titles.get(entity.get("config_subentry_id")),
                    "state": value,
                }
            )
            if value is None:
                self.problems.append(f"{entity_id} is in the entity registry but has no state")
                shown = "NO STATE"
            elif value == "unavailable":
                self.problems.append(f"{entity_id} is unavailable")
                shown = "UNAVAILABLE"
            else:
                shown = f"{value} {unit}".strip()
                if entity.get("translation_key") in ("next_start", "ready_by") and "T" in value:
                    with contextlib.suppress(ValueError):
                        shown = at(datetime.fromisoformat(value), self.tz)
            log(f"  {entity_id:<55} {shown}")
        for oid in STAND_INS:
            state = await self.client.request("GET", f"/api/states/input_boolean.{oid}", expect=(200, 404))
            if not isinstance(state, dict) or state.get("state") in (None, "unavailable"):
                self.problems.append(f"stand-in input_boolean.{oid} does not exist")
        await self.show_ev_charger()

    async def show_ev_charger(self) -> None:
        """Print the EV charger's current and phases and its last gated commands (at its slot boundaries, as the
        scheduler's); a problem when a helper is missing, a command went around the gates or one failed."""
        for entity_id in (EV_CURRENT, EV_PHASES):
            state = await self.client.request("GET", f"/api/states/{entity_id}", expect=(200, 404))
            if not isinstance(state, dict) or state.get("state") in (None, "unavailable"):
                self.problems.append(f"the EV charger's {entity_id} does not exist")
            else:
                log(f"  {entity_id:<55} {state.get('state')}")
        traces: list[dict[str, Any]] = []
        for entity_id in (EV_CURRENT, EV_PHASES, "input_boolean.ev_charger"):
            answer = await self.client.call_service("get_traces", {"entity_id": entity_id, "limit": 5})
            traces += [t for t in answer.get("traces") or [] if t.get("source_agent") == "scheduler"]
        self.report["ev_charger"] = {"traces": len(traces), "outcomes": sorted({str(t.get("outcome")) for t in traces})}
        for trace in traces:
            log(f"  EV charger scheduler command: {trace.get('raw_input', '')[:90]} -> {trace.get('outcome')}")
        if not all(t.get("outcome") in ("executed", "dry_run") for t in traces):
            self.problems.append(f"EV charger: a slot command did not go through: {traces}")

    async def run(self, hass: HassProcess) -> None:
        deadline = time.monotonic() + START_DEADLINE_S
        started = time.monotonic()
        await self.client.wait_http(deadline, hass)
        log(f"HTTP up after {time.monotonic() - started:.1f} s; onboarding the owner account")
        await self.client.onboard()
        config = await self.client.wait_running(deadline, hass)
        self.tz = ZoneInfo(config.get("time_zone") or "UTC")
        log(
            f"Home Assistant {config.get('version')} running after {time.monotonic() - started:.1f} s "
            f"(time zone {self.tz.key}, country {config.get('country')}, currency {config.get('currency')})"
        )
        log("Setting up agentic_hems through its config flow and appliance subentry flows:")
        await self.hide_from_assist()
        entry_id = self.entry_id = await self.setup_integration()
        ours, subentries = await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        await self.setup_home(entry_id)
        ours, subentries = await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        log("")
        await self.show_prices()
        await self.show_plans()
        await self.show_home()
        await self.show_gates()
        await self.show_mode_battery()
        await self.show_sg_ready()
        await self.show_ask()
        await self.show_grid()
        await self.show_entities(ours, subentries)
        await self.show_dashboard()
        await self.link_notification()
        await self.show_frontend()
        if not self.args.no_program_dishwasher:
            await self.show_program_dishwasher()
            await self.check_program_boundary()


def print_credentials(base: str) -> None:
    log(f"  URL:      {base}")
    log(f"  Username: {USERNAME}")
    log(f"  Password: {PASSWORD}")
    log(f"  Cards:    {base}/{DASHBOARD_URL_PATH} (the {DASHBOARD_TITLE!r} dashboard)")


async def wait_for_stop(hass: HassProcess) -> None:
    """Block until Ctrl-C/SIGTERM (handled in main) or until HA exits by itself."""
    while (code := hass.exited()) is None:
        await asyncio.sleep(1)
    raise DemoError(f"Home Assistant exited on its own (code {code})")


async def amain(args: argparse.Namespace, hass: HassProcess) -> int:
    base = f"http://{HOST}:{args.port}"
    shown = hass.config_dir.relative_to(ROOT) if hass.config_dir.is_relative_to(ROOT) else hass.config_dir
    log(f"Agentic HEMS demo: Home Assistant at {base} (config {shown})")
    print_credentials(base)
    hass.start()
    log(f"Started Home Assistant (pid {hass.pid}); waiting for it (deadline {START_DEADLINE_S:.0f} s)")
    async with aiohttp.ClientSession() as session:
        demo = Demo(HassClient(session, base), args)
        demo.config_dir = hass.config_dir
        try:
            await demo.run(hass)
            if not args.check:  # the battery simulation outlives the 30-minute access token
                (token,) = await demo.client.ws(
                    [{"type": "auth/long_lived_access_token", "client_name": "demo battery", "lifespan": 30}]
                )
        finally:
            if args.json:
                Path(args.json).write_text(json.dumps({**demo.report, "problems": demo.problems}, indent=2))
    log("")
    if demo.problems:
        log("CHECK FAILED:")
        for problem in demo.problems:
            log(f"  - {problem}")
        if args.check:
            return 1
    else:
        log("CHECK OK: every plan is feasible, every entity exists and is available, every grid call answered as "
            "expected.")
        if args.check:
            return 0
    log("")
    log("Home Assistant keeps running; open it in a browser and log in with:")
    print_credentials(base)
    log("Press Ctrl-C to stop it.")
    async with aiohttp.ClientSession() as session:
        client = HassClient(session, base)
        client.token = token
        demo_home = Demo(client, args)
        battery = asyncio.create_task(demo_home.simulate_battery())
        house = asyncio.create_task(demo_home.simulate_house())
        try:
            await wait_for_stop(hass)
        finally:
            battery.cancel()
            house.cancel()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        prog="scripts/demo",
        epilog="Without --check, Home Assistant keeps running for the browser until Ctrl-C. AGENTIC_HEMS_HA=oldest "
        "runs the oldest supported Home Assistant release. The first run installs the venv (scripts/bootstrap).",
    )
    parser.add_argument(
        "--check", action="store_true", help="headless: print the plans, stop HA, exit 0 only if all is well"
    )
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("DEMO_PORT", "8123")),
        help="HTTP port (default: $DEMO_PORT, else 8123)"
    )
    parser.add_argument(
        "--json", metavar="PATH", help="also write the plans, price summary and entities as JSON to PATH"
    )
    parser.add_argument(
        "--dir",
        help="where the config directory, pid file and console log go (default .demo/, or .demo/port-N/ with --port N)",
    )
    parser.add_argument(
        "--no-program-dishwasher", action="store_true",
        help="leave out the Bosch dishwasher with its own delayed start (the browser tests count the other appliances)",
    )
    parser.add_argument(
        "--integration",
        default=str(ROOT / "custom_components" / DOMAIN),
        help="the integration directory to link into the config (default: this checkout's)",
    )
    args = parser.parse_args()
    if aiohttp is None:
        raise SystemExit("scripts/demo.py needs Home Assistant's venv: run scripts/demo")

    run_dir = Path(args.dir) if args.dir else DEMO_DIR if args.port == 8123 else DEMO_DIR / f"port-{args.port}"
    run_dir.mkdir(parents=True, exist_ok=True)
    config_dir = run_dir.resolve() / "config"
    hass = HassProcess(config_dir)

    def on_signal(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with SIGINT ignored (e.g. via &)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    code = 1
    try:
        ensure_port_free(args.port)
        prepare_config(config_dir, args.port, Path(args.integration))
        code = asyncio.run(amain(args, hass))
    except KeyboardInterrupt:
        log("")
        log("Stopping Home Assistant ...")
        code = 130 if args.check else 0
    except DemoError as err:
        log("")
        log(f"DEMO FAILED: {err}")
        code = 1
    finally:
        # Ignore further Ctrl-C while HA shuts down, so it always gets stopped.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if hass.started:
            hass.stop()
            log("Home Assistant stopped.")
    if code not in (0, 130) and hass.started:
        # After the stop, so that HA has flushed its log (it writes through a queue).
        log(hass.log_tail())
    return code


if __name__ == "__main__":
    sys.exit(main())
